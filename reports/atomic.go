package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/traces"
)

// Output file names WriteOutputs uses, relative to the output directory.
const (
	SummaryFile         = "summary.json"
	JobsFile            = "jobs.csv"
	JobsParquetFile     = "jobs.parquet"
	TimelineParquetFile = "timeline.parquet"
	SacctFile           = "jobs.sacct"
	ScenarioFile        = "scenario.yaml"
	ReportFile          = "report.html"
	PlotsDir            = "plots"
)

// WriteOutputs writes every output of a run into dir, creating dir and
// dir/plots (mode 0755) if needed: jobs.csv, jobs.parquet,
// timeline.parquet, jobs.sacct, scenario.yaml (when scenario is not
// empty), plots/NAME.png and plots/NAME.svg for each of Figures, and
// report.html, then summary.json last, so a directory with a new
// summary.json has the matching files. a must be Analyze(rec, ...).
// Each file is written with WriteFileAtomic: on error no partial file is
// left behind, though earlier files may already have been replaced.
func WriteOutputs(dir string, rec *sim.Record, a *Analysis, scenario []byte) error {
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return err
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{JobsFile, func(w io.Writer) error { return WriteJobsCSV(w, rec) }},
		{JobsParquetFile, func(w io.Writer) error { return WriteJobsParquet(w, a) }},
		{TimelineParquetFile, func(w io.Writer) error { return WriteTimelineParquet(w, a) }},
		{SacctFile, func(w io.Writer) error { return WriteJobsSacct(w, rec) }},
	}
	if len(scenario) > 0 {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{ScenarioFile, func(w io.Writer) error { _, err := w.Write(scenario); return err }})
	}
	for _, f := range files {
		if err := traces.WriteFileAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	var sum bytes.Buffer
	if err := WriteSummaryJSON(&sum, a.Summary); err != nil {
		return err
	}
	if err := WritePlotsAndReport(dir, sum.Bytes(), a.Jobs, &a.Timeline, scenario); err != nil {
		return err
	}
	return traces.WriteFileAtomic(filepath.Join(dir, SummaryFile), func(w io.Writer) error {
		_, err := w.Write(sum.Bytes())
		return err
	})
}

// WritePlotsAndReport draws Figures(jobs, tl, policy) into dir/plots as
// PNG and SVG and writes dir/report.html from summary (summary.json's
// bytes), the figures and scenario.
func WritePlotsAndReport(dir string, summary []byte, jobs []JobRow, tl *Timeline, scenario []byte) error {
	hdr, err := ParseSummaryHeader(summary)
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return err
	}
	figs := Figures(jobs, tl, hdr.Policy)
	for i := range figs {
		f := &figs[i]
		if err := traces.WriteFileAtomic(filepath.Join(dir, PlotsDir, f.Name+".png"), f.WritePNG); err != nil {
			return err
		}
		if err := traces.WriteFileAtomic(filepath.Join(dir, PlotsDir, f.Name+".svg"), f.WriteSVG); err != nil {
			return err
		}
	}
	return traces.WriteFileAtomic(filepath.Join(dir, ReportFile), func(w io.Writer) error {
		return WriteReport(w, ReportInput{Summary: summary, Figures: figs, Scenario: scenario})
	})
}

// RunDir is a run's saved outputs read back.
type RunDir struct {
	Dir      string
	Summary  []byte
	Header   SummaryHeader
	Jobs     []JobRow
	Timeline *Timeline
	Scenario []byte // nil if the directory has no scenario.yaml
}

// ReadRunDir reads summary.json, jobs.parquet, timeline.parquet and, if
// present, scenario.yaml from dir.
func ReadRunDir(dir string) (*RunDir, error) {
	rd := &RunDir{Dir: dir}
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	var err error
	if rd.Summary, err = read(SummaryFile); err != nil {
		return nil, err
	}
	if rd.Header, err = ParseSummaryHeader(rd.Summary); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SummaryFile), err)
	}
	data, err := read(JobsParquetFile)
	if err != nil {
		return nil, err
	}
	if rd.Jobs, _, err = ReadJobsParquet(filepath.Join(dir, JobsParquetFile), data); err != nil {
		return nil, err
	}
	if data, err = read(TimelineParquetFile); err != nil {
		return nil, err
	}
	if rd.Timeline, err = ReadTimelineParquet(filepath.Join(dir, TimelineParquetFile), data); err != nil {
		return nil, err
	}
	if b, err := read(ScenarioFile); err == nil {
		rd.Scenario = b
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return rd, nil
}
