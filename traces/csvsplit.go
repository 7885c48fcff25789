package traces

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// csvRecords reads RFC 4180 style CSV one record at a time: fields split
// at a one-byte delimiter; a field that starts with '"' is quoted, may
// hold the delimiter, line breaks and doubled quotes (""). Unquoted fields
// are returned as slices of the line; quoted ones are unescaped into a
// scratch buffer. The returned fields are valid until the next call.
type csvRecords struct {
	lr     *lineReader
	path   string
	delim  byte
	fields [][]byte
	buf    []byte // unescaped quoted fields and joined multi-line records
	start  int    // line number the last record started on
	// maxFields bounds the fields of a record (maxColumns for a header,
	// one more than the header's for data rows), so a line of delimiters
	// cannot make millions of slices.
	maxFields int
}

// maxColumns bounds the columns of a CSV or sacct header.
const maxColumns = 1 << 16

// tooManyFields is the error for a record with more than max fields.
func tooManyFields(path string, line, max int) *ParseError {
	return &ParseError{Path: path, Line: line, Err: errKind(ErrFieldCount, fmt.Sprintf("more than %d fields", max))}
}

func newCSVRecords(r io.Reader, path string, delim byte) *csvRecords {
	if delim == 0 {
		delim = ','
	}
	return &csvRecords{lr: newLineReader(r), path: path, delim: delim, maxFields: maxColumns}
}

// next returns the fields of the next non-blank record, io.EOF after the
// last, or a *ParseError.
func (c *csvRecords) next() ([][]byte, error) {
	for {
		line, err := c.lr.next()
		if err != nil {
			if pe, ok := err.(*ParseError); ok && pe.Path == "" {
				pe.Path = c.path
			}
			return nil, err
		}
		c.start = c.lr.line
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.IndexByte(line, '"') < 0 {
			if bytes.Count(line, []byte{c.delim}) >= c.maxFields {
				return nil, tooManyFields(c.path, c.start, c.maxFields)
			}
			return c.splitPlain(line), nil
		}
		return c.splitQuoted(line)
	}
}

func (c *csvRecords) splitPlain(line []byte) [][]byte {
	f := c.fields[:0]
	for {
		i := bytes.IndexByte(line, c.delim)
		if i < 0 {
			f = append(f, line)
			break
		}
		f = append(f, line[:i])
		line = line[i+1:]
	}
	c.fields = f
	return f
}

// splitQuoted handles a record with quotes, reading further lines while a
// quoted field is open.
func (c *csvRecords) splitQuoted(line []byte) ([][]byte, error) {
	c.buf = c.buf[:0]
	type span struct{ lo, hi int }
	var spans []span
	i := 0
	for {
		lo := len(c.buf)
		if i < len(line) && line[i] == '"' {
			i++
			for {
				j := bytes.IndexByte(line[i:], '"')
				if j < 0 {
					// The quoted field goes on on the next line.
					c.buf = append(c.buf, line[i:]...)
					c.buf = append(c.buf, '\n')
					next, err := c.lr.next()
					if err == io.EOF {
						return nil, &ParseError{Path: c.path, Line: c.start, Err: errKind(ErrSyntax, "quoted field not closed before the end of the file")}
					}
					if err != nil {
						return nil, err
					}
					if len(c.buf) > c.lr.max {
						return nil, &ParseError{Path: c.path, Line: c.start, Err: &causeError{kind: ErrLineTooLong,
							cause: &LimitError{Flag: "max-record", Limit: int64(c.lr.max), Bytes: true, Msg: "quoted record spans too many lines"}}}
					}
					line, i = next, 0
					continue
				}
				c.buf = append(c.buf, line[i:i+j]...)
				i += j + 1
				if i < len(line) && line[i] == '"' {
					c.buf = append(c.buf, '"')
					i++
					continue
				}
				break
			}
			if i < len(line) && line[i] != c.delim {
				return nil, &ParseError{Path: c.path, Line: c.lr.line, Err: errKind(ErrSyntax, "text after a closing quote (want the delimiter)")}
			}
		} else {
			j := bytes.IndexByte(line[i:], c.delim)
			if j < 0 {
				j = len(line) - i
			}
			c.buf = append(c.buf, line[i:i+j]...)
			i += j
		}
		spans = append(spans, span{lo, len(c.buf)})
		if len(spans) > c.maxFields {
			return nil, tooManyFields(c.path, c.start, c.maxFields)
		}
		if i >= len(line) {
			break
		}
		i++ // the delimiter
		if i == len(line) {
			spans = append(spans, span{len(c.buf), len(c.buf)})
			break
		}
	}
	f := c.fields[:0]
	for _, s := range spans {
		f = append(f, c.buf[s.lo:s.hi:s.hi])
	}
	c.fields = f
	return f, nil
}

// headerNames returns the trimmed column names of a header row and the
// index of each, failing when a name repeats: a reader could not tell
// which of the two columns holds the field (fold compares names
// case-insensitively, as sacct does).
func headerNames(hdr [][]byte, path string, line int, fold bool) ([]string, map[string]int, error) {
	names := make([]string, len(hdr))
	at := make(map[string]int, len(hdr))
	for i, h := range hdr {
		name := strings.TrimSpace(string(h))
		names[i] = name
		key := name
		if fold {
			key = strings.ToLower(name)
		}
		if j, dup := at[key]; dup && name != "" {
			return nil, nil, &ParseError{Path: path, Line: line, Field: name, noValue: true,
				Err: errKind(ErrSyntax, fmt.Sprintf("column named twice, at positions %d and %d: rename or drop one", j+1, i+1))}
		}
		at[key] = i
	}
	return names, at, nil
}
