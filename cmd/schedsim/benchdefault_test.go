package main

import (
	"testing"

	"github.com/schedsim/schedsim/cmd/schedsim/internal/scenario"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
)

// BenchmarkDefaultScenario replays the embedded default scenario (the
// example cluster, 48 nodes × 8 GPUs in three partitions, and the 5,301-job
// Thunder slice; `schedsim run`) under each built-in policy: the
// simulation alone, the trace read once outside the loop and a fresh
// policy built for each replay. It checks that every job started and
// reports jobs/s. Issue 18 budgets conservative at ≤ 5 × easy here on one
// core (-cpu 1); BENCHMARKS.md also counts instructions of one replay.
func BenchmarkDefaultScenario(b *testing.B) {
	run, err := scenario.Default().Build(policies.Builtin())
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range policies.Builtin().Names() {
		b.Run("policy="+name, func(b *testing.B) {
			var rec *sim.Record
			for b.Loop() {
				p, err := policies.Builtin().New(name, nil)
				if err != nil {
					b.Fatal(err)
				}
				run.Policy = p
				if rec, err = simulate(run); err != nil {
					b.Fatal(err)
				}
			}
			for i := range rec.Jobs {
				if rec.Jobs[i].Start < 0 {
					b.Fatalf("job %d never started", i)
				}
			}
			b.ReportMetric(float64(len(rec.Jobs)*b.N)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
