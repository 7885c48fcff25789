package sweep

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/reports"
)

// RunsDir is the directory under a sweep's output directory that holds
// one directory per scenario.
const RunsDir = "runs"

// ErrInternal is in the chain of a scenario's error when it failed on a
// bug (a panic, an inconsistent record), not on its input.
var ErrInternal = scenario.ErrInternal

// Result is the outcome of one point.
type Result struct {
	Point   *Point
	Values  []float64 // one per Metrics entry; nil when Err is set
	Skipped bool      // the outputs were already there and matched (resume)
	Err     error
}

// Options control a local run.
type Options struct {
	// Workers is how many scenarios run at once (at least 1).
	Workers int
	// Force runs every scenario even when its outputs match.
	Force bool
	// Progress, when set, is called after each scenario, in completion
	// order, from one goroutine at a time.
	Progress func(done, total int, r *Result)
	// Registry builds the policies (default catalog.Builtin()).
	Registry policies.Registry
}

// Run runs points (a subset of sw.Points, in order) with their outputs
// under outDir/runs, on opt.Workers goroutines, each running whole
// scenarios. Results come back in the order of points, whatever the
// number of workers. Run returns every result; a failed scenario has Err
// set and does not stop the others.
func Run(sw *Sweep, points []*Point, outDir string, opt Options) []Result {
	if opt.Workers < 1 {
		opt.Workers = 1
	}
	if opt.Registry == nil {
		opt.Registry = catalog.Builtin()
	}
	results := make([]Result, len(points))
	jobs := make(chan int)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range min(opt.Workers, max(len(points), 1)) {
		wg.Go(func() {
			for i := range jobs {
				r := RunPoint(points[i], filepath.Join(outDir, RunsDir, points[i].Dir), opt.Registry, opt.Force)
				results[i] = r
				if opt.Progress != nil {
					mu.Lock()
					done++
					opt.Progress(done, len(points), &results[i])
					mu.Unlock()
				}
			}
		})
	}
	for i := range points {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return results
}

// RunPoint runs one scenario with its outputs in dir, unless dir already
// holds a complete run (one that passes its manifest) whose config hash
// is the point's (and force is false): then it reads the metrics from its
// summary.json and reports Skipped.
func RunPoint(pt *Point, dir string, reg policies.Registry, force bool) Result {
	res := Result{Point: pt}
	if !force {
		// Only a complete run counts: one that passes its manifest.
		if m, kept, err := reports.VerifyRunDir(dir, reports.SummaryFile); err == nil && m.ConfigHash == pt.Hash {
			if info, err := readSummary(kept[reports.SummaryFile]); err == nil && info.ConfigHash == pt.Hash {
				res.Values, res.Skipped = info.Values, true
				return res
			}
		}
	}
	summary, err := runScenario(pt, dir, reg)
	if err != nil {
		res.Err = fmt.Errorf("%s: %w", pt.Name, err)
		return res
	}
	info, err := readSummary(summary)
	if err != nil {
		res.Err = fmt.Errorf("%s: %w", pt.Name, err)
		return res
	}
	res.Values = info.Values
	return res
}

// runScenario builds, simulates and analyzes pt's scenario as schedsim run
// does, writes every output into dir and returns summary.json's bytes.
func runScenario(pt *Point, dir string, reg policies.Registry) (summary []byte, err error) {
	// A panic (a broken invariant in the engine, a bug in a writer) fails
	// this scenario, not the sweep.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w (policy %s, seed %d): %v", ErrInternal, pt.PolicyName, pt.Seed, p)
		}
	}()
	// Take the directory first, so that a second sweep on the same output
	// is refused before it simulates.
	od, err := reports.CreateOutDir(dir)
	if err != nil {
		return nil, err
	}
	defer od.Close()
	run, err := pt.Scenario.Build(reg)
	if err != nil {
		return nil, err
	}
	rec, err := run.Simulate()
	if err != nil {
		return nil, err
	}
	res, err := run.Analyze(rec)
	if err != nil {
		return nil, err
	}
	if err := od.WriteRun(res.Record, res.Analysis, res.Scenario); err != nil {
		return nil, err
	}
	if err := od.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, reports.SummaryFile))
}

// PointsOf returns pointers to all of sw's points, in order.
func (sw *Sweep) PointsOf(lo, hi int) []*Point {
	out := make([]*Point, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, &sw.Points[i])
	}
	return out
}
