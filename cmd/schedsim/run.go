package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/bundle"
	"github.com/schedsim/schedsim/policies/catalog"
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
	// set holds --set KEY=VALUE overrides of any scenario key.
	set []string
	// bundle is a records bundle to replay (--bundle, validate's
	// argument); replay is what loadScenario built from it (bundlecmd.go).
	bundle string
	replay *bundle.Replay
	// memory is --max-memory (memlimit.go).
	memory *memoryFlag
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
  schedsim run --trace examples/jobs.sacct --cluster examples/cluster.yaml --policy easy --out results/easy
  schedsim run --scenario examples/scenario.yaml --seed 7 --out results/slurm
  schedsim run --trace ../shared/traces/CTC-SP2-1996-3.1-cln.swf.gz --cluster header
  schedsim run --trace ../shared/traces/LLNL-Thunder-2007-1.1-cln.swf.gz --procs-per-gpu 10 --partition-map 1=gpu,2=gpu
  schedsim run --set trace.transforms.scale_load=1.2 --set controller.time_limit_sweep=30s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, &f) },
	}
	addLimitFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "scenario file (YAML); default: the embedded default scenario")
	fl.StringVar(&f.trace, "trace", "", "trace file (sacct, SWF, CSV, Alibaba, Philly, Arrow, Parquet; optionally .gz); replaces the scenario's trace")
	fl.StringVar(&f.format, "format", "", "trace format: sacct, swf, csv, eagle, helios, alibaba, philly, arrow, parquet (default: detected from content)")
	fl.StringVar(&f.cluster, "cluster", "", `cluster spec YAML, or "example", or "header" (the machine an SWF header describes)`)
	fl.StringVar(&f.policy, "policy", "", "scheduling policy: "+strings.Join(catalog.Builtin().Names(), ", "))
	fl.Uint64Var(&f.seed, "seed", 0, "root random seed (default: the scenario's)")
	fl.StringVar(&f.out, "out", "", "directory for the outputs: summary.json, jobs.csv, jobs.parquet, timeline.parquet, timeline.om, jobs.sacct, plots/, report.html, manifest.json; replaced whole (docs/reports.md)")
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
	fl.StringVar(&f.bundle, "bundle", "", "records bundle to replay (scripts/collect-slurm-records.sh: a directory or .tar.gz; docs/validate.md): its cluster, settings and jobs")
	f.memory = addMemoryFlag(cmd)
	addSetFlag(cmd, &f)
	return cmd
}

// addSetFlag adds --set, which overrides any scenario key.
func addSetFlag(cmd *cobra.Command, f *runFlags) {
	cmd.Flags().StringArrayVar(&f.set, "set", nil, "set a scenario key, KEY=VALUE (trace.transforms.scale_load=1.5, controller.kill_wait=2s; docs/scenario.md), after the other flags; repeatable")
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
			if cmd.Flags().Changed("out") {
				err = pathError("--out", f.out, err)
			}
			return badInput(err)
		}
		defer od.Close()
	}
	var abort func()
	if od != nil {
		abort = od.Abandon
	}
	if f.memory != nil {
		b, desc := f.memory.budget()
		setMemoryBudget(b, desc, abort)
	}
	defer setMemoryBudget(0, "", nil)
	s.NoTraceExtra = true // no output shows the trace's other columns
	run, err := s.Build(catalog.Builtin())
	if err != nil {
		return badInput(scenarioFlagError(cmd, f.set, err))
	}
	done, err := scaleOptions(cmd, f, run)
	if err != nil {
		return badInput(err)
	}
	reportCalibration(cmd, run)
	run.NoJobRows = od == nil
	run.TextOnly = od == nil      // reports.WriteTable's text is the only output
	run.StreamJobRows = od != nil // od.WriteRun reads the rows one at a time
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "schedsim %s, scenario %s, cluster: %s\n", versionString(), orDefault(run.Name, "(unnamed)"), run.ClusterDesc)
	res, err := simulate(run, done)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	if err := reports.WriteTable(out, res.Analysis.Summary); err != nil {
		return err
	}
	if od != nil {
		if err := od.WriteRun(res.Record, res.Analysis, res.Scenario); err != nil {
			return err
		}
		if err := od.Close(); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nwrote %s (summary.json, jobs.csv, jobs.parquet, timeline.parquet, timeline.om, jobs.sacct, plots/, report.html, manifest.json)\n", run.OutDir)
	}
	return nil
}

// simulate simulates and analyzes run, calling done (when not nil) when
// the simulation ends. Its errors are failures (exit 3): the engine's are
// a policy's invalid decision or a configuration the scenario layer
// should have refused, not the user's input.
func simulate(run *scenario.Run, done func()) (*scenario.Result, error) {
	rec, err := run.Simulate()
	run.ReleasePolicy() // its per-job state is not needed past the simulation
	if done != nil {
		done()
	}
	if errors.Is(err, sim.ErrLimit) {
		return nil, badInput(err)
	}
	if err != nil {
		return nil, failed(err)
	}
	res, err := run.Analyze(rec)
	return res, failed(err)
}

// runOverrides maps the run flags to the scenario keys they override
// (Scenario.Override), in the order they are applied: a new trace first,
// since it drops the old trace's options.
var runOverrides = []struct{ flag, key string }{
	{"trace", "trace"},
	{"format", "trace.format"},
	{"delimiter", "trace.sacct.delimiter"},
	{"fields", "trace.sacct.fields"},
	{"procs-per-node", "trace.swf.procs_per_node"},
	{"procs-per-gpu", "trace.swf.procs_per_gpu"},
	{"lenient", "trace.lenient"},
	{"skip-bad-rows", "trace.lenient"},
	{"map", "trace.csv.map"},
	{"map-preset", "trace.csv.preset"},
	{"time-zone", "trace.time_zone"},
	{"window-from", "trace.transforms.window.from"},
	{"window-to", "trace.transforms.window.to"},
	{"scale-load", "trace.transforms.scale_load"},
	{"remap-gpu", "trace.transforms.remap_gpu"},
	{"speedup", "trace.transforms.speedup"},
	{"filter-user", "trace.transforms.filter.users"},
	{"filter-partition", "trace.transforms.filter.partitions"},
	{"filter-state", "trace.transforms.filter.states"},
	{"partition-map", "trace.partition_map"},
	{"cluster", "cluster"},
	{"calibration", "cluster.calibration"},
	{"jobs", "trace.transforms.head"},
	{"policy", "policy"},
	{"seed", "seed"},
	{"out", "output.dir"},
}

// loadScenario reads the scenario (or the embedded default) and applies the
// flags the user set on top of it. Paths given as flags are relative to the
// working directory.
func loadScenario(cmd *cobra.Command, f *runFlags) (*scenario.Scenario, error) {
	var s *scenario.Scenario
	if f.bundle != "" {
		var err error
		if s, err = loadBundle(cmd, f); err != nil {
			return nil, err
		}
	} else if f.scenario != "" {
		var err error
		if s, err = scenario.Load(f.scenario); err != nil {
			if _, ok := err.(*fs.PathError); ok {
				return nil, pathError("--scenario", f.scenario, err)
			}
			return nil, err
		}
	} else {
		s = scenario.Default()
	}
	if f.jobs < 0 {
		return nil, fmt.Errorf("--jobs must be >= 0, got %d", f.jobs)
	}
	fl := cmd.Flags()
	if err := checkRunFiles(cmd, f); err != nil {
		return nil, err
	}
	for _, o := range runOverrides {
		if fl := fl.Lookup(o.flag); fl != nil && fl.Changed {
			if err := s.Override(o.key, fl.Value.String()); err != nil {
				var oe *scenario.OverrideError
				if errors.As(err, &oe) {
					err = oe.Err
				}
				return nil, fmt.Errorf("--%s: %w", o.flag, err)
			}
		}
	}
	for _, kv := range f.set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--set %q: want KEY=VALUE", kv)
		}
		if err := s.Override(strings.TrimSpace(k), v); err != nil {
			return nil, fmt.Errorf("--set: %w", err)
		}
	}
	if err := s.Validate(); err != nil {
		return nil, scenarioFlagError(cmd, f.set, err)
	}
	return s, nil
}

// checkRunFiles checks the files and names the flags give before the
// scenario takes them, so that an error names the flag: a trace or
// cluster file that is not there, a time zone that does not exist.
func checkRunFiles(cmd *cobra.Command, f *runFlags) error {
	fl := cmd.Flags()
	if fl.Changed("trace") {
		if _, err := os.Stat(f.trace); err != nil {
			return pathError("--trace", f.trace, err)
		}
	}
	if fl.Changed("cluster") && !slices.Contains(scenario.ClusterNames(), f.cluster) {
		if _, err := os.Stat(f.cluster); err != nil {
			return fmt.Errorf("%w (want a cluster spec file or one of %s)", pathError("--cluster", f.cluster, err), strings.Join(scenario.ClusterNames(), ", "))
		}
	}
	if fl.Changed("time-zone") {
		if _, err := time.LoadLocation(f.timeZone); err != nil {
			return fmt.Errorf("--time-zone %q: unknown time zone (want an IANA name such as Europe/Amsterdam or UTC)", f.timeZone)
		}
	}
	return nil
}

// splitList and parseMap read list and map flag values as
// Scenario.Override does.
func splitList(s string) []string                  { return scenario.SplitList(s) }
func parseMap(s string) (map[string]string, error) { return scenario.ParseMap(s) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
