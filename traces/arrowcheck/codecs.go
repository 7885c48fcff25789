package arrowcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// arrow-go's Parquet codecs decode a page into whatever the compressed
// data asks for: a zstd frame's content size becomes a make() of that
// size, a snappy block's length prefix too, and gzip and brotli pages are
// read to their end. The page reader hands Decode a destination of the
// page's declared uncompressed size (at most MaxPage, checked by
// CheckParquetFile, and taken from the budgeted allocator), so the codecs
// below decode into it and fail rather than grow it.
//
// arrow-go's codec registry is a plain map written by package init
// functions, so the replacement is registered in this package's init,
// which runs after arrow-go's and before any reader.
func init() {
	for _, c := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Brotli, compress.Codecs.Zstd} {
		orig, err := compress.GetCodec(c)
		if err != nil {
			continue
		}
		compress.RegisterCodec(c, boundedCodec{Codec: orig, kind: c})
	}
}

// boundedCodec encodes as the codec it wraps and decodes into at most
// len(dst) bytes: the page reader sizes dst to the page's declared
// uncompressed size. A nil dst (which arrow-go's page reader never
// passes) allows DefaultMaxPage, the buffer growing with the output.
type boundedCodec struct {
	compress.Codec
	kind compress.Compression
}

var errPageTooLarge = errors.New("parquet: page decompresses to more than its declared uncompressed size")

var (
	zstdOnce sync.Once
	zstdDec  *zstd.Decoder
	zstdErr  error
)

func zstdDecoder() (*zstd.Decoder, error) {
	zstdOnce.Do(func() {
		// DecodeAll decodes into dst, its history included: with the
		// cap limit it never allocates past cap(dst).
		zstdDec, zstdErr = zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderConcurrency(1))
	})
	return zstdDec, zstdErr
}

func (c boundedCodec) Decode(dst, src []byte) []byte {
	out, err := c.DecodeWithError(dst, src)
	if err != nil {
		panic(err)
	}
	return out
}

// DecodeWithError implements compress.ErrorCodec.
func (c boundedCodec) DecodeWithError(dst, src []byte) ([]byte, error) {
	if dst == nil {
		return c.decodeGrowing(src)
	}
	bound := len(dst)
	switch c.kind {
	case compress.Codecs.Zstd:
		d, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		out, err := d.DecodeAll(src, dst[:0:bound])
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return nil, errPageTooLarge
		}
		return out, err
	case compress.Codecs.Snappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, err
		}
		if n > bound {
			return nil, fmt.Errorf("%w (%d bytes, declared %d)", errPageTooLarge, n, bound)
		}
		return snappy.Decode(dst, src)
	case compress.Codecs.Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		return readBounded(zr, dst[:bound])
	case compress.Codecs.Brotli:
		return readBounded(brotli.NewReader(bytes.NewReader(src)), dst[:bound])
	}
	return compress.Decode(c.Codec, dst, src)
}

// decodeGrowing decodes src into a buffer that grows with the output, up
// to DefaultMaxPage.
func (c boundedCodec) decodeGrowing(src []byte) ([]byte, error) {
	var r io.Reader
	switch c.kind {
	case compress.Codecs.Zstd:
		zr, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(DefaultMaxPage))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	case compress.Codecs.Snappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, err
		}
		if n > DefaultMaxPage {
			return nil, errPageTooLarge
		}
		return snappy.Decode(nil, src)
	case compress.Codecs.Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	case compress.Codecs.Brotli:
		r = brotli.NewReader(bytes.NewReader(src))
	default:
		return compress.Decode(c.Codec, nil, src)
	}
	out, err := io.ReadAll(io.LimitReader(r, DefaultMaxPage+1))
	if err != nil {
		return nil, err
	}
	if len(out) > DefaultMaxPage {
		return nil, errPageTooLarge
	}
	return out, nil
}

// readBounded reads r into dst and fails if it holds more than len(dst)
// bytes.
func readBounded(r io.Reader, dst []byte) ([]byte, error) {
	n, err := io.ReadFull(r, dst)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return dst[:n], nil
	case err != nil:
		return nil, err
	}
	var one [1]byte
	if m, _ := io.ReadFull(r, one[:]); m > 0 {
		return nil, errPageTooLarge
	}
	return dst[:n], nil
}
