package traces

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // TimeZoneString zones resolve the same on every machine
	"unicode"

	"github.com/schedsim/schedsim/workload"
)

// SWF field names, 1-based as the Standard Workload Format 2.2 numbers
// them (Parallel Workloads Archive, "The Standard Workload Format"). They
// name fields in errors and in Job.Extra.
var swfFieldNames = [19]string{
	1:  "job_number",
	2:  "submit_time",
	3:  "wait_time",
	4:  "run_time",
	5:  "allocated_processors",
	6:  "average_cpu_time",
	7:  "used_memory",
	8:  "requested_processors",
	9:  "requested_time",
	10: "requested_memory",
	11: "status",
	12: "user_id",
	13: "group_id",
	14: "executable_number",
	15: "queue_number",
	16: "partition_number",
	17: "preceding_job_number",
	18: "think_time",
}

// swfExtra lists the fields kept in Job.Extra (when not -1), in order.
var swfExtra = []int{5, 6, 7, 8, 10, 11, 13, 14, 15, 16, 17, 18}

// SWFOptions configures an SWFReader.
type SWFOptions struct {
	// ProcsPerNode, when > 0, makes the request Nodes =
	// ceil(procs/ProcsPerNode) and CPUs = procs. When 0, Nodes is 0 ("any
	// nodes") and CPUs = procs: processors are the unit scheduled.
	ProcsPerNode int
	// ProcsPerGPU, when > 0, maps processors onto GPUs: the request is
	// GPUs = ceil(procs/ProcsPerGPU), CPUs = 0, Nodes = 0. This is how an
	// SWF log with no GPUs is replayed on a GPU cluster. It overrides
	// ProcsPerNode.
	ProcsPerGPU int
	// Lenient skips records with bad values instead of failing, counts
	// them, and notes the first few by position.
	Lenient bool
}

// SWFHeader holds the header comments of an SWF file (the leading lines
// starting with ';'). The typed fields are parsed from their "; Key: value"
// lines; a value such as "338 (batch partition; 512 total)" gives its
// leading number. Absent fields are zero.
type SWFHeader struct {
	Version        string
	Computer       string
	Installation   string
	MaxJobs        int
	MaxRecords     int
	UnixStartTime  int64 // Unix time of submit_time 0
	TimeZone       int   // seconds from UTC (deprecated by TimeZoneString)
	TimeZoneString string
	MaxNodes       int
	MaxProcs       int
	MaxRuntime     int64 // seconds
	MaxMemory      int64 // KB
	// Queues and Partitions are the "; Queue: N name" and
	// "; Partition: N name" lines, which name the numbers in fields 15
	// and 16.
	Queues     []SWFUnit
	Partitions []SWFUnit
	// Fields is every header line in order, so nothing is lost. A line
	// that is not "Key: value" (a continuation, a blank ";") has an empty
	// Key and its text after ';' as Value.
	Fields []SWFHeaderField
}

// SWFUnit is a numbered queue or partition named in the header.
type SWFUnit struct {
	Number int
	Name   string
}

// SWFHeaderField is one header comment line.
type SWFHeaderField struct {
	Key   string
	Value string
}

// Get returns the value of the first header line with key (compared
// case-insensitively) and whether there was one.
func (h *SWFHeader) Get(key string) (string, bool) {
	for _, f := range h.Fields {
		if f.Key != "" && strings.EqualFold(f.Key, key) {
			return f.Value, true
		}
	}
	return "", false
}

// SWFStats counts what an SWFReader did with its input.
type SWFStats struct {
	Lines     int // lines read, comments included
	Records   int // job records (non-comment, non-blank lines)
	Jobs      int // jobs returned
	Skipped   int // records without a submit time (phantoms), skipped
	NoSubmit  int // the same: records with submit_time -1
	NoRuntime int // jobs with run_time -1: kept, runtime 0
	NoProcs   int // jobs with no processor count (fields 5 and 8 <= 0): kept, request 0
	// NeverStarted counts the jobs with no processors and run time 0 or
	// -1: failed or cancelled before they started; they leave the queue
	// at submit + wait (CancelAfter) without running.
	NeverStarted int
	Bad          int // bad records skipped (Lenient)
	Comments     int // comment lines after the first record, ignored
	// PartialRecords counts partial-execution records (status 2, 3, 4);
	// FoldedJobs the jobs they were folded into.
	PartialRecords int
	FoldedJobs     int
	FoldedRecords  int // records folded into a job before them (not jobs themselves)
}

// SWFReader reads a Standard Workload Format (2.2) log one job at a time.
// See the package documentation for how fields map onto workload.Job.
type SWFReader struct {
	users    map[int64]string // user names by number (userName)
	lr       *lineReader
	path     string
	opts     SWFOptions
	header   SWFHeader
	pending  []byte // first record, read while reading the header
	pendLine int
	// toks are where the fields of the record parseRecord last read lie
	// in its line: field f is line[toks[f-1][0]:toks[f-1][1]]. Offsets,
	// not slices: a store of one is no pointer write.
	toks     [18][2]int
	in       [19]*interner
	ints     []string // decimal strings of small numbers (intString)
	err      error    // sticky
	stats    SWFStats
	badErrs  []*ParseError
	zone     *time.Location // from TimeZoneString; nil when absent or unknown
	zoneNote string

	// slots[hi] holds the job waiting for its partial-execution records
	// (when have); the next job is read into the other slot, so that
	// neither is copied to make room.
	slots      [2]swfHeld
	hi         int
	have       bool
	lastStatus int64 // status and job number of the record parseRecord last returned
	lastNum    int64
	recLine    int // its line
	lastLine   int // the line of the job Next returned last

	noExtra bool // Options.NoExtra: no Extra lists
}

// NewSWFReader returns a reader of the SWF log r, having read its header
// comments (Header). path names the input in errors and may be empty.
// Errors in the input are *ParseError; a bad option is a plain error.
func NewSWFReader(r io.Reader, path string, opts SWFOptions) (*SWFReader, error) {
	return newSWFReader(r, path, opts, Limits{}.resolve())
}

func newSWFReader(r io.Reader, path string, opts SWFOptions, lim Limits) (*SWFReader, error) {
	if opts.ProcsPerNode < 0 || opts.ProcsPerGPU < 0 {
		return nil, fmt.Errorf("traces: SWF ProcsPerNode %d and ProcsPerGPU %d must be >= 0", opts.ProcsPerNode, opts.ProcsPerGPU)
	}
	sr := &SWFReader{lr: newLineReader(r), path: path, opts: opts}
	sr.lr.max = int(lim.MaxRecord)
	for _, i := range []int{5, 8, 11, 13, 14, 15, 16} {
		sr.in[i] = newInterner(4096)
	}
	for {
		line, err := sr.lr.next()
		if err == io.EOF {
			sr.err = io.EOF
			break
		}
		if err != nil {
			return nil, sr.withPath(err)
		}
		sr.stats.Lines = sr.lr.line
		t := bytes.TrimLeft(line, " \t")
		if len(t) == 0 {
			continue
		}
		if t[0] != ';' {
			sr.pending = append([]byte(nil), line...)
			sr.pendLine = sr.lr.line
			break
		}
		if err := sr.headerLine(t[1:]); err != nil {
			return nil, err
		}
	}
	return sr, nil
}

func (sr *SWFReader) withPath(err error) error {
	var pe *ParseError
	if errors.As(err, &pe) && pe.Path == "" {
		pe.Path = sr.path
	}
	return err
}

// headerKey splits "Key: value" (after the ';'): Key is letters, digits and
// underscores, followed by ':' and then a space or the end of the line.
func headerKey(b []byte) (key, val []byte, ok bool) {
	t := bytes.TrimLeft(b, " \t")
	i := 0
	for i < len(t) && (t[i] == '_' || t[i] >= 'a' && t[i] <= 'z' || t[i] >= 'A' && t[i] <= 'Z' || t[i] >= '0' && t[i] <= '9') {
		i++
	}
	if i == 0 || i >= len(t) || t[i] != ':' {
		return nil, nil, false
	}
	if i+1 < len(t) && !unicode.IsSpace(rune(t[i+1])) {
		return nil, nil, false // "http://..."
	}
	return t[:i], bytes.TrimSpace(t[i+1:]), true
}

// headerLine records one header comment (the text after ';').
func (sr *SWFReader) headerLine(b []byte) error {
	h := &sr.header
	b = bytes.TrimRightFunc(b, unicode.IsSpace)
	key, val, ok := headerKey(b)
	if !ok {
		h.Fields = append(h.Fields, SWFHeaderField{Value: string(b)})
		return nil
	}
	k, v := string(key), string(val)
	h.Fields = append(h.Fields, SWFHeaderField{Key: k, Value: v})
	signed := strings.EqualFold(k, "TimeZone")
	num := func() (int64, error) {
		n, ok := leadingInt(val)
		if !ok {
			return 0, &ParseError{Path: sr.path, Line: sr.lr.line, Field: k, Value: v, Err: errKind(ErrSyntax, "want a number, optionally followed by a remark")}
		}
		if n < 0 && !signed {
			return 0, &ParseError{Path: sr.path, Line: sr.lr.line, Field: k, Value: v, Err: errKind(ErrRange, "must be >= 0")}
		}
		return n, nil
	}
	var err error
	var n int64
	switch strings.ToLower(k) {
	case "version":
		h.Version = v
	case "computer":
		h.Computer = v
	case "installation":
		h.Installation = v
	case "maxjobs":
		n, err = num()
		h.MaxJobs = int(n)
	case "maxrecords":
		n, err = num()
		h.MaxRecords = int(n)
	case "unixstarttime":
		n, err = num()
		h.UnixStartTime = n
	case "timezone":
		n, err = num()
		h.TimeZone = int(n)
	case "timezonestring":
		h.TimeZoneString = v
		if loc, lerr := time.LoadLocation(v); lerr == nil && v != "" {
			sr.zone = loc
		} else {
			sr.zone = nil
			sr.zoneNote = fmt.Sprintf("header TimeZoneString %q is not a known IANA zone: local-time figures use UTC", v)
		}
	case "maxnodes":
		n, err = num()
		h.MaxNodes = int(n)
	case "maxprocs":
		n, err = num()
		h.MaxProcs = int(n)
	case "maxruntime":
		n, err = num()
		h.MaxRuntime = n
	case "maxmemory":
		n, err = num()
		h.MaxMemory = n
	case "queue", "partition":
		if u, ok := parseUnit(val); ok {
			if strings.EqualFold(k, "queue") {
				h.Queues = append(h.Queues, u)
			} else {
				h.Partitions = append(h.Partitions, u)
			}
		}
	}
	return err
}

// leadingInt parses the number at the start of a header value: an
// optionally signed integer (a decimal fraction is dropped), followed by
// the end or by a non-digit remark.
func leadingInt(b []byte) (int64, bool) {
	i := 0
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		i++
	}
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	n, ok := parseUint(b[i:j], maxSeconds)
	if !ok {
		return 0, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	}
	if j < len(b) && b[j] != ' ' && b[j] != '\t' && b[j] != '(' && b[j] != ',' && b[j] != ';' {
		return 0, false
	}
	if b[0] == '-' {
		n = -n
	}
	return n, true
}

// parseUnit parses "1 DSI" or "1  [fque:1]".
func parseUnit(b []byte) (SWFUnit, bool) {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	n, ok := parseUint(b[:i], math.MaxInt32)
	if !ok {
		return SWFUnit{}, false
	}
	return SWFUnit{Number: int(n), Name: string(bytes.TrimSpace(b[i:]))}, true
}

// TimeZone returns the IANA zone of the header's TimeZoneString when it
// names a known zone, else "".
func (sr *SWFReader) TimeZone() string {
	if sr.zone == nil {
		return ""
	}
	return sr.header.TimeZoneString
}

// Header returns the header read by NewSWFReader. Its slices are shared:
// do not modify them.
func (sr *SWFReader) Header() SWFHeader { return sr.header }

// Stats returns the counts so far.
func (sr *SWFReader) Stats() SWFStats { return sr.stats }

// Skipped returns how many records were skipped for having no submit
// time (phantom records).
func (sr *SWFReader) Skipped() int { return sr.stats.Skipped }

// Next returns the next job, or io.EOF after the last. Records without a
// submit time are skipped and counted (Skipped). Partial-execution records (status 2, 3, 4) are folded into
// the job with the same number just before them (see the package
// documentation). Errors are *ParseError naming the line, field and value;
// in strict mode (the default) an error ends the reading and is returned
// again by later calls.
func (sr *SWFReader) Next() (workload.Job, error) {
	var j workload.Job
	err := sr.next(&j)
	return j, err
}

// next is Next reading into dst (zero on an error). Each record is
// parsed into the slot not holding the waiting job, and a job is copied
// once, from its slot into dst.
func (sr *SWFReader) next(dst *workload.Job) error {
	for {
		if sr.err != nil {
			if sr.have {
				sr.have = false
				sr.stats.Jobs++
				sr.finishSlot(sr.hi, dst)
				return nil
			}
			*dst = workload.Job{}
			return sr.err
		}
		free := &sr.slots[sr.hi^1] // with no job waiting, either slot is
		ok, err := sr.nextRecord(&free.job)
		if err != nil {
			sr.err = err
			if err != io.EOF && sr.have {
				// A strict error ends the reading at once.
				sr.have = false
			}
			continue
		}
		if !ok {
			continue
		}
		status, num := sr.lastStatus, sr.lastNum
		partial := status == 2 || status == 3 || status == 4
		if sr.have && partial && num == sr.slots[sr.hi].num {
			sr.foldPart(&free.job, status)
			continue
		}
		had, prev := sr.have, sr.hi
		sr.hi ^= 1 // the new job waits in the slot it was parsed into
		free.num, free.line, free.parts, free.fromParts = num, sr.recLine, 0, false
		sr.have = true
		if partial {
			free.fromParts = true
			free.parts = 1
			sr.stats.PartialRecords++
		}
		if had {
			sr.stats.Jobs++
			sr.finishSlot(prev, dst)
			return nil
		}
	}
}

// swfHeld is a job waiting for its partial-execution records.
type swfHeld struct {
	job       workload.Job
	line      int // the job's record
	num       int64
	parts     int  // partial-execution records seen
	fromParts bool // no summary line: the job is made of its parts
}

// foldPart folds a partial-execution record into the held job.
func (sr *SWFReader) foldPart(p *workload.Job, status int64) {
	h := &sr.slots[sr.hi]
	h.parts++
	sr.stats.PartialRecords++
	sr.stats.FoldedRecords++
	if !h.fromParts {
		return // the summary line already holds the totals
	}
	j := &h.job
	j.Runtime += p.Runtime
	if p.TraceEnd != workload.Unknown {
		j.TraceEnd = p.TraceEnd
	}
	j.TraceState = p.TraceState
	for k, f := range j.Extra {
		if f.Name == "status" {
			j.Extra[k].Value = numString(status)
		}
	}
}

// finishSlot copies the job held in slot k into dst and counts it when
// partial executions were folded into it.
func (sr *SWFReader) finishSlot(k int, dst *workload.Job) {
	h := &sr.slots[k]
	sr.lastLine = h.line
	if h.parts > 0 {
		sr.stats.FoldedJobs++
	}
	*dst = h.job
}

// nextRecord parses the next job record into j. ok is false for skipped
// records (j is then as it was); err is io.EOF at the end, or a
// *ParseError (counted when Lenient).
func (sr *SWFReader) nextRecord(j *workload.Job) (ok bool, err error) {
	var line []byte
	var lineNo int
	if sr.pending != nil {
		line, lineNo = sr.pending, sr.pendLine
		sr.pending = nil
	} else {
		if line, err = sr.lr.next(); err != nil {
			return false, sr.withPath(err)
		}
		lineNo = sr.lr.line
		sr.stats.Lines = lineNo
	}
	t := bytes.TrimLeft(line, " \t")
	if len(t) == 0 {
		return false, nil
	}
	if t[0] == ';' {
		sr.stats.Comments++
		return false, nil
	}
	sr.stats.Records++
	ok, perr := sr.parseRecord(line, lineNo, j)
	if perr != nil {
		if sr.opts.Lenient {
			sr.stats.Bad++
			if len(sr.badErrs) < maxNotedErrors {
				sr.badErrs = append(sr.badErrs, perr)
			}
			return false, nil
		}
		return false, perr
	}
	return ok, nil
}

// parseSWFNum parses an SWF field: -1 (unknown) or a non-negative number,
// integer or decimal ("142.00"), rounded to the nearest integer (halves
// away from zero). Exponents, hex and NaN are not accepted.
func parseSWFNum(b []byte) (int64, error) {
	i := 0
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i++
	}
	var n int64
	nd := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n > (maxSeconds-9)/10 {
			return 0, errKind(ErrRange, "number too large")
		}
		n = n*10 + int64(b[i]-'0')
		nd++
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if b[i] >= '5' {
				n++
			}
			nd++
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	if i != len(b) || nd == 0 {
		return 0, errKind(ErrSyntax, "want a number")
	}
	if neg {
		n = -n
	}
	if n < -1 {
		return 0, errKind(ErrRange, "must be >= 0 or -1 (unknown)")
	}
	return n, nil
}

// parseRecord parses one job line into j. ok is false for a skipped
// record or an error, and j is then as it was.
func (sr *SWFReader) parseRecord(line []byte, lineNo int, j *workload.Job) (ok bool, _ *ParseError) {
	// Fields are runs of bytes other than space and tab; one scan, no
	// per-field search. The scan also reads the usual fields' values: up
	// to 15 digits (which parseSWFNum takes as they are, far below its
	// limit) or -1; slow marks the others, which parseSWFNum reads after
	// the count is checked, in field order, so errors are as before.
	var v [19]int64
	var slow uint32
	n, i := 0, 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			break
		}
		if n == 18 {
			n++
			break
		}
		s := i
		var x int64
		for i < len(line) {
			d := line[i] - '0' // wraps above 9 for a byte below '0'
			if d > 9 {
				break
			}
			x = x*10 + int64(d)
			i++
		}
		switch {
		case i == len(line) || line[i] == ' ' || line[i] == '\t':
			// Digits alone, at least one: a field begins at a byte that is
			// not blank, and any but a digit would have ended the loop.
			if i-s <= 15 {
				v[n+1] = x
			} else {
				slow |= 1 << n
			}
		default:
			for i < len(line) && line[i] != ' ' && line[i] != '\t' {
				i++
			}
			if i-s == 2 && line[s] == '-' && line[s+1] == '1' {
				v[n+1] = -1
			} else {
				slow |= 1 << n
			}
		}
		sr.toks[n] = [2]int{s, i}
		n++
	}
	if n != 18 {
		what := fmt.Sprintf("%d", n)
		if n > 18 {
			what = "more than 18"
		}
		return false, &ParseError{Path: sr.path, Line: lineNo, Err: errKind(ErrFieldCount, what+" fields, want 18")}
	}
	scanned := ^slow // fields the scan read: digits only, or -1
	for f := 1; slow != 0; f++ {
		if slow&1 != 0 {
			x, err := parseSWFNum(sr.tok(line, f))
			if err != nil {
				return false, sr.bad(line, lineNo, f, err)
			}
			v[f] = x
		}
		slow >>= 1
	}
	if v[5] > math.MaxInt32 || v[8] > math.MaxInt32 {
		f := 5
		if v[8] > math.MaxInt32 {
			f = 8
		}
		return false, sr.bad(line, lineNo, f, errCountBig)
	}
	if v[12] > math.MaxInt32 {
		return false, sr.bad(line, lineNo, 12, errCountBig)
	}
	procs := v[8]
	if procs <= 0 {
		procs = v[5]
	}
	// Only a record without a submit time is not a job (a phantom: a
	// place in the numbering, all fields -1). One with a submit time but
	// no processors and no run time was failed or cancelled before it
	// started; it is kept as such.
	if v[2] < 0 {
		sr.stats.Skipped++
		sr.stats.NoSubmit++
		return false, nil
	}
	noRun, noProcs := v[4] < 0, procs <= 0
	if noRun {
		sr.stats.NoRuntime++
		v[4] = 0
	}
	if noProcs {
		sr.stats.NoProcs++
		procs = 0
	}
	neverStarted := noProcs && v[4] == 0
	if neverStarted {
		sr.stats.NeverStarted++
	}

	sr.lastStatus, sr.lastNum, sr.recLine = v[11], v[1], lineNo
	*j = workload.NewJob(strconv.FormatInt(v[1], 10))
	j.Submit = workload.Time(sr.header.UnixStartTime + v[2])
	j.Runtime = workload.Time(v[4])
	if v[9] > 0 {
		j.TimeLimit = workload.Time(v[9])
	}
	if v[12] >= 0 {
		j.User = sr.userName(v[12])
	}
	switch {
	case v[16] >= 0:
		j.Partition = numString(v[16])
	case v[15] >= 0:
		j.Partition = numString(v[15])
	}
	switch v[11] {
	case 1, 3:
		j.TraceState = "COMPLETED"
	case 0, 4:
		j.TraceState = "FAILED"
	case 5:
		j.TraceState = "CANCELLED"
	case 2:
		j.TraceState = "PARTIAL"
	}
	wait := v[3]
	if v[11] == 5 && v[4] == 0 || neverStarted {
		// Cancelled before it started: the wait is the time to the cancel.
		j.CancelAfter = 0
		if wait >= 0 {
			j.CancelAfter = workload.Time(wait)
			j.TraceEnd = j.Submit + workload.Time(wait)
		}
	} else if wait >= 0 {
		j.TraceStart = j.Submit + workload.Time(wait)
		j.TraceEnd = j.TraceStart + j.Runtime
	}

	switch {
	case sr.opts.ProcsPerGPU > 0:
		j.Request.GPUs = int32(ceilDiv(procs, int64(sr.opts.ProcsPerGPU)))
	case sr.opts.ProcsPerNode > 0:
		j.Request.Nodes = int32(ceilDiv(procs, int64(sr.opts.ProcsPerNode)))
		j.Request.CPUs = int32(procs)
	default:
		j.Request.CPUs = int32(procs)
	}

	if sr.noExtra {
		return true, nil
	}
	cnt := 0
	for _, i := range swfExtra {
		if v[i] != -1 && !(i == 11 && (v[i] == 0 || v[i] == 1 || v[i] == 5)) {
			cnt++
		}
	}
	if cnt > 0 {
		j.Extra = make([]workload.Field, 0, cnt)
		for _, i := range swfExtra {
			if v[i] == -1 || (i == 11 && (v[i] == 0 || v[i] == 1 || v[i] == 5)) {
				continue
			}
			var val string
			tok := sr.tok(line, i)
			switch {
			case scanned&(1<<(i-1)) != 0 && v[i] >= 0 && v[i] < swfIntStrings && (len(tok) == 1 || tok[0] != '0'):
				val = sr.intString(v[i]) // tok is v's decimal digits
			case sr.in[i] != nil:
				val = sr.in[i].get(tok)
			default:
				val = string(tok)
			}
			j.Extra = append(j.Extra, workload.Field{Name: swfFieldNames[i], Value: val})
		}
	}
	return true, nil
}

// swfIntStrings bounds the numbers whose decimal strings a reader keeps
// (intString).
const swfIntStrings = 1 << 12

// intString returns the decimal string of n (0 ≤ n < swfIntStrings), one
// per number for the read: most Extra values are small counts, and a
// table spares the interner's map lookup of their bytes.
func (sr *SWFReader) intString(n int64) string {
	if sr.ints == nil {
		sr.ints = make([]string, swfIntStrings)
	}
	if sr.ints[n] == "" {
		sr.ints[n] = numString(n)
	}
	return sr.ints[n]
}

var smallInts = [10]string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// numString formats n, sharing the strings of 0..9.
func numString(n int64) string {
	if n >= 0 && n < 10 {
		return smallInts[n]
	}
	return strconv.FormatInt(n, 10)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// maxSWFUsers is how many user numbers one SWF read keeps a name for.
const maxSWFUsers = 1 << 18

// userName returns "u<n>" for user number n, one string per number for
// the first maxSWFUsers numbers, so the jobs of one user share it.
func (sr *SWFReader) userName(n int64) string {
	if s, ok := sr.users[n]; ok {
		return s
	}
	s := "u" + strconv.FormatInt(n, 10)
	if len(sr.users) < maxSWFUsers {
		if sr.users == nil {
			sr.users = map[int64]string{}
		}
		sr.users[n] = s
	}
	return s
}

// tok returns field f (1-based) of line, the record parseRecord is
// reading.
func (sr *SWFReader) tok(line []byte, f int) []byte {
	t := &sr.toks[f-1]
	return line[t[0]:t[1]]
}

func (sr *SWFReader) bad(line []byte, lineNo, field int, err error) *ParseError {
	return &ParseError{Path: sr.path, Line: lineNo, Field: swfFieldNames[field], Value: string(sr.tok(line, field)), Err: err}
}

// Notes returns human-readable remarks on what the reader did, for
// Trace.Notes; call it after Next has returned io.EOF.
func (sr *SWFReader) Notes() []string {
	s := sr.stats
	var notes []string
	add := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	if s.Skipped > 0 {
		add("skipped %s SWF records without a submit time (phantoms, not jobs)", fmtCount(s.Skipped))
	}
	if s.NeverStarted > 0 {
		add("%s jobs have no processors and no run time: failed or cancelled before they started (status kept), they leave the queue at submit + wait (0 when unknown) without running", fmtCount(s.NeverStarted))
	}
	if n := s.NoProcs - s.NeverStarted; n > 0 {
		add("%s jobs that ran have no processor count: they request nothing", fmtCount(n))
	}
	if s.NoRuntime > 0 {
		add("%s jobs have no run time (-1): runtime 0", fmtCount(s.NoRuntime))
	}
	switch {
	case sr.opts.ProcsPerGPU > 0:
		add("SWF processors mapped to GPUs: GPUs = ceil(procs/%d)", sr.opts.ProcsPerGPU)
	case sr.opts.ProcsPerNode > 0:
		add("SWF processors mapped to nodes: nodes = ceil(procs/%d)", sr.opts.ProcsPerNode)
	}
	if s.Comments > 0 {
		add("ignored %s comment lines after the header", fmtCount(s.Comments))
	}
	if s.PartialRecords > 0 {
		add("folded %s partial-execution records (status 2, 3, 4) into %s checkpointed or swapped jobs", fmtCount(s.PartialRecords), fmtCount(s.FoldedJobs))
	}
	if sr.zone != nil {
		add("local-time figures use the header's TimeZoneString %s", sr.header.TimeZoneString)
	} else if sr.zoneNote != "" {
		add("%s", sr.zoneNote)
	}
	if h := sr.header; h.MaxJobs > 0 && h.MaxJobs != s.Records {
		add("header MaxJobs %s differs from the %s records in the file", fmtCount(h.MaxJobs), fmtCount(s.Records))
	}
	if s.Bad > 0 {
		msgs := make([]string, len(sr.badErrs))
		for i, e := range sr.badErrs {
			msgs[i] = e.Error()
		}
		add("skipped %s bad lines (lenient); first: %s", fmtCount(s.Bad), strings.Join(msgs, "; "))
	}
	return notes
}
