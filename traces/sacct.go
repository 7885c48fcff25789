package traces

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schedsim/schedsim/workload"
)

// SacctOptions configures a SacctReader. The zero value reads sacct -P
// output with a header row, auto-detecting the delimiter, strictly.
type SacctOptions struct {
	// Delimiter separates fields. "" auto-detects it from the first line:
	// "☃" (U+2603) when present, else "|", else a tab. sacct's default is
	// "|"; --delimiter changes it.
	Delimiter string
	// Fields names the columns of headerless output (sacct -n), in the
	// order of the --format list that made it. Entries may be
	// comma-separated lists and may carry sacct's "%N" width suffix, which
	// is ignored. Names match case-insensitively. A header row in the input
	// takes precedence.
	Fields []string
	// Lenient skips job rows with bad values (and their step rows) instead
	// of failing, counts them, and notes the first few by position.
	Lenient bool
	// SkipPending drops jobs that had not started by the time of the dump
	// (PENDING and the like) instead of keeping them with Runtime 0. They
	// are counted in Notes either way.
	SkipPending bool
	// TimeZone is the IANA zone of the host that ran sacct (its
	// timestamps are local wall-clock readings); Read converts the times
	// to Unix seconds in that zone and sets Trace.TimeZone. "" reads them
	// as UTC readings.
	TimeZone string
	// MaxArrayTasks bounds the jobs expanded from pending array records
	// in one read (0: Limits.MaxArrayTasks's default).
	MaxArrayTasks int64
}

// JobinfoFields is the --format list of the hb-jobinfo tool of the
// University of Groningen (github.com/rug-cit-hpc/hb-jobinfo), whose
// headerless "☃"-delimited output is the fixture
// ../shared/traces/sacct-parsable_habrok-rug.txt. Pass it as
// SacctOptions.Fields, or the preset name "jobinfo", to read such output.
var JobinfoFields = []string{
	"JobID", "JobName", "User", "Partition", "NodeList", "NNodes", "NCPUS", "NTasks", "State", "Submit", "Start",
	"End", "Timelimit", "Elapsed", "TotalCPU", "CPUTime", "UserCPU", "SystemCPU", "ReqMem", "MaxRSS", "MaxVMSize",
	"ReqTRES", "AllocTRES", "TRESUsageInMax", "TRESUsageInTot", "TRESUsageOutTot", "MaxDiskRead",
	"MaxDiskWrite", "MaxRSSNode", "MaxRSSTask", "MaxVMSizeNode", "MaxVMSizeTask", "MaxDiskReadNode",
	"MaxDiskReadTask", "MaxDiskWriteNode", "MaxDiskWriteTask", "Comment",
}

// sacctFieldPresets are field lists known by name: SacctOptions.Fields
// of one entry naming a preset stands for its list.
var sacctFieldPresets = map[string][]string{"jobinfo": JobinfoFields}

// SacctFieldPresets returns the names SacctOptions.Fields accepts for a
// known field list, sorted.
func SacctFieldPresets() []string {
	names := make([]string, 0, len(sacctFieldPresets))
	for n := range sacctFieldPresets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// expandFieldPreset returns the preset's list when fields is one preset
// name, else fields.
func expandFieldPreset(fields []string) []string {
	if len(fields) == 1 {
		if p, ok := sacctFieldPresets[strings.ToLower(strings.TrimSpace(fields[0]))]; ok {
			return p
		}
	}
	return fields
}

// SacctStats counts what a SacctReader did with its input.
type SacctStats struct {
	Lines            int // lines read
	Jobs             int // jobs returned, array tasks one by one
	StepsFolded      int // step rows folded into the job row before them
	OrphanSteps      int // step rows with no job row before them, skipped
	Pending          int // jobs that had not started by the dump (runtime 0)
	SkippedPending   int // of Pending, dropped by SkipPending
	Running          int // jobs with a start but no end: runtime censored
	CancelledPending int // jobs cancelled before they started
	ArrayRecords     int // pending array records ("123_[5-9]") expanded
	ArrayTasks       int // jobs those records expanded to
	TruncatedArrays  int // array records sacct cut short with "..."
	Bad              int // bad job rows skipped (Lenient)
	BadSteps         int // step rows of bad or dropped job rows, skipped
	// Duplicates counts job rows dropped as repeats (Stream, Read and
	// Open only, which make a first pass): records of a run (same JobID
	// and Start) other than the one with the longest Elapsed, and pending
	// records that a started record of the same job follows;
	// DuplicateSteps their step rows. RepeatedHeaders counts header rows
	// after the first.
	Duplicates      int
	DuplicateSteps  int
	RepeatedHeaders int
	// SubmitLine: the rows whose SubmitLine was read, those whose
	// SubmitLine could not be (not fatal), and what it gave that the
	// other columns lacked.
	SubmitLines    int
	BadSubmitLines int
	FromSubmitLine submitLineCounts
}

// submitLineCounts counts the job fields taken from SubmitLine.
type submitLineCounts struct {
	Requeue, NoRequeue, Throttle, Deps, TimeLimit, Checkpoint, Begin int
}

// maxNotedErrors is how many bad lines Lenient readers quote in Notes.
const maxNotedErrors = 5

// colRole says what a sacct column means to the reader.
type colRole uint8

const (
	roleOther colRole = iota
	roleJobID
	roleJobIDRaw
	roleJobName
	roleUser
	roleAccount
	rolePartition
	roleQOS
	roleState
	roleSubmit
	roleStart
	roleEnd
	roleElapsed
	roleElapsedRaw
	roleTimelimit
	roleTimelimitRaw
	roleReqTRES
	roleAllocTRES
	roleNNodes
	roleReqNodes
	roleNCPUS
	roleReqCPUS
	roleReqMem
	roleReqGRES
	roleAllocGRES
	roleNodeList
	roleDependency
	roleSubmitLine
	numRoles
)

// roleOf maps lower-case sacct field names to roles.
var roleOf = map[string]colRole{
	"jobid":        roleJobID,
	"jobidraw":     roleJobIDRaw,
	"jobname":      roleJobName,
	"user":         roleUser,
	"account":      roleAccount,
	"partition":    rolePartition,
	"qos":          roleQOS,
	"state":        roleState,
	"submit":       roleSubmit,
	"start":        roleStart,
	"end":          roleEnd,
	"elapsed":      roleElapsed,
	"elapsedraw":   roleElapsedRaw,
	"timelimit":    roleTimelimit,
	"timelimitraw": roleTimelimitRaw,
	"reqtres":      roleReqTRES,
	"alloctres":    roleAllocTRES,
	"nnodes":       roleNNodes,
	"allocnodes":   roleNNodes,
	"reqnodes":     roleReqNodes,
	"ncpus":        roleNCPUS,
	"alloccpus":    roleNCPUS,
	"reqcpus":      roleReqCPUS,
	"reqmem":       roleReqMem,
	"reqgres":      roleReqGRES,
	"allocgres":    roleAllocGRES,
	"nodelist":     roleNodeList,
	"dependency":   roleDependency,
	"submitline":   roleSubmitLine,
}

// consumed roles map onto Job fields and are not repeated in Extra.
var consumed = [numRoles]bool{
	roleJobID: true, roleJobName: true, roleUser: true, roleAccount: true,
	rolePartition: true, roleQOS: true, roleSubmit: true, roleStart: true,
	roleEnd: true, roleElapsed: true, roleTimelimit: true, roleDependency: true,
	// roleState is consumed only when the raw value equals its base word.
}

// freeText columns may hold the delimiter (sacct does not escape); when
// such a column comes last, surplus fields are joined back into it.
var freeText = map[string]bool{
	"jobname": true, "comment": true, "admincomment": true, "systemcomment": true,
	"submitline": true, "workdir": true, "constraints": true, "reason": true,
	"extra": true, "container": true, "stdout": true, "stderr": true, "stdin": true,
}

// SacctReader reads sacct --parsable / --parsable2 output one job at a
// time. Step rows ("123.batch") are folded into the job row before them;
// only the current job is buffered. See the package documentation for how
// columns map onto workload.Job.
type SacctReader struct {
	lr    *lineReader
	path  string
	opts  SacctOptions
	delim []byte
	// trailing: lines end with the delimiter (sacct -p, not -P).
	trailing bool

	names    []string        // column names, one string each, shared by all jobs' Extra
	col      [numRoles]int   // first column of each role, or -1
	extra    []int           // columns kept in Job.Extra
	in       []*interner     // per-column value interner
	types    *interner       // GPU type names
	states   *interner       // State base words
	joinLast bool            // last column is free text
	fields   [][]byte        // reused split buffer
	scratch  []byte          // reused for step-id rewriting
	idCol    int             // column holding the job id
	pending  []byte          // first data line, when it was read to find the header
	pendLine int             // its line number
	cur      heldJob         // the job being collected
	have     bool            // cur is valid
	exp      *arrayExpansion // tasks of a pending array record being emitted
	skipID   string          // job id whose step rows are skipped silently
	err      error           // sticky

	stats       SacctStats
	firstOrphan string
	badErrs     []*ParseError

	header     []string     // the header row's names, to recognise repeats; nil when headerless
	arrayLeft  int64        // array tasks this read may still expand
	arrayLimit int64        // Limits.MaxArrayTasks
	dups       *dupSet      // repeated records to drop (from a first pass), or nil
	dupSkipID  string       // job id whose step rows belong to a dropped repeat
	submits    *submitCache // parsed SubmitLines
	firstBadSL string       // the first SubmitLine that could not be read, by position
	lastLine   int          // the line of the job Next returned last
}

// heldJob is a parsed job row waiting for its step rows.
type heldJob struct {
	job  workload.Job
	line int // the job row's line
	// remainder: the row is a pending array record ("123_[5-9]") whose
	// tasks (ranges, tasks in all) are emitted one job each.
	remainder bool
	ranges    []arrayRange
	tasks     int64
}

// arrayExpansion emits one job per task of a pending array record.
type arrayExpansion struct {
	tmpl   workload.Job
	ranges []arrayRange
	r      int   // current range
	next   int64 // next task in it
}

// NewSacctReader returns a reader of the sacct output r. path names the
// input in errors and may be empty. It reads up to the first data line to
// find the columns: from a header row (one of whose fields is JobID or
// JobIDRaw) or, for headerless output, from opts.Fields. Columns JobID (or
// JobIDRaw) and Submit are required. Empty input gives a reader with no
// jobs. Errors in the input are *ParseError; a bad option is a plain error.
func NewSacctReader(r io.Reader, path string, opts SacctOptions) (*SacctReader, error) {
	return newSacctReader(r, path, opts, Limits{MaxArrayTasks: opts.MaxArrayTasks}.resolve(), nil)
}

// newSacctReader is NewSacctReader with limits and the repeated records
// a first pass found (nil: none dropped).
func newSacctReader(r io.Reader, path string, opts SacctOptions, lim Limits, dups *dupSet) (*SacctReader, error) {
	if strings.ContainsAny(opts.Delimiter, "\n\r") {
		return nil, fmt.Errorf("traces: sacct delimiter %q contains a line break", opts.Delimiter)
	}
	if opts.MaxArrayTasks > 0 {
		lim.MaxArrayTasks = opts.MaxArrayTasks
	}
	sr := &SacctReader{
		lr:         newLineReader(r),
		path:       path,
		opts:       opts,
		types:      newInterner(256),
		states:     newInterner(256),
		arrayLeft:  lim.MaxArrayTasks,
		arrayLimit: lim.MaxArrayTasks,
		dups:       dups,
		submits:    newSubmitCache(),
	}
	sr.lr.max = int(lim.MaxRecord)
	sr.states.share(sr.types.budget)
	var line []byte
	var err error
	for {
		line, err = sr.lr.next()
		if err == io.EOF {
			sr.err = io.EOF
			return sr, nil
		}
		if err != nil {
			return nil, sr.withPath(err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			break
		}
	}
	if opts.Delimiter != "" {
		sr.delim = []byte(opts.Delimiter)
	} else {
		sr.delim = detectDelimiter(line)
	}
	sr.trailing = bytes.HasSuffix(line, sr.delim)
	var names []string
	if bytes.Count(line, sr.delim) >= maxColumns {
		return nil, tooManyFields(path, sr.lr.line, maxColumns)
	}
	if hdr := sr.splitRaw(line); isSacctHeader(hdr) {
		for i, h := range hdr {
			name := strings.TrimSpace(string(h))
			if name == "" {
				if i == len(hdr)-1 && i > 0 {
					hdr = hdr[:i]
					break // trailing delimiter
				}
				return nil, &ParseError{Path: path, Line: sr.lr.line, Err: errKind(ErrSyntax, fmt.Sprintf("empty column name in header (column %d)", i+1))}
			}
			names = append(names, name)
		}
		if _, _, err := headerNames(hdr, path, sr.lr.line, true); err != nil {
			return nil, err
		}
		sr.header = names
	} else {
		if len(opts.Fields) == 0 {
			return nil, &ParseError{Path: path, Line: sr.lr.line, Err: errKind(ErrNoHeader, "no header row (no JobID column) and no field list given: name the columns of this sacct -n output (--fields, or trace.sacct.fields; preset: "+strings.Join(SacctFieldPresets(), ", ")+")")}
		}
		for _, f := range expandFieldPreset(opts.Fields) {
			for _, name := range strings.Split(f, ",") {
				name = strings.TrimSpace(name)
				if i := strings.IndexByte(name, '%'); i >= 0 {
					name = name[:i]
				}
				if name == "" {
					return nil, fmt.Errorf("%s: sacct field list (--fields, trace.sacct.fields) %q: empty name", path, strings.Join(opts.Fields, ","))
				}
				for j, prev := range names {
					if strings.EqualFold(prev, name) {
						return nil, fmt.Errorf("%s: sacct field list (--fields, trace.sacct.fields): %s twice, at positions %d and %d", path, name, j+1, len(names)+1)
					}
				}
				names = append(names, name)
			}
		}
		sr.pending = append([]byte(nil), line...)
		sr.pendLine = sr.lr.line
	}
	if err := sr.setColumns(names); err != nil {
		if sr.pending != nil {
			return nil, fmt.Errorf("%s: sacct field list (--fields, trace.sacct.fields): %w", path, err)
		}
		return nil, &ParseError{Path: path, Line: sr.lr.line, Err: err}
	}
	return sr, nil
}

// isSacctHeader reports whether fields are a header row: one of them is
// JobID or JobIDRaw.
func isSacctHeader(fields [][]byte) bool {
	for _, f := range fields {
		f = bytes.TrimSpace(f)
		if bytes.EqualFold(f, []byte("JobID")) || bytes.EqualFold(f, []byte("JobIDRaw")) {
			return true
		}
	}
	return false
}

// detectDelimiter picks the delimiter of a sacct line.
func detectDelimiter(line []byte) []byte {
	for _, d := range []string{"☃", "|", "\t"} {
		if bytes.Contains(line, []byte(d)) {
			return []byte(d)
		}
	}
	return []byte("|")
}

func (sr *SacctReader) setColumns(names []string) error {
	for i := range sr.col {
		sr.col[i] = -1
	}
	sr.names = names
	sr.in = make([]*interner, len(names))
	for i, n := range names {
		sr.in[i] = newInterner(4096).share(sr.types.budget)
		role := roleOf[strings.ToLower(n)]
		if role != roleOther && sr.col[role] < 0 {
			sr.col[role] = i
		}
	}
	sr.idCol = sr.col[roleJobID]
	if sr.idCol < 0 {
		sr.idCol = sr.col[roleJobIDRaw]
	}
	if sr.idCol < 0 {
		return errKind(ErrMissingColumn, "no JobID or JobIDRaw column")
	}
	if sr.col[roleSubmit] < 0 {
		return errKind(ErrMissingColumn, "no Submit column (a replay needs submit times)")
	}
	for i, n := range names {
		role := roleOf[strings.ToLower(n)]
		isFirst := role != roleOther && sr.col[role] == i
		if isFirst && (consumed[role] || role == roleState || i == sr.idCol) {
			continue
		}
		sr.extra = append(sr.extra, i)
	}
	sr.joinLast = freeText[strings.ToLower(names[len(names)-1])]
	sr.fields = make([][]byte, 0, len(names)+1)
	return nil
}

// Columns returns the column names in input order. The slice is shared:
// do not modify it.
func (sr *SacctReader) Columns() []string { return sr.names }

// Stats returns the counts so far.
func (sr *SacctReader) Stats() SacctStats { return sr.stats }

func (sr *SacctReader) withPath(err error) error {
	var pe *ParseError
	if errors.As(err, &pe) && pe.Path == "" {
		pe.Path = sr.path
	}
	return err
}

// splitRaw splits line at every delimiter (for the first line).
func (sr *SacctReader) splitRaw(line []byte) [][]byte {
	return bytes.Split(line, sr.delim)
}

// split splits a data line into exactly len(sr.names) fields.
func (sr *SacctReader) split(line []byte, lineNo int) ([][]byte, *ParseError) {
	want := len(sr.names)
	if sr.trailing && bytes.HasSuffix(line, sr.delim) {
		line = line[:len(line)-len(sr.delim)]
	}
	// At most want+1 fields are cut (the last holds the rest), so a line
	// of delimiters makes no more slices than the header has columns.
	f := sr.fields[:0]
	rest := line
	for len(f) < want {
		i := bytes.Index(rest, sr.delim)
		if i < 0 {
			break
		}
		f = append(f, rest[:i])
		rest = rest[i+len(sr.delim):]
	}
	f = append(f, rest)
	sr.fields = f[:0]
	if len(f) == want+1 && !sr.joinLast && len(f[want]) > 0 {
		n := len(f) - 1 + bytes.Count(f[want], sr.delim) + 1
		return nil, &ParseError{Path: sr.path, Line: lineNo, Err: errKind(ErrFieldCount, fmt.Sprintf("%d fields, want %d (delimiter %q)", n, want, sr.delim))}
	}
	switch {
	case len(f) == want:
	case len(f) == want+1 && len(f[want]) == 0:
		f = f[:want]
	case len(f) > want && sr.joinLast:
		// Re-join the surplus into the free-text last column: the fields
		// are consecutive slices of one line, so extend the slice.
		last, end := f[want-1], f[len(f)-1]
		n := cap(last) - cap(end) + len(end)
		f[want-1] = last[:n:n]
		f = f[:want]
	default:
		return nil, &ParseError{Path: sr.path, Line: lineNo, Err: errKind(ErrFieldCount, fmt.Sprintf("%d fields, want %d (delimiter %q)", len(f), want, sr.delim))}
	}
	return f, nil
}

// Next returns the next job, or io.EOF after the last. Errors are
// *ParseError naming the line, column and value; in strict mode (the
// default) an error ends the reading and is returned again by later calls.
func (sr *SacctReader) Next() (workload.Job, error) {
	for {
		if sr.exp != nil {
			if j, ok := sr.exp.nextTask(); ok {
				sr.stats.Jobs++
				return j, nil
			}
			sr.exp = nil
		}
		if sr.err != nil {
			if sr.err == io.EOF && sr.have {
				sr.have = false
				if j, ok := sr.emit(sr.cur); ok {
					return j, nil
				}
				continue
			}
			return workload.Job{}, sr.err
		}
		var line []byte
		lineNo := 0
		if sr.pending != nil {
			line, lineNo = sr.pending, sr.pendLine
			sr.pending = nil
			sr.stats.Lines = lineNo
		} else {
			var err error
			line, err = sr.lr.next()
			if err != nil {
				sr.err = sr.withPath(err)
				continue
			}
			lineNo = sr.lr.line
			sr.stats.Lines = lineNo
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		f, perr := sr.split(line, lineNo)
		// A second dump appended with its own header: a job id starts
		// with a digit, so only a row that does not is looked at.
		if (perr != nil || len(f[sr.idCol]) > 0 && (f[sr.idCol][0] < '0' || f[sr.idCol][0] > '9')) && isHeaderRow(line, sr.delim) {
			sr.stats.RepeatedHeaders++
			continue
		}
		if perr != nil {
			if sr.lenient(perr) {
				continue
			}
			return workload.Job{}, sr.err
		}
		var jobPart []byte
		var isStep bool
		jobPart, isStep, sr.scratch = splitStep(f[sr.idCol], sr.scratch)
		if !isStep && sr.dups.drop(lineNo) {
			sr.stats.Duplicates++
			sr.dupSkipID = string(jobPart)
			continue
		}
		if isStep {
			switch {
			case sr.dupSkipID != "" && string(jobPart) == sr.dupSkipID:
				sr.stats.DuplicateSteps++
			case sr.have && string(jobPart) == sr.cur.job.ID:
				sr.stats.StepsFolded++
			case sr.skipID != "" && string(jobPart) == sr.skipID:
				sr.stats.BadSteps++
			default:
				if sr.stats.OrphanSteps == 0 {
					sr.firstOrphan = fmt.Sprintf("%s:%d (%s)", sr.path, lineNo, f[sr.idCol])
				}
				sr.stats.OrphanSteps++
			}
			continue
		}
		sr.dupSkipID = ""
		h, skip, perr := sr.parseJob(f, jobPart, lineNo)
		if perr != nil {
			sr.skipID = string(jobPart)
			var le *LimitError
			if errors.As(perr, &le) {
				sr.err = perr // a limit is not a bad row: it ends the read, lenient or not
				return workload.Job{}, sr.err
			}
			if sr.lenient(perr) {
				continue
			}
			return workload.Job{}, sr.err
		}
		if skip {
			sr.skipID = h.job.ID
			continue
		}
		if sr.have {
			out := sr.cur
			sr.cur = h
			if j, ok := sr.emit(out); ok {
				return j, nil
			}
			continue
		}
		sr.cur, sr.have = h, true
	}
}

// lenient records a bad line and reports whether reading goes on.
func (sr *SacctReader) lenient(perr *ParseError) bool {
	if !sr.opts.Lenient {
		sr.err = perr
		return false
	}
	sr.stats.Bad++
	if len(sr.badErrs) < maxNotedErrors {
		sr.badErrs = append(sr.badErrs, perr)
	}
	return true
}

// emit returns a finished job, or starts the expansion of a pending array
// record and returns its first task.
func (sr *SacctReader) emit(h heldJob) (workload.Job, bool) {
	sr.lastLine = h.line
	if !h.remainder {
		sr.stats.Jobs++
		return h.job, true
	}
	sr.stats.ArrayRecords++
	sr.stats.ArrayTasks += int(h.tasks)
	if len(h.ranges) == 0 {
		return workload.Job{}, false // sacct truncated the whole expression
	}
	sr.exp = &arrayExpansion{tmpl: h.job, ranges: h.ranges, next: h.ranges[0].lo}
	if j, ok := sr.exp.nextTask(); ok {
		sr.stats.Jobs++
		return j, true
	}
	sr.exp = nil
	return workload.Job{}, false
}

func (e *arrayExpansion) nextTask() (workload.Job, bool) {
	for e.r < len(e.ranges) && e.next > e.ranges[e.r].hi {
		e.r++
		if e.r < len(e.ranges) {
			e.next = e.ranges[e.r].lo
		}
	}
	if e.r >= len(e.ranges) {
		return workload.Job{}, false
	}
	task := e.next
	e.next += e.ranges[e.r].step
	j := e.tmpl
	j.ArrayTaskID = int32(task)
	j.ID = e.tmpl.ArrayJobID + "_" + strconv.FormatInt(task, 10)
	if i := strings.IndexByte(e.tmpl.ID, '+'); i >= 0 {
		j.ID += e.tmpl.ID[i:]
	}
	if e.tmpl.Extra != nil {
		j.Extra = append([]workload.Field(nil), e.tmpl.Extra...)
	}
	if e.tmpl.Deps != nil {
		j.Deps = append([]workload.Dependency(nil), e.tmpl.Deps...)
	}
	return j, true
}

// parseJob turns the fields of a job row into a job. skip reports a job
// dropped by SkipPending.
func (sr *SacctReader) parseJob(f [][]byte, jobPart []byte, lineNo int) (h heldJob, skip bool, _ *ParseError) {
	bad := func(col int, err error) *ParseError {
		return &ParseError{Path: sr.path, Line: lineNo, Field: sr.names[col], Value: string(f[col]), Err: err}
	}
	get := func(r colRole) []byte {
		if c := sr.col[r]; c >= 0 {
			return f[c]
		}
		return nil
	}
	str := func(r colRole) string {
		if c := sr.col[r]; c >= 0 {
			return sr.in[c].get(f[c])
		}
		return ""
	}

	id, err := parseJobID(jobPart)
	if err != nil {
		return h, false, bad(sr.idCol, err)
	}
	j := workload.NewJob(string(jobPart))
	h.line = lineNo
	if id.arrayJob != nil {
		j.ArrayJobID = sr.in[sr.idCol].get(id.arrayJob)
		j.ArrayTaskID = int32(id.task)
	}
	if id.arrayExpr != nil {
		rs, tasks, trunc, err := parseArrayExpr(id.arrayExpr, sr.arrayLeft)
		if errors.Is(err, errArrayBudget) {
			msg := fmt.Sprintf("pending array record expands to %s jobs", fmtCount(int(tasks)))
			if sr.arrayLeft < sr.arrayLimit {
				msg += fmt.Sprintf(" (%s expanded before it)", fmtCount(int(sr.arrayLimit-sr.arrayLeft)))
			}
			return h, false, bad(sr.idCol, &LimitError{Flag: "max-array-tasks", Limit: sr.arrayLimit, Msg: msg})
		}
		if err != nil {
			return h, false, bad(sr.idCol, err)
		}
		sr.arrayLeft -= tasks
		if trunc {
			sr.stats.TruncatedArrays++
		}
		h.remainder, h.ranges, h.tasks = true, rs, tasks
		if i := bytes.IndexByte(id.arrayExpr, '%'); i >= 0 {
			if n, ok := parseUint(id.arrayExpr[i+1:], math.MaxInt32); ok {
				j.ArrayThrottle = int32(n)
			}
		}
	}
	j.Name = str(roleJobName)
	j.User = str(roleUser)
	j.Account = str(roleAccount)
	j.Partition = str(rolePartition)
	j.QOS = str(roleQOS)

	stateRaw := get(roleState)
	base, err := stateBase(stateRaw)
	if err != nil {
		return h, false, bad(sr.col[roleState], err)
	}
	j.TraceState = sr.states.get(base)
	keepStateRaw := len(base) != len(stateRaw)

	submit, err := parseTimestamp(get(roleSubmit))
	if err != nil {
		return h, false, bad(sr.col[roleSubmit], err)
	}
	if submit == workload.Unknown {
		return h, false, bad(sr.col[roleSubmit], errKind(ErrRange, "a job row needs a submit time"))
	}
	start, err := parseTimestamp(get(roleStart))
	if err != nil {
		return h, false, bad(sr.col[roleStart], err)
	}
	end, err := parseTimestamp(get(roleEnd))
	if err != nil {
		return h, false, bad(sr.col[roleEnd], err)
	}

	elapsed, err := parseDuration(get(roleElapsed))
	if err != nil {
		return h, false, bad(sr.col[roleElapsed], err)
	}
	if raw := get(roleElapsedRaw); raw != nil {
		er, err := parseSeconds(raw)
		if err != nil {
			return h, false, bad(sr.col[roleElapsedRaw], err)
		}
		if elapsed == workload.Unknown {
			elapsed = er
		}
	}

	j.TimeLimit, err = parseTimelimit(get(roleTimelimit))
	if err != nil {
		return h, false, bad(sr.col[roleTimelimit], err)
	}
	if raw := get(roleTimelimitRaw); raw != nil {
		tl, err := parseTimelimitRaw(raw)
		if err != nil {
			return h, false, bad(sr.col[roleTimelimitRaw], err)
		}
		if j.TimeLimit == workload.Unknown && len(get(roleTimelimit)) == 0 {
			j.TimeLimit = tl
		}
	}

	// Request: ReqTRES, then the Req* count columns, then AllocTRES, then
	// NNodes/NCPUS/ReqMem and old-style GRES columns.
	var req, alloc tres
	req, alloc = tres{nodes: -1, cpus: -1, gpus: -1, mem: -1, typed: -1, mps: -1}, tres{nodes: -1, cpus: -1, gpus: -1, mem: -1, typed: -1, mps: -1}
	if c := sr.col[roleReqTRES]; c >= 0 && len(f[c]) > 0 {
		if req, err = parseTRES(f[c], sr.types); err != nil {
			return h, false, bad(c, err)
		}
	}
	if c := sr.col[roleAllocTRES]; c >= 0 && len(f[c]) > 0 {
		if alloc, err = parseTRES(f[c], sr.types); err != nil {
			return h, false, bad(c, err)
		}
	}
	count := func(r colRole) (int64, *ParseError) {
		c := sr.col[r]
		if c < 0 {
			return -1, nil
		}
		n, err := parseCount(f[c])
		if err != nil {
			return 0, bad(c, err)
		}
		return n, nil
	}
	nnodes, perr := count(roleNNodes)
	if perr != nil {
		return h, false, perr
	}
	reqNodes, perr := count(roleReqNodes)
	if perr != nil {
		return h, false, perr
	}
	ncpus, perr := count(roleNCPUS)
	if perr != nil {
		return h, false, perr
	}
	reqCPUs, perr := count(roleReqCPUS)
	if perr != nil {
		return h, false, perr
	}
	nodes := firstKnown(req.nodes, reqNodes, alloc.nodes, nnodes)
	cpus := firstKnown(req.cpus, reqCPUs, alloc.cpus, ncpus)
	mem := firstKnown(req.mem, alloc.mem)
	if c := sr.col[roleReqMem]; c >= 0 && len(f[c]) > 0 {
		rm, err := parseReqMem(f[c])
		if err != nil {
			return h, false, bad(c, err)
		}
		if mem < 0 {
			mem = rm.mib
			switch {
			case rm.perCPU:
				mem *= max(cpus, 1)
			case rm.perNode:
				mem *= max(nodes, 1)
			}
		}
	}
	gpus, gpuType := int64(-1), ""
	switch {
	case req.gpuCount() >= 0:
		gpus, gpuType = req.gpuCount(), req.gpuType
	case alloc.gpuCount() >= 0:
		gpus, gpuType = alloc.gpuCount(), alloc.gpuType
	}
	if c := sr.col[roleReqGRES]; c >= 0 && len(f[c]) > 0 {
		n, typ, err := parseOldGRES(f[c], sr.types)
		if err != nil {
			return h, false, bad(c, err)
		}
		if gpus < 0 && n >= 0 {
			gpus, gpuType = n*max(nodes, 1), typ // per node
		}
	}
	if c := sr.col[roleAllocGRES]; c >= 0 && len(f[c]) > 0 {
		n, typ, err := parseOldGRES(f[c], sr.types)
		if err != nil {
			return h, false, bad(c, err)
		}
		if gpus < 0 && n >= 0 {
			gpus, gpuType = n, typ // whole job
		}
	}
	if gpus > 1<<31-1 || mem > maxMemMiB {
		return h, false, &ParseError{Path: sr.path, Line: lineNo, Err: errKind(ErrRange, "GPU count or memory too large")}
	}
	j.Request = workload.Request{
		Nodes:   int32(max(nodes, 0)),
		GPUs:    int32(max(gpus, 0)),
		GPUType: gpuType,
		CPUs:    int32(max(cpus, 0)),
		MemMB:   max(mem, 0),
	}
	// A GPU type naming a MIG profile (gres/gpu:1g.10gb=2,
	// gres/gpu:h100_1g.20gb=2) asks for that many MIG instances: the
	// profile goes to MIGProfile and any prefix before the last "_" to
	// GPUType (h100).
	if t, p, ok := workload.SplitMIGType(gpuType); ok {
		j.Request.GPUType, j.Request.MIGProfile = t, p
	}
	// An MPS share (--gres=mps:N, N percent of one GPU per node): gres/mps
	// in ReqTRES/AllocTRES sums it over the job's nodes; ReqGRES/AllocGRES
	// give it per node.
	mps := int64(-1)
	switch {
	case req.mps >= 0:
		mps = (req.mps + max(nodes, 1) - 1) / max(nodes, 1)
	case alloc.mps >= 0:
		mps = (alloc.mps + max(nodes, 1) - 1) / max(nodes, 1)
	}
	for _, role := range [...]colRole{roleReqGRES, roleAllocGRES} {
		if c := sr.col[role]; mps < 0 && c >= 0 && len(f[c]) > 0 {
			mps = parseOldMPS(f[c])
		}
	}
	if mps > 0 {
		j.Request.MPSShare = int32(mps)
	}

	if c := sr.col[roleDependency]; c >= 0 {
		if j.Deps, err = parseDeps(f[c]); err != nil {
			return h, false, bad(c, err)
		}
	}

	var begin string // Extra "Begin" from the SubmitLine
	if c := sr.col[roleSubmitLine]; c >= 0 && len(f[c]) > 0 {
		limitGiven := len(get(roleTimelimit)) > 0 || len(get(roleTimelimitRaw)) > 0
		begin = sr.applySubmitLine(&j, f[c], lineNo, limitGiven, h.remainder, submit)
	}

	// Times and runtime.
	noAlloc := false
	if c := sr.col[roleNodeList]; c >= 0 && string(f[c]) == "None assigned" {
		noAlloc = true
	}
	if c := sr.col[roleAllocTRES]; c >= 0 && len(f[c]) == 0 {
		noAlloc = true
	}
	// A job with elapsed time ran even when its start is unknown (SWF logs
	// without wait times, written back as sacct).
	neverStarted := (start == workload.Unknown && !(elapsed > 0)) || (noAlloc && elapsed <= 0)
	mult := 1 // jobs this row stands for
	if h.remainder {
		mult = int(h.tasks)
	}
	j.Submit = submit
	j.TraceEnd = end
	switch {
	case neverStarted && (j.TraceState == "CANCELLED" || j.TraceState == "FAILED" && string(get(roleStart)) == "None"):
		// Cancelled while pending, or failed before it started (FAILED
		// with Start None: an SWF job that never started, written back
		// as sacct): the end is when it left the queue.
		j.CancelAfter = 0
		if end != workload.Unknown {
			j.CancelAfter = max(end-submit, 0)
		}
		j.Runtime = 0
		sr.stats.CancelledPending += mult
	case neverStarted && end == workload.Unknown:
		// Still pending at the dump: real runtime unknown.
		j.Runtime = 0
		sr.stats.Pending += mult
		if sr.opts.SkipPending {
			sr.stats.SkippedPending += mult
			h.job = j
			return h, true, nil
		}
	default:
		if !neverStarted {
			j.TraceStart = start
		}
		switch {
		case elapsed != workload.Unknown:
			j.Runtime = elapsed
		case start != workload.Unknown && end != workload.Unknown:
			if end < start {
				return h, false, bad(sr.col[roleEnd], errKind(ErrRange, "End is before Start"))
			}
			j.Runtime = end - start
		default:
			j.Runtime = 0
		}
		if !neverStarted && start != workload.Unknown && end == workload.Unknown {
			sr.stats.Running += mult
		}
	}

	// Extra: every other non-empty column, and State when it carried more
	// than its base word.
	n := 0
	for _, c := range sr.extra {
		if len(f[c]) > 0 {
			n++
		}
	}
	if keepStateRaw {
		n++
	}
	if begin != "" {
		n++
	}
	if n > 0 {
		j.Extra = make([]workload.Field, 0, n)
		sc := sr.col[roleState]
		for _, c := range sr.extra {
			if keepStateRaw && sc >= 0 && sc < c {
				j.Extra = append(j.Extra, workload.Field{Name: sr.names[sc], Value: sr.in[sc].get(f[sc])})
				keepStateRaw = false
			}
			if len(f[c]) > 0 {
				j.Extra = append(j.Extra, workload.Field{Name: sr.names[c], Value: sr.in[c].get(f[c])})
			}
		}
		if keepStateRaw {
			j.Extra = append(j.Extra, workload.Field{Name: sr.names[sc], Value: sr.in[sc].get(f[sc])})
		}
		if begin != "" {
			j.Extra = append(j.Extra, workload.Field{Name: "Begin", Value: sr.in[sr.col[roleSubmitLine]].get([]byte(begin))})
		}
	}
	h.job = j
	return h, false, nil
}

// applySubmitLine sets what the job's SubmitLine gives and the other
// columns lack: Requeue, the array throttle, Deps, TimeLimit (when no
// Timelimit column says), CheckpointInterval, --switches (Req.Switches,
// SwitchWait), and Extra "Begin" (the
// --begin time, as sacct writes times, when it can be resolved; else as
// given), which it returns. A SubmitLine that cannot be read is counted,
// never fatal.
func (sr *SacctReader) applySubmitLine(j *workload.Job, line []byte, lineNo int, limitGiven, pendingArray bool, submit workload.Time) (begin string) {
	sl, err := sr.submits.parse(line)
	if err != nil {
		sr.stats.BadSubmitLines++
		if sr.firstBadSL == "" {
			sr.firstBadSL = fmt.Sprintf("%s:%d: %v", sr.path, lineNo, err)
		}
		return ""
	}
	sr.stats.SubmitLines++
	n := &sr.stats.FromSubmitLine
	switch sl.requeue {
	case 1:
		j.Requeue = true
		n.Requeue++
	case -1:
		j.Requeue = false
		n.NoRequeue++
	}
	if sl.throttle > 0 && j.ArrayThrottle == 0 && (j.ArrayJobID != "" || pendingArray) {
		j.ArrayThrottle = sl.throttle
		n.Throttle++
	}
	if sl.hasDeps && len(j.Deps) == 0 && len(sl.deps) > 0 {
		j.Deps = append([]workload.Dependency(nil), sl.deps...)
		n.Deps++
	}
	if sl.hasTime && !limitGiven && j.TimeLimit == workload.Unknown {
		j.TimeLimit = sl.timeLimit
		if sl.timeLimit != workload.Unknown {
			n.TimeLimit++
		}
	}
	if sl.checkpoint > 0 {
		j.CheckpointInterval = int32(sl.checkpoint) // at most MaxCheckpointInterval (parseSubmitLine)
		n.Checkpoint++
	}
	if sl.switches > 0 {
		j.Request.Switches, j.Request.SwitchWait = sl.switches, sl.switchWait
	}
	if sl.begin != "" {
		begin = sl.begin
		if t, ok := resolveBegin(sl.begin, submit); ok {
			begin = time.Unix(int64(t), 0).UTC().Format("2006-01-02T15:04:05")
		}
		n.Begin++
	}
	return begin
}

// firstKnown returns the first value that is not -1 (absent), or -1.
func firstKnown(vs ...int64) int64 {
	for _, v := range vs {
		if v >= 0 {
			return v
		}
	}
	return -1
}

// Notes returns human-readable remarks on what the reader did, for
// Trace.Notes; call it after Next has returned io.EOF.
func (sr *SacctReader) Notes() []string {
	s := sr.stats
	var notes []string
	add := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	add("sacct timestamps (no zone) read as UTC wall-clock readings")
	if s.StepsFolded > 0 {
		add("folded %s step rows into their jobs", fmtCount(s.StepsFolded))
	}
	if s.OrphanSteps > 0 {
		add("skipped %s step rows with no job row before them (first: %s)", fmtCount(s.OrphanSteps), sr.firstOrphan)
	}
	if s.ArrayRecords > 0 {
		add("expanded %s pending array records into %s pending jobs", fmtCount(s.ArrayRecords), fmtCount(s.ArrayTasks))
	}
	if s.TruncatedArrays > 0 {
		add("%s pending array records were cut short by sacct (\"...\"): their remaining tasks are missing", fmtCount(s.TruncatedArrays))
	}
	if s.CancelledPending > 0 {
		add("%s jobs were cancelled (or failed) before they started: runtime 0, CancelAfter = End - Submit", fmtCount(s.CancelledPending))
	}
	if s.Pending > 0 {
		if s.SkippedPending > 0 {
			add("dropped %s jobs that had not started by the time of the dump (PENDING)", fmtCount(s.SkippedPending))
		} else {
			add("%s jobs had not started by the time of the dump (PENDING): kept with runtime 0, their real runtime is unknown", fmtCount(s.Pending))
		}
	}
	if s.Running > 0 {
		add("%s jobs had no end time (RUNNING at the dump): runtime is the elapsed time so far (censored)", fmtCount(s.Running))
	}
	if s.Bad > 0 {
		msgs := make([]string, len(sr.badErrs))
		for i, e := range sr.badErrs {
			msgs[i] = e.Error()
		}
		add("skipped %s bad lines (lenient); first: %s", fmtCount(s.Bad), strings.Join(msgs, "; "))
	}
	if s.BadSteps > 0 {
		add("skipped %s step rows of skipped jobs", fmtCount(s.BadSteps))
	}
	if s.Duplicates > 0 {
		add("dropped %s repeated records (two dumps appended?): of the records of one run (same JobID and Start) the one with the longest Elapsed is kept, and a pending record is dropped when a started record of the same job follows it; every run of a requeued job (sacct -D) is kept", fmtCount(s.Duplicates))
	}
	if s.RepeatedHeaders > 0 {
		add("skipped %s repeated header rows", fmtCount(s.RepeatedHeaders))
	}
	if s.SubmitLines > 0 || s.BadSubmitLines > 0 {
		c := s.FromSubmitLine
		var got []string
		for _, x := range []struct {
			n    int
			what string
		}{{c.Requeue, "--requeue"}, {c.NoRequeue, "--no-requeue"}, {c.Throttle, "array throttles"}, {c.Deps, "dependencies"},
			{c.TimeLimit, "time limits"}, {c.Checkpoint, "checkpoint intervals (--checkpoint)"}, {c.Begin, "--begin times (Extra Begin)"}} {
			if x.n > 0 {
				got = append(got, fmtCount(x.n)+" "+x.what)
			}
		}
		msg := fmt.Sprintf("read the SubmitLine of %s jobs", fmtCount(s.SubmitLines))
		if len(got) > 0 {
			msg += ": " + strings.Join(got, ", ")
		} else {
			msg += ": nothing the other columns lacked"
		}
		if s.BadSubmitLines > 0 {
			msg += fmt.Sprintf("; %s SubmitLines could not be read and were ignored (first: %s)", fmtCount(s.BadSubmitLines), sr.firstBadSL)
		}
		add("%s", msg)
	}
	return notes
}
