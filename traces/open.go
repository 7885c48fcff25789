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
	"strings"

	"github.com/schedsim/schedsim/workload"
)

// Trace formats, as Options.Format and DetectFormat name them.
const (
	FormatSacct = "sacct"
	FormatSWF   = "swf"
)

// Options configures Open and Read.
type Options struct {
	// Format is FormatSacct, FormatSWF, or "" to detect it from the
	// content (DetectFormat).
	Format string
	Sacct  SacctOptions
	SWF    SWFOptions
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
	// sacct steps, pending jobs dropped by SkipPending.
	Skipped int
	// Bad counts lines skipped as bad (Lenient only).
	Bad int
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
	if opts.Format != "" && opts.Format != FormatSacct && opts.Format != FormatSWF {
		return nil, fmt.Errorf("traces: unknown format %q (want %q or %q)", opts.Format, FormatSacct, FormatSWF)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &ParseError{Path: name, Line: 1, Err: errors.Join(ErrRead, fmt.Errorf("gzip: %w", err))}
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	format := opts.Format
	if format == "" {
		prefix, err := br.Peek(detectBytes)
		if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, &ParseError{Path: name, Line: 1, Err: errors.Join(ErrRead, err)}
		}
		if format, err = DetectFormat(prefix); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if opts.Lenient {
		opts.Sacct.Lenient = true
		opts.SWF.Lenient = true
	}
	base := filepath.Base(name)
	res := &Result{Format: format, Trace: &workload.Trace{}}
	t := res.Trace
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
		t.Source = fmt.Sprintf("%s (sacct, %s jobs)", base, fmtCount(len(t.Jobs)))
		t.Notes = sr.Notes()
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
		res.Skipped = sr.Skipped()
		res.Bad = sr.Stats().Bad
		desc := strings.TrimSpace(strings.Join(nonEmpty(h.Computer, h.Installation), ", "))
		if desc != "" {
			desc = ": " + desc
		}
		t.Source = fmt.Sprintf("%s (SWF%s, %s jobs)", base, desc, fmtCount(len(t.Jobs)))
		t.Notes = sr.Notes()
	}
	t.Rebase(0)
	return res, nil
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
		return "", errKind(ErrUnknownFormat, fmt.Sprintf("cannot tell the trace format (want sacct -p/-P output or SWF); first line: %q", first))
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
