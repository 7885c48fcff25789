package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/schedsim/schedsim/cmd/schedsim/internal/scenario"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
)

// yearGolden is the decision hash (policytest.DecisionHash) of the first 20,000 jobs
// of the benchmark trace under bench/year-1024x8.yaml's slurm policy. The
// policy's golden tests (policies/slurm_golden_test.go) run small
// clusters; this one holds its optimizations to the same decisions in the
// regime they target: 1,024 nodes and a queue hundreds of jobs deep.
const (
	yearGoldenJobs = 20_000
	yearGolden     = "9497f949d7341c29"
)

// TestYearGolden replays the first yearGoldenJobs jobs of the benchmark
// trace under the slurm policy and compares the decision hash with
// yearGolden. It skips without the trace (make bench-data) and in -short
// mode (it takes a few seconds).
func TestYearGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of simulation")
	}
	s, err := scenario.Load(filepath.Join(benchDir, "year-1024x8.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Resolve(s.Trace.File)); err != nil {
		t.Skipf("no benchmark trace (%v): run make bench-data", err)
	}
	run, err := s.Build(policies.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	run.Trace.Jobs = slices.Clone(run.Trace.Jobs[:yearGoldenJobs])
	rec, err := simulate(run)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%016x", policytest.DecisionHash(rec))
	t.Logf("%d jobs, %d reason changes, %d events: hash %s", len(rec.Jobs), rec.Reasons.Len(), rec.Events, got)
	if got != yearGolden {
		t.Errorf("decisions hash %s, golden %s", got, yearGolden)
	}
}
