package traces

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader yields the lines of r one at a time without their line ending
// ("\n" or "\r\n"). The returned slice is valid until the next call. It
// never holds more than one line.
type lineReader struct {
	br   *bufio.Reader
	long []byte // assembles lines longer than the bufio buffer
	line int    // number of the line last returned (1-based)
	max  int    // longest line accepted (Limits.MaxRecord)
	err  error  // sticky
	read int64  // bytes of the lines returned, their endings included
}

func newLineReader(r io.Reader) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 64<<10 {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &lineReader{br: br, max: int(Limits{}.resolve().MaxRecord)}
}

// tooLong is the error for a line over l.max bytes.
func (l *lineReader) tooLong() error {
	return &ParseError{Line: l.line + 1, Err: &causeError{kind: ErrLineTooLong,
		cause: &LimitError{Flag: "max-record", Limit: int64(l.max), Bytes: true, Msg: "line too long"}}}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// next returns the next line, or io.EOF after the last one. Other errors
// are *ParseError (ErrLineTooLong, ErrRead).
func (l *lineReader) next() ([]byte, error) {
	if l.err != nil {
		return nil, l.err
	}
	b, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(l.long) > l.max {
				l.err = l.tooLong()
				return nil, l.err
			}
			b, err = l.br.ReadSlice('\n')
			l.long = append(l.long, b...)
		}
		b = l.long
	}
	if err != nil && err != io.EOF {
		l.err = &ParseError{Line: l.line + 1, Err: readErr(err)}
		return nil, l.err
	}
	if len(b) == 0 && err == io.EOF {
		l.err = io.EOF
		return nil, io.EOF
	}
	if len(b) > l.max {
		l.err = l.tooLong()
		return nil, l.err
	}
	l.line++
	l.read += int64(len(b))
	b = bytes.TrimSuffix(b, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if l.line == 1 {
		b = bytes.TrimPrefix(b, utf8BOM)
	}
	return b, nil
}

// interner returns one shared string per distinct value, up to max distinct
// values of at most maxInterned bytes each, and while the bytes all
// interners of a read remember stay under their shared budget; beyond
// that it copies without remembering, so memory stays bounded on columns
// whose values never repeat or are long.
type interner struct {
	m      map[string]string
	max    int
	budget *int64 // bytes left to remember, shared by a reader's interners
}

// maxInterned is the longest value interned, and internBudget the bytes
// the interners of one reader remember at most.
const (
	maxInterned  = 256
	internBudget = 32 << 20
)

func newInterner(max int) *interner {
	b := int64(internBudget)
	return &interner{m: make(map[string]string), max: max, budget: &b}
}

// share makes in draw on budget (another interner's).
func (in *interner) share(budget *int64) *interner {
	in.budget = budget
	return in
}

func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < in.max && len(s) <= maxInterned && *in.budget >= int64(len(s)) {
		in.m[s] = s
		*in.budget -= int64(len(s)) + 48 // the map entry
	}
	return s
}
