package traces

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/schedsim/schedsim/workload"
)

// AlibabaOptions configures an AlibabaReader.
type AlibabaOptions struct {
	// Epoch is the Unix time that the trace's relative times (seconds
	// from the start of the trace) count from; 0 by default.
	Epoch int64
	// TraceEnd is the end of the trace in its relative seconds: pods
	// deleted at or after it were cut off by the end of the trace, not
	// deleted. 0 leaves Running and Pending pods provisional for
	// FinishAlibabaPod (Read passes the largest deletion_time, which is
	// the cutoff in the published files).
	TraceEnd int64
	// Lenient skips bad rows instead of failing, counts them and notes
	// the first few by position.
	Lenient bool
}

// AlibabaStats counts what an AlibabaReader did with its input.
type AlibabaStats struct {
	Rows       int // data rows
	Jobs       int // jobs returned
	Bad        int // bad rows skipped (Lenient)
	Shared     int // pods with a fraction of one GPU (gpu_milli < 1000): 1 whole GPU requested
	Censored   int // Running at the end of the trace: runtime up to the end (censored), no end time
	Pending    int // Pending at the end of the trace (never scheduled): runtime 0
	Deleted    int // Running pods deleted before the end of the trace: CANCELLED after running
	Withdrawn  int // Pending pods deleted before the end of the trace: cancelled before they started
	NeverRan   int // Failed or Succeeded without a scheduled_time: runtime 0
	NegRuntime int // deletion_time before scheduled_time: runtime 0
	MultiSpec  int // gpu_spec naming several models: no GPU type, the list kept in Extra
}

// AlibabaReader reads the pod list of the Alibaba GPU cluster trace
// (github.com/alibaba/clusterdata, cluster-trace-gpu-v2023,
// openb_pod_list_*.csv) one pod (job) at a time. See the package
// documentation for the mapping.
type AlibabaReader struct {
	rec     *csvRecords
	path    string
	opts    AlibabaOptions
	names   []string
	col     map[string]int
	in      []*interner
	err     error
	stats   AlibabaStats
	badErrs []*ParseError
}

// alibabaPodColumns are the pod list's columns; name and creation_time are
// required.
var alibabaPodColumns = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
	"pod_phase", "creation_time", "deletion_time", "scheduled_time"}

// NewAlibabaReader returns a reader of the pod list r, having read its
// header row.
func NewAlibabaReader(r io.Reader, path string, opts AlibabaOptions) (*AlibabaReader, error) {
	return newAlibabaReader(r, path, opts, Limits{}.resolve())
}

func newAlibabaReader(r io.Reader, path string, opts AlibabaOptions, lim Limits) (*AlibabaReader, error) {
	ar := &AlibabaReader{rec: newCSVRecords(r, path, ','), path: path, opts: opts, col: map[string]int{}}
	ar.rec.lr.max = int(lim.MaxRecord)
	hdr, err := ar.rec.next()
	if err == io.EOF {
		return nil, &ParseError{Path: path, Line: 1, Err: errKind(ErrNoHeader, "empty file: want the pod list header")}
	}
	if err != nil {
		return nil, err
	}
	if ar.names, ar.col, err = headerNames(hdr, path, ar.rec.start, false); err != nil {
		return nil, err
	}
	ar.rec.maxFields = len(ar.names) + 1
	for _, req := range []string{"name", "creation_time"} {
		if _, ok := ar.col[req]; !ok {
			return nil, &ParseError{Path: path, Line: ar.rec.start, Err: errKind(ErrMissingColumn, "no "+req+" column (want the Alibaba pod list header name,cpu_milli,...)")}
		}
	}
	ar.in = make([]*interner, len(ar.names))
	budget := int64(internBudget)
	for i := range ar.in {
		ar.in[i] = newInterner(4096).share(&budget)
	}
	return ar, nil
}

// Stats returns the counts so far.
func (ar *AlibabaReader) Stats() AlibabaStats { return ar.stats }

// Next returns the next job, or io.EOF after the last.
func (ar *AlibabaReader) Next() (workload.Job, error) {
	for {
		if ar.err != nil {
			return workload.Job{}, ar.err
		}
		f, err := ar.rec.next()
		if err != nil {
			ar.err = err
			continue
		}
		ar.stats.Rows++
		var perr *ParseError
		var j workload.Job
		if len(f) != len(ar.names) {
			perr = &ParseError{Path: ar.path, Line: ar.rec.start, Err: errKind(ErrFieldCount, fmt.Sprintf("%d fields, want %d as in the header", len(f), len(ar.names)))}
		} else {
			j, perr = ar.parse(f, ar.rec.start)
		}
		if perr != nil {
			if !ar.opts.Lenient {
				ar.err = perr
				return workload.Job{}, perr
			}
			ar.stats.Bad++
			if len(ar.badErrs) < maxNotedErrors {
				ar.badErrs = append(ar.badErrs, perr)
			}
			continue
		}
		ar.stats.Jobs++
		return j, nil
	}
}

func (ar *AlibabaReader) parse(f [][]byte, line int) (workload.Job, *ParseError) {
	get := func(name string) []byte {
		if c, ok := ar.col[name]; ok {
			return bytes.TrimSpace(f[c])
		}
		return nil
	}
	bad := func(name string, err error) *ParseError {
		return &ParseError{Path: ar.path, Line: line, Field: name, Value: string(get(name)), Err: err}
	}
	// num parses a non-negative integer field; absent or empty gives -1.
	num := func(name string, max int64) (int64, *ParseError) {
		v := get(name)
		if len(v) == 0 {
			return -1, nil
		}
		n, ok := parseUint(v, max)
		if !ok {
			if _, err := parseCSVFloat(v); err == nil {
				return 0, bad(name, errKind(ErrRange, fmt.Sprintf("want a whole number from 0 to %d", max)))
			}
			return 0, bad(name, errKind(ErrSyntax, "want a whole number"))
		}
		return n, nil
	}
	name := get("name")
	if len(name) == 0 {
		return workload.Job{}, bad("name", errKind(ErrSyntax, "empty pod name"))
	}
	j := workload.NewJob(ar.in[ar.col["name"]].get(name))
	created, perr := num("creation_time", maxSeconds)
	if perr != nil {
		return j, perr
	}
	if created < 0 {
		return j, bad("creation_time", errKind(ErrSyntax, "a pod needs a creation time"))
	}
	deleted, perr := num("deletion_time", maxSeconds)
	if perr != nil {
		return j, perr
	}
	scheduled, perr := num("scheduled_time", maxSeconds)
	if perr != nil {
		return j, perr
	}
	cpuMilli, perr := num("cpu_milli", math.MaxInt32*1000)
	if perr != nil {
		return j, perr
	}
	mem, perr := num("memory_mib", maxMemMiB)
	if perr != nil {
		return j, perr
	}
	gpus, perr := num("num_gpu", math.MaxInt32)
	if perr != nil {
		return j, perr
	}
	gpuMilli, perr := num("gpu_milli", 1000)
	if perr != nil {
		return j, perr
	}
	epoch := workload.Time(ar.opts.Epoch)
	j.Submit = epoch + workload.Time(created)
	j.QOS = ar.str(f, "qos")
	j.Request.Nodes = 1 // a pod runs on one node
	if cpuMilli > 0 {
		j.Request.CPUs = int32((cpuMilli + 999) / 1000)
	}
	j.Request.MemMB = max(mem, 0)
	j.Request.GPUs = int32(max(gpus, 0))
	if gpus == 0 && gpuMilli > 0 {
		// A share of a GPU with num_gpu 0 does not occur in the trace; it
		// still needs a GPU.
		j.Request.GPUs = 1
	}
	shared := j.Request.GPUs == 1 && gpuMilli > 0 && gpuMilli < 1000
	if shared {
		ar.stats.Shared++
	}
	if spec := get("gpu_spec"); len(spec) > 0 {
		if bytes.IndexByte(spec, '|') < 0 {
			j.Request.GPUType = ar.in[ar.col["gpu_spec"]].get(spec)
		} else {
			ar.stats.MultiSpec++
		}
	}

	switch phase := string(get("pod_phase")); phase {
	case "Succeeded":
		j.TraceState = "COMPLETED"
	case "Failed":
		j.TraceState = "FAILED"
	case "Running":
		j.TraceState = "RUNNING"
	case "Pending":
		j.TraceState = "PENDING"
	case "":
	default:
		return j, bad("pod_phase", errKind(ErrSyntax, "want Succeeded, Failed, Running or Pending"))
	}
	switch {
	case scheduled < 0:
		// Never scheduled: pending until deleted (or the trace end).
		j.Runtime = 0
		if deleted >= 0 {
			j.TraceEnd = epoch + workload.Time(max(deleted, created))
		}
		if j.TraceState != "PENDING" && j.TraceState != "" {
			ar.stats.NeverRan++
		}
	default:
		j.TraceStart = epoch + workload.Time(scheduled)
		if deleted >= 0 {
			if deleted < scheduled {
				ar.stats.NegRuntime++
			} else {
				j.Runtime = workload.Time(deleted - scheduled)
			}
			j.TraceEnd = epoch + workload.Time(max(deleted, scheduled))
		}
	}
	if ar.opts.TraceEnd > 0 {
		ar.stats.add(FinishAlibabaPod(&j, epoch+workload.Time(ar.opts.TraceEnd)))
	}

	// Extra: what the request does not hold.
	if shared {
		j.Extra = append(j.Extra, workload.Field{Name: "gpu_milli", Value: ar.str(f, "gpu_milli")})
	}
	if cpuMilli > 0 && cpuMilli%1000 != 0 {
		j.Extra = append(j.Extra, workload.Field{Name: "cpu_milli", Value: ar.str(f, "cpu_milli")})
	}
	if spec := get("gpu_spec"); bytes.IndexByte(spec, '|') >= 0 {
		j.Extra = append(j.Extra, workload.Field{Name: "gpu_spec", Value: ar.str(f, "gpu_spec")})
	}
	if deleted >= 0 && scheduled >= 0 && deleted < scheduled {
		j.Extra = append(j.Extra, workload.Field{Name: "deletion_time", Value: ar.str(f, "deletion_time")})
	}
	for i, n := range ar.names {
		if !slices.Contains(alibabaPodColumns, n) && len(f[i]) > 0 {
			j.Extra = append(j.Extra, workload.Field{Name: n, Value: ar.in[i].get(f[i])})
		}
	}
	return j, nil
}

func (ar *AlibabaReader) str(f [][]byte, name string) string {
	if c, ok := ar.col[name]; ok {
		return ar.in[c].get(bytes.TrimSpace(f[c]))
	}
	return ""
}

// PodOutcome says what FinishAlibabaPod made of a pod.
type PodOutcome uint8

// Outcomes of FinishAlibabaPod.
const (
	PodFinal     PodOutcome = iota // Succeeded or Failed: nothing to decide
	PodCensored                    // Running at the trace end
	PodPending                     // Pending at the trace end
	PodDeleted                     // Running, deleted before the end
	PodWithdrawn                   // Pending, deleted before the end
)

func (s *AlibabaStats) add(o PodOutcome) {
	switch o {
	case PodCensored:
		s.Censored++
	case PodPending:
		s.Pending++
	case PodDeleted:
		s.Deleted++
	case PodWithdrawn:
		s.Withdrawn++
	}
}

// FinishAlibabaPod settles a Running or Pending pod once the trace's end
// (in the job's clock) is known. The pod list gives the phase a pod was
// last seen in and a deletion_time for every pod (TraceEnd as read).
//
//   - Running, deleted at or after end: still running when the trace was
//     cut; the runtime is censored at the end, TraceEnd is Unknown, state
//     RUNNING.
//   - Running, deleted before end: it ran until it was deleted; state
//     CANCELLED (ended from outside, the nearest Slurm word).
//   - Pending, deleted at or after end: still pending; TraceEnd Unknown.
//   - Pending, deleted before end: withdrawn before it got a node:
//     CANCELLED before it started, CancelAfter = deletion - creation.
func FinishAlibabaPod(j *workload.Job, end workload.Time) PodOutcome {
	state := j.TraceState
	if state == "PENDING" && j.TraceStart != workload.Unknown {
		state = "RUNNING" // a Pending pod with a scheduled_time did start
		j.TraceState = state
	}
	switch state {
	case "RUNNING":
		if j.TraceEnd == workload.Unknown || j.TraceEnd >= end {
			j.TraceEnd = workload.Unknown
			return PodCensored
		}
		j.TraceState = "CANCELLED"
		return PodDeleted
	case "PENDING":
		if j.TraceEnd == workload.Unknown || j.TraceEnd >= end {
			j.TraceEnd = workload.Unknown
			return PodPending
		}
		j.TraceState = "CANCELLED"
		j.CancelAfter = max(j.TraceEnd-j.Submit, 0)
		return PodWithdrawn
	}
	return PodFinal
}

// Notes returns remarks on what the reader did; call it after io.EOF.
func (ar *AlibabaReader) Notes() []string {
	s := ar.stats
	var notes []string
	add := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	add("Alibaba pod times are seconds from the start of the trace (Unix time %d taken as its start); each pod is a one-node job", ar.opts.Epoch)
	if s.Shared > 0 {
		add("%s pods use a share of one GPU (gpu_milli < 1000): each requests 1 whole GPU, the share is kept in Extra gpu_milli (GPU sharing is not modelled)", fmtCount(s.Shared))
	}
	if s.Censored > 0 {
		add("%s pods were still Running at the end of the trace: runtime up to the end (censored), state RUNNING, no end", fmtCount(s.Censored))
	}
	if s.Pending > 0 {
		add("%s pods were still Pending at the end of the trace (never scheduled): kept with runtime 0", fmtCount(s.Pending))
	}
	if s.Deleted > 0 {
		add("%s Running pods were deleted before the end of the trace: ran until deleted, state CANCELLED", fmtCount(s.Deleted))
	}
	if s.Withdrawn > 0 {
		add("%s Pending pods were deleted before the end of the trace: cancelled before they started", fmtCount(s.Withdrawn))
	}
	if s.NeverRan > 0 {
		add("%s pods ended without being scheduled: runtime 0", fmtCount(s.NeverRan))
	}
	if s.NegRuntime > 0 {
		add("%s pods have deletion_time before scheduled_time: runtime 0", fmtCount(s.NegRuntime))
	}
	if s.MultiSpec > 0 {
		add("%s pods accept several GPU models (gpu_spec A|B): no GPU type, the list kept in Extra gpu_spec", fmtCount(s.MultiSpec))
	}
	if s.Bad > 0 {
		msgs := make([]string, len(ar.badErrs))
		for i, e := range ar.badErrs {
			msgs[i] = e.Error()
		}
		add("skipped %s bad rows (lenient); first: %s", fmtCount(s.Bad), strings.Join(msgs, "; "))
	}
	return notes
}

// AlibabaNode is one row of the Alibaba trace's node list
// (openb_node_list_*.csv): a node's name, CPUs in thousandths, memory in
// MiB, GPU count and GPU model ("" for CPU-only nodes; G1, G2, G3 are
// models Alibaba did not disclose).
type AlibabaNode struct {
	Name     string
	CPUMilli int64
	MemMiB   int64
	GPUs     int32
	Model    string
}

// ReadAlibabaNodes reads a whole node list. The two node files of the
// trace number their nodes independently: use one or the other, never
// both.
func ReadAlibabaNodes(r io.Reader, path string) ([]AlibabaNode, error) {
	rec := newCSVRecords(r, path, ',')
	hdr, err := rec.next()
	if err == io.EOF {
		return nil, &ParseError{Path: path, Line: 1, Err: errKind(ErrNoHeader, "empty file: want the node list header sn,cpu_milli,memory_mib,gpu,model")}
	}
	if err != nil {
		return nil, err
	}
	_, col, err := headerNames(hdr, path, rec.start, false)
	if err != nil {
		return nil, err
	}
	rec.maxFields = len(hdr) + 1
	for _, req := range []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"} {
		if _, ok := col[req]; !ok {
			return nil, &ParseError{Path: path, Line: rec.start, Err: errKind(ErrMissingColumn, "no "+req+" column (want sn,cpu_milli,memory_mib,gpu,model)")}
		}
	}
	var nodes []AlibabaNode
	for {
		f, err := rec.next()
		if err == io.EOF {
			return nodes, nil
		}
		if err != nil {
			return nil, err
		}
		if len(f) != len(hdr) {
			return nil, &ParseError{Path: path, Line: rec.start, Err: errKind(ErrFieldCount, fmt.Sprintf("%d fields, want %d", len(f), len(hdr)))}
		}
		n := AlibabaNode{Name: string(f[col["sn"]]), Model: string(f[col["model"]])}
		for _, x := range []struct {
			name string
			dst  *int64
			max  int64
		}{{"cpu_milli", &n.CPUMilli, math.MaxInt32 * 1000}, {"memory_mib", &n.MemMiB, maxMemMiB}} {
			v, ok := parseUint(f[col[x.name]], x.max)
			if !ok {
				return nil, &ParseError{Path: path, Line: rec.start, Field: x.name, Value: string(f[col[x.name]]), Err: errKind(ErrSyntax, "want a whole number")}
			}
			*x.dst = v
		}
		g, ok := parseUint(f[col["gpu"]], math.MaxInt32)
		if !ok {
			return nil, &ParseError{Path: path, Line: rec.start, Field: "gpu", Value: string(f[col["gpu"]]), Err: errKind(ErrSyntax, "want a whole number")}
		}
		n.GPUs = int32(g)
		if n.Name == "" {
			return nil, &ParseError{Path: path, Line: rec.start, Field: "sn", Err: errKind(ErrSyntax, "empty node name")}
		}
		nodes = append(nodes, n)
	}
}

// NodeGroup is a set of identical nodes.
type NodeGroup struct {
	Model  string
	CPUs   int32 // whole CPUs (cpu_milli / 1000, rounded down)
	MemMiB int64
	GPUs   int32
	Count  int
}

// GroupNodes groups identical nodes, sorted by model, GPUs, CPUs, memory.
func GroupNodes(nodes []AlibabaNode) []NodeGroup {
	idx := map[NodeGroup]int{}
	var out []NodeGroup
	for _, n := range nodes {
		k := NodeGroup{Model: n.Model, CPUs: int32(n.CPUMilli / 1000), MemMiB: n.MemMiB, GPUs: n.GPUs}
		if i, ok := idx[k]; ok {
			out[i].Count++
			continue
		}
		idx[k] = len(out)
		k.Count = 1
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b NodeGroup) int {
		if c := strings.Compare(a.Model, b.Model); c != 0 {
			return c
		}
		if c := cmp.Compare(a.GPUs, b.GPUs); c != 0 {
			return c
		}
		if c := cmp.Compare(a.CPUs, b.CPUs); c != 0 {
			return c
		}
		return cmp.Compare(a.MemMiB, b.MemMiB)
	})
	return out
}
