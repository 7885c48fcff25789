package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/bundle"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/traces"
)

type validateFlags struct {
	runFlags
	json  bool
	worst int
	plot  string
	out   string
}

func newValidateCmd() *cobra.Command {
	var f validateFlags
	cmd := &cobra.Command{
		Use:   "validate [BUNDLE]",
		Short: "Replay a recorded trace or records bundle and compare simulated with recorded start times",
		Long: `Replay a recorded trace (sacct output with Start times) on its cluster
under a policy (default slurm) and compare every job's simulated start with
the start the trace recorded: the share of jobs within one bf_interval, 5
minutes and 1 hour, the median and p95 |Δstart|, Kendall's tau of the start
order, the same per partition, and the jobs with the largest error with the
pending reasons they had in the simulation.

With a records bundle (BUNDLE: the directory or tarball
scripts/collect-slurm-records.sh writes; docs/collect.md) the cluster, the
slurm policy's settings, the fair-share tree, QOS, node outages and every
run of each job come from the bundle, and the report breaks the error down
per partition, user, size class and cause, lists the starts of largest
error with their recorded and simulated reasons, and counts the jobs whose
inputs could not be recovered, by cause (docs/validate.md).

Two runs of one workload on a real Slurm agree on about 90 % of starts within
±2 s when lightly loaded, and diverge job by job under sustained load: judge
loaded traces by distributions too.`,
		Example: `  schedsim validate --trace examples/jobs.sacct --cluster examples/cluster.yaml
  schedsim validate --trace examples/jobs.sacct --cluster examples/cluster.yaml --policy easy --json
  schedsim validate --scenario examples/scenario.yaml --plot results/validate.svg
  schedsim validate --trace examples/jobs.sacct --cluster examples/cluster.yaml --out results/validation`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				f.bundle = args[0]
			}
			return runValidate(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "scenario file (YAML) naming trace, cluster and policy arguments")
	fl.StringVar(&f.trace, "trace", "", "recorded trace (sacct output with Submit and Start); replaces the scenario's trace")
	fl.StringVar(&f.format, "format", "", "trace format (default: detected from content)")
	fl.StringVar(&f.cluster, "cluster", "", `cluster spec YAML, or "example"`)
	fl.StringVar(&f.policy, "policy", "", "scheduling policy (default: the scenario's, else slurm): "+strings.Join(catalog.Builtin().Names(), ", "))
	fl.Uint64Var(&f.seed, "seed", 0, "root random seed (default: the scenario's)")
	fl.StringVar(&f.delimiter, "delimiter", "", `sacct field delimiter (default: detected, "|" or "☃")`)
	fl.StringVar(&f.fields, "fields", "", "comma-separated column names of headerless sacct output (sacct -n)")
	fl.BoolVar(&f.lenient, "lenient", false, "skip and count bad trace lines instead of failing")
	fl.StringVar(&f.timeZone, "time-zone", "", "IANA zone of the trace's wall-clock times")
	fl.StringVar(&f.partitionMap, "partition-map", "", "rename trace partitions onto cluster ones: from=to,from=to")
	fl.BoolVar(&f.json, "json", false, "print the comparison as JSON")
	fl.IntVar(&f.worst, "worst", 10, "how many jobs with the largest error to list")
	fl.StringVar(&f.plot, "plot", "", "write the simulated vs recorded wait plot to this .png or .svg file")
	fl.StringVar(&f.out, "out", "", "directory for validate.html, its plots (PNG and SVG), validation.json and, for a bundle, breakdown.json")
	addSetFlag(cmd, &f.runFlags)
	return cmd
}

func runValidate(cmd *cobra.Command, f *validateFlags) error {
	if f.worst < 0 {
		return badInput(fmt.Errorf("--worst: must be >= 0, got %d", f.worst))
	}
	if f.plot != "" {
		if ext := strings.ToLower(filepath.Ext(f.plot)); ext != ".png" && ext != ".svg" {
			return badInput(fmt.Errorf("--plot: %q: want a .png or .svg file", f.plot))
		}
	}
	s, err := loadScenario(cmd, &f.runFlags)
	if err != nil {
		return badInput(err)
	}
	if !cmd.Flags().Changed("policy") && f.scenario == "" && f.bundle == "" {
		s.Policy = scenario.Policy{Name: "slurm"}
	}
	run, err := s.Build(catalog.Builtin())
	if err != nil {
		return badInput(scenarioFlagError(cmd, f.set, err))
	}
	rec, err := run.Simulate()
	if err != nil {
		return failed(err)
	}
	opt := reports.ValidateOptions{BfInterval: 30, Worst: f.worst}
	for _, p := range rec.Passes { // a policy with a backfill cycle declares it so (slurm: bf_interval)
		if p.Name == "backfill" && p.Period > 0 {
			opt.BfInterval = p.Period
		}
	}
	if f.worst == 0 {
		opt.Worst = -1
	}
	v := reports.Validate(rec, opt)
	if f.worst == 0 {
		v.Worst = nil
	}
	if f.plot != "" {
		if err := makeParent("--plot", f.plot); err != nil {
			return badInput(err)
		}
		fig := reports.ValidationFigure(v)
		err := traces.WriteFileAtomic(f.plot, func(w io.Writer) error {
			if strings.EqualFold(filepath.Ext(f.plot), ".svg") {
				return fig.WriteSVG(w)
			}
			return fig.WritePNG(w)
		})
		if err != nil {
			return pathError("--plot", f.plot, err)
		}
	}
	var bd *bundle.Breakdown
	if f.replay != nil {
		if bd, err = analyzeBundle(f, run, rec); err != nil {
			return err
		}
	}
	if f.out != "" {
		cluster := run.ClusterDesc
		if bd != nil {
			cluster = fmt.Sprintf("the cluster of its slurm.conf (%d nodes, %d GPUs)", len(run.Cluster.Nodes), run.Cluster.TotalGPUs())
		}
		if err := writeValidateOut(f.out, v, bd, orDefault(run.Trace.Source, s.Trace.File), cluster); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if bd != nil {
		return writeBundleValidation(out, f, run, rec, bd)
	}
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(jsonSafe(v))
	}
	fmt.Fprintf(out, "schedsim %s, validate: trace %s, cluster: %s\n\n", versionString(), orDefault(run.Trace.Source, s.Trace.File), run.ClusterDesc)
	fmt.Fprintf(out, validateMeaning, opt.BfInterval)
	return reports.WriteValidationTable(out, v)
}

// jsonSafe returns v with NaN figures (no jobs to compare) as -1, which
// encoding/json cannot write otherwise.
func jsonSafe(v *reports.Validation) *reports.Validation {
	c := *v
	fix := func(a *reports.Agreement) {
		if a.MedianAbsDelta != a.MedianAbsDelta {
			a.MedianAbsDelta = -1
		}
		if a.P95AbsDelta != a.P95AbsDelta {
			a.P95AbsDelta = -1
		}
	}
	fix(&c.Agreement)
	c.Partitions = append([]reports.PartitionAgreement(nil), v.Partitions...)
	for i := range c.Partitions {
		fix(&c.Partitions[i].Agreement)
	}
	if c.KendallTau != c.KendallTau {
		c.KendallTau = 0
	}
	return &c
}

// validateMeaning says what validate's figures of a trace mean (the
// argument is the bf_interval in seconds).
const validateMeaning = `Every job of the trace is replayed from its recorded submit; for each the trace shows started,
the simulated start is compared with the recorded Start: Δstart = simulated − recorded. The shares count the
jobs within ±%d s (one bf_interval), ±5 min and ±1 h of it; Kendall's tau compares the two
start orders (1: the same order). A trace records when jobs ran, not why they waited, so
the replay lacks the holds, dependencies, reservations and outages the trace does not show:
a job the replay starts at once that waited days in the trace waited for one of those.
A records bundle (validate BUNDLE, docs/validate.md) carries them.

`
