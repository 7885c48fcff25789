package policies_test

import (
	"runtime"
	"testing"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
)

// BenchmarkMemoryPerJob reports the resident bytes per job of a finished
// run: the trace's jobs plus their records, measured as live heap after a
// GC with both held, over 100k synthetic jobs (DESIGN.md budget: <= 512 B
// per pending or finished job). The synthetic jobs carry no extra trace
// columns; a real trace's Extra fields add to this.
func BenchmarkMemoryPerJob(b *testing.B) {
	const jobs = 100_000
	var perJob float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c, tr := policytest.Synthetic(1, 128, 8, jobs, 0.9)
		rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: policies.NewFIFO(nil), Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if len(rec.Jobs) != jobs {
			b.Fatalf("record has %d jobs, want %d", len(rec.Jobs), jobs)
		}
		perJob = float64(after.HeapAlloc-before.HeapAlloc) / jobs
		runtime.KeepAlive(rec)
		runtime.KeepAlive(tr)
	}
	b.ReportMetric(perJob, "B/job")
}
