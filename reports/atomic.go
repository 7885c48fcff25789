package reports

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/schedsim/schedsim/sim"
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

// WriteOutputs writes every output of a run as the run directory dir
// (CreateOutDir, WriteRun, Close): jobs.csv, jobs.parquet,
// timeline.parquet, timeline.om (OpenMetrics), jobs.sacct, scenario.yaml (when scenario is not
// empty), plots/NAME.png and plots/NAME.svg for each of Figures,
// report.html, summary.json and manifest.json. a must be Analyze(rec,
// ...). dir then holds this run and nothing else, or, after an error, what
// it held before.
func WriteOutputs(dir string, rec *sim.Record, a *Analysis, scenario []byte) error {
	o, err := CreateOutDir(dir)
	if err != nil {
		return err
	}
	if err := o.WriteRun(rec, a, scenario); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

// WriteRun writes the outputs of a run (see WriteOutputs) into o and
// commits them.
func (o *OutDir) WriteRun(rec *sim.Record, a *Analysis, scenario []byte) error {
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{JobsFile, func(w io.Writer) error { return WriteJobsCSV(w, rec) }},
		{JobsParquetFile, func(w io.Writer) error { return WriteJobsParquet(w, a) }},
		{TimelineParquetFile, func(w io.Writer) error { return WriteTimelineParquet(w, a) }},
		{OpenMetricsFile, func(w io.Writer) error { return WriteOpenMetrics(w, rec, &a.Timeline) }},
		{SacctFile, func(w io.Writer) error { return WriteJobsSacct(w, rec) }},
	}
	if len(scenario) > 0 {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{ScenarioFile, func(w io.Writer) error { _, err := w.Write(scenario); return err }})
	}
	for _, f := range files {
		if err := o.WriteFile(f.name, f.write); err != nil {
			return err
		}
	}
	var sum bytes.Buffer
	if err := WriteSummaryJSON(&sum, a.Summary); err != nil {
		return err
	}
	if err := o.writePlotsAndReport(sum.Bytes(), a.waitRows(), &a.Timeline, scenario); err != nil {
		return err
	}
	if err := o.WriteFile(SummaryFile, func(w io.Writer) error {
		_, err := w.Write(sum.Bytes())
		return err
	}); err != nil {
		return err
	}
	return o.Commit(RunID{ConfigHash: a.Summary.ConfigHash, Seed: a.Summary.Seed, Policy: a.Summary.Policy})
}

// Redraw re-draws the plots and report.html of the run directory o
// replaces from its saved outputs (ReadRunDir under o's lock), carries
// its other files over unchanged, and commits: schedsim plot.
func (o *OutDir) Redraw() (*RunDir, error) {
	root, err := os.OpenRoot(o.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	rd, err := readRunDir(o.dir, root)
	if err != nil {
		return nil, err
	}
	for _, e := range rd.Manifest.Files {
		if derivedFile(e.Name) {
			continue
		}
		if err := o.carry(root, e); err != nil {
			return nil, err
		}
	}
	if err := o.writePlotsAndReport(rd.Summary, waitRowsOf(rd.Jobs), rd.Timeline, rd.Scenario); err != nil {
		return nil, err
	}
	m := rd.Manifest
	return rd, o.Commit(RunID{ConfigHash: m.ConfigHash, Seed: m.Seed, Policy: m.Policy})
}

// writePlotsAndReport draws Figures(jobs, tl, policy) into plots/ as PNG
// and SVG and writes report.html from summary (summary.json's bytes), the
// figures and scenario.
func (o *OutDir) writePlotsAndReport(summary []byte, jobs *waitRows, tl *Timeline, scenario []byte) error {
	hdr, err := ParseSummaryHeader(summary)
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	figs := figures(jobs, tl, hdr.Policy)
	for i := range figs {
		f := &figs[i]
		if err := o.WriteFile(PlotsDir+"/"+f.Name+".png", f.WritePNG); err != nil {
			return err
		}
		if err := o.WriteFile(PlotsDir+"/"+f.Name+".svg", f.WriteSVG); err != nil {
			return err
		}
	}
	return o.WriteFile(ReportFile, func(w io.Writer) error {
		return WriteReport(w, ReportInput{Summary: summary, Figures: figs, Scenario: scenario})
	})
}

// RunDir is a run's saved outputs read back.
type RunDir struct {
	Dir      string
	Manifest *Manifest
	Summary  []byte
	Header   SummaryHeader
	Jobs     []JobRow
	Timeline *Timeline
	Scenario []byte // nil if the directory has no scenario.yaml
}

// ReadRunDir checks dir against its manifest (VerifyRunDir, except that
// plots and report.html may be missing: they are drawn from the rest) and
// reads summary.json, jobs.parquet, timeline.parquet and, if present,
// scenario.yaml, in the same pass: the bytes read are the bytes checked,
// even if a writer replaces dir meanwhile. The summary's and the jobs
// table's config hash and seed must be the manifest's.
func ReadRunDir(dir string) (*RunDir, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return readRunDir(dir, root)
}

func readRunDir(dir string, root *os.Root) (*RunDir, error) {
	m, data, err := verifyRoot(dir, root, []string{SummaryFile, JobsParquetFile, TimelineParquetFile, ScenarioFile}, true)
	if err != nil {
		return nil, err
	}
	rd := &RunDir{Dir: dir, Manifest: m, Scenario: data[ScenarioFile]}
	for _, name := range []string{SummaryFile, JobsParquetFile, TimelineParquetFile} {
		if _, ok := data[name]; !ok {
			return nil, fmt.Errorf("%s: the manifest lists no %s: %s", dir, name, errNotComplete)
		}
	}
	rd.Summary = data[SummaryFile]
	if rd.Header, err = ParseSummaryHeader(rd.Summary); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SummaryFile), err)
	}
	if rd.Header.ConfigHash != m.ConfigHash || rd.Header.Seed != m.Seed {
		return nil, fmt.Errorf("%s: summary.json is config %s seed %d, the manifest %s seed %d: %s",
			dir, rd.Header.ConfigHash, rd.Header.Seed, m.ConfigHash, m.Seed, errNotComplete)
	}
	var meta map[string]string
	if rd.Jobs, meta, err = ReadJobsParquet(filepath.Join(dir, JobsParquetFile), data[JobsParquetFile]); err != nil {
		return nil, err
	}
	if meta[metaConfigHash] != m.ConfigHash || meta[metaSeed] != strconv.FormatUint(m.Seed, 10) {
		return nil, fmt.Errorf("%s: jobs.parquet is config %s seed %s, the manifest %s seed %d: %s",
			dir, meta[metaConfigHash], meta[metaSeed], m.ConfigHash, m.Seed, errNotComplete)
	}
	if rd.Timeline, err = ReadTimelineParquet(filepath.Join(dir, TimelineParquetFile), data[TimelineParquetFile]); err != nil {
		return nil, err
	}
	return rd, nil
}
