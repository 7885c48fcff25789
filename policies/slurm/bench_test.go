package slurm_test

import (
	"fmt"
	"testing"

	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
)

// BenchmarkSlurmQueue replays synthetic traces under the slurm policy
// (defaults) where the queue stays deep: the backfill cycle then tests
// bf_max_job_test records and plans a reservation for most of them, which
// is what the policy's cost grows with. Reports simulated jobs/s.
func BenchmarkSlurmQueue(b *testing.B) {
	for _, sz := range []struct {
		nodes, jobs int
		load        float64
	}{{1024, 8_000, 1.2}} {
		b.Run(fmt.Sprintf("nodes=%d/jobs=%d/load=%g", sz.nodes, sz.jobs, sz.load), func(b *testing.B) {
			c, tr := policytest.Synthetic(1, sz.nodes, 8, sz.jobs, sz.load)
			runs := 0
			b.ReportAllocs()
			for b.Loop() {
				p, err := catalog.Builtin().New("slurm", nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: p, Seed: 1}); err != nil {
					b.Fatal(err)
				}
				runs++
			}
			b.ReportMetric(float64(runs*len(tr.Jobs))/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
