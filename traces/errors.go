package traces

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. A *ParseError wraps one of them (possibly through a more
// specific message), so callers can test the kind with errors.Is.
var (
	// ErrSyntax: a value is not in any form the field allows.
	ErrSyntax = errors.New("invalid syntax")
	// ErrRange: a value is well formed but outside the allowed range.
	ErrRange = errors.New("value out of range")
	// ErrFieldCount: a line has the wrong number of fields.
	ErrFieldCount = errors.New("wrong number of fields")
	// ErrNoHeader: headerless sacct output and no SacctOptions.Fields.
	ErrNoHeader = errors.New("no header row")
	// ErrMissingColumn: the columns lack one the reader needs (JobID, Submit).
	ErrMissingColumn = errors.New("missing column")
	// ErrLineTooLong: a line exceeds MaxLineBytes.
	ErrLineTooLong = errors.New("line too long")
	// ErrUnknownFormat: DetectFormat could not tell the trace format.
	ErrUnknownFormat = errors.New("unknown trace format")
	// ErrRead: the underlying reader failed (I/O, corrupt gzip stream).
	ErrRead = errors.New("read error")
)

// MaxLineBytes is the longest line the readers accept (16 MiB).
const MaxLineBytes = 16 << 20

// ParseError is an error at a position in a trace file. Line is 1-based;
// Field names the column (sacct header name, or the SWF field name such as
// "run_time") and is empty for whole-line errors; Value is the offending
// text (possibly empty).
type ParseError struct {
	Path  string // file name as given to the reader, e.g. "jobs.swf"
	Line  int    // 1-based line number
	Field string // column or field name; empty for whole-line errors
	Value string // the offending value
	Err   error  // wraps ErrSyntax, ErrRange, ErrFieldCount, ...
}

// maxShownValue bounds how much of Value Error prints.
const maxShownValue = 80

// Error formats the error as
//
//	jobs.swf:1042: run_time: "-5": must be >= 0 or -1 (unknown)
//
// Without a Field the field and value are left out.
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	} else {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
		v := e.Value
		if len(v) > maxShownValue {
			v = v[:maxShownValue] + "..."
		}
		b.WriteString(strconv.Quote(v))
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("parse error")
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// kindError is an error with its own message that still matches a sentinel
// under errors.Is.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// errKind returns an error reading msg that errors.Is kind.
func errKind(kind error, msg string) error { return &kindError{kind: kind, msg: msg} }
