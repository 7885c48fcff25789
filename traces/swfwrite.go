package traces

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/workload"
)

// WriteSWF writes t as a Standard Workload Format 2.2 log: the header, then
// one line of 18 fields per job, in t's order.
//
// The header is h.Fields verbatim when it has any (they must then agree
// with h.UnixStartTime); otherwise it is made from h's typed fields.
// Submit times are written relative to h.UnixStartTime: field 2 is
// t.Epoch + Submit - h.UnixStartTime, which must not be negative.
//
// Fields come from the job as SWFReader maps them, so that reading the
// output gives the same jobs: wait time from TraceStart (or, for a job
// cancelled before it started, TraceEnd), status from Extra "status" or
// TraceState (COMPLETED 1, CANCELLED 5, any other end state 0, none -1),
// user "u<N>" as N, and fields 5-8, 10 and 13-18 from Extra by their SWF
// names, -1 when absent. Jobs not read from SWF get processors from
// Request (CPUs, else GPUs; -1 when it asks for neither) and, where a
// user or partition is not a number, numbers assigned in order of first
// appearance after the largest numeric one; a job id that is not a
// number gets the next number after the largest numeric id, one per row.
func WriteSWF(w io.Writer, h SWFHeader, t *workload.Trace) error {
	return writeAll(w, newSWFWriter(h, t.Epoch), t)
}

// swfWriter writes SWF records one job at a time (see WriteSWF), from a
// plan made by a pass over the same jobs in the same order.
type swfWriter struct {
	h     SWFHeader
	clock int64 // added to the jobs' times to make Unix seconds
	jobs  int
	ids   *numberer
	users *numberer
	parts *numberer
	bw    *bufio.Writer
	line  []byte
}

func newSWFWriter(h SWFHeader, clock int64) *swfWriter {
	// Job ids are mostly distinct: their numberer remembers no names.
	return &swfWriter{h: h, clock: clock, ids: &numberer{stream: true}, users: newNumberer(), parts: newNumberer()}
}

func (sw *swfWriter) plan(j *workload.Job) {
	sw.jobs++
	sw.ids.see(j.ID)
	sw.users.see(strings.TrimPrefix(j.User, "u"))
	if _, ok := extraValue(j, "partition_number"); !ok {
		if _, ok := extraValue(j, "queue_number"); !ok {
			sw.parts.see(j.Partition)
		}
	}
}

func (sw *swfWriter) targets() bool        { return false }
func (sw *swfWriter) target(*workload.Job) {}

func (sw *swfWriter) start(w io.Writer) error {
	sw.bw = bufio.NewWriter(w)
	sw.ids.next = sw.ids.maxNum + 1
	if len(sw.h.Fields) > 0 {
		for _, f := range sw.h.Fields {
			if f.Key == "" {
				fmt.Fprintf(sw.bw, ";%s\n", f.Value)
			} else {
				fmt.Fprintf(sw.bw, "; %s: %s\n", f.Key, f.Value)
			}
		}
	} else {
		writeSynthHeader(sw.bw, sw.h, sw.jobs, sw.parts)
	}
	return nil
}

func (sw *swfWriter) write(j *workload.Job) error {
	h := sw.h
	submit := sw.clock + int64(j.Submit) - h.UnixStartTime
	if submit < 0 {
		return fmt.Errorf("traces: write swf: job %s: submit time %d is before the header's UnixStartTime %d", j.ID, sw.clock+int64(j.Submit), h.UnixStartTime)
	}
	var f [19]string
	f[1] = sw.ids.number(j.ID)
	f[2] = strconv.FormatInt(submit, 10)
	wait := int64(-1)
	switch {
	case j.CancelledPending():
		if j.TraceEnd != workload.Unknown && j.TraceEnd >= j.Submit {
			wait = int64(j.TraceEnd - j.Submit)
		}
	case j.TraceStart != workload.Unknown && j.TraceStart >= j.Submit:
		wait = int64(j.TraceStart - j.Submit)
	}
	f[3] = strconv.FormatInt(wait, 10)
	f[4] = strconv.FormatInt(int64(max(j.Runtime, 0)), 10)
	f[9] = "-1"
	if j.TimeLimit > 0 {
		f[9] = strconv.FormatInt(int64(j.TimeLimit), 10)
	}
	f[11] = swfStatus(j.TraceState)
	f[12] = "-1"
	if j.User != "" {
		f[12] = sw.users.number(strings.TrimPrefix(j.User, "u"))
	}
	for _, k := range swfExtra {
		if k != 11 {
			f[k] = "-1"
		}
		if v, ok := extraValue(j, swfFieldNames[k]); ok {
			if len(v) == 0 {
				return fmt.Errorf("traces: write swf: job %s: empty %s", j.ID, swfFieldNames[k])
			}
			if _, err := parseSWFNum([]byte(v)); err != nil {
				return fmt.Errorf("traces: write swf: job %s: %s %q: %w", j.ID, swfFieldNames[k], v, err)
			}
			f[k] = v
		}
	}
	_, hasAlloc := extraValue(j, swfFieldNames[5])
	_, hasReq := extraValue(j, swfFieldNames[8])
	if !hasAlloc && !hasReq {
		procs := int64(j.Request.CPUs)
		if procs <= 0 {
			procs = int64(j.Request.GPUs)
		}
		if procs > 0 {
			f[5] = strconv.FormatInt(procs, 10)
			f[8] = f[5]
		}
	}
	if _, ok := extraValue(j, "partition_number"); !ok {
		if _, ok := extraValue(j, "queue_number"); !ok && j.Partition != "" {
			f[16] = sw.parts.number(j.Partition)
		}
	}
	line := sw.line[:0]
	for k := 1; k <= 18; k++ {
		if k > 1 {
			line = append(line, ' ')
		}
		line = append(line, f[k]...)
	}
	line = append(line, '\n')
	sw.line = line
	_, err := sw.bw.Write(line)
	return err
}

func (sw *swfWriter) finish() error { return sw.bw.Flush() }

func writeSynthHeader(bw *bufio.Writer, h SWFHeader, jobs int, parts *numberer) {
	p := func(k string, v any) { fmt.Fprintf(bw, "; %s: %v\n", k, v) }
	version := h.Version
	if version == "" {
		version = "2.2"
	}
	p("Version", version)
	if h.Computer != "" {
		p("Computer", h.Computer)
	}
	if h.Installation != "" {
		p("Installation", h.Installation)
	}
	maxJobs, maxRecords := h.MaxJobs, h.MaxRecords
	if maxJobs == 0 {
		maxJobs = jobs
	}
	if maxRecords == 0 {
		maxRecords = jobs
	}
	p("MaxJobs", maxJobs)
	p("MaxRecords", maxRecords)
	p("UnixStartTime", h.UnixStartTime)
	if h.TimeZone != 0 {
		p("TimeZone", h.TimeZone)
	}
	if h.TimeZoneString != "" {
		p("TimeZoneString", h.TimeZoneString)
	}
	if h.MaxNodes != 0 {
		p("MaxNodes", h.MaxNodes)
	}
	if h.MaxProcs != 0 {
		p("MaxProcs", h.MaxProcs)
	}
	if h.MaxRuntime != 0 {
		p("MaxRuntime", h.MaxRuntime)
	}
	if h.MaxMemory != 0 {
		p("MaxMemory", h.MaxMemory)
	}
	for _, q := range h.Queues {
		p("Queue", fmt.Sprintf("%d %s", q.Number, q.Name))
	}
	if len(h.Partitions) > 0 {
		for _, q := range h.Partitions {
			p("Partition", fmt.Sprintf("%d %s", q.Number, q.Name))
		}
	} else {
		for _, name := range parts.names {
			p("Partition", fmt.Sprintf("%s %s", parts.number(name), name))
		}
	}
}

// swfStatus maps a TraceState onto SWF status codes.
func swfStatus(state string) string {
	switch state {
	case "":
		return "-1"
	case "COMPLETED":
		return "1"
	case "CANCELLED":
		return "5"
	case "PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "PARTIAL":
		return "-1"
	}
	return "0"
}

func extraValue(j *workload.Job, name string) (string, bool) {
	for _, f := range j.Extra {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

// numberer maps strings to SWF numbers: a string that is a non-negative
// integer is its own number; others get numbers after the largest such
// integer, in order of first appearance. A numberer in stream mode (job
// ids, which are mostly distinct) remembers no names: it numbers each
// non-numeric string in turn, from next.
type numberer struct {
	maxNum  int64
	names   []string
	assigns map[string]string
	stream  bool
	next    int64
}

func newNumberer() *numberer { return &numberer{assigns: make(map[string]string)} }

func (n *numberer) see(s string) {
	if s == "" {
		return
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && v >= -1 {
		n.maxNum = max(n.maxNum, v)
		return
	}
	if n.stream {
		return
	}
	if _, ok := n.assigns[s]; !ok {
		n.assigns[s] = ""
		n.names = append(n.names, s)
	}
}

func (n *numberer) number(s string) string {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && v >= -1 {
		return strconv.FormatInt(v, 10)
	}
	if n.stream {
		v := n.next
		n.next++
		return strconv.FormatInt(v, 10)
	}
	if a := n.assigns[s]; a != "" {
		return a
	}
	// Assign numbers to all names at once, in first-appearance order.
	for i, name := range n.names {
		n.assigns[name] = strconv.FormatInt(n.maxNum+1+int64(i), 10)
	}
	if a := n.assigns[s]; a != "" {
		return a
	}
	return "-1"
}
