package policies_test

import (
	"fmt"
	"testing"

	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
)

// BenchmarkPolicy replays a synthetic trace (policytest.Synthetic: jobs
// of 1 to 8 GPUs or 2 to 4 whole nodes, limits from 10 minutes to a day,
// offered load 0.9 of the cluster's GPUs) through sim.Run under each
// built-in policy, checks that every job finished, and reports simulated
// jobs per second of wall time. It measures the controller and the policy
// together, which is what a replay costs.
//
// The slow policies replay shorter traces, so that `make bench` (five
// counts of everything) ends in minutes: slurm and conservative 10,000
// jobs (slurm's backfill cycle plans reservations for up to
// bf_max_job_test queued jobs every 30 s; conservative keeps a
// reservation for every queued job, and an early end moves many of
// them). Compare jobs/s across policies, not ns/op.
func BenchmarkPolicy(b *testing.B) {
	jobs := map[string]int{"slurm": 10_000, "conservative": 10_000}
	for _, name := range catalog.Builtin().Names() {
		n, ok := jobs[name]
		if !ok {
			n = 100_000
		}
		for _, sz := range []struct{ nodes, jobs int }{{128, n}, {1024, n}} {
			b.Run(fmt.Sprintf("%s/nodes=%d/jobs=%d", name, sz.nodes, sz.jobs), func(b *testing.B) {
				c, tr := policytest.Synthetic(1, sz.nodes, 8, sz.jobs, 0.9)
				var rec *sim.Record
				runs := 0
				b.ReportAllocs()
				for b.Loop() {
					p, err := catalog.Builtin().New(name, nil)
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
