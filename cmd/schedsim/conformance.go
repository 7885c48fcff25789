package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/schedsim/schedsim/cmd/schedsim/internal/conformance"
	"github.com/schedsim/schedsim/traces"
)

func newConformanceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "conformance",
		Short: "Compare schedsim with the runs recorded on a real Slurm",
		Example: `  schedsim conformance report
  schedsim conformance show conformance/records/mixed-load/run1`,
		Long: `Replay the runs conformance/run.sh recorded on a real Slurm 22.05
(conformance/records/SCENARIO/runN) under the slurm policy and compare every
job's wait with the real one; compare the real runs of a scenario with each
other as the yardstick (docs/conformance.md, CONFORMANCE.md).`,
	}
	cmd.AddCommand(newConformanceReportCmd(), newConformanceShowCmd(), newConformanceGenCmd(), newConformanceBundleCmd())
	return cmd
}

func newConformanceReportCmd() *cobra.Command {
	var update, thresholds string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "report [RECORDS_DIR]",
		Short: "Print the conformance table (and rewrite it in CONFORMANCE.md)",
		Long: `Replay every committed record under RECORDS_DIR (default
conformance/records) and print per scenario: jobs, runs, the share of starts
within ±2 s and ±5 s of the real ones, the mean-wait error and the KS distance
of the wait distributions (schedsim vs real, pooled over the runs), the same
between the real runs (run A vs run B, jobs matched by id), the threshold from
conformance/thresholds.tsv, and whether schedsim is within Slurm's own noise.
The generated scenarios (gen-SEED) follow, the development set (seeds below
100) and the validation set (101-106) apart: each scenario stable (its real
runs agree on 95 % of starts within ±5 s) or loaded, its mark (stable: 90 %
within ±5 s; loaded: a KS distance at most Slurm's own + 0.05), the pooled
figures and the checks (docs/conformance.md).
--update rewrites the table between the <!-- table:begin --> and
<!-- table:end --> markers of a Markdown file, and the generated scenarios'
block between <!-- gen:begin --> and <!-- gen:end -->, atomically.`,
		Example: `  schedsim conformance report
  schedsim conformance report conformance/records --update CONFORMANCE.md`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := filepath.Join("conformance", "records")
			if len(args) == 1 {
				dir = args[0]
			}
			res, err := conformance.Evaluate(dir, conformance.Model{})
			if err != nil {
				return badInput(err)
			}
			if len(res) == 0 {
				return badInput(fmt.Errorf("%s: no records (SCENARIO/runN/sacct.txt)", dir))
			}
			if thresholds == "" {
				thresholds = filepath.Join(filepath.Dir(filepath.Clean(dir)), "thresholds.tsv")
			}
			th, err := conformance.LoadThresholds(thresholds)
			if err != nil {
				return badInput(err)
			}
			out := cmd.OutOrStdout()
			table := conformance.Table(conformance.Only(res, "hand"), th)
			fmt.Fprint(out, table)
			gen := conformance.GenBlock(res)
			fmt.Fprint(out, "\n"+gen)
			if verbose {
				writeConformanceDetail(out, res)
			}
			if update != "" {
				if err := conformance.UpdateFile(update, table, gen); err != nil {
					return err
				}
				fmt.Fprintf(out, "\nupdated %s\n", update)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&update, "update", "", "rewrite the table between the markers of this Markdown file")
	cmd.Flags().StringVar(&thresholds, "thresholds", "", "thresholds file (default: thresholds.tsv beside RECORDS_DIR)")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list, per run, the starts off by more than 2 s")
	return cmd
}

func writeConformanceDetail(out io.Writer, res []conformance.ScenarioResult) {
	for _, s := range res {
		fmt.Fprintf(out, "\n%s\n", s.Name)
		for _, r := range s.Runs {
			fmt.Fprintf(out, "  schedsim vs %s: ±2 s %d/%d, ±5 s %d/%d, mean wait %.1f s real, %.1f s schedsim, KS %.2f; off by > 2 s: %s\n",
				r.Record.Run, r.Fig.Within2, r.Fig.N, r.Fig.Within5, r.Fig.N, r.Fig.MeanWant, r.Fig.MeanGot, r.Fig.KS, conformance.Detail(r.Starts, 2))
		}
		for _, p := range s.Pairs {
			fmt.Fprintf(out, "  %s vs %s: ±2 s %d/%d, ±5 s %d/%d, mean wait %.1f s vs %.1f s, KS %.2f; off by > 2 s: %s\n",
				p.A, p.B, p.Fig.Within2, p.Fig.N, p.Fig.Within5, p.Fig.N, p.Fig.MeanWant, p.Fig.MeanGot, p.Fig.KS, conformance.Detail(p.Starts, 2))
		}
	}
}

func newConformanceShowCmd() *cobra.Command {
	var scenarioOnly, runs bool
	cmd := &cobra.Command{
		Use:   "show RUN_DIR",
		Short: "Replay one recorded run and list every job's real and simulated wait",
		Example: `  schedsim conformance show conformance/records/timeout-deps-array/run1
  schedsim conformance show conformance/records/timeout-deps-array/run1 --runs
  schedsim conformance show conformance/records/timeout-deps-array/run1 --scenario`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rec, err := conformance.LoadRecord(args[0])
			if err != nil {
				return badInput(err)
			}
			out := cmd.OutOrStdout()
			if scenarioOnly {
				text, err := rec.ScenarioYAML(conformance.Model{})
				if err != nil {
					return badInput(err)
				}
				_, err = out.Write(text)
				return err
			}
			srec, err := rec.Simulate(conformance.Model{})
			if err != nil {
				return err
			}
			starts, err := rec.CompareSim(srec)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%-14s %-6s %8s %8s %6s\n", "job", "name", "real", "schedsim", "delta")
			for _, s := range starts {
				d, ok := s.Delta()
				ds := "-"
				if ok {
					ds = fmt.Sprintf("%+d", d)
				}
				fmt.Fprintf(out, "%-14s %-6s %8d %8d %6s\n", s.Job, s.Name, s.Want, s.Got, ds)
			}
			f := conformance.Figure(starts)
			fmt.Fprintf(out, "\n±2 s %d/%d, ±5 s %d/%d, mean wait %.1f s real, %.1f s schedsim, KS %.2f\n",
				f.Within2, f.N, f.Within5, f.N, f.MeanWant, f.MeanGot, f.KS)
			if runs {
				fmt.Fprintln(out, "\nruns (seconds from the replay's time 0, state, nodes):")
				for _, l := range rec.RunLines(srec) {
					fmt.Fprintln(out, l)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&runs, "runs", false, "also list every job's real and simulated runs: start, end, state and nodes")
	cmd.Flags().BoolVar(&scenarioOnly, "scenario", false, "print the generated scenario instead (cluster, policy, controller settings, node events, reservations)")
	return cmd
}

func newConformanceGenCmd() *cobra.Command {
	var seed uint64
	var out string
	cmd := &cobra.Command{
		Use:   "gen --seed N [--out FILE]",
		Short: "Generate a conformance scenario from a seed",
		Long: `Write the conformance scenario of a seed in the format of
conformance/scenarios/*.txt, for conformance/run.sh to record on a real Slurm:
3-6 users in accounts with sacctmgr shares, 2-3 partitions with PriorityTier,
GPU requests of 1-32 on the 4 x 8-GPU mini-cluster, arrays with throttles,
dependencies, jobs that fail or overrun their limit, a node down and resumed,
partition preemption, and a load from light to saturated, each drawn from the
seed. The same seed gives the same file. Seeds below 100 are the development
set, 101-106 the validation set (docs/conformance.md).`,
		Example: `  schedsim conformance gen --seed 3
  schedsim conformance gen --seed 101 --out conformance/scenarios/gen-101.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("seed") {
				return badInput(fmt.Errorf("--seed: missing; want a seed (0 or more)"))
			}
			text := conformance.Generate(seed)
			if out == "" {
				_, err := io.WriteString(cmd.OutOrStdout(), text)
				return err
			}
			return traces.WriteFileAtomic(out, func(w io.Writer) error {
				_, err := io.WriteString(w, text)
				return err
			})
		},
	}
	cmd.Flags().Uint64Var(&seed, "seed", 0, "the scenario's seed")
	cmd.Flags().StringVar(&out, "out", "", "write the scenario to this file (atomically) instead of stdout")
	return cmd
}
