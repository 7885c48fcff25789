package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/schedsim/schedsim/cmd/schedsim/internal/sweep"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/reports"
)

type sweepFlags struct {
	workers    int
	out        string
	force      bool
	quiet      bool
	array      string
	perTask    int
	maxRunning int
	pilot      int
	binary     string
}

func newSweepCmd() *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep FILE",
		Short: "Run a grid of scenarios (clusters × policies × load scales × seeds) locally or as a Slurm job array",
		Long: `Run a sweep: a base scenario and the axes to vary (cluster variants,
policies and their parameters, load scales, seeds), expanded into scenarios
in a stable order (docs/scale.md has the file's schema).

Locally, the scenarios run on a pool of --workers goroutines, each running
whole scenarios; every scenario writes the outputs of "schedsim run --out"
under DIR/runs/, and the results are merged, in the sweep's order, into
DIR/sweep.parquet (one row per scenario: its parameters and metrics) and
DIR/plots/ (each metric against each swept parameter, with seed bands). A
scenario whose directory already holds a summary.json with the same
config hash is not run again (--force runs it anyway).

With --slurm-array DIR it runs one pilot scenario to size the tasks and
writes DIR/sweep.sbatch (a job array, one shard of scenarios per task) and
DIR/manifest.json; each task runs "schedsim sweep run-shard DIR", and
"schedsim sweep merge DIR" joins the shards.`,
		Example: `  schedsim sweep examples/sweep.yaml
  schedsim sweep examples/sweep.yaml --workers 8 --out results/sweep
  schedsim sweep examples/sweep.yaml --slurm-array /scratch/study && cd /scratch/study && sbatch sweep.sbatch
  schedsim sweep merge /scratch/study`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSweep(cmd, args[0], &f) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.workers, "workers", runtime.NumCPU(), "scenarios run at once")
	fl.StringVar(&f.out, "out", "", "output directory (default: the sweep file's output.dir)")
	fl.BoolVar(&f.force, "force", false, "run every scenario, even those whose outputs match")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fl.StringVar(&f.array, "slurm-array", "", "write a Slurm job array into this directory instead of running locally")
	fl.IntVar(&f.perTask, "per-task", 0, "scenarios per array task (default: ceil(scenarios/1000), for Slurm's default MaxArraySize; more than the scenarios makes one task)")
	fl.IntVar(&f.maxRunning, "max-running", 0, "array tasks running at once, the %K of --array (default: min(tasks, 64))")
	fl.IntVar(&f.pilot, "pilot", -1, "index of the scenario the pilot runs (default: the first with the largest load scale)")
	fl.StringVar(&f.binary, "binary", "", "schedsim binary the array tasks run (default: this one)")
	cmd.AddCommand(newSweepRunShardCmd(), newSweepMergeCmd())
	return cmd
}

func runSweep(cmd *cobra.Command, path string, f *sweepFlags) error {
	sw, err := sweep.Load(path)
	if err != nil {
		return badInput(err)
	}
	if f.workers < 1 {
		return badInput(fmt.Errorf("--workers must be >= 1, got %d", f.workers))
	}
	if f.array != "" {
		return writeSweepArray(cmd, sw, f)
	}
	out := sw.OutDir
	if f.out != "" {
		out = f.out
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "schedsim %s, sweep %s: %d scenarios on %d workers into %s\n", versionString(), orDefault(sw.Name, path), len(sw.Points), f.workers, out)
	points := sw.PointsOf(0, len(sw.Points))
	pr := newProgress(cmd.ErrOrStderr(), f.quiet, true, 0)
	skipped := 0
	results := sweep.Run(sw, points, out, sweep.Options{
		Workers: f.workers, Force: f.force, Registry: catalog.Builtin(),
		Progress: func(done, total int, r *sweep.Result) {
			if r.Skipped {
				skipped++
			}
			el := pr.elapsed()
			rate := float64(done) / el.Seconds()
			status := "done"
			switch {
			case r.Err != nil:
				status = "FAILED"
			case r.Skipped:
				status = "unchanged, skipped"
			}
			pr.update(fmt.Sprintf("[%d/%d] %.2f scenarios/s, ETA %s: %s %s", done, total, rate, eta(el, float64(done), float64(total)), r.Point.Name, status), done == total)
		},
	})
	return finishSweep(cmd, sw, results, out, skipped)
}

func finishSweep(cmd *cobra.Command, sw *sweep.Sweep, results []sweep.Result, out string, skipped int) error {
	w := cmd.OutOrStdout()
	var rows []sweep.Row
	var failed []error
	for i := range results {
		if results[i].Err != nil {
			failed = append(failed, results[i].Err)
			continue
		}
		rows = append(rows, sweep.RowOf(&results[i]))
	}
	if len(failed) > 0 {
		for _, err := range failed {
			fmt.Fprintln(cmd.ErrOrStderr(), "schedsim: "+oneLine(err.Error()))
		}
		return scenarioFailures(fmt.Errorf("%d of %d scenarios failed; %s not written (run again to retry only those)", len(failed), len(results), sweep.ParquetFile), failed)
	}
	if err := sweep.WriteResults(out, sw, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d scenarios (%d run, %d unchanged); wrote %s, %s and %s/\n", len(results), len(results)-skipped, skipped,
		filepath.Join(out, sweep.ParquetFile), filepath.Join(out, reports.SweepPageFile), filepath.Join(out, sweep.PlotsDir))
	return nil
}

// scenarioFailures is err, the summary of failed scenarios, as a failure
// (exit 3) when any of them failed on a bug or the machine, else as the
// input's error (exit 2).
func scenarioFailures(err error, failedScenarios []error) error {
	for _, e := range failedScenarios {
		if errors.Is(e, sweep.ErrInternal) || exitStatus(e) == exitFailed {
			return failed(err)
		}
	}
	return badInput(err)
}

func writeSweepArray(cmd *cobra.Command, sw *sweep.Sweep, f *sweepFlags) error {
	dir, err := filepath.Abs(f.array)
	if err != nil {
		return badInput(err)
	}
	bin := f.binary
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return fmt.Errorf("--binary: %w", err)
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return badInput(err)
	}
	per := f.perTask
	if per == 0 {
		// As few tasks as Slurm's default MaxArraySize (1001) allows.
		per = (len(sw.Points)-1)/1000 + 1
	}
	if per < 1 {
		return badInput(fmt.Errorf("--per-task must be >= 1 (0: the default), got %d", f.perTask))
	}
	if f.maxRunning < 0 {
		return badInput(fmt.Errorf("--max-running must be >= 0 (0: min(tasks, 64)), got %d", f.maxRunning))
	}
	// Check the split before the pilot spends time running.
	if _, err := sweep.NewManifest(sw, bin, per, f.maxRunning, sweep.Estimate{}); err != nil {
		return badInput(err)
	}
	pilot := f.pilot
	if pilot < 0 {
		pilot = sw.PilotPoint()
	}
	if pilot >= len(sw.Points) {
		return badInput(fmt.Errorf("--pilot %d: the sweep has scenarios 0 to %d", pilot, len(sw.Points)-1))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return badInput(pathError("--slurm-array", f.array, err))
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "pilot run of scenario %d (%s)...\n", pilot, sw.Points[pilot].Name)
	wall, peak, err := sweep.Pilot(sw, pilot, dir, catalog.Builtin())
	if err != nil {
		return scenarioFailures(err, []error{err})
	}
	per = min(per, len(sw.Points)) // as NewManifest: one task of them all
	est := sweep.Estimate{PilotScenario: sw.Points[pilot].Name, PilotWallS: wall, PilotPeakMB: peak >> 20}
	est.TimeS, est.MemMB = sweep.EstimateTask(wall, peak, per)
	m, err := sweep.NewManifest(sw, bin, per, f.maxRunning, est)
	if err != nil {
		return badInput(err)
	}
	if err := sweep.WriteArray(dir, m); err != nil {
		return err
	}
	fmt.Fprintf(w, "pilot: %.1f s, peak RSS %d MiB → per task (%d scenarios): time %d min, memory %d MiB\n",
		wall, est.PilotPeakMB, m.PerTask, est.TimeS/60, est.MemMB)
	fmt.Fprintf(w, "wrote %s and %s: %d tasks (--array=%s)\nsubmit:  cd %s && sbatch %s\nthen:    schedsim sweep merge %s\n",
		filepath.Join(dir, sweep.ScriptFile), filepath.Join(dir, sweep.ManifestFile), m.Tasks,
		sweep.ArraySpec(seq(m.Tasks), m.MaxRunning), quoteForDisplay(dir), sweep.ScriptFile, quoteForDisplay(dir))
	return nil
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// quoteForDisplay shell-quotes a path shown in a command to copy.
func quoteForDisplay(s string) string {
	q, err := sweep.ShellQuote(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return q
}

func newSweepRunShardCmd() *cobra.Command {
	var task int
	var quiet bool
	cmd := &cobra.Command{
		Use:   "run-shard DIR",
		Short: "Run one task of a sweep's Slurm job array (the task from SLURM_ARRAY_TASK_ID or --task)",
		Example: `  schedsim sweep run-shard /scratch/study            # inside an array task: SLURM_ARRAY_TASK_ID says which
  schedsim sweep run-shard /scratch/study --task 3   # one task by hand`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t := task
			if !cmd.Flags().Changed("task") {
				v := os.Getenv("SLURM_ARRAY_TASK_ID")
				if v == "" {
					return badInput(errors.New("no task: set SLURM_ARRAY_TASK_ID (Slurm does) or give --task"))
				}
				n, err := strconv.Atoi(v)
				if err != nil {
					return badInput(fmt.Errorf("SLURM_ARRAY_TASK_ID=%q: want a task number", v))
				}
				t = n
			}
			pr := newProgress(cmd.ErrOrStderr(), quiet, true, 0)
			err := sweep.RunShard(args[0], t, catalog.Builtin(), func(done, total int, r *sweep.Result) {
				status := "done"
				switch {
				case r.Err != nil:
					status = "FAILED"
				case r.Skipped:
					status = "unchanged, skipped"
				}
				pr.update(fmt.Sprintf("task %d [%d/%d] %s %s", t, done, total, r.Point.Name, status), done == total)
			})
			var se *sweep.ShardError
			if errors.As(err, &se) {
				for _, e := range se.Failed {
					fmt.Fprintln(cmd.ErrOrStderr(), "schedsim: "+oneLine(e.Error()))
				}
				return scenarioFailures(err, se.Failed)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "task %d done: %s\n", t, filepath.Join(args[0], sweep.ShardsDir, sweep.ShardFile(t)))
			return nil
		},
	}
	cmd.Flags().IntVar(&task, "task", 0, "task number (default: $SLURM_ARRAY_TASK_ID)")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress on stderr")
	return cmd
}

func newSweepMergeCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "merge DIR",
		Short:   "Join the shards of a sweep's Slurm job array into sweep.parquet and plots; report missing or failed tasks",
		Example: `  schedsim sweep merge /scratch/study`,
		Long: `Join the shard results of a sweep's Slurm job array into DIR/sweep.parquet
and DIR/plots/. When tasks are missing (never ran, or killed for time or
memory) or failed (their note in DIR/shards/ says why), nothing is merged:
it lists them, writes DIR/retry.sbatch, an array of only those tasks, and
exits 3. Scenarios that finished inside an unfinished task are not run
again by the retry (resume).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := sweep.Merge(args[0])
			if rep != nil {
				for _, t := range slices.Sorted(maps.Keys(rep.Failed)) {
					fmt.Fprintln(cmd.ErrOrStderr(), rep.Failed[t])
				}
			}
			if err != nil && rep != nil && len(rep.Incomplete()) > 0 {
				return failed(err) // not the input's fault: tasks to run (again)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "merged %d tasks, %d scenarios into %s\n", rep.Tasks, rep.Rows, filepath.Join(args[0], sweep.ParquetFile))
			return nil
		},
	}
}
