package traces

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// compression is a compressed container recognised by its magic bytes.
type compression struct {
	name  string // "gzip"
	magic []byte
	// open returns a decompressing reader; nil for a format that is named
	// but not read.
	open func(io.Reader) (io.ReadCloser, error)
	tool string // how to decompress it by hand, for the unsupported ones
}

// zstdMaxWindow is the largest zstd window read: the zstd tool's own
// default limit without --memory (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 2^27).
const zstdMaxWindow = 128 << 20

var compressions = []compression{
	{name: "gzip", magic: []byte{0x1f, 0x8b}, open: func(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) }},
	{name: "zstd", magic: []byte{0x28, 0xb5, 0x2f, 0xfd}, open: func(r io.Reader) (io.ReadCloser, error) {
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}},
	{name: "bzip2", magic: []byte("BZh"), open: func(r io.Reader) (io.ReadCloser, error) { return io.NopCloser(bzip2.NewReader(r)), nil }},
	{name: "lz4", magic: []byte{0x04, 0x22, 0x4d, 0x18}, open: func(r io.Reader) (io.ReadCloser, error) { return io.NopCloser(lz4.NewReader(r)), nil }},
	{name: "xz", magic: []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}, tool: "xz -d"},
	{name: "lzip", magic: []byte("LZIP"), tool: "lzip -d"},
	{name: "Unix compress (.Z)", magic: []byte{0x1f, 0x9d}, tool: "uncompress"},
	{name: "zip", magic: []byte("PK\x03\x04"), tool: "unzip"},
	{name: "7z", magic: []byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c}, tool: "7z x"},
}

// sniffCompression returns the compression that prefix starts with, or
// nil for uncompressed data.
func sniffCompression(prefix []byte) *compression {
	for i := range compressions {
		c := &compressions[i]
		if !bytes.HasPrefix(prefix, c.magic) {
			continue
		}
		if c.name == "bzip2" && (len(prefix) < 4 || prefix[3] < '1' || prefix[3] > '9') {
			continue // "BZh" then the block size digit
		}
		return c
	}
	return nil
}

// unsupportedCompression is the error for a compressed input that is
// recognised but not read.
func unsupportedCompression(name string, c *compression) error {
	return &ParseError{Path: name, Line: 1, Err: errKind(ErrUnknownFormat,
		fmt.Sprintf("%s-compressed input: not supported, decompress it first (%s)", c.name, c.tool))}
}

// limitReader fails with a *LimitError once more than max bytes have been
// read through it: the cap on a decompressed stream.
type limitReader struct {
	r    io.Reader
	n    int64
	max  int64
	kind string // "gzip"
	in   int64  // compressed size, for the message (0 unknown)
	flag bool   // the limit was given (--max-decompressed), not derived
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n > l.max {
		return 0, l.err()
	}
	if int64(len(p)) > l.max-l.n+1 {
		p = p[:l.max-l.n+1]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		return n, l.err()
	}
	return n, err
}

func (l *limitReader) err() error {
	msg := fmt.Sprintf("%s input decompresses to more than %s", l.kind, FormatSize(l.max))
	if !l.flag && l.in > 0 {
		msg += fmt.Sprintf(" (%d times its %s; a decompression bomb?)", decompressRatio, FormatSize(l.in))
	}
	return &LimitError{Flag: "max-decompressed", Limit: l.max, Bytes: true, Msg: msg}
}

// decompressed returns r decompressed when it starts with a compression
// magic this package reads (with its size capped, see
// Limits.MaxDecompressed), r itself when it is not compressed, and an
// error naming the compression when it cannot be read. comp is the
// compressed size when known (0 otherwise); closeFn releases the
// decoder.
func decompressed(br *bufio.Reader, name string, comp int64, lim Limits) (r *bufio.Reader, kind string, closeFn func(), err error) {
	prefix, _ := br.Peek(8)
	c := sniffCompression(prefix)
	if c == nil {
		return br, "", func() {}, nil
	}
	if c.open == nil {
		return nil, c.name, nil, unsupportedCompression(name, c)
	}
	zr, err := c.open(br)
	if err != nil {
		return nil, c.name, nil, &ParseError{Path: name, Line: 1, Err: readErr(fmt.Errorf("%s: %w", c.name, err))}
	}
	lr := &limitReader{r: &decodeErrReader{r: zr, kind: c.name}, max: lim.decompressedBound(comp), kind: c.name, in: comp, flag: lim.MaxDecompressed > 0}
	return bufio.NewReaderSize(lr, 64<<10), c.name, func() { zr.Close() }, nil
}

// decodeErrReader prefixes a decoder's errors with the compression's
// name ("gzip: unexpected EOF").
type decodeErrReader struct {
	r    io.Reader
	kind string
}

func (d *decodeErrReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%s: truncated input (unexpected end of the compressed stream)", d.kind)
		} else {
			err = fmt.Errorf("%s: %w", d.kind, err)
		}
	}
	return n, err
}

// spool copies r into an unlinked temporary file, which nothing can leave
// behind, and returns it positioned at its start, its size, and a
// function that closes it. The copy fails with r's error (the
// decompression cap included).
func spool(r io.Reader) (*os.File, int64, func(), error) {
	f, err := os.CreateTemp("", "schedsim-spool-*")
	if err != nil {
		return nil, 0, nil, err
	}
	// Unlinked at once: the data lives until the file is closed, and a
	// killed process leaves nothing behind. Where the system cannot
	// unlink an open file, it is removed when closed.
	name := f.Name()
	removed := os.Remove(name) == nil
	done := func() {
		f.Close()
		if !removed {
			os.Remove(name)
		}
	}
	n, err := io.Copy(f, r)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		done()
		return nil, 0, nil, err
	}
	return f, n, done, nil
}
