package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata from the current code")

// The year golden holds the slurm policy's decisions on the first
// yearGoldenJobs jobs of the benchmark trace under bench/year-1024x8.yaml
// as a per-job table (policytest.JobTable): the summary of every job's
// figures and every yearGoldenEvery-th job's start, end, state, nodes
// and reason. The policy's goldens (policies/slurm/testdata/golden.txt)
// run small clusters; this one holds its optimizations to the same
// decisions in the regime they target: 1,024 nodes and a queue hundreds
// of jobs deep.
const (
	yearGoldenJobs  = 20_000
	yearGoldenEvery = 400
	yearGoldenFile  = "testdata/year_golden.txt"
)

// TestYearGolden replays the first yearGoldenJobs jobs of the benchmark
// trace under the slurm policy and compares the table with
// testdata/year_golden.txt; -update rewrites it (only for an intended
// change of behaviour). It skips without the trace (make bench-data-year) and
// in -short mode (it takes a few seconds).
func TestYearGolden(t *testing.T) {
	rec := yearGoldenRun(t, yearGoldenJobs, nil)
	checkGolden(t, yearGoldenFile, policytest.JobTable(rec, yearGoldenEvery))
}

// yearGoldenRun replays the first jobs jobs of the benchmark trace under
// bench/year-1024x8.yaml, after adjust (when not nil) changes the run. It
// skips without the trace (make bench-data-year) and in -short mode.
func yearGoldenRun(t *testing.T, jobs int, adjust func(*scenario.Run)) *sim.Record {
	t.Helper()
	if testing.Short() {
		t.Skip("a few seconds of simulation")
	}
	s, err := scenario.Load(filepath.Join(benchDir, "year-1024x8.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Resolve(s.Trace.File)); err != nil {
		t.Skipf("no benchmark trace (%v): run make bench-data-year", err)
	}
	run, err := s.Build(catalog.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	run.Head(jobs)
	if adjust != nil {
		adjust(run)
	}
	rec, err := run.Simulate()
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// checkGolden compares got with the golden file; -update rewrites it
// (only for an intended change of behaviour).
func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", file, d)
	}
}
