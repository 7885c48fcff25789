package main

import (
	"testing"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/hwmodels"
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
// that run with testdata/year_nodes256_golden.txt (checkGolden).
func TestYearNodesGolden(t *testing.T) {
	const nodes = 256
	rec := yearGoldenRun(t, yearNodesGoldenJobs, func(run *scenario.Run) {
		run.Cluster = hwmodels.UniformCluster("uniform", nodes, 112, 8, 2<<20)
		for i := range run.Trace.Jobs {
			j := &run.Trace.Jobs[i]
			j.Submit = j.Submit * 1024 / workload.Time(nodes)
			j.Partition = ""
		}
	})
	checkGolden(t, yearNodesGoldenFile, policytest.JobTable(rec, yearNodesGoldenEvery))
}
