package traces

import (
	"bufio"
	"bytes"
	"compress/gzip"
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

// Trace formats, as Options.Format and DetectFormat name them.
const (
	FormatSacct   = "sacct"   // sacct -p/-P output
	FormatSWF     = "swf"     // Standard Workload Format 2.2
	FormatCSV     = "csv"     // a CSV table read through Options.CSV (a CSVMap)
	FormatEagle   = "eagle"   // CSV with the NREL Eagle columns (CSVPreset "eagle")
	FormatHelios  = "helios"  // CSV with the SenseTime Helios columns (CSVPreset "helios")
	FormatAlibaba = "alibaba" // Alibaba GPU cluster pod list (cluster-trace-gpu-v2023)
	FormatPhilly  = "philly"  // Microsoft Philly cluster_job_log (JSON)
	FormatArrow   = "arrow"   // Arrow IPC file in the schema of ArrowSchema
	FormatParquet = "parquet" // Parquet file in the schema of ArrowSchema
)

// formatAlibabaNodes is what DetectFormat calls an Alibaba node list, which
// is not a job trace.
const formatAlibabaNodes = "alibaba-nodes"

// ReadFormats returns the formats Open and Read accept.
func ReadFormats() []string {
	return []string{FormatSacct, FormatSWF, FormatCSV, FormatEagle, FormatHelios, FormatAlibaba, FormatPhilly, FormatArrow, FormatParquet}
}

// Options configures Open and Read.
type Options struct {
	// Format is FormatSacct, FormatSWF, or "" to detect it from the
	// content (DetectFormat).
	Format string
	Sacct  SacctOptions
	SWF    SWFOptions
	// CSV maps the columns of a CSV table (FormatCSV). When its Fields are
	// set, a CSV input whose format is detected or given as FormatCSV is
	// read through it; FormatEagle and FormatHelios use their presets.
	CSV     CSVMap
	Alibaba AlibabaOptions
	// Lenient skips bad lines instead of failing, counts them and notes
	// the first few by position (it sets Sacct.Lenient and SWF.Lenient).
	Lenient bool
}

// Result is a whole trace read by Open or Read, with what callers need
// beyond the jobs.
type Result struct {
	// Trace holds the jobs sorted by submit time, times relative to
	// Trace.Epoch (Unix seconds), with Source and Notes filled in.
	Trace *workload.Trace
	// Format is the format read (FormatSacct or FormatSWF).
	Format string
	// SWF is the SWF header (MaxNodes, MaxProcs, ... describe the machine
	// the log came from); nil for other formats.
	SWF *SWFHeader
	// Skipped counts records that are not jobs: SWF phantoms, orphan
	// sacct steps, pending jobs dropped by SkipPending, duplicate and
	// submit-less CSV rows (folded steps and partial executions are not
	// counted here; SkippedBy has them).
	Skipped int
	// SkippedBy counts every record not taken as a job by reason ("step
	// folded into its job", "orphan step", "no submit time", "duplicate
	// row", "bad row", ...), bad rows (Lenient) included.
	SkippedBy map[string]int
	// Sentinels counts values that stood for "no value" in a CSV table
	// ("limit infinite", "start unknown", "mem empty").
	Sentinels map[string]int
	// Bad counts lines skipped as bad (Lenient only).
	Bad int
}

func (r *Result) skip(reason string, n int) {
	if n <= 0 {
		return
	}
	if r.SkippedBy == nil {
		r.SkippedBy = map[string]int{}
	}
	r.SkippedBy[reason] += n
}

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// detectBytes is how much of the input DetectFormat is shown.
const detectBytes = 64 << 10

// Open reads the whole trace file at path, gunzipping it when it is gzip
// (by its magic bytes, whatever its name), detecting the format when
// opts.Format is "". Errors in the content are *ParseError naming path.
// See Read for what the result holds.
func Open(path string, opts Options) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path, opts)
}

// Read reads a whole trace from r, as Open does for a file; name stands
// for the input in errors and in Trace.Source. The jobs are read with
// NewSacctReader or NewSWFReader, then Trace.Rebase(0) sorts them by
// submit time and makes times relative to the first submit (Epoch holds
// its Unix time).
func Read(r io.Reader, name string, opts Options) (*Result, error) {
	if opts.Format != "" && !slices.Contains(ReadFormats(), opts.Format) {
		return nil, fmt.Errorf("traces: unknown format %q (want one of %s)", opts.Format, strings.Join(ReadFormats(), ", "))
	}
	// An Arrow or Parquet file that r can seek in is read in place, not
	// copied into memory first; start is where it begins, -1 if it cannot.
	in, _ := r.(ReadAtSeeker)
	start := int64(-1)
	if in != nil {
		if pos, err := in.Seek(0, io.SeekCurrent); err == nil {
			start = pos
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &ParseError{Path: name, Line: 1, Err: errors.Join(ErrRead, fmt.Errorf("gzip: %w", err))}
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
		start = -1
	}
	format := opts.Format
	if format == "" {
		prefix, err := br.Peek(detectBytes)
		if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, &ParseError{Path: name, Line: 1, Err: errors.Join(ErrRead, err)}
		}
		if format, err = DetectFormat(prefix); err != nil {
			if errors.Is(err, ErrUnknownFormat) && len(opts.CSV.Fields) > 0 && bytes.IndexByte(prefix, ',') >= 0 {
				format = FormatCSV
			} else {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		if format == formatAlibabaNodes {
			return nil, fmt.Errorf("%s: this is an Alibaba node list (sn,cpu_milli,memory_mib,gpu,model), not a job trace: read it with ReadAlibabaNodes", name)
		}
		if len(opts.CSV.Fields) > 0 && (format == FormatEagle || format == FormatHelios) {
			format = FormatCSV // an explicit mapping wins over a detected preset
		}
	}
	if opts.Lenient {
		opts.Sacct.Lenient = true
		opts.SWF.Lenient = true
		opts.Alibaba.Lenient = true
	}
	base := filepath.Base(name)
	res := &Result{Format: format, Trace: &workload.Trace{}}
	t := res.Trace
	var err error
	switch format {
	case FormatSacct:
		sr, err := NewSacctReader(br, name, opts.Sacct)
		if err != nil {
			return nil, err
		}
		if t.Jobs, err = readAll(sr.Next); err != nil {
			return nil, err
		}
		st := sr.Stats()
		res.Skipped = st.OrphanSteps + st.SkippedPending
		res.Bad = st.Bad
		res.skip("step folded into its job", st.StepsFolded)
		res.skip("orphan step (no job row before it)", st.OrphanSteps)
		res.skip("pending job dropped (skip pending)", st.SkippedPending)
		res.skip("bad row", st.Bad)
		res.skip("step of a bad or dropped job", st.BadSteps)
		t.Source = fmt.Sprintf("%s (sacct, %s jobs)", base, fmtCount(len(t.Jobs)))
		t.Notes = sr.Notes()
		if tz := opts.Sacct.TimeZone; tz != "" {
			loc, err := time.LoadLocation(tz)
			if err != nil {
				return nil, fmt.Errorf("traces: sacct time zone %q: %w", tz, err)
			}
			for i := range t.Jobs {
				wallToZone(&t.Jobs[i], loc)
			}
			t.TimeZone = tz
			t.Notes[0] = "sacct timestamps (no zone) read as wall-clock time in " + tz
		}
	case FormatSWF:
		sr, err := NewSWFReader(br, name, opts.SWF)
		if err != nil {
			return nil, err
		}
		if t.Jobs, err = readAll(sr.Next); err != nil {
			return nil, err
		}
		h := sr.Header()
		res.SWF = &h
		st := sr.Stats()
		res.Skipped = st.Skipped
		res.Bad = st.Bad
		res.skip("phantom record (no submit time, run time or processors)", st.Skipped)
		res.skip("partial execution folded into its job", st.FoldedRecords)
		res.skip("bad row", st.Bad)
		desc := strings.TrimSpace(strings.Join(nonEmpty(h.Computer, h.Installation), ", "))
		if desc != "" {
			desc = ": " + desc
		}
		t.Source = fmt.Sprintf("%s (SWF%s, %s jobs)", base, desc, fmtCount(len(t.Jobs)))
		t.Notes = sr.Notes()
		t.TimeZone = sr.TimeZone()
	case FormatCSV, FormatEagle, FormatHelios:
		m := opts.CSV
		if format != FormatCSV {
			m, _ = CSVPreset(format)
			if opts.CSV.TimeZone != "" {
				m.TimeZone = opts.CSV.TimeZone
			}
		}
		if len(m.Fields) == 0 {
			return nil, fmt.Errorf("%s: format csv needs a column mapping (--map target=column,... or a preset: %s)", name, strings.Join(CSVPresets(), ", "))
		}
		cr, err := NewCSVReader(br, name, m, opts.Lenient)
		if err != nil {
			return nil, err
		}
		if t.Jobs, err = readAll(cr.Next); err != nil {
			return nil, err
		}
		st := cr.Stats()
		res.Skipped = st.Duplicates + st.NoSubmit
		res.Bad = st.Bad
		res.skip("duplicate row", st.Duplicates)
		res.skip("no submit time", st.NoSubmit)
		res.skip("bad row", st.Bad)
		if len(st.Sentinels) > 0 {
			res.Sentinels = st.Sentinels
		}
		t.Source = fmt.Sprintf("%s (CSV, %s mapping, %s jobs)", base, m.Name, fmtCount(len(t.Jobs)))
		t.Notes = cr.Notes()
		t.TimeZone = m.TimeZone
	case FormatAlibaba:
		ar, err := NewAlibabaReader(br, name, opts.Alibaba)
		if err != nil {
			return nil, err
		}
		if t.Jobs, err = readAll(ar.Next); err != nil {
			return nil, err
		}
		if opts.Alibaba.TraceEnd == 0 && len(t.Jobs) > 0 {
			// The largest deletion time is the end of the trace.
			end := workload.Unknown
			for i := range t.Jobs {
				end = max(end, t.Jobs[i].TraceEnd)
			}
			for i := range t.Jobs {
				ar.stats.add(FinishAlibabaPod(&t.Jobs[i], end))
			}
		}
		st := ar.Stats()
		res.Bad = st.Bad
		res.skip("bad row", st.Bad)
		t.Source = fmt.Sprintf("%s (Alibaba GPU pod list, %s jobs)", base, fmtCount(len(t.Jobs)))
		t.Notes = ar.Notes()
	case FormatPhilly:
		pr, err := NewPhillyReader(br, name, opts.Lenient)
		if err != nil {
			return nil, err
		}
		if t.Jobs, err = readAll(pr.Next); err != nil {
			return nil, err
		}
		st := pr.Stats()
		res.Skipped = st.NoSubmit
		res.Bad = st.Bad
		res.skip("no submit time", st.NoSubmit)
		res.skip("bad row", st.Bad)
		t.Source = fmt.Sprintf("%s (Philly job log, %s jobs)", base, fmtCount(len(t.Jobs)))
		t.Notes = pr.Notes()
	case FormatArrow, FormatParquet:
		var ra ReadAtSeeker
		if start >= 0 {
			if end, err := in.Seek(0, io.SeekEnd); err == nil && end >= start {
				ra = io.NewSectionReader(in, start, end-start)
			}
		}
		if ra == nil {
			data, rerr := io.ReadAll(br)
			if rerr != nil {
				return nil, &ParseError{Path: name, Line: 1, Err: errors.Join(ErrRead, rerr)}
			}
			ra = bytes.NewReader(data)
		}
		var tr *workload.Trace
		if format == FormatArrow {
			tr, err = ReadArrow(ra, name)
		} else {
			tr, err = ReadParquet(ra, name)
		}
		if err != nil {
			return nil, err
		}
		*t = *tr
		t.Source = fmt.Sprintf("%s (%s, %s jobs)", base, format, fmtCount(len(t.Jobs)))
		// Arrow and Parquet hold times relative to their epoch already.
		epoch := t.Epoch
		t.Epoch = 0
		for i := range t.Jobs {
			shiftJob(&t.Jobs[i], workload.Time(epoch))
		}
	}
	t.Rebase(0)
	return res, nil
}

// wallToZone turns the times of j from wall-clock readings taken as UTC
// into Unix times of the same readings in loc.
func wallToZone(j *workload.Job, loc *time.Location) {
	conv := func(t workload.Time) workload.Time {
		if t == workload.Unknown {
			return t
		}
		u := time.Unix(int64(t), 0).UTC()
		return workload.Time(time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), 0, loc).Unix())
	}
	j.Submit = conv(j.Submit)
	j.TraceStart = conv(j.TraceStart)
	j.TraceEnd = conv(j.TraceEnd)
}

// shiftJob adds d to every known time of j.
func shiftJob(j *workload.Job, d workload.Time) {
	j.Submit += d
	if j.TraceStart != workload.Unknown {
		j.TraceStart += d
	}
	if j.TraceEnd != workload.Unknown {
		j.TraceEnd += d
	}
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// readAll collects jobs from next until io.EOF.
func readAll(next func() (workload.Job, error)) ([]workload.Job, error) {
	var jobs []workload.Job
	for {
		j, err := next()
		if err == io.EOF {
			return jobs, nil
		}
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
}

// DetectFormat tells the format of a trace from its first bytes (a gzip
// prefix is decompressed first): FormatSWF when the first non-blank line
// is a ';' comment or a record of 18 numbers; FormatSacct when a line has
// a JobID header field, or its first field (split at "☃", "|" or a tab)
// looks like a Slurm job id. Otherwise the error wraps ErrUnknownFormat.
func DetectFormat(prefix []byte) (string, error) {
	if bytes.HasPrefix(prefix, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(prefix))
		if err != nil {
			return "", errKind(ErrUnknownFormat, "corrupt gzip data")
		}
		buf := make([]byte, detectBytes)
		n, _ := io.ReadFull(zr, buf)
		prefix = buf[:n]
	}
	prefix = bytes.TrimPrefix(prefix, utf8BOM)
	switch {
	case bytes.HasPrefix(prefix, []byte("PAR1")):
		return FormatParquet, nil
	case bytes.HasPrefix(prefix, []byte("ARROW1")):
		return FormatArrow, nil
	}
	if t := bytes.TrimLeft(prefix, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return FormatPhilly, nil
	}
	for len(prefix) > 0 {
		var line []byte
		if i := bytes.IndexByte(prefix, '\n'); i >= 0 {
			line, prefix = prefix[:i], prefix[i+1:]
		} else {
			line, prefix = prefix, nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] == ';' || isSWFRecord(line) {
			return FormatSWF, nil
		}
		if f := detectCSV(line); f != "" {
			return f, nil
		}
		for _, d := range []string{"☃", "|", "\t", ",", ";"} {
			if !bytes.Contains(line, []byte(d)) {
				continue
			}
			fields := bytes.Split(line, []byte(d))
			if isSacctHeader(fields) {
				return FormatSacct, nil
			}
			if d == "," || d == ";" {
				continue
			}
			if job, _, _ := splitStep(fields[0], nil); len(job) > 0 {
				if _, err := parseJobID(job); err == nil {
					return FormatSacct, nil
				}
			}
		}
		first := line
		if len(first) > 60 {
			first = append(first[:60:60], "..."...)
		}
		return "", errKind(ErrUnknownFormat, fmt.Sprintf("cannot tell the trace format (want sacct -p/-P output, SWF, a CSV with known columns (%s, Alibaba pod list), a Philly JSON job log, Arrow or Parquet; for other CSV give a column map); first line: %q",
			strings.Join(CSVPresets(), ", "), first))
	}
	return "", errKind(ErrUnknownFormat, "cannot tell the trace format of empty input")
}

// isSWFRecord reports whether line is 18 whitespace-separated numbers.
func isSWFRecord(line []byte) bool {
	fields := bytes.Fields(line)
	if len(fields) != 18 {
		return false
	}
	for _, f := range fields {
		if _, err := parseSWFNum(f); err != nil {
			return false
		}
	}
	return true
}

// detectCSV recognises the header row of the CSV tables with known
// columns.
func detectCSV(line []byte) string {
	if bytes.IndexByte(line, ',') < 0 {
		return ""
	}
	cols := map[string]bool{}
	for _, f := range bytes.Split(line, []byte{','}) {
		cols[string(bytes.Trim(bytes.TrimSpace(f), `"`))] = true
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if !cols[n] {
				return false
			}
		}
		return true
	}
	switch {
	case has("name", "gpu_milli", "creation_time"):
		return FormatAlibaba
	case has("sn", "cpu_milli", "gpu", "model"):
		return formatAlibabaNodes
	}
	for _, p := range CSVPresets() {
		m, _ := CSVPreset(p)
		all := true
		for _, c := range m.Fields {
			if !cols[c.Column] {
				all = false
				break
			}
		}
		if all {
			return p
		}
	}
	return ""
}
