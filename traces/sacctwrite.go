package traces

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schedsim/schedsim/workload"
)

// sacctWritten are the columns WriteSacct always writes, in order; JobName
// comes last (after the Extra columns) because it is free text, which the
// sacct reader re-joins when it holds the delimiter.
var sacctWritten = []string{"JobID", "User", "Account", "Partition", "QOS", "State", "Submit", "Start", "End", "Elapsed", "Timelimit", "ReqTRES"}

// WriteSacct writes t as sacct --parsable2 output (sacct -P): a header row
// and one "|"-separated row per job, no step rows.
//
//   - Submit, Start and End are wall-clock readings in loc (nil: UTC), as
//     sacct prints them in the local zone of its host; unknown times are
//     "Unknown", and the start of a job cancelled before it started is
//     "None". Elapsed is [D-]HH:MM:SS. Timelimit is [D-]HH:MM:SS, to the
//     second (Slurm's own limits are whole minutes, so real output always
//     ends in :00); an unknown limit is Partition_Limit.
//   - ReqTRES holds the request: cpu, gres/gpu (and gres/gpu:TYPE), mem in
//     MiB ("M") and node, always written, zeros included, sorted as Slurm
//     sorts them. A MIG request's type names its profile
//     (gres/gpu:1g.10gb=2, gres/gpu:h100_1g.20gb=2); an MPS share adds
//     gres/mps, the job's total over its nodes (share × nodes).
//   - State is the raw State kept in Extra ("CANCELLED by 0") when there
//     is one, else TraceState.
//   - JobID is the job's ID when it is a Slurm job id (123, 123_4,
//     123+0); other ids (pod names, Philly application ids) are numbered
//     after the largest numeric id, one number per row in order, and
//     dependencies follow.
//   - Dependency is written when any job has dependencies.
//   - Every Extra field whose name is not one of these columns becomes a
//     column of its own, in order of first appearance over the jobs
//     (Extra "ReqTRES" is re-derived from the request and not repeated).
//     sacct does not escape, so "|" and line breaks inside values are
//     written as "¦" and " ".
//
// Reading the output back with NewSacctReader gives the same jobs, apart
// from renumbered ids and Trace.TimeZone (pass loc's name as
// SacctOptions.TimeZone to read the times back in that zone).
func WriteSacct(w io.Writer, t *workload.Trace, loc *time.Location) error {
	return writeAll(w, newSacctWriter(loc, t.Epoch), t)
}

// sacctWriter writes sacct -P rows one job at a time (see WriteSacct),
// from a plan made by a pass over the same jobs in the same order.
type sacctWriter struct {
	loc   *time.Location
	clock int64 // added to the jobs' times to make Unix seconds

	// The plan.
	fixed     map[string]bool
	extraCols []string
	extraIdx  map[string]int
	hasDeps   bool
	maxID     int64
	// Ids that sacct cannot hold are numbered after the largest numeric
	// id, one number per row in order; those that dependencies name are
	// found by a second pass over the plan (targets, target).
	depIDs  map[string]bool   // non-Slurm ids named by dependencies
	renum   map[string]string // their numbers
	planned int64             // non-Slurm rows seen by target

	bw   *bufio.Writer
	next int64 // number of the next non-Slurm row written
	line []byte
	vals []string
}

func newSacctWriter(loc *time.Location, clock int64) *sacctWriter {
	if loc == nil {
		loc = time.UTC
	}
	sw := &sacctWriter{loc: loc, clock: clock, fixed: map[string]bool{}, extraIdx: map[string]int{}}
	for _, c := range sacctWritten {
		sw.fixed[strings.ToLower(c)] = true
	}
	sw.fixed["jobname"] = true
	sw.fixed["dependency"] = true
	return sw
}

// slurmID reports whether sacct can hold id as a JobID.
func slurmID(id string) bool {
	jid, err := parseJobID([]byte(id))
	return err == nil && jid.arrayExpr == nil && !strings.ContainsAny(id, ".|")
}

func (sw *sacctWriter) plan(j *workload.Job) {
	if len(j.Deps) > 0 {
		sw.hasDeps = true
		for _, d := range j.Deps {
			if d.JobID != "" && !slurmID(d.JobID) {
				if sw.depIDs == nil {
					sw.depIDs = map[string]bool{}
				}
				sw.depIDs[d.JobID] = true
			}
		}
	}
	if n, err := strconv.ParseInt(j.ID, 10, 64); err == nil && n > sw.maxID {
		sw.maxID = n
	}
	for _, f := range j.Extra {
		if sw.fixed[strings.ToLower(f.Name)] {
			continue
		}
		if _, ok := sw.extraIdx[f.Name]; !ok {
			sw.extraIdx[f.Name] = len(sw.extraCols)
			sw.extraCols = append(sw.extraCols, f.Name)
		}
	}
}

func (sw *sacctWriter) targets() bool { return len(sw.depIDs) > 0 }

// target numbers the non-Slurm ids that dependencies name, as write will.
func (sw *sacctWriter) target(j *workload.Job) {
	if slurmID(j.ID) {
		return
	}
	sw.planned++
	if sw.depIDs[j.ID] {
		if sw.renum == nil {
			sw.renum = map[string]string{}
		}
		if _, ok := sw.renum[j.ID]; !ok {
			sw.renum[j.ID] = strconv.FormatInt(sw.maxID+sw.planned, 10)
		}
	}
}

func (sw *sacctWriter) start(w io.Writer) error {
	sw.bw = bufio.NewWriterSize(w, 64<<10)
	hdr := slices.Clone(sacctWritten)
	if sw.hasDeps {
		hdr = append(hdr, "Dependency")
	}
	hdr = append(hdr, sw.extraCols...)
	hdr = append(hdr, "JobName")
	sw.bw.WriteString(strings.Join(hdr, "|"))
	sw.bw.WriteByte('\n')
	sw.vals = make([]string, len(sw.extraCols))
	sw.next = sw.maxID + 1
	return nil
}

func (sw *sacctWriter) write(j *workload.Job) error {
	if !validState(j.TraceState) {
		return fmt.Errorf("traces: write sacct: job %s: state %q is not a Slurm state word (upper-case letters and _)", j.ID, j.TraceState)
	}
	id := j.ID
	if !slurmID(id) {
		id = strconv.FormatInt(sw.next, 10)
		sw.next++
	}
	state := j.TraceState
	vals := sw.vals
	for k := range vals {
		vals[k] = ""
	}
	for _, f := range j.Extra {
		if strings.EqualFold(f.Name, "State") {
			state = f.Value
			continue
		}
		if k, ok := sw.extraIdx[f.Name]; ok {
			vals[k] = f.Value
		}
	}
	line := sw.line[:0]
	ts := func(v workload.Time) []byte {
		if v == workload.Unknown {
			return append(line, "Unknown"...)
		}
		return time.Unix(sw.clock+int64(v), 0).In(sw.loc).AppendFormat(line, "2006-01-02T15:04:05")
	}
	line = append(line, id...)
	for _, s := range []string{j.User, j.Account, j.Partition, j.QOS, state} {
		line = append(line, '|')
		line = appendClean(line, s)
	}
	line = append(line, '|')
	line = ts(j.Submit)
	line = append(line, '|')
	switch {
	case j.TraceStart != workload.Unknown:
		line = ts(j.TraceStart)
	case j.CancelledPending():
		line = append(line, "None"...)
	default:
		line = append(line, "Unknown"...)
	}
	line = append(line, '|')
	end := j.TraceEnd
	if j.CancelledPending() && end == workload.Unknown && j.CancelAfter > 0 {
		end = j.Submit + j.CancelAfter
	}
	line = ts(end)
	line = append(line, '|')
	line = appendSlurmDuration(line, int64(j.Runtime))
	line = append(line, '|')
	if j.TimeLimit == workload.Unknown {
		line = append(line, "Partition_Limit"...)
	} else {
		line = appendSlurmDuration(line, int64(j.TimeLimit))
	}
	line = append(line, '|')
	line = appendTRES(line, &j.Request)
	if sw.hasDeps {
		line = append(line, '|')
		for k, d := range j.Deps {
			if k > 0 {
				line = append(line, ',')
			}
			line = append(line, d.Type.String()...)
			if d.Type != workload.DepSingleton {
				line = append(line, ':')
				dep := d.JobID
				if r, ok := sw.renum[dep]; ok {
					dep = r
				}
				line = append(line, dep...)
			}
		}
	}
	for _, v := range vals {
		line = append(line, '|')
		line = appendClean(line, v)
	}
	line = append(line, '|')
	// JobName comes last: the reader re-joins a "|" inside it.
	line = append(line, strings.ReplaceAll(strings.ReplaceAll(j.Name, "\n", " "), "\r", " ")...)
	line = append(line, '\n')
	sw.line = line
	_, err := sw.bw.Write(line)
	return err
}

func (sw *sacctWriter) finish() error { return sw.bw.Flush() }

func validState(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && c != '_' {
			return false
		}
	}
	return true
}

// appendClean appends s with "|" as "¦" and line breaks as spaces.
func appendClean(b []byte, s string) []byte {
	if !strings.ContainsAny(s, "|\n\r") {
		return append(b, s...)
	}
	for _, r := range s {
		switch r {
		case '|':
			b = append(b, "¦"...)
		case '\n', '\r':
			b = append(b, ' ')
		default:
			b = append(b, string(r)...)
		}
	}
	return b
}

// appendSlurmDuration appends secs as sacct prints durations: HH:MM:SS,
// or D-HH:MM:SS from one day on.
func appendSlurmDuration(b []byte, secs int64) []byte {
	if secs < 0 {
		return append(b, "INVALID"...)
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if d > 0 {
		b = strconv.AppendInt(b, d, 10)
		b = append(b, '-')
	}
	two := func(b []byte, v int64) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	b = two(b, h)
	b = append(b, ':')
	b = two(b, m)
	b = append(b, ':')
	return two(b, s)
}

// appendTRES appends the request as a ReqTRES string, keys sorted
// byte-wise on the whole "name=value" text as Slurm sorts them.
func appendTRES(b []byte, r *workload.Request) []byte {
	items := make([]string, 0, 6)
	items = append(items, "cpu="+strconv.Itoa(int(r.CPUs)))
	// A MIG request is a typed GPU request whose type names the profile
	// (gres/gpu:1g.10gb=2, gres/gpu:h100_1g.20gb=2), as the reader takes it.
	switch typ := r.GPUType; {
	case r.MIGProfile != 0 && typ != "":
		items = append(items, "gres/gpu:"+typ+"_"+r.MIGProfile.String()+"="+strconv.Itoa(int(r.GPUs)))
	case r.MIGProfile != 0:
		items = append(items, "gres/gpu:"+r.MIGProfile.String()+"="+strconv.Itoa(int(r.GPUs)))
	case typ != "":
		items = append(items, "gres/gpu:"+typ+"="+strconv.Itoa(int(r.GPUs)))
	}
	items = append(items, "gres/gpu="+strconv.Itoa(int(r.GPUs)))
	// An MPS share is per node; sacct's gres/mps is the job's total.
	if r.MPSShare > 0 {
		items = append(items, "gres/mps="+strconv.FormatInt(int64(r.MPSShare)*int64(max(r.Nodes, 1)), 10))
	}
	items = append(items, "mem="+strconv.FormatInt(r.MemMB, 10)+"M")
	items = append(items, "node="+strconv.Itoa(int(r.Nodes)))
	slices.Sort(items)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return b
}
