package traces

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/schedsim/schedsim/traces/arrowcheck"
	"github.com/schedsim/schedsim/workload"
)

// ReadAtSeeker is what ReadArrow and ReadParquet read from.
type ReadAtSeeker interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// bytesPerRow bounds the row count a file's metadata may make us
// preallocate for (size / bytesPerRow), so that a corrupt count cannot
// claim more than about 40 times the file's size (a workload.Job is 296
// bytes). Real traces take 11 bytes a row or more (the 1 M-job benchmark
// trace in Parquet, zstd), so they are preallocated whole.
const bytesPerRow = 8

// prealloc bounds rows, a count from the metadata of a file of size
// bytes, to [0, size/bytesPerRow]. A file denser than that grows the
// rest by appending.
func prealloc(rows, size int64) int {
	return int(max(0, min(rows, size/bytesPerRow, math.MaxInt32)))
}

// fileSize returns the size of r, leaving its offset where it was; 0 if
// r cannot seek.
func fileSize(r io.Seeker) int64 {
	cur, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0
	}
	size, err := r.Seek(0, io.SeekEnd)
	if _, err2 := r.Seek(cur, io.SeekStart); err != nil || err2 != nil {
		return 0
	}
	return size
}

// decodeRows is how many rows of a record batch are turned into jobs at a
// time, so that a file written as one huge batch is still read a few
// thousand jobs at a time.
const decodeRows = 4096

// arrowStream reads the jobs of an Arrow IPC or Parquet file in the
// schema of ArrowSchema, a slice of a record batch at a time. Its jobs'
// times are absolute (the file's epoch added).
type arrowStream struct {
	path   string
	meta   *workload.Trace // Epoch, Source, TimeZone, Notes from the schema metadata
	mem    *arrowcheck.Allocator
	lim    Limits
	rows   int64                             // rows the metadata claims, for preallocation
	batch  func() (arrow.RecordBatch, error) // the next batch, nil at the end; not retained
	rec    arrow.RecordBatch
	off    int64 // next row of rec to decode
	buf    workload.Trace
	i      int
	row    int // rows decoded so far
	intern map[string]string
	err    error
	close  []func()
}

// newArrowStream checks the metadata of the Arrow IPC file r of size
// bytes and opens it.
func newArrowStream(r ReadAtSeeker, size int64, path string, lim Limits) (s *arrowStream, err error) {
	if err := arrowcheck.CheckIPCFile(r, size, lim.arrow()); err != nil {
		return nil, limitErr(path, err, lim)
	}
	s = &arrowStream{path: path, lim: lim, mem: arrowcheck.NewAllocator(lim.MaxArrowMemory), intern: map[string]string{}}
	defer s.recover(&err)
	fr, err := ipc.NewFileReader(r, ipc.WithAllocator(s.mem))
	if err != nil {
		return nil, s.fileErr("arrow", err)
	}
	s.close = append(s.close, func() { fr.Close() })
	if s.meta, err = traceFromMetadata(fr.Schema().Metadata(), path); err != nil {
		return nil, err
	}
	next := 0
	s.batch = func() (arrow.RecordBatch, error) {
		if next >= fr.NumRecords() {
			return nil, nil
		}
		rec, err := fr.RecordBatch(next)
		if err != nil {
			return nil, &ParseError{Path: path, Line: s.row + 1, Err: readErr(fmt.Errorf("arrow: record batch %d: %w", next, err))}
		}
		if next == 0 {
			// The row counts are in each batch's message: guess the
			// others hold as many as the first, as writers make them.
			s.rows = rec.NumRows() * int64(fr.NumRecords())
		}
		next++
		return rec, nil
	}
	return s, nil
}

// newParquetStream checks the metadata of the Parquet file r of size
// bytes and opens it.
func newParquetStream(r ReadAtSeeker, size int64, path string, lim Limits) (s *arrowStream, err error) {
	info, err := arrowcheck.CheckParquetFile(r, size, lim.arrow())
	if err != nil {
		return nil, limitErr(path, err, lim)
	}
	s = &arrowStream{path: path, lim: lim, mem: arrowcheck.NewAllocator(lim.MaxArrowMemory), intern: map[string]string{}, rows: info.NumRows}
	defer s.recover(&err)
	props := parquet.NewReaderProperties(s.mem)
	props.MaxCompressedPageSize, props.MaxUncompressedPageSize = lim.MaxPage, lim.MaxPage
	props.BufferedStreamEnabled = true
	pf, err := file.NewParquetReader(r, file.WithReadProps(props))
	if err != nil {
		return nil, s.fileErr("parquet", err)
	}
	s.close = append(s.close, func() { pf.Close() })
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: decodeRows}, s.mem)
	if err != nil {
		return nil, s.fileErr("parquet", err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return nil, s.fileErr("parquet", err)
	}
	if s.meta, err = traceFromMetadata(schema.Metadata(), path); err != nil {
		return nil, err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return nil, s.fileErr("parquet", err)
	}
	s.close = append(s.close, rr.Release)
	s.batch = func() (arrow.RecordBatch, error) {
		if rr.Next() {
			return rr.RecordBatch(), nil
		}
		if err := rr.Err(); err != nil && err != io.EOF {
			return nil, &ParseError{Path: path, Line: s.row + 1, Err: readErr(fmt.Errorf("parquet: %s", oneLine(err.Error())))}
		}
		return nil, nil
	}
	return s, nil
}

// fileErr is the error for a file arrow-go could not open: a limit when
// its allocator refused, else a syntax error.
func (s *arrowStream) fileErr(kind string, err error) error {
	if be := arrowcheck.Recovered(err); be != nil {
		return limitErr(s.path, be, s.lim)
	}
	return &ParseError{Path: s.path, Line: 1, Err: syntaxErr(fmt.Errorf("%s: %s", kind, oneLine(err.Error())))}
}

// recover turns a panic while decoding into an error at the row after the
// last one read: arrow-go does not check every offset and length, and its
// allocator refuses what would exceed the budget by panicking.
func (s *arrowStream) recover(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if be := arrowcheck.Recovered(r); be != nil {
		*err = limitErr(s.path, be, s.lim)
		var pe *ParseError
		if errors.As(*err, &pe) {
			pe.Line = s.row + 1
		}
		return
	}
	*err = &ParseError{Path: s.path, Line: s.row + 1, Err: errKind(ErrSyntax, fmt.Sprintf("malformed file: %s", oneLine(fmt.Sprint(r))))}
}

// Next returns the next job, or io.EOF after the last.
func (s *arrowStream) Next() (j workload.Job, err error) {
	if s.err != nil {
		return j, s.err
	}
	defer func() {
		if err != nil && err != io.EOF {
			s.err = err
		}
	}()
	defer s.recover(&err)
	for s.i >= len(s.buf.Jobs) {
		if err := s.fill(); err != nil {
			return j, err
		}
	}
	j = s.buf.Jobs[s.i]
	s.buf.Jobs[s.i] = workload.Job{}
	s.i++
	shiftJob(&j, workload.Time(s.meta.Epoch))
	return j, nil
}

// fill decodes the next slice of rows into buf, io.EOF at the end.
func (s *arrowStream) fill() error {
	if s.rec == nil || s.off >= s.rec.NumRows() {
		s.rec = nil
		rec, err := s.batch()
		if err != nil {
			return err
		}
		if rec == nil {
			return io.EOF
		}
		s.rec, s.off = rec, 0
	}
	hi := min(s.off+decodeRows, s.rec.NumRows())
	part := s.rec.NewSlice(s.off, hi)
	defer part.Release()
	s.off = hi
	s.buf.Epoch = s.meta.Epoch
	s.buf.Jobs, s.i = s.buf.Jobs[:0], 0
	return appendJobs(&s.buf, part, s.path, &s.row, s.intern)
}

// Close releases the file's reader.
func (s *arrowStream) Close() {
	for i := len(s.close) - 1; i >= 0; i-- {
		s.close[i]()
	}
	s.close = nil
}

// readArrowWhole reads every job of an Arrow or Parquet stream into a
// trace with the file's epoch, the jobs' times relative to it.
func readArrowWhole(s *arrowStream, size int64) (*workload.Trace, error) {
	defer s.Close()
	t := *s.meta
	for {
		j, err := s.Next()
		if err == io.EOF {
			return &t, nil
		}
		if err != nil {
			return nil, err
		}
		if t.Jobs == nil {
			// An Arrow file's row count is known once its first batch is read.
			t.Jobs = make([]workload.Job, 0, max(1, prealloc(s.rows, size)))
		}
		shiftJob(&j, -workload.Time(t.Epoch))
		t.Jobs = append(t.Jobs, j)
	}
}

// ReadArrow reads an Arrow IPC file written by WriteArrow (or any file with
// the columns of ArrowSchema; absent optional columns are left zero). The
// jobs' times are relative to the returned trace's Epoch, as written.
// Errors name the row (1-based) and column. The file's metadata is
// checked against the default Limits before arrow-go reads it.
func ReadArrow(r ReadAtSeeker, path string) (*workload.Trace, error) {
	size := fileSize(r)
	s, err := newArrowStream(r, size, path, Limits{}.resolve())
	if err != nil {
		return nil, err
	}
	return readArrowWhole(s, size)
}

// ReadParquet reads a Parquet file written by WriteParquet (or any file
// with the columns of ArrowSchema), as ReadArrow does.
func ReadParquet(r ReadAtSeeker, path string) (*workload.Trace, error) {
	size := fileSize(r)
	s, err := newParquetStream(r, size, path, Limits{}.resolve())
	if err != nil {
		return nil, err
	}
	return readArrowWhole(s, size)
}
