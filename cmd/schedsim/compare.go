package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/traces"
)

// compareFormats are the --format values of compare (reports.WriteComparison).
var compareFormats = []string{"table", "markdown", "json"}

type compareFlags struct {
	format    string
	gates     []string
	out       string
	resamples int
	seed      uint64
}

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two runs: differences with bootstrap confidence intervals, regression gates",
		Long: `Compare run B against run A. A and B are run directories (written by
schedsim run --out) or scenario files, which are run first.

For each metric it prints A, B, the difference B − A, a bootstrap 95%
confidence interval of the difference (paired by job when both replay the
same jobs, seeded) and a verdict for B: better, worse, or no significant
difference (the interval contains zero).

Gates (--gate, repeatable) fail the command with exit status 1 when B moves
past a threshold: p95_wait:+5% (at most 5% higher than A), gpu_util:-1pp (at
most one percentage point lower), mean_wait:+60s (at most 60 s higher). A
malformed gate exits with status 2.

Metrics: ` + metricNames() + `.`,
		Example: `  schedsim compare examples/baseline.yaml examples/candidate.yaml
  schedsim compare examples/baseline.yaml examples/candidate.yaml --format markdown
  schedsim compare examples/baseline.yaml examples/candidate.yaml --gate 'p95_wait:+5%' --gate 'mean_wait:+60s' --out results/cmp
  schedsim run --policy easy --out results/easy && schedsim run --policy fifo --out results/fifo && schedsim compare results/easy results/fifo`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runCompare(cmd, &f, args[0], args[1]) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "table", "output format: "+strings.Join(compareFormats, ", "))
	fl.StringArrayVar(&f.gates, "gate", nil, "regression gate METRIC:[+|-]N[%|pp|s]; repeatable")
	fl.StringVar(&f.out, "out", "", "directory for compare.html, overlay plots (wait_cdf, gpu_utilization; PNG and SVG) and comparison.json")
	fl.IntVar(&f.resamples, "resamples", reports.DefaultResamples, "bootstrap resamples")
	fl.Uint64Var(&f.seed, "seed", 1, "bootstrap seed")
	return cmd
}

func metricNames() string {
	var names []string
	for _, m := range reports.Metrics {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

func runCompare(cmd *cobra.Command, f *compareFlags, pathA, pathB string) error {
	if !slices.Contains(compareFormats, f.format) {
		return badInput(fmt.Errorf("--format %q: want one of %s", f.format, strings.Join(compareFormats, ", ")))
	}
	if f.resamples < 1 {
		return badInput(fmt.Errorf("--resamples: must be at least 1, got %d", f.resamples))
	}
	var gates []reports.Gate
	for _, spec := range f.gates {
		g, err := reports.ParseGate(spec)
		if err != nil {
			return badInput(err)
		}
		gates = append(gates, g)
	}
	a, err := loadCompareRun(pathA, "A")
	if err != nil {
		return err
	}
	b, err := loadCompareRun(pathB, "B")
	if err != nil {
		return err
	}
	c := reports.Compare(a, b, reports.CompareOptions{Resamples: f.resamples, Seed: f.seed})
	results := reports.CheckGates(c, gates)
	out := cmd.OutOrStdout()
	if err := reports.WriteComparison(out, c, results, f.format); err != nil {
		return err
	}
	if f.out != "" {
		if err := writeCompareOut(f.out, a, b, c, results); err != nil {
			return err
		}
	}
	var broken []string
	for _, g := range results {
		if g.Broken {
			broken = append(broken, g.Spec)
		}
	}
	if len(broken) > 0 {
		return gateBroken(fmt.Errorf("%d gate(s) broken: %s", len(broken), strings.Join(broken, ", ")))
	}
	return nil
}

// loadCompareRun reads a run directory, or runs a scenario file.
func loadCompareRun(path, side string) (*reports.CompareRun, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, badInput(pathError(side, path, err))
	}
	if st.IsDir() {
		rd, err := reports.ReadRunDir(path)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path+":") {
				err = fmt.Errorf("%s: %w", path, err)
			}
			return nil, badInput(err)
		}
		return &reports.CompareRun{
			Label: side + ": " + orDefault(rd.Header.Policy, filepath.Base(path)),
			Jobs:  rd.Jobs, GPUs: rd.Header.GPUs, CPUs: rd.Header.CPUs, Timeline: rd.Timeline,
			EnergyITKWh: rd.Header.EnergyITKWh, PUE: rd.Header.EnergyPUE,
		}, nil
	}
	s, err := scenario.Load(path)
	if err != nil {
		return nil, badInput(err)
	}
	run, err := s.Build(catalog.Builtin())
	if err != nil {
		return nil, badInput(err)
	}
	res, err := simulate(run, nil)
	if err != nil {
		return nil, err
	}
	sum := &res.Analysis.Summary
	return &reports.CompareRun{
		Label: side + ": " + orDefault(sum.Policy, filepath.Base(path)),
		Jobs:  res.Analysis.Jobs, GPUs: sum.Cluster.GPUs, CPUs: sum.Cluster.CPUs, Timeline: &res.Analysis.Timeline,
		EnergyITKWh: sum.Energy.ITKWh, PUE: sum.Energy.PUE,
	}, nil
}

// writeCompareOut writes the overlay plots, compare.html and
// comparison.json into dir.
func writeCompareOut(dir string, a, b *reports.CompareRun, c *reports.Comparison, gates []reports.GateResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	figs := reports.OverlayFigures(a, b)
	for i := range figs {
		fig := &figs[i]
		if err := traces.WriteFileAtomic(filepath.Join(dir, fig.Name+".png"), fig.WritePNG); err != nil {
			return err
		}
		if err := traces.WriteFileAtomic(filepath.Join(dir, fig.Name+".svg"), fig.WriteSVG); err != nil {
			return err
		}
	}
	if err := traces.WriteFileAtomic(filepath.Join(dir, reports.ComparePageFile), func(w io.Writer) error {
		return reports.WriteComparePage(w, reports.ComparePageInput{A: a, B: b, Comparison: c, Gates: gates})
	}); err != nil {
		return err
	}
	return traces.WriteFileAtomic(filepath.Join(dir, "comparison.json"), func(w io.Writer) error {
		return reports.WriteComparison(w, c, gates, "json")
	})
}
