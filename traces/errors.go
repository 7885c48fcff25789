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
	// ErrLineTooLong: a line exceeds Limits.MaxRecord.
	ErrLineTooLong = errors.New("line too long")
	// ErrUnknownFormat: DetectFormat could not tell the trace format.
	ErrUnknownFormat = errors.New("unknown trace format")
	// ErrRead: the underlying reader failed (I/O, corrupt gzip stream).
	ErrRead = errors.New("read error")
)

// MaxLineBytes is the longest line the readers accept by default
// (DefaultMaxRecord, 16 MiB; Limits.MaxRecord changes it).
const MaxLineBytes = DefaultMaxRecord

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
	// noValue leaves the value out of the message (Field names a place
	// in a binary file's metadata, which has no text value).
	noValue bool
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
		if !e.noValue || e.Value != "" {
			v := e.Value
			if len(v) > maxShownValue {
				v = v[:maxShownValue] + "..."
			}
			b.WriteString(strconv.Quote(v))
			b.WriteString(": ")
		}
	}
	if e.Err != nil {
		b.WriteString(oneLine(e.Err.Error()))
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

// causeError is an error of a sentinel kind (ErrRead, ErrSyntax) with a
// cause: errors.Is and errors.As see both, and the message is the cause's
// alone, on one line (errors.Join would put the two on separate lines).
type causeError struct {
	kind  error
	cause error
}

func (e *causeError) Error() string   { return e.cause.Error() }
func (e *causeError) Unwrap() []error { return []error{e.kind, e.cause} }

// readErr marks err, from the underlying reader or a decompressor, as
// ErrRead.
func readErr(err error) error { return &causeError{kind: ErrRead, cause: err} }

// syntaxErr marks err as ErrSyntax.
func syntaxErr(err error) error { return &causeError{kind: ErrSyntax, cause: err} }

// oneLine returns s with its line breaks replaced by "; ", for messages
// of other libraries that span lines.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	f := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	return strings.Join(f, "; ")
}
