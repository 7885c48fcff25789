package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/workload"
)

// The nodes golden holds the slurm policy's decisions on the first
// yearNodesGoldenJobs jobs of the benchmark trace on 256 uniform nodes in
// one partition, as BenchmarkYearNodes/nodes=256 runs them: wide jobs
// block much of the machine and every backfill cycle makes tens of
// reservations, each after tens of TRY_LATER retries, the regime the
// reservation search's shortcuts target (TestYearGolden has a queue
// hundreds deep but few reservations per cycle).
const (
	yearNodesGoldenJobs  = 3_000
	yearNodesGoldenEvery = 100
	yearNodesGoldenFile  = "testdata/year_nodes256_golden.txt"
)

// TestYearNodesGolden compares the per-job table (policytest.JobTable) of
// that run with testdata/year_nodes256_golden.txt; -update rewrites it.
// It skips without the trace (make bench-data-year) and in -short mode.
func TestYearNodesGolden(t *testing.T) {
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
	run, err := s.Build(policies.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	run.Head(yearNodesGoldenJobs)
	const nodes = 256
	run.Cluster = hwmodels.UniformCluster("uniform", nodes, 112, 8, 2<<20)
	for i := range run.Trace.Jobs {
		j := &run.Trace.Jobs[i]
		j.Submit = j.Submit * 1024 / workload.Time(nodes)
		j.Partition = ""
	}
	rec, err := run.Simulate()
	if err != nil {
		t.Fatal(err)
	}
	got := policytest.JobTable(rec, yearNodesGoldenEvery)
	if *updateGolden {
		if err := os.WriteFile(yearNodesGoldenFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(yearNodesGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", yearNodesGoldenFile, d)
	}
}
