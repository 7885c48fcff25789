package traces

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/schedsim/schedsim/workload"
)

// Stream reads a trace one job at a time, in the order of the input, so
// that a trace of any length is read in memory that does not grow with
// it (see the package documentation for what each format keeps). Times
// are absolute Unix seconds: unlike Read, a Stream neither sorts nor
// rebases. Rewind starts again from the first job, for callers that need
// two passes.
//
// A Stream decompresses gzip, zstd, bzip2 and lz4 input (capped, see
// Limits.MaxDecompressed), names xz, lzip, Unix compress, zip and 7z input
// as unsupported, detects the format when Options.Format is "", and
// enforces Options.Limits.
type Stream struct {
	name   string
	opts   Options
	lim    Limits
	src    *source
	format string
	res    *Result
	cur    formatReader
	jobs   int64
	loc    *time.Location // sacct: the zone of the wall-clock times
	rows   int64          // Arrow and Parquet: the rows the file claims
	size   int64          // Arrow and Parquet: the file's size
	comp   string         // the compression of the latest pass ("gzip", "" for none)
	err    error          // sticky
}

// formatReader is one pass over the input in one format.
type formatReader interface {
	// next reads the next job into j (io.EOF after the last); on an error
	// j holds what the format's reader returned with it.
	next(j *workload.Job) error
	// line is the line (row) of the job Next returned last.
	line() int
	// finish fills res's counts and notes; called at io.EOF.
	finish(res *Result)
	close()
}

// OpenStream opens the trace file at path (see Stream). Errors in the
// content are *ParseError naming path.
func OpenStream(path string, opts Options) (*Stream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	src := &source{raw: f, base: 0, size: st.Size(), closeRaw: func() { f.Close() }}
	if !st.Mode().IsRegular() {
		// A pipe or device: read it once into a spool file.
		if src, err = spoolSource(f); err != nil {
			f.Close()
			return nil, err
		}
		f.Close()
	}
	s, err := newStream(src, path, opts)
	if err != nil {
		src.close()
		return nil, err
	}
	return s, nil
}

// NewStream returns a Stream over r; name stands for the input in errors
// and in Trace.Source. An r that cannot seek is first copied into an
// unlinked temporary file (a second pass and Arrow and Parquet need to
// read it again).
func NewStream(r io.Reader, name string, opts Options) (*Stream, error) {
	var src *source
	if rs, ok := r.(io.ReadSeeker); ok {
		if pos, err := rs.Seek(0, io.SeekCurrent); err == nil {
			if end, err := rs.Seek(0, io.SeekEnd); err == nil && end >= pos {
				if _, err := rs.Seek(pos, io.SeekStart); err == nil {
					src = &source{raw: rs, base: pos, size: end - pos}
				}
			}
		}
	}
	if src == nil {
		var err error
		if src, err = spoolSource(r); err != nil {
			return nil, &ParseError{Path: name, Line: 1, Err: readErr(err)}
		}
	}
	s, err := newStream(src, name, opts)
	if err != nil {
		src.close()
		return nil, err
	}
	return s, nil
}

// source is the raw input, which a Stream reads from its start once per
// pass.
type source struct {
	raw      io.ReadSeeker
	base     int64 // where the input starts in raw
	size     int64 // its length
	closeRaw func()
}

func spoolSource(r io.Reader) (*source, error) {
	f, n, done, err := spool(r)
	if err != nil {
		return nil, err
	}
	return &source{raw: f, size: n, closeRaw: done}, nil
}

// open returns the raw input from its start.
func (s *source) open() (io.Reader, error) {
	if _, err := s.raw.Seek(s.base, io.SeekStart); err != nil {
		return nil, err
	}
	return io.LimitReader(s.raw, s.size), nil
}

// readerAt returns random access to the raw input, if raw allows it.
func (s *source) readerAt() (ReadAtSeeker, bool) {
	ra, ok := s.raw.(io.ReaderAt)
	if !ok {
		return nil, false
	}
	return io.NewSectionReader(ra, s.base, s.size), true
}

func (s *source) close() {
	if s.closeRaw != nil {
		s.closeRaw()
		s.closeRaw = nil
	}
}

// pass is the decompressed input of one pass.
type pass struct {
	br   *bufio.Reader
	comp string // "gzip", or "" when not compressed
	done func()
}

// openPass opens the input from its start, decompressing it.
func (s *Stream) openPass() (*pass, error) {
	raw, err := s.src.open()
	if err != nil {
		return nil, &ParseError{Path: s.name, Line: 1, Err: readErr(err)}
	}
	br := bufio.NewReaderSize(raw, 64<<10)
	dr, comp, done, err := decompressed(br, s.name, s.src.size, s.lim)
	if err != nil {
		return nil, err
	}
	s.comp = comp
	return &pass{br: dr, comp: comp, done: done}, nil
}

// byteCounter is a formatReader that counts the bytes of decompressed
// input its lines so far took.
type byteCounter interface{ consumed() int64 }

// consumed returns how many bytes of decompressed input the pass has
// read as lines, and false when its format does not count them.
func (s *Stream) consumed() (int64, bool) {
	c, ok := s.cur.(byteCounter)
	if !ok {
		return 0, false
	}
	return c.consumed(), true
}

// decompressedSize returns the size of the input once decompressed, where
// it is known without reading it: the input's size when it is not
// compressed, and for gzip the size the last member's trailer states
// (ISIZE: the whole size of a single-member file below 4 GiB); 0 when
// unknown. It is a hint for preallocation, never a limit.
func (s *Stream) decompressedSize() int64 {
	switch s.comp {
	case "":
		return s.src.size
	case "gzip":
		ra, ok := s.src.readerAt()
		if !ok || s.src.size < 18 || s.src.size >= 1<<32 {
			return 0
		}
		var b [4]byte
		if _, err := ra.ReadAt(b[:], s.src.size-4); err != nil {
			return 0
		}
		return int64(binary.LittleEndian.Uint32(b[:]))
	}
	return 0
}

func newStream(src *source, name string, opts Options) (*Stream, error) {
	if opts.Format != "" && !slices.Contains(ReadFormats(), opts.Format) {
		return nil, fmt.Errorf("traces: unknown format %q (want one of %s)", opts.Format, strings.Join(ReadFormats(), ", "))
	}
	if opts.Lenient {
		opts.Sacct.Lenient = true
		opts.SWF.Lenient = true
		opts.Alibaba.Lenient = true
	}
	s := &Stream{name: name, opts: opts, lim: opts.Limits.resolve(), src: src}
	if tz := opts.Sacct.TimeZone; tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return nil, fmt.Errorf("traces: sacct time zone %q: %w", tz, err)
		}
		s.loc = loc
	}
	p, err := s.openPass()
	if err != nil {
		return nil, err
	}
	s.format = opts.Format
	if s.format == "" {
		s.format, err = s.detect(p.br)
	}
	p.done()
	if err != nil {
		return nil, err
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// detect tells the format from the start of the decompressed input.
func (s *Stream) detect(br *bufio.Reader) (string, error) {
	prefix, err := br.Peek(detectBytes)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) && len(prefix) == 0 {
		// With some bytes read, the format is told from them and the
		// main pass reports the error at its line.
		return "", &ParseError{Path: s.name, Line: 1, Err: readErr(err)}
	}
	if c := sniffCompression(prefix); c != nil {
		// Compressed twice (a .gz of a .gz): name what is inside.
		return "", &ParseError{Path: s.name, Line: 1, Err: errKind(ErrUnknownFormat,
			fmt.Sprintf("the decompressed input is itself %s-compressed: decompress it first", c.name))}
	}
	format, err := DetectFormat(prefix)
	if err != nil {
		if errors.Is(err, ErrUnknownFormat) && len(s.opts.CSV.Fields) > 0 && bytes.IndexByte(prefix, ',') >= 0 {
			return FormatCSV, nil
		}
		return "", fmt.Errorf("%s: %w", s.name, err)
	}
	if format == formatAlibabaNodes {
		return "", fmt.Errorf("%s: this is an Alibaba node list (sn,cpu_milli,memory_mib,gpu,model), not a job trace: give the pod list (openb_pod_list_*.csv) as the trace", s.name)
	}
	if len(s.opts.CSV.Fields) > 0 && (format == FormatEagle || format == FormatHelios) {
		format = FormatCSV // an explicit mapping wins over a detected preset
	}
	return format, nil
}

// start begins a pass: a fresh Result and a reader of the format.
func (s *Stream) start() error {
	s.jobs = 0
	s.res = &Result{Format: s.format, Trace: &workload.Trace{}}
	var err error
	switch s.format {
	case FormatArrow, FormatParquet:
		s.cur, err = s.startArrow()
	default:
		// A first pass, where the format needs one, reads the input
		// to its end before the main pass opens it: the passes share
		// the underlying file.
		var pre prepass
		if pre, err = s.prepass(); err != nil {
			return err
		}
		var p *pass
		if p, err = s.openPass(); err != nil {
			return err
		}
		s.cur, err = s.startText(p, pre)
		if err != nil {
			p.done()
		}
	}
	return err
}

// prepass is what a first pass over the input found.
type prepass struct {
	dups       *dupSet       // sacct: repeated records to drop
	alibabaEnd workload.Time // Alibaba: the end of the trace
}

func (s *Stream) prepass() (prepass, error) {
	var pre prepass
	var err error
	switch s.format {
	case FormatSacct:
		pre.dups, err = s.sacctDuplicates()
	case FormatAlibaba:
		pre.alibabaEnd = workload.Time(s.opts.Alibaba.TraceEnd)
		if pre.alibabaEnd == 0 {
			// The largest deletion time is the end of the trace.
			pre.alibabaEnd, err = s.alibabaEnd()
		}
	}
	return pre, err
}

// Format returns the format being read.
func (s *Stream) Format() string { return s.format }

// Result returns what is known of the trace besides its jobs: the format,
// the SWF header, the time zone, and once Next has returned io.EOF the
// counts, the notes and Trace.Source. Trace.Jobs is empty and
// Trace.Epoch 0 (the jobs' times are absolute).
func (s *Stream) Result() *Result { return s.res }

// Jobs returns how many jobs Next has returned in this pass.
func (s *Stream) Jobs() int64 { return s.jobs }

// Next returns the next job, or io.EOF after the last. Errors are
// *ParseError; a stream stops at its first error.
func (s *Stream) Next() (workload.Job, error) {
	var j workload.Job
	err := s.next(&j)
	return j, err
}

// next is Next reading into j, which readWhole fills in place (a Job is
// 288 bytes, and the SWF reader parses into its own slot and copies from
// there once). On an error j is as Next would return it.
func (s *Stream) next(j *workload.Job) error {
	if s.err != nil {
		*j = workload.Job{}
		return s.err
	}
	err := s.cur.next(j)
	if err == io.EOF {
		s.err = io.EOF
		s.cur.finish(s.res)
		s.res.Trace.Source = s.source()
		return io.EOF
	}
	if err != nil {
		s.err = err
		return err
	}
	s.jobs++
	if s.jobs > s.lim.MaxJobs {
		s.err = &ParseError{Path: s.name, Line: s.cur.line(), Err: &LimitError{Flag: "max-jobs", Limit: s.lim.MaxJobs,
			Msg: fmt.Sprintf("the trace holds more than %s jobs", fmtCount(int(s.lim.MaxJobs)))}}
		*j = workload.Job{}
		return s.err
	}
	if s.loc != nil {
		wallToZone(j, s.loc)
	}
	if s.opts.NoExtra {
		j.Extra = nil
	}
	return nil
}

// Rewind starts the stream again from its first job.
func (s *Stream) Rewind() error {
	if s.cur != nil {
		s.cur.close()
		s.cur = nil
	}
	s.err = nil
	if err := s.start(); err != nil {
		s.err = err
		return err
	}
	return nil
}

// Close releases the input.
func (s *Stream) Close() error {
	if s.cur != nil {
		s.cur.close()
		s.cur = nil
	}
	s.src.close()
	return nil
}

// sizeHint is how many jobs a whole read may preallocate for.
func (s *Stream) sizeHint() int {
	if s.format == FormatArrow || s.format == FormatParquet {
		return prealloc(s.rows, s.size)
	}
	return 0
}

// source is Trace.Source once the pass has ended.
func (s *Stream) source() string {
	base := filepath.Base(s.name)
	n := fmtCount(int(s.jobs))
	switch s.format {
	case FormatSacct:
		return fmt.Sprintf("%s (sacct, %s jobs)", base, n)
	case FormatSWF:
		desc := ""
		if h := s.res.SWF; h != nil {
			desc = strings.TrimSpace(strings.Join(nonEmpty(h.Computer, h.Installation), ", "))
		}
		if desc != "" {
			desc = ": " + desc
		}
		return fmt.Sprintf("%s (SWF%s, %s jobs)", base, desc, n)
	case FormatCSV, FormatEagle, FormatHelios:
		return fmt.Sprintf("%s (CSV, %s mapping, %s jobs)", base, s.csvMap().Name, n)
	case FormatAlibaba:
		return fmt.Sprintf("%s (Alibaba GPU pod list, %s jobs)", base, n)
	case FormatPhilly:
		return fmt.Sprintf("%s (Philly job log, %s jobs)", base, n)
	}
	return fmt.Sprintf("%s (%s, %s jobs)", base, s.format, n)
}

// csvMap is the column map a CSV format is read through.
func (s *Stream) csvMap() CSVMap {
	m := s.opts.CSV
	if s.format != FormatCSV {
		m, _ = CSVPreset(s.format)
		if s.opts.CSV.TimeZone != "" {
			m.TimeZone = s.opts.CSV.TimeZone
		}
	}
	return m
}

// startArrow opens an Arrow or Parquet file: in place when the input is a
// plain file, else decompressed into a spool file (capped).
func (s *Stream) startArrow() (formatReader, error) {
	var ra ReadAtSeeker
	var size int64
	var done func()
	p, err := s.openPass()
	if err != nil {
		return nil, err
	}
	if ra0, ok := s.src.readerAt(); ok && p.comp == "" {
		ra, size, done = ra0, s.src.size, func() {}
		p.done()
	} else {
		f, n, sdone, err := spool(p.br)
		p.done()
		if err != nil {
			var le *LimitError
			if errors.As(err, &le) {
				return nil, &ParseError{Path: s.name, Line: 1, Err: le}
			}
			return nil, &ParseError{Path: s.name, Line: 1, Err: readErr(err)}
		}
		ra, size, done = f, n, sdone
	}
	var as *arrowStream
	if s.format == FormatArrow {
		as, err = newArrowStream(ra, size, s.name, s.lim)
	} else {
		as, err = newParquetStream(ra, size, s.name, s.lim)
	}
	if err != nil {
		done()
		return nil, err
	}
	s.size = size
	t := s.res.Trace
	t.TimeZone, t.Notes = as.meta.TimeZone, as.meta.Notes
	return &arrowPass{as: as, s: s, done: done}, nil
}

type arrowPass struct {
	as   *arrowStream
	s    *Stream
	done func()
}

func (a *arrowPass) next(j *workload.Job) (err error) {
	*j, err = a.as.Next()
	a.s.rows = a.as.rows
	return err
}
func (a *arrowPass) line() int      { return a.as.row }
func (a *arrowPass) finish(*Result) {}
func (a *arrowPass) close() {
	a.as.Close()
	a.done()
}

// startText opens a reader of a text format on p.
func (s *Stream) startText(p *pass, pre prepass) (formatReader, error) {
	res, t, br := s.res, s.res.Trace, p.br
	switch s.format {
	case FormatSacct:
		sr, err := newSacctReader(br, s.name, s.opts.Sacct, s.lim, pre.dups)
		if err != nil {
			return nil, err
		}
		return &sacctPass{sr: sr, p: p, zone: s.opts.Sacct.TimeZone}, nil
	case FormatSWF:
		sr, err := newSWFReader(br, s.name, s.opts.SWF, s.lim)
		if err != nil {
			return nil, err
		}
		sr.noExtra = s.opts.NoExtra
		h := sr.Header()
		res.SWF = &h
		t.TimeZone = sr.TimeZone()
		return &swfPass{sr: sr, p: p}, nil
	case FormatCSV, FormatEagle, FormatHelios:
		m := s.csvMap()
		if len(m.Fields) == 0 {
			return nil, fmt.Errorf("%s: format csv needs a column mapping (--map target=column,... or a preset: %s)", s.name, strings.Join(CSVPresets(), ", "))
		}
		cr, err := newCSVReaderLimits(br, s.name, m, s.opts.Lenient, s.lim)
		if err != nil {
			return nil, err
		}
		t.TimeZone = m.TimeZone
		return &csvPass{cr: cr, p: p}, nil
	case FormatAlibaba:
		end := pre.alibabaEnd
		ar, err := newAlibabaReader(br, s.name, s.opts.Alibaba, s.lim)
		if err != nil {
			return nil, err
		}
		return &alibabaPass{ar: ar, p: p, end: end, finish0: s.opts.Alibaba.TraceEnd == 0}, nil
	case FormatPhilly:
		pr, err := NewPhillyReader(br, s.name, s.opts.Lenient)
		if err != nil {
			return nil, err
		}
		pr.SetMaxRecord(s.lim.MaxRecord)
		return &phillyPass{pr: pr, p: p}, nil
	}
	return nil, fmt.Errorf("traces: cannot read format %q", s.format)
}

// alibabaEnd reads the pod list once for its largest deletion time.
func (s *Stream) alibabaEnd() (workload.Time, error) {
	p, err := s.openPass()
	if err != nil {
		return 0, err
	}
	defer p.done()
	ar, err := newAlibabaReader(p.br, s.name, s.opts.Alibaba, s.lim)
	if err != nil {
		return 0, err
	}
	end := workload.Unknown
	for {
		j, err := ar.Next()
		if err == io.EOF {
			return end, nil
		}
		if err != nil {
			// The main pass meets the same error at the same row.
			return end, nil
		}
		end = max(end, j.TraceEnd)
	}
}

type sacctPass struct {
	sr   *SacctReader
	p    *pass
	zone string
}

func (x *sacctPass) next(j *workload.Job) (err error) { *j, err = x.sr.Next(); return err }
func (x *sacctPass) line() int                        { return x.sr.lastLine }
func (x *sacctPass) close()                           { x.p.done() }
func (x *sacctPass) finish(res *Result) {
	st := x.sr.Stats()
	res.Skipped = st.OrphanSteps + st.SkippedPending + st.Duplicates
	res.Bad = st.Bad
	res.skip("step folded into its job", st.StepsFolded)
	res.skip("orphan step (no job row before it)", st.OrphanSteps)
	res.skip("pending job dropped (skip pending)", st.SkippedPending)
	res.skip("bad row", st.Bad)
	res.skip("step of a bad or dropped job", st.BadSteps)
	res.skip("repeated record (same run listed again)", st.Duplicates)
	res.skip("step of a repeated record", st.DuplicateSteps)
	res.skip("repeated header row", st.RepeatedHeaders)
	res.Trace.Notes = x.sr.Notes()
	if x.zone != "" {
		res.Trace.TimeZone = x.zone
		res.Trace.Notes[0] = "sacct timestamps (no zone) read as wall-clock time in " + x.zone
	}
}

type swfPass struct {
	sr *SWFReader
	p  *pass
}

func (x *swfPass) next(j *workload.Job) error { return x.sr.next(j) }
func (x *swfPass) line() int                  { return x.sr.lastLine }
func (x *swfPass) close()                     { x.p.done() }
func (x *swfPass) consumed() int64            { return x.sr.lr.read }
func (x *swfPass) finish(res *Result) {
	st := x.sr.Stats()
	res.Skipped = st.Skipped
	res.Bad = st.Bad
	res.skip("phantom record (no submit time)", st.Skipped)
	res.skip("partial execution folded into its job", st.FoldedRecords)
	res.skip("bad row", st.Bad)
	res.Trace.Notes = x.sr.Notes()
}

type csvPass struct {
	cr *CSVReader
	p  *pass
}

func (x *csvPass) next(j *workload.Job) (err error) { *j, err = x.cr.Next(); return err }
func (x *csvPass) line() int                        { return x.cr.rec.start }
func (x *csvPass) close()                           { x.p.done() }
func (x *csvPass) finish(res *Result) {
	st := x.cr.Stats()
	res.Skipped = st.Duplicates + st.NoSubmit
	res.Bad = st.Bad
	res.skip("duplicate row", st.Duplicates)
	res.skip("no submit time", st.NoSubmit)
	res.skip("bad row", st.Bad)
	if len(st.Sentinels) > 0 {
		res.Sentinels = st.Sentinels
	}
	res.Trace.Notes = x.cr.Notes()
}

type alibabaPass struct {
	ar      *AlibabaReader
	p       *pass
	end     workload.Time
	finish0 bool // pods are finished against the end found by the first pass
}

func (x *alibabaPass) next(j *workload.Job) (err error) {
	*j, err = x.ar.Next()
	if err == nil && x.finish0 && x.end != workload.Unknown {
		x.ar.stats.add(FinishAlibabaPod(j, x.end))
	}
	return err
}
func (x *alibabaPass) line() int { return x.ar.rec.start }
func (x *alibabaPass) close()    { x.p.done() }
func (x *alibabaPass) finish(res *Result) {
	st := x.ar.Stats()
	res.Bad = st.Bad
	res.skip("bad row", st.Bad)
	res.Trace.Notes = x.ar.Notes()
}

type phillyPass struct {
	pr *PhillyReader
	p  *pass
}

func (x *phillyPass) next(j *workload.Job) (err error) { *j, err = x.pr.Next(); return err }
func (x *phillyPass) line() int                        { return x.pr.lastLine }
func (x *phillyPass) close()                           { x.p.done() }
func (x *phillyPass) finish(res *Result) {
	st := x.pr.Stats()
	res.Skipped = st.NoSubmit
	res.Bad = st.Bad
	res.skip("no submit time", st.NoSubmit)
	res.skip("bad row", st.Bad)
	res.Trace.Notes = x.pr.Notes()
}
