package traces

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/workload"
)

// PhillyStats counts what a PhillyReader did with its input.
type PhillyStats struct {
	Records    int // job objects read
	Jobs       int // jobs returned
	NoSubmit   int // objects without a submitted_time, skipped
	NoAttempts int // jobs with no scheduling attempt: never started, runtime 0
	Retried    int // jobs with more than one attempt
	Running    int // last attempt without an end: running at the snapshot, runtime censored
	Bad        int // bad objects skipped (Lenient)
}

// PhillyReader reads the Microsoft Philly trace's cluster_job_log
// (github.com/msr-fiddle/philly-traces): a JSON array of job objects
// (status, vc, jobid, attempts[start_time, end_time, detail[ip, gpus]],
// submitted_time, user). It decodes one job object at a time.
type PhillyReader struct {
	// maxRecord bounds one job object (Limits.MaxRecord); lastLine is the
	// line of the object Next returned last.
	maxRecord int64
	lastLine  int
	cr        *countingReader
	dec       *json.Decoder
	path      string
	lenient   bool
	array     bool
	started   bool
	err       error
	stats     PhillyStats
	badErrs   []*ParseError
	users     *interner
	vcs       *interner
}

type phillyAttempt struct {
	StartTime *string `json:"start_time"`
	EndTime   *string `json:"end_time"`
	Detail    []struct {
		IP   string   `json:"ip"`
		GPUs []string `json:"gpus"`
	} `json:"detail"`
}

type phillyJob struct {
	Status        string          `json:"status"`
	VC            string          `json:"vc"`
	JobID         *string         `json:"jobid"`
	Attempts      []phillyAttempt `json:"attempts"`
	SubmittedTime *string         `json:"submitted_time"`
	User          string          `json:"user"`
}

// countingReader remembers the bytes read since the last mark, so that a
// decoder's byte offsets can be turned into line numbers.
type countingReader struct {
	r    io.Reader
	win  []byte // bytes from base on
	base int64  // stream offset of win[0]
	line int    // 1-based line number at base
	// max bounds win, which holds the job object being decoded (and what
	// the decoder read ahead): a longer object is refused before the
	// decoder buffers it whole.
	max int64
}

// readAhead is what the JSON decoder may have read past the object being
// decoded, allowed on top of countingReader.max.
const readAhead = 64 << 10

func (c *countingReader) Read(p []byte) (int, error) {
	if c.max > 0 && int64(len(c.win)) > c.max+readAhead {
		return 0, &LimitError{Flag: "max-record", Limit: c.max, Bytes: true, Msg: "JSON job object too long"}
	}
	n, err := c.r.Read(p)
	c.win = append(c.win, p[:n]...)
	return n, err
}

// lineAt returns the line number of stream offset off (>= base).
func (c *countingReader) lineAt(off int64) int {
	k := min(max(int(off-c.base), 0), len(c.win))
	return c.line + bytes.Count(c.win[:k], []byte{'\n'})
}

// mark forgets the bytes before off.
func (c *countingReader) mark(off int64) {
	k := min(max(int(off-c.base), 0), len(c.win))
	c.line += bytes.Count(c.win[:k], []byte{'\n'})
	c.win = append(c.win[:0], c.win[k:]...)
	c.base += int64(k)
}

// NewPhillyReader returns a reader of the Philly job log r.
func NewPhillyReader(r io.Reader, path string, lenient bool) (*PhillyReader, error) {
	cr := &countingReader{r: r, line: 1}
	pr := &PhillyReader{cr: cr, dec: json.NewDecoder(cr), path: path, lenient: lenient,
		users: newInterner(1 << 16), vcs: newInterner(4096)}
	pr.vcs.share(pr.users.budget)
	pr.SetMaxRecord(Limits{}.resolve().MaxRecord)
	return pr, nil
}

// SetMaxRecord bounds the bytes of one job object (Limits.MaxRecord).
func (pr *PhillyReader) SetMaxRecord(n int64) {
	pr.maxRecord = n
	pr.cr.max = n
}

// Stats returns the counts so far.
func (pr *PhillyReader) Stats() PhillyStats { return pr.stats }

func (pr *PhillyReader) jsonErr(err error, line int) *ParseError {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &ParseError{Path: pr.path, Line: pr.cr.lineAt(se.Offset), Err: errKind(ErrSyntax, "JSON: "+se.Error())}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &ParseError{Path: pr.path, Line: pr.cr.lineAt(te.Offset), Field: te.Field, Err: errKind(ErrSyntax, "JSON: want "+te.Type.String()+", got "+te.Value)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &ParseError{Path: pr.path, Line: pr.cr.lineAt(pr.dec.InputOffset()), Err: errKind(ErrSyntax, "JSON: unexpected end of input")}
	}
	return &ParseError{Path: pr.path, Line: line, Err: readErr(err)}
}

// Next returns the next job, or io.EOF after the last.
func (pr *PhillyReader) Next() (workload.Job, error) {
	for {
		if pr.err != nil {
			return workload.Job{}, pr.err
		}
		if !pr.started {
			pr.started = true
			tok, err := pr.dec.Token()
			if err == io.EOF {
				pr.err = io.EOF
				continue
			}
			if err != nil {
				pr.err = pr.jsonErr(err, 1)
				continue
			}
			switch tok {
			case json.Delim('['):
				pr.array = true
			default:
				pr.err = &ParseError{Path: pr.path, Line: pr.cr.lineAt(pr.dec.InputOffset()), Err: errKind(ErrSyntax, "want a JSON array of job objects")}
				continue
			}
		}
		if !pr.dec.More() {
			if pr.array {
				if _, err := pr.dec.Token(); err != nil {
					pr.err = pr.jsonErr(err, pr.cr.lineAt(pr.dec.InputOffset()))
					continue
				}
				if _, err := pr.dec.Token(); err != io.EOF {
					pr.err = &ParseError{Path: pr.path, Line: pr.cr.lineAt(pr.dec.InputOffset()), Err: errKind(ErrSyntax, "data after the JSON array")}
					continue
				}
			}
			pr.err = io.EOF
			continue
		}
		startOff := pr.dec.InputOffset()
		pr.cr.mark(startOff)
		line := pr.cr.lineAt(startOff + int64(leadingSpace(pr.cr.win)))
		var pj phillyJob
		if err := pr.dec.Decode(&pj); err != nil {
			perr := pr.jsonErr(err, line)
			var se *json.SyntaxError
			if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || !pr.lenient {
				pr.err = perr // the stream cannot be resynchronised
				return workload.Job{}, perr
			}
			pr.noteBad(perr)
			continue
		}
		pr.stats.Records++
		j, ok, perr := pr.job(&pj, line)
		if perr != nil {
			if !pr.lenient {
				pr.err = perr
				return workload.Job{}, perr
			}
			pr.noteBad(perr)
			continue
		}
		if !ok {
			continue
		}
		pr.stats.Jobs++
		pr.lastLine = line
		return j, nil
	}
}

func leadingSpace(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t' || b[i] == ',') {
		i++
	}
	return i
}

func (pr *PhillyReader) noteBad(perr *ParseError) {
	pr.stats.Bad++
	if len(pr.badErrs) < maxNotedErrors {
		pr.badErrs = append(pr.badErrs, perr)
	}
}

// phillyTime parses a Philly time ("2017-10-07 01:11:39", a wall-clock
// reading taken as UTC); null, "", "None" give Unknown.
func phillyTime(s *string) (workload.Time, error) {
	if s == nil || *s == "None" || *s == "null" {
		return workload.Unknown, nil
	}
	return parseTimestamp([]byte(*s))
}

func (pr *PhillyReader) job(pj *phillyJob, line int) (workload.Job, bool, *ParseError) {
	bad := func(field, value string, err error) *ParseError {
		return &ParseError{Path: pr.path, Line: line, Field: field, Value: value, Err: err}
	}
	if pj.JobID == nil || *pj.JobID == "" {
		return workload.Job{}, false, bad("jobid", "", errKind(ErrSyntax, "a job needs a jobid"))
	}
	j := workload.NewJob(*pj.JobID)
	submit, err := phillyTime(pj.SubmittedTime)
	if err != nil {
		return j, false, bad("submitted_time", *pj.SubmittedTime, err)
	}
	if submit == workload.Unknown {
		pr.stats.NoSubmit++
		return j, false, nil
	}
	j.Submit = submit
	j.User = pr.users.get([]byte(pj.User))
	j.Partition = pr.vcs.get([]byte(pj.VC))
	switch pj.Status {
	case "Pass":
		j.TraceState = "COMPLETED"
	case "Killed":
		j.TraceState = "CANCELLED"
	case "Failed":
		j.TraceState = "FAILED"
	default:
		j.TraceState = strings.ToUpper(pj.Status)
	}
	if len(pj.Attempts) == 0 {
		pr.stats.NoAttempts++
		if j.TraceState == "CANCELLED" {
			j.CancelAfter = 0
		}
		return j, true, nil
	}
	if len(pj.Attempts) > 1 {
		pr.stats.Retried++
		j.Extra = append(j.Extra, workload.Field{Name: "attempts", Value: strconv.Itoa(len(pj.Attempts))})
	}
	var runtime workload.Time
	for i := range pj.Attempts {
		a := &pj.Attempts[i]
		st, err := phillyTime(a.StartTime)
		if err != nil {
			return j, false, bad(fmt.Sprintf("attempts[%d].start_time", i), *a.StartTime, err)
		}
		en, err := phillyTime(a.EndTime)
		if err != nil {
			return j, false, bad(fmt.Sprintf("attempts[%d].end_time", i), *a.EndTime, err)
		}
		gpus := 0
		for _, d := range a.Detail {
			gpus += len(d.GPUs)
		}
		if int32(gpus) > j.Request.GPUs {
			j.Request.GPUs = int32(gpus)
			j.Request.Nodes = int32(len(a.Detail))
		}
		if st != workload.Unknown && j.TraceStart == workload.Unknown {
			j.TraceStart = st
		}
		if st != workload.Unknown && en != workload.Unknown {
			if en < st {
				return j, false, bad(fmt.Sprintf("attempts[%d].end_time", i), *a.EndTime, errKind(ErrRange, "end is before start"))
			}
			runtime += en - st
		}
		if i == len(pj.Attempts)-1 {
			j.TraceEnd = en
			if en == workload.Unknown && st != workload.Unknown {
				pr.stats.Running++
				j.TraceState = "RUNNING"
			}
		}
	}
	j.Runtime = runtime
	return j, true, nil
}

// Notes returns remarks on what the reader did; call it after io.EOF.
func (pr *PhillyReader) Notes() []string {
	s := pr.stats
	var notes []string
	add := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	add("Philly times (no zone) read as UTC wall-clock readings; vc is the partition; GPUs and nodes are the largest allocation of any attempt")
	if s.Retried > 0 {
		add("%s jobs had several scheduling attempts: runtime is the sum of the attempts, start the first attempt's, end the last's", fmtCount(s.Retried))
	}
	if s.NoAttempts > 0 {
		add("%s jobs have no recorded attempt: never started, runtime 0", fmtCount(s.NoAttempts))
	}
	if s.Running > 0 {
		add("%s jobs were running at the snapshot (no end): state RUNNING, runtime of the finished attempts only (censored)", fmtCount(s.Running))
	}
	if s.NoSubmit > 0 {
		add("skipped %s jobs without a submitted_time", fmtCount(s.NoSubmit))
	}
	if s.Bad > 0 {
		msgs := make([]string, len(pr.badErrs))
		for i, e := range pr.badErrs {
			msgs[i] = e.Error()
		}
		add("skipped %s bad job objects (lenient); first: %s", fmtCount(s.Bad), strings.Join(msgs, "; "))
	}
	return notes
}
