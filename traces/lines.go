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
	err  error  // sticky
}

func newLineReader(r io.Reader) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 64<<10 {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &lineReader{br: br}
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
			if len(l.long) > MaxLineBytes {
				l.err = &ParseError{Line: l.line + 1, Err: errKind(ErrLineTooLong, "line longer than 16 MiB")}
				return nil, l.err
			}
			b, err = l.br.ReadSlice('\n')
			l.long = append(l.long, b...)
		}
		b = l.long
	}
	if err != nil && err != io.EOF {
		l.err = &ParseError{Line: l.line + 1, Err: errors.Join(ErrRead, err)}
		return nil, l.err
	}
	if len(b) == 0 && err == io.EOF {
		l.err = io.EOF
		return nil, io.EOF
	}
	if len(b) > MaxLineBytes {
		l.err = &ParseError{Line: l.line + 1, Err: errKind(ErrLineTooLong, "line longer than 16 MiB")}
		return nil, l.err
	}
	l.line++
	b = bytes.TrimSuffix(b, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if l.line == 1 {
		b = bytes.TrimPrefix(b, utf8BOM)
	}
	return b, nil
}

// interner returns one shared string per distinct value, up to max distinct
// values; beyond that it copies without remembering, so memory stays
// bounded on columns whose values never repeat.
type interner struct {
	m   map[string]string
	max int
}

func newInterner(max int) *interner { return &interner{m: make(map[string]string), max: max} }

func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < in.max {
		in.m[s] = s
	}
	return s
}
