package traces

import (
	"compress/gzip"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/schedsim/schedsim/workload"
)

// WriteFormats returns the formats Write accepts.
func WriteFormats() []string { return []string{FormatSacct, FormatSWF, FormatArrow, FormatParquet} }

// FormatForPath guesses the output format from a file name: .swf, .sacct
// (also .psv, .txt), .arrow (also .ipc, .feather), .parquet, each
// optionally followed by .gz.
func FormatForPath(path string) (string, bool) {
	p := strings.TrimSuffix(strings.ToLower(path), ".gz")
	switch filepath.Ext(p) {
	case ".swf":
		return FormatSWF, true
	case ".sacct", ".psv", ".txt":
		return FormatSacct, true
	case ".arrow", ".ipc", ".feather":
		return FormatArrow, true
	case ".parquet", ".pq":
		return FormatParquet, true
	}
	return "", false
}

// WriteOptions configures Write.
type WriteOptions struct {
	// SWF is the header for SWF output (from the SWF the trace was read
	// from, so that the machine description carries over); nil makes one
	// with UnixStartTime = the trace's epoch.
	SWF *SWFHeader
	// SacctUTC writes sacct timestamps as UTC readings instead of in the
	// trace's time zone.
	SacctUTC bool
}

// Write writes t to w in format (WriteFormats).
func Write(w io.Writer, format string, t *workload.Trace, opts WriteOptions) error {
	switch format {
	case FormatSacct:
		var loc *time.Location
		if t.TimeZone != "" && !opts.SacctUTC {
			l, err := time.LoadLocation(t.TimeZone)
			if err != nil {
				return fmt.Errorf("traces: write sacct: time zone %q: %w", t.TimeZone, err)
			}
			loc = l
		}
		return WriteSacct(w, t, loc)
	case FormatSWF:
		h := SWFHeader{UnixStartTime: t.Epoch, TimeZoneString: t.TimeZone}
		if opts.SWF != nil {
			h = *opts.SWF
		}
		if len(t.Jobs) > 0 && h.UnixStartTime > t.Epoch+int64(t.Jobs[0].Submit) {
			// A header that starts after the first job (a shifted or
			// synthetic trace) cannot be kept.
			h = SWFHeader{UnixStartTime: t.Epoch + int64(t.Jobs[0].Submit), TimeZoneString: t.TimeZone,
				Computer: h.Computer, Installation: h.Installation, MaxNodes: h.MaxNodes, MaxProcs: h.MaxProcs}
		}
		return WriteSWF(w, h, t)
	case FormatArrow:
		return WriteArrow(w, t)
	case FormatParquet:
		return WriteParquet(w, t)
	}
	return fmt.Errorf("traces: cannot write format %q (want one of %s)", format, strings.Join(WriteFormats(), ", "))
}

// WriteFile writes t to path atomically (WriteFileAtomic),
// gzip-compressed when path ends in .gz. format "" is guessed from the
// name (FormatForPath).
func WriteFile(path, format string, t *workload.Trace, opts WriteOptions) error {
	if format == "" {
		f, ok := FormatForPath(path)
		if !ok {
			return fmt.Errorf("traces: cannot tell the output format of %s from its name (want .swf, .sacct, .arrow or .parquet, optionally .gz)", path)
		}
		format = f
	}
	if !slices.Contains(WriteFormats(), format) {
		return fmt.Errorf("traces: cannot write format %q (want one of %s)", format, strings.Join(WriteFormats(), ", "))
	}
	return WriteFileAtomic(path, func(w io.Writer) error {
		if !strings.HasSuffix(strings.ToLower(path), ".gz") {
			return Write(w, format, t, opts)
		}
		zw := gzip.NewWriter(w)
		if err := Write(zw, format, t, opts); err != nil {
			return err
		}
		return zw.Close()
	})
}
