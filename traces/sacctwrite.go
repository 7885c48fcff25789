package traces

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
//   - SubmitLine carries what only the submit line can: --requeue, an
//     array task's %N throttle, --checkpoint and --switches=N[@T]. A job
//     with its own SubmitLine (Extra, as the sacct reader keeps it) has it
//     written as it is; for a job without one that has any of these, an
//     sbatch line of just those options is written, which the reader
//     turns back into the same fields.
//   - Every Extra field whose name is not one of these columns becomes a
//     column of its own, in order of first appearance over the jobs
//     (Extra "ReqTRES" is re-derived from the request and not repeated).
//     sacct does not escape, so "|" and line breaks inside values are
//     written as "¦" and " ".
//
// Reading the output back with NewSacctReader gives the same jobs, apart
// from renumbered ids, a made SubmitLine kept as an Extra field, and
// Trace.TimeZone (pass loc's name as
// SacctOptions.TimeZone to read the times back in that zone).
func WriteSacct(w io.Writer, t *workload.Trace, loc *time.Location) error {
	return writeAll(w, newSacctJobWriter(loc, t.Epoch), t)
}

// sacctJobWriter writes the jobs of a trace as sacct -P rows one job at a
// time (see WriteSacct), through a SacctWriter, from a plan made by a pass
// over the same jobs in the same order (jobWriter).
type sacctJobWriter struct {
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
	// numbered by a second planning pass (targets, target).
	// submitLine: some job needs an sbatch line made for it (needsSubmitLine).
	submitLine bool
	depIDs     map[string]bool   // non-Slurm ids named by dependencies
	renum      map[string]string // their numbers
	planned    int64             // non-Slurm rows seen by target

	sw   *SacctWriter
	next int64 // number of the next non-Slurm row written
	vals []string
	deps []byte
	line []byte // a made SubmitLine
	tres []string
}

func newSacctJobWriter(loc *time.Location, clock int64) *sacctJobWriter {
	jw := &sacctJobWriter{loc: loc, clock: clock, fixed: map[string]bool{}, extraIdx: map[string]int{}}
	for _, c := range sacctWritten {
		jw.fixed[strings.ToLower(c)] = true
	}
	jw.fixed["jobname"] = true
	jw.fixed["dependency"] = true
	return jw
}

// slurmID reports whether sacct can hold id as a JobID.
func slurmID(id string) bool {
	jid, err := parseJobID([]byte(id))
	return err == nil && jid.arrayExpr == nil && !strings.ContainsAny(id, ".|")
}

func (jw *sacctJobWriter) plan(j *workload.Job) {
	if len(j.Deps) > 0 {
		jw.hasDeps = true
		for _, d := range j.Deps {
			if d.JobID != "" && !slurmID(d.JobID) {
				if jw.depIDs == nil {
					jw.depIDs = map[string]bool{}
				}
				jw.depIDs[d.JobID] = true
			}
		}
	}
	if n, err := strconv.ParseInt(j.ID, 10, 64); err == nil && n > jw.maxID {
		jw.maxID = n
	}
	for _, f := range j.Extra {
		if jw.fixed[strings.ToLower(f.Name)] {
			continue
		}
		if _, ok := jw.extraIdx[f.Name]; !ok {
			jw.extraIdx[f.Name] = len(jw.extraCols)
			jw.extraCols = append(jw.extraCols, f.Name)
		}
	}
	if !jw.submitLine && needsSubmitLine(j) {
		jw.submitLine = true
	}
}

// needsSubmitLine reports whether j has fields only a SubmitLine can carry
// and no SubmitLine of its own.
func needsSubmitLine(j *workload.Job) bool {
	if !j.Requeue && j.CheckpointInterval == 0 && j.Request.Switches == 0 && (j.ArrayThrottle == 0 || j.ArrayJobID == "") {
		return false
	}
	for _, f := range j.Extra {
		if strings.EqualFold(f.Name, "SubmitLine") {
			return false
		}
	}
	return true
}

// appendSubmitLine appends an sbatch line of the options of j that only a
// SubmitLine carries (parseSubmitLine reads them back).
func appendSubmitLine(b []byte, j *workload.Job) []byte {
	b = append(b, "sbatch"...)
	if j.Requeue {
		b = append(b, " --requeue"...)
	}
	if j.ArrayThrottle > 0 && j.ArrayJobID != "" {
		b = append(b, " --array="...)
		b = strconv.AppendInt(b, int64(max(j.ArrayTaskID, 0)), 10)
		b = append(b, '%')
		b = strconv.AppendInt(b, int64(j.ArrayThrottle), 10)
	}
	if j.CheckpointInterval > 0 {
		b = append(b, " --checkpoint="...)
		b = AppendSacctDuration(b, int64(j.CheckpointInterval))
	}
	if j.Request.Switches > 0 {
		b = append(b, " --switches="...)
		b = strconv.AppendInt(b, int64(j.Request.Switches), 10)
		if j.Request.SwitchWait > 0 {
			b = append(b, '@')
			b = AppendSacctDuration(b, int64(j.Request.SwitchWait))
		}
	}
	return b
}

func (jw *sacctJobWriter) targets() bool { return len(jw.depIDs) > 0 }

// target numbers the non-Slurm ids that dependencies name, as write will.
func (jw *sacctJobWriter) target(j *workload.Job) {
	if slurmID(j.ID) {
		return
	}
	jw.planned++
	if jw.depIDs[j.ID] {
		if jw.renum == nil {
			jw.renum = map[string]string{}
		}
		if _, ok := jw.renum[j.ID]; !ok {
			jw.renum[j.ID] = strconv.FormatInt(jw.maxID+jw.planned, 10)
		}
	}
}

func (jw *sacctJobWriter) start(w io.Writer) error {
	if _, ok := jw.extraIdx["SubmitLine"]; jw.submitLine && !ok {
		jw.extraIdx["SubmitLine"] = len(jw.extraCols)
		jw.extraCols = append(jw.extraCols, "SubmitLine")
	}
	hdr := slices.Clone(sacctWritten)
	if jw.hasDeps {
		hdr = append(hdr, "Dependency")
	}
	hdr = append(hdr, jw.extraCols...)
	hdr = append(hdr, "JobName")
	jw.sw = NewSacctWriter(w, hdr)
	jw.vals = make([]string, len(jw.extraCols))
	jw.next = jw.maxID + 1
	return nil
}

func (jw *sacctJobWriter) write(j *workload.Job) error {
	if !validState(j.TraceState) {
		return fmt.Errorf("traces: write sacct: job %s: state %q is not a Slurm state word (upper-case letters and _)", j.ID, j.TraceState)
	}
	sw, loc, epoch := jw.sw, jw.loc, jw.clock
	id := j.ID
	if !slurmID(id) {
		id = strconv.FormatInt(jw.next, 10)
		jw.next++
	}
	state := j.TraceState
	vals := jw.vals
	for k := range vals {
		vals[k] = ""
	}
	for _, f := range j.Extra {
		if strings.EqualFold(f.Name, "State") {
			state = f.Value
			continue
		}
		if k, ok := jw.extraIdx[f.Name]; ok {
			vals[k] = f.Value
		}
	}
	if jw.submitLine && needsSubmitLine(j) {
		jw.line = appendSubmitLine(jw.line[:0], j)
		vals[jw.extraIdx["SubmitLine"]] = string(jw.line)
	}
	sw.Text(id)
	for _, s := range []string{j.User, j.Account, j.Partition, j.QOS, state} {
		sw.Text(s)
	}
	sw.Time(epoch, j.Submit, loc)
	switch {
	case j.TraceStart != workload.Unknown:
		sw.Time(epoch, j.TraceStart, loc)
	case j.CancelledPending():
		sw.Text("None")
	default:
		sw.Text("Unknown")
	}
	end := j.TraceEnd
	if j.CancelledPending() && end == workload.Unknown && j.CancelAfter > 0 {
		end = j.Submit + j.CancelAfter
	}
	sw.Time(epoch, end, loc)
	sw.Duration(int64(j.Runtime))
	if j.TimeLimit == workload.Unknown {
		sw.Text("Partition_Limit")
	} else {
		sw.Duration(int64(j.TimeLimit))
	}
	jw.tres = reqTRES(jw.tres[:0], &j.Request)
	sw.TRES(jw.tres)
	if jw.hasDeps {
		deps := jw.deps[:0]
		for k, d := range j.Deps {
			if k > 0 {
				deps = append(deps, ',')
			}
			deps = append(deps, d.Type.String()...)
			if d.Type != workload.DepSingleton {
				deps = append(deps, ':')
				dep := d.JobID
				if r, ok := jw.renum[dep]; ok {
					dep = r
				}
				deps = append(deps, dep...)
			}
		}
		jw.deps = deps
		sw.Text(string(deps))
	}
	for _, v := range vals {
		sw.Text(v)
	}
	// JobName comes last: the reader re-joins a "|" inside it.
	sw.LastText(j.Name)
	return sw.EndRow()
}

func (jw *sacctJobWriter) finish() error { return jw.sw.Flush() }

func validState(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && c != '_' {
			return false
		}
	}
	return true
}

// SacctWriter writes sacct --parsable2 (sacct -P) text field by field. It
// is the one writer of the format: WriteSacct writes traces with it, and
// package reports writes the simulated jobs (jobs.sacct) with it.
// NewSacctWriter writes the header line; a row is its fields, added in
// header order with the methods below, then EndRow. Fields are joined by
// "|" with no trailing "|", and lines end in "\n".
//
// sacct does not escape its delimiter. Text writes a "|" inside a value
// as "¦" and a line break as a space, so a line keeps its field count;
// LastText keeps a "|" (the reader re-joins one in the last column) and
// changes only line breaks. Times are wall-clock readings
// (YYYY-MM-DDTHH:MM:SS) and durations [D-]HH:MM:SS, as sacct prints them
// (../shared/reference/slurm-gpu-facts.md §1).
//
// Writes are buffered: the first error is kept and returned by EndRow and
// Flush; Flush must be called at the end.
type SacctWriter struct {
	bw     *bufio.Writer
	cols   int
	fields int
	line   []byte
	err    error
}

// NewSacctWriter returns a writer of sacct -P text to w with the given
// column names and writes the header line.
func NewSacctWriter(w io.Writer, header []string) *SacctWriter {
	s := &SacctWriter{bw: bufio.NewWriterSize(w, 64<<10), cols: len(header)}
	for _, h := range header {
		s.Text(h)
	}
	s.EndRow()
	return s
}

func (s *SacctWriter) sep() {
	if s.fields > 0 {
		s.line = append(s.line, '|')
	}
	s.fields++
}

// Text adds a field, with "|" written as "¦" and line breaks as spaces.
func (s *SacctWriter) Text(v string) {
	s.sep()
	if !strings.ContainsAny(v, "|\n\r") {
		s.line = append(s.line, v...)
		return
	}
	for _, r := range v {
		switch r {
		case '|':
			s.line = append(s.line, "¦"...)
		case '\n', '\r':
			s.line = append(s.line, ' ')
		default:
			s.line = utf8.AppendRune(s.line, r)
		}
	}
}

// LastText adds the last field of a row, free text that the sacct reader
// re-joins when it holds the delimiter: a "|" is kept, line breaks are
// written as spaces.
func (s *SacctWriter) LastText(v string) {
	s.sep()
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\n' || c == '\r' {
			c = ' '
		}
		s.line = append(s.line, c)
	}
}

// Int adds an integer field.
func (s *SacctWriter) Int(v int64) {
	s.sep()
	s.line = strconv.AppendInt(s.line, v, 10)
}

// Time adds the instant t (seconds after the Unix time epoch) as the wall
// clock in loc (nil: UTC) reads it, YYYY-MM-DDTHH:MM:SS, or "Unknown" when
// t is workload.Unknown.
func (s *SacctWriter) Time(epoch int64, t workload.Time, loc *time.Location) {
	s.sep()
	if t == workload.Unknown {
		s.line = append(s.line, "Unknown"...)
		return
	}
	s.line = AppendSacctTime(s.line, epoch+int64(t), loc)
}

// AppendSacctTime appends the Unix time u as the wall clock in loc (nil:
// UTC) reads it, YYYY-MM-DDTHH:MM:SS: what time.Time.AppendFormat gives
// with layout "2006-01-02T15:04:05", with one zone lookup and no layout
// parsing (a sacct file has four times a row). Years outside 0-9999,
// which the layout writes otherwise, go through AppendFormat.
func AppendSacctTime(b []byte, u int64, loc *time.Location) []byte {
	if loc == nil {
		loc = time.UTC
	}
	wall := time.Unix(u, 0).In(loc)
	_, off := wall.Zone()
	c := time.Unix(u+int64(off), 0).UTC()
	y, mo, d := c.Date()
	if y < 0 || y > 9999 {
		return wall.AppendFormat(b, "2006-01-02T15:04:05")
	}
	h, mi, sec := c.Clock()
	two := func(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-')
	b = append(two(b, int(mo)), '-')
	b = append(two(b, d), 'T')
	b = append(two(b, h), ':')
	b = append(two(b, mi), ':')
	return two(b, sec)
}

// Duration adds secs as sacct prints a duration (Elapsed, Timelimit):
// HH:MM:SS, or D-HH:MM:SS from one day on; INVALID when negative.
func (s *SacctWriter) Duration(secs int64) {
	s.sep()
	s.line = AppendSacctDuration(s.line, secs)
}

// TRES adds a TRES list (ReqTRES, AllocTRES): the "name=value" items
// sorted byte-wise, as Slurm sorts them, joined by ",". It sorts items in
// place.
func (s *SacctWriter) TRES(items []string) {
	s.sep()
	slices.Sort(items)
	for i, it := range items {
		if i > 0 {
			s.line = append(s.line, ',')
		}
		s.line = append(s.line, it...)
	}
}

// EndRow ends the row and writes it. It returns an error, and writes
// nothing, when the row has not as many fields as the header, and
// otherwise the first write error.
func (s *SacctWriter) EndRow() error {
	if s.err == nil && s.fields != s.cols {
		s.err = fmt.Errorf("traces: sacct row has %d fields, the header %d", s.fields, s.cols)
	}
	if s.err == nil {
		s.line = append(s.line, '\n')
		_, s.err = s.bw.Write(s.line)
	}
	s.line, s.fields = s.line[:0], 0
	return s.err
}

// Flush writes what is buffered and returns the first error.
func (s *SacctWriter) Flush() error {
	if s.err != nil {
		return s.err
	}
	return s.bw.Flush()
}

// AppendSacctDuration appends secs as sacct prints durations: HH:MM:SS,
// or D-HH:MM:SS from one day on (the days not padded); INVALID when
// negative.
func AppendSacctDuration(b []byte, secs int64) []byte {
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

// SacctMem formats MiB as sacct prints memory in a TRES list: Slurm's
// convert_num_unit with CONVERT_NUM_UNIT_EXACT divides by 1024 while the
// value is at least 1024 and a multiple of 512, with two decimals when the
// result is fractional ("512G", "1.50G", "1000M").
func SacctMem(mb int64) string {
	const units = "MGTPE"
	v, u := float64(mb), 0
	for v >= 1024 && math.Mod(v, 512) == 0 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == math.Trunc(v) {
		return strconv.FormatInt(int64(v), 10) + units[u:u+1]
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + units[u:u+1]
}

// reqTRES appends to items the request as ReqTRES items: cpu, gres/gpu
// (and gres/gpu:TYPE), gres/mps, mem in MiB and node, zeros included.
func reqTRES(items []string, r *workload.Request) []string {
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
	return items
}
