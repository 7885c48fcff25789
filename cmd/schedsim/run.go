package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	yaml "go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/cmd/schedsim/internal/scenario"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/sim"
)

type runFlags struct {
	scenario     string
	trace        string
	format       string
	cluster      string
	policy       string
	seed         uint64
	out          string
	delimiter    string
	fields       string
	procsPerNode int
	procsPerGPU  int
	lenient      bool
	partitionMap string
	calibration  string // --calibration (calibrate.go)
	// Trace reading and transforms (see trace.go).
	mapSpec, mapPreset, timeZone string
	windowFrom, windowTo         string
	scaleLoad                    float64
	remapGPU                     string
	speedup                      float64
	filterUser, filterPartition  string
	filterState                  string
	// Scale (runextra.go).
	quiet bool
	jobs  int
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Replay a trace on a cluster under a policy and print a summary",
		Long: `Replay a job trace on a modeled cluster under a scheduling policy.

With no flags it runs the embedded default scenario: the example cluster
(32 x 8 H100 and 16 x 8 A100 nodes) replaying an embedded slice of the
LLNL Thunder log under EASY backfill. A scenario file (--scenario) names
everything a run needs; flags override it.`,
		Example: `  schedsim run
  schedsim run --policy fifo
  schedsim run --trace jobs.sacct --cluster my-cluster.yaml --policy easy --out results/
  schedsim run --trace CTC-SP2-1996-3.1-cln.swf.gz --cluster header
  schedsim run --trace thunder.swf.gz --procs-per-gpu 10 --partition-map 1=gpu,2=gpu
  schedsim run --scenario study.yaml --seed 7 --out results/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, &f) },
	}
	addLimitFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "scenario file (YAML); default: the embedded default scenario")
	fl.StringVar(&f.trace, "trace", "", "trace file (sacct, SWF, CSV, Alibaba, Philly, Arrow, Parquet; optionally .gz); replaces the scenario's trace")
	fl.StringVar(&f.format, "format", "", "trace format: sacct, swf, csv, eagle, helios, alibaba, philly, arrow, parquet (default: detected from content)")
	fl.StringVar(&f.cluster, "cluster", "", `cluster spec YAML, or "example", or "header" (the machine an SWF header describes)`)
	fl.StringVar(&f.policy, "policy", "", "scheduling policy: "+strings.Join(policies.Builtin().Names(), ", "))
	fl.Uint64Var(&f.seed, "seed", 0, "root random seed (default: the scenario's)")
	fl.StringVar(&f.out, "out", "", "directory for the outputs: summary.json, jobs.csv, jobs.parquet, timeline.parquet, jobs.sacct, plots/, report.html, manifest.json; replaced whole (docs/reports.md)")
	fl.StringVar(&f.delimiter, "delimiter", "", `sacct field delimiter (default: detected, "|" or "☃")`)
	fl.StringVar(&f.fields, "fields", "", "comma-separated column names of headerless sacct output (sacct -n)")
	fl.IntVar(&f.procsPerNode, "procs-per-node", 0, "SWF: map processors to whole nodes, this many per node")
	fl.IntVar(&f.procsPerGPU, "procs-per-gpu", 0, "SWF: map processors to GPUs, ceil(procs/N) GPUs per job")
	fl.BoolVar(&f.lenient, "lenient", false, "skip and count bad trace lines instead of failing (alias --skip-bad-rows)")
	fl.BoolVar(&f.lenient, "skip-bad-rows", false, "same as --lenient")
	fl.StringVar(&f.mapSpec, "map", "", "CSV trace column map: target=column[:unit],...")
	fl.StringVar(&f.mapPreset, "map-preset", "", "CSV trace column map preset: eagle, helios")
	fl.StringVar(&f.timeZone, "time-zone", "", "IANA zone of the trace's wall-clock times (sacct, CSV)")
	fl.StringVar(&f.windowFrom, "window-from", "", "keep jobs submitted from this time (Unix seconds or 2006-01-02[T15:04:05] UTC)")
	fl.StringVar(&f.windowTo, "window-to", "", "drop jobs submitted from this time on")
	fl.Float64Var(&f.scaleLoad, "scale-load", 0, "multiply the arrival rate by this factor, keeping the daily cycle")
	fl.StringVar(&f.remapGPU, "remap-gpu", "", "move jobs between GPU types: from=to,... (with --speedup)")
	fl.Float64Var(&f.speedup, "speedup", 0, "runtime divisor for --remap-gpu (default 1)")
	fl.StringVar(&f.filterUser, "filter-user", "", "keep only these users (comma-separated)")
	fl.StringVar(&f.filterPartition, "filter-partition", "", "keep only these trace partitions (comma-separated)")
	fl.StringVar(&f.filterState, "filter-state", "", "keep only these trace states (comma-separated)")
	fl.StringVar(&f.partitionMap, "partition-map", "", "rename trace partitions onto cluster ones: from=to,from=to")
	fl.StringVar(&f.calibration, "calibration", "", "calibration.yaml from schedsim calibrate: its speed ratios and GPU power replace the datasheet defaults")
	fl.IntVar(&f.jobs, "jobs", 0, "replay only the first N jobs of the trace, in submit order (0: all), for quick checks")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress bar on stderr (there is none when stderr is not a terminal)")
	return cmd
}

func runRun(cmd *cobra.Command, f *runFlags) error {
	s, err := loadScenario(cmd, f)
	if err != nil {
		return badInput(err)
	}
	// Take the output directory first: a second run on it is refused
	// before either spends time simulating.
	var od *reports.OutDir
	if s.Output.Dir != "" {
		if od, err = reports.CreateOutDir(s.Resolve(s.Output.Dir)); err != nil {
			return badInput(err)
		}
		defer od.Close()
	}
	run, err := s.Build(policies.Builtin())
	if err != nil {
		return badInput(err)
	}
	opt, err := scaleOptions(cmd, f, run)
	if err != nil {
		return badInput(err)
	}
	if f.calibration != "" {
		note, err := applyCalibration(cmd, f.calibration, run.Cluster)
		if err != nil {
			return badInput(err)
		}
		opt.note = append(opt.note, note...)
	}
	opt.summaryOnly = od == nil
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "schedsim %s, scenario %s, cluster: %s\n", versionString(), orDefault(run.Name, "(unnamed)"), run.ClusterDesc)
	res, err := analyzeRun(s, run, opt)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	if err := reports.WriteTable(out, res.analysis.Summary); err != nil {
		return err
	}
	if od != nil {
		if err := od.WriteRun(res.rec, res.analysis, res.scenario); err != nil {
			return err
		}
		if err := od.Close(); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nwrote %s (summary.json, jobs.csv, jobs.parquet, timeline.parquet, jobs.sacct, plots/, report.html, manifest.json)\n", run.OutDir)
	}
	return nil
}

// runResult is a simulated and analyzed scenario.
type runResult struct {
	rec      *sim.Record
	analysis *reports.Analysis
	// scenario is the effective scenario as YAML (flags applied); its
	// SHA-256 is the config hash the outputs carry.
	scenario []byte
}

// analyzeRun simulates run, built from s, and analyzes the record.
func analyzeRun(s *scenario.Scenario, run *scenario.Run, opts ...runOptions) (*runResult, error) {
	// Where the outputs go is not part of the configuration.
	eff := *s
	eff.Output.Dir = ""
	text, err := yaml.Marshal(&eff)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	for _, o := range opts {
		text = append(text, o.note...) // a cut trace is another configuration
	}
	rec, err := simulate(run, opts...)
	if err != nil {
		return nil, err
	}
	if err := reports.CheckRecord(rec); err != nil {
		return nil, failed(fmt.Errorf("internal error (policy %s, seed %d): inconsistent record: %w", run.Policy.Name(), run.Seed, err))
	}
	sum := sha256.Sum256(text)
	so := reports.SummaryOptions{
		SampleInterval: sim.Time(s.Output.SampleSeconds()),
		ConfigHash:     "sha256:" + hex.EncodeToString(sum[:]),
	}
	for _, o := range opts {
		so.NoJobRows = so.NoJobRows || o.summaryOnly
	}
	a := reports.Analyze(rec, so)
	return &runResult{rec: rec, analysis: a, scenario: text}, nil
}

// simulate runs the engine, turning a broken invariant into an error that
// carries what is needed to replay it. Its errors are failures (exit 3):
// the engine's are a policy's invalid decision or a configuration the
// scenario layer should have refused, not the user's input.
func simulate(run *scenario.Run, opts ...runOptions) (rec *sim.Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error (policy %s, seed %d): %v", run.Policy.Name(), run.Seed, p)
		}
		err = failed(err)
	}()
	cfg := run.Config()
	for _, o := range opts {
		if o.progress != nil {
			cfg.Progress = o.progress
			defer o.done()
		}
	}
	return sim.Run(cfg)
}

// loadScenario reads the scenario (or the embedded default) and applies the
// flags the user set on top of it. Paths given as flags are relative to the
// working directory.
func loadScenario(cmd *cobra.Command, f *runFlags) (*scenario.Scenario, error) {
	var s *scenario.Scenario
	if f.scenario != "" {
		var err error
		if s, err = scenario.Load(f.scenario); err != nil {
			return nil, err
		}
	} else {
		s = scenario.Default()
	}
	set := cmd.Flags().Changed
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	if set("trace") {
		// A new trace replaces the whole trace section: options tuned for
		// the old one (processor mapping, partition map) do not carry over.
		s.Trace = scenario.Trace{File: abs(f.trace)}
	}
	if set("format") {
		s.Trace.Format = f.format
	}
	if set("delimiter") {
		s.Trace.Sacct.Delimiter = f.delimiter
	}
	if set("fields") {
		s.Trace.Sacct.Fields = splitList(f.fields)
	}
	if set("procs-per-node") {
		s.Trace.SWF.ProcsPerNode = f.procsPerNode
	}
	if set("procs-per-gpu") {
		s.Trace.SWF.ProcsPerGPU = f.procsPerGPU
	}
	if set("lenient") || set("skip-bad-rows") {
		s.Trace.Lenient = f.lenient
	}
	if set("map") {
		s.Trace.CSV.Map = f.mapSpec
	}
	if set("map-preset") {
		s.Trace.CSV.Preset = f.mapPreset
	}
	if set("time-zone") {
		s.Trace.TimeZone = f.timeZone
	}
	tf := &s.Trace.Transforms
	if set("window-from") {
		tf.Window.From = f.windowFrom
	}
	if set("window-to") {
		tf.Window.To = f.windowTo
	}
	if set("scale-load") {
		tf.ScaleLoad = f.scaleLoad
	}
	if set("remap-gpu") {
		m, err := parseMap(f.remapGPU)
		if err != nil {
			return nil, fmt.Errorf("--remap-gpu: %w", err)
		}
		tf.RemapGPU = m
	}
	if set("speedup") {
		tf.Speedup = f.speedup
	}
	if set("filter-user") {
		tf.Filter.Users = splitList(f.filterUser)
	}
	if set("filter-partition") {
		tf.Filter.Partitions = splitList(f.filterPartition)
	}
	if set("filter-state") {
		tf.Filter.States = splitList(f.filterState)
	}
	if set("partition-map") {
		m, err := parseMap(f.partitionMap)
		if err != nil {
			return nil, fmt.Errorf("--partition-map: %w", err)
		}
		s.Trace.PartitionMap = m
	}
	if set("cluster") {
		s.Cluster = scenario.Cluster{}
		switch f.cluster {
		case "example":
			s.Cluster.Builtin = "example"
		case "header":
			s.Cluster.Builtin = "swf-header"
		default:
			if _, err := os.Stat(f.cluster); err != nil {
				return nil, fmt.Errorf("--cluster: %w", err)
			}
			s.Cluster.File = abs(f.cluster)
		}
	}
	if set("policy") {
		s.Policy = scenario.Policy{Name: f.policy}
	}
	if set("seed") {
		s.Seed = f.seed
	}
	if set("out") {
		s.Output.Dir = abs(f.out)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseMap(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range splitList(s) {
		from, to, ok := strings.Cut(kv, "=")
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("%q: want from=to", kv)
		}
		m[from] = to
	}
	return m, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
