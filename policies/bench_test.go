package policies_test

import (
	"fmt"
	"testing"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
)

// BenchmarkPolicy replays a synthetic trace (policytest.Synthetic: jobs
// of 1 to 8 GPUs or 2 to 4 whole nodes, limits from 10 minutes to a day,
// offered load 0.9 of the cluster's GPUs) through sim.Run under each
// built-in policy, checks that every job finished, and reports simulated
// jobs per second of wall time. It measures the controller and the policy
// together, which is what a replay costs.
func BenchmarkPolicy(b *testing.B) {
	sizes := []struct{ nodes, jobs int }{{128, 100_000}, {1024, 100_000}}
	for _, name := range policies.Builtin().Names() {
		for _, sz := range sizes {
			b.Run(fmt.Sprintf("%s/nodes=%d/jobs=%d", name, sz.nodes, sz.jobs), func(b *testing.B) {
				c, tr := policytest.Synthetic(1, sz.nodes, 8, sz.jobs, 0.9)
				var rec *sim.Record
				runs := 0
				b.ReportAllocs()
				for b.Loop() {
					p, err := policies.Builtin().New(name, nil)
					if err != nil {
						b.Fatal(err)
					}
					rec, err = sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: p, Seed: 1})
					if err != nil {
						b.Fatal(err)
					}
					runs++
				}
				for i := range rec.Jobs {
					if st := rec.Jobs[i].State; st != sim.Completed && st != sim.Timeout {
						b.Fatalf("job %s ended %v, want COMPLETED or TIMEOUT", tr.Jobs[i].ID, st)
					}
				}
				b.ReportMetric(float64(runs*len(tr.Jobs))/b.Elapsed().Seconds(), "jobs/s")
			})
		}
	}
}
