package traces

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/schedsim/schedsim/workload"
)

// jobWriter writes a trace one job at a time. What its header needs to
// know of all the jobs (columns, numbering, dictionaries, counts) it
// learns from a planning pass over the same jobs in the same order:
//
//	for each job: plan(j)
//	if targets(): for each job: target(j)
//	start(w); for each job: write(j); finish()
type jobWriter interface {
	plan(j *workload.Job)
	// targets reports whether a second planning pass is needed (ids
	// that dependencies name must be numbered before they are met).
	targets() bool
	target(j *workload.Job)
	start(w io.Writer) error
	write(j *workload.Job) error
	finish() error
}

// writeAll writes the jobs of t through jw.
func writeAll(w io.Writer, jw jobWriter, t *workload.Trace) error {
	for i := range t.Jobs {
		jw.plan(&t.Jobs[i])
	}
	if jw.targets() {
		for i := range t.Jobs {
			jw.target(&t.Jobs[i])
		}
	}
	if err := jw.start(w); err != nil {
		return err
	}
	for i := range t.Jobs {
		if err := jw.write(&t.Jobs[i]); err != nil {
			return err
		}
	}
	return jw.finish()
}

// Convert writes the trace s reads to w in format (WriteFormats), in the
// order Read gives (by submit time, ties in input order), in memory that
// does not grow with the trace: a first pass over s plans the output
// (and finds whether the input is in submit order); an input that is not
// is sorted through unlinked temporary files of sortRun jobs each, merged
// in two more passes. The output is the same as Write of the trace Read
// returns. It returns the number of jobs written.
func Convert(s *Stream, w io.Writer, format string, opts WriteOptions) (int64, error) {
	if !slices.Contains(WriteFormats(), format) {
		return 0, fmt.Errorf("traces: cannot write format %q (want one of %s)", format, strings.Join(WriteFormats(), ", "))
	}
	// Pass 1: order, first submit, count.
	sorted, first, n := true, workload.Time(0), int64(0)
	last := workload.Time(0)
	if err := eachJob(s, func(j *workload.Job) error {
		if n == 0 || j.Submit < first {
			first = j.Submit
		}
		if n > 0 && j.Submit < last {
			sorted = false
		}
		last = j.Submit
		n++
		return nil
	}); err != nil {
		return 0, err
	}
	res := s.Result()
	meta := *res.Trace
	meta.Epoch = int64(first)
	// The jobs in output order, as often as asked.
	each := func(fn func(j *workload.Job) error) error { return eachJob(s, fn) }
	if !sorted {
		runs, err := sortRuns(s)
		if err != nil {
			return 0, err
		}
		defer runs.close()
		each = runs.each
	}
	jw, err := newJobWriter(format, &meta, 0, res.SWF, n, opts)
	if err != nil {
		return 0, err
	}
	if err := each(func(j *workload.Job) error { jw.plan(j); return nil }); err != nil {
		return 0, err
	}
	if jw.targets() {
		if err := each(func(j *workload.Job) error { jw.target(j); return nil }); err != nil {
			return 0, err
		}
	}
	if err := jw.start(w); err != nil {
		return 0, err
	}
	if err := each(jw.write); err != nil {
		return 0, err
	}
	return n, jw.finish()
}

// newJobWriter returns the writer of format for a trace described by meta
// (Epoch: the trace's first submit, Unix seconds) whose jobs' times are
// clock + their value, n jobs; swf is the SWF header to keep, if any. It
// makes the choices Write makes.
func newJobWriter(format string, meta *workload.Trace, clock int64, swf *SWFHeader, n int64, opts WriteOptions) (jobWriter, error) {
	switch format {
	case FormatSacct:
		var loc *time.Location
		if meta.TimeZone != "" && !opts.SacctUTC {
			l, err := time.LoadLocation(meta.TimeZone)
			if err != nil {
				return nil, fmt.Errorf("traces: write sacct: time zone %q: %w", meta.TimeZone, err)
			}
			loc = l
		}
		return newSacctJobWriter(loc, clock), nil
	case FormatSWF:
		h := SWFHeader{UnixStartTime: meta.Epoch, TimeZoneString: meta.TimeZone}
		if opts.SWF != nil {
			h = *opts.SWF
		} else if swf != nil {
			h = *swf
		}
		if n > 0 && h.UnixStartTime > meta.Epoch {
			// A header that starts after the first job (a shifted or
			// synthetic trace) cannot be kept.
			h = SWFHeader{UnixStartTime: meta.Epoch, TimeZoneString: meta.TimeZone,
				Computer: h.Computer, Installation: h.Installation, MaxNodes: h.MaxNodes, MaxProcs: h.MaxProcs}
		}
		return newSWFWriter(h, clock), nil
	case FormatArrow:
		return newArrowWriter(meta, clock, false), nil
	case FormatParquet:
		return newArrowWriter(meta, clock, true), nil
	}
	return nil, fmt.Errorf("traces: cannot write format %q (want one of %s)", format, strings.Join(WriteFormats(), ", "))
}

// eachJob rewinds s and calls fn with each of its jobs.
func eachJob(s *Stream, fn func(j *workload.Job) error) error {
	if err := s.Rewind(); err != nil {
		return err
	}
	for {
		j, err := s.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&j); err != nil {
			return err
		}
	}
}

// sortRun is how many jobs are sorted in memory at a time (a variable
// for the tests).
var sortRun = 1 << 16

// runFiles are sorted runs of jobs, each in an unlinked temporary file,
// encoded with gob.
type runFiles struct {
	files []*os.File
	done  []func()
}

func (r *runFiles) close() {
	for _, d := range r.done {
		d()
	}
}

// seqJob is a job and its position in the input, the tie-break that makes
// the sort stable.
type seqJob struct {
	Seq int64
	Job workload.Job
}

// sortRuns reads s into runs of sortRun jobs sorted by (submit, position).
func sortRuns(s *Stream) (*runFiles, error) {
	runs := &runFiles{}
	buf := make([]seqJob, 0, sortRun)
	var seq int64
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		slices.SortFunc(buf, func(a, b seqJob) int {
			return cmp.Or(cmp.Compare(a.Job.Submit, b.Job.Submit), cmp.Compare(a.Seq, b.Seq))
		})
		f, err := os.CreateTemp("", "schedsim-sort-*")
		if err != nil {
			return err
		}
		name := f.Name()
		removed := os.Remove(name) == nil
		runs.files = append(runs.files, f)
		runs.done = append(runs.done, func() {
			f.Close()
			if !removed {
				os.Remove(name)
			}
		})
		bw := bufio.NewWriterSize(f, 64<<10)
		enc := gob.NewEncoder(bw)
		for i := range buf {
			if err := enc.Encode(&buf[i]); err != nil {
				return err
			}
		}
		buf = buf[:0]
		return bw.Flush()
	}
	err := eachJob(s, func(j *workload.Job) error {
		buf = append(buf, seqJob{Seq: seq, Job: *j})
		seq++
		if len(buf) == sortRun {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		runs.close()
		return nil, fmt.Errorf("traces: sorting the trace through temporary files: %w", err)
	}
	return runs, nil
}

// each merges the runs, calling fn with each job in (submit, position)
// order.
func (r *runFiles) each(fn func(j *workload.Job) error) error {
	h := &mergeHeap{}
	for _, f := range r.files {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		m := &mergeSrc{dec: gob.NewDecoder(bufio.NewReaderSize(f, 64<<10))}
		if err := m.next(); err != nil {
			return err
		}
		if m.ok {
			h.srcs = append(h.srcs, m)
		}
	}
	heap.Init(h)
	for h.Len() > 0 {
		m := h.srcs[0]
		if err := fn(&m.cur.Job); err != nil {
			return err
		}
		if err := m.next(); err != nil {
			return err
		}
		if m.ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

type mergeSrc struct {
	dec *gob.Decoder
	cur seqJob
	ok  bool
}

func (m *mergeSrc) next() error {
	m.cur = seqJob{}
	err := m.dec.Decode(&m.cur)
	if errors.Is(err, io.EOF) {
		m.ok = false
		return nil
	}
	m.ok = err == nil
	return err
}

type mergeHeap struct{ srcs []*mergeSrc }

func (h *mergeHeap) Len() int { return len(h.srcs) }
func (h *mergeHeap) Less(i, k int) bool {
	a, b := &h.srcs[i].cur, &h.srcs[k].cur
	if a.Job.Submit != b.Job.Submit {
		return a.Job.Submit < b.Job.Submit
	}
	return a.Seq < b.Seq
}
func (h *mergeHeap) Swap(i, k int) { h.srcs[i], h.srcs[k] = h.srcs[k], h.srcs[i] }
func (h *mergeHeap) Push(x any)    { h.srcs = append(h.srcs, x.(*mergeSrc)) }
func (h *mergeHeap) Pop() any {
	x := h.srcs[len(h.srcs)-1]
	h.srcs = h.srcs[:len(h.srcs)-1]
	return x
}
