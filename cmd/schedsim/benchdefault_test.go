package main

import (
	"testing"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/sim"
)

// BenchmarkDefaultScenario replays the embedded default scenario (the
// example cluster, 48 nodes × 8 GPUs in three partitions, and the 5,301-job
// Thunder slice; `schedsim run`) under each built-in policy: the
// simulation alone, the trace read once outside the loop and a fresh
// policy built for each replay. It checks that every job ended (all but two started) and
// reports jobs/s. Issue 18 budgets conservative at ≤ 5 × easy here on one
// core (-cpu 1); BENCHMARKS.md also counts instructions of one replay.
func BenchmarkDefaultScenario(b *testing.B) {
	run, err := scenario.Default().Build(catalog.Builtin())
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range catalog.Builtin().Names() {
		b.Run("policy="+name, func(b *testing.B) {
			var rec *sim.Record
			for b.Loop() {
				p, err := catalog.Builtin().New(name, nil)
				if err != nil {
					b.Fatal(err)
				}
				run.Policy = p
				if rec, err = run.Simulate(); err != nil {
					b.Fatal(err)
				}
			}
			// Every job ends; two of the slice's never start (they never
			// started in the log either: 91832 and 94218).
			started := 0
			for i := range rec.Jobs {
				if rec.Jobs[i].State == sim.Unfinished {
					b.Fatalf("job %d never finished", i)
				}
				if rec.Jobs[i].Start >= 0 {
					started++
				}
			}
			if started != len(rec.Jobs)-2 {
				b.Fatalf("%d of %d jobs started, want all but the two the log never started", started, len(rec.Jobs))
			}
			b.ReportMetric(float64(len(rec.Jobs)*b.N)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
