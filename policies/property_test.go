package policies_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// shadowWatch runs EASY and remembers, for every job that got a
// reservation, the shadow time of its first one.
type shadowWatch struct {
	*policies.EASY
	first map[sim.JobRef]sim.Time
}

func (w *shadowWatch) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	plan := w.EASY.Schedule(due, v, rng)
	if r, ok := w.Reservation(); ok {
		if _, seen := w.first[r.Job]; !seen {
			w.first[r.Job] = r.Shadow
		}
	}
	return plan
}

// TestEASYHeadNeverDelayed checks EASY's guarantee on whole runs: a job
// that gets a reservation starts no later than the shadow time computed
// when it first became the blocked head. It holds because running jobs end
// by their limits, backfilled jobs are admitted only if the head still
// fits at the shadow time, and later submissions queue behind the head
// (the generated workloads have no dependencies, which could put a newly
// eligible job ahead of it).
func TestEASYHeadNeverDelayed(t *testing.T) {
	type workloadGen struct {
		name string
		gen  func(seed uint64) (*hwmodels.Cluster, *workload.Trace)
	}
	gens := []workloadGen{
		{"tiny", policytest.Workload},
		{"synthetic", func(seed uint64) (*hwmodels.Cluster, *workload.Trace) {
			return policytest.Synthetic(seed, 4, 8, 400, 1.2)
		}},
	}
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			var reservations int
			for seed := range uint64(200) {
				c, tr := g.gen(seed)
				w := &shadowWatch{EASY: policies.NewEASY(nil), first: map[sim.JobRef]sim.Time{}}
				w.AlwaysReserve = true
				rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: w, Seed: seed, Check: true})
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				reservations += len(w.first)
				for ref, shadow := range w.first {
					r := &rec.Jobs[ref]
					if r.Start == workload.Unknown {
						if r.State != sim.Cancelled {
							t.Errorf("seed %d: job %s got a reservation at %d but never started (%v)", seed, tr.Jobs[ref].ID, shadow, r.State)
						}
						continue
					}
					if r.Start > shadow {
						t.Errorf("seed %d: job %s started at %d, after its first shadow time %d", seed, tr.Jobs[ref].ID, r.Start, shadow)
					}
				}
			}
			if reservations < 200 {
				t.Errorf("only %d reservations over 200 seeds: workloads too light to test anything", reservations)
			}
			t.Log(fmt.Sprintf("%d reservations checked", reservations))
		})
	}
}

// TestTimeScaling is a metamorphic test: fifo and easy only compare and
// add times, so multiplying every submit time, limit, runtime and cancel
// delay of a trace by k and shifting every submit by d must give the same
// allocations and states, with every start and end mapped by t -> k*t+d.
// slurm is left out: its passes run at fixed intervals (bf_interval,
// sched_interval) that do not scale with the trace.
func TestTimeScaling(t *testing.T) {
	const k, d = 7, 1000
	for _, name := range catalog.Builtin().Names() {
		if name == "slurm" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(50) {
				c, tr := policytest.Workload(seed)
				scaled := &workload.Trace{Jobs: slices.Clone(tr.Jobs)}
				for i := range scaled.Jobs {
					j := &scaled.Jobs[i]
					j.Submit = k*j.Submit + d
					j.TimeLimit *= k
					j.Runtime *= k
					if j.CancelAfter != workload.Unknown {
						j.CancelAfter *= k
					}
				}
				run := func(tr *workload.Trace) *sim.Record {
					p, _ := catalog.Builtin().New(name, nil)
					rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: p, Seed: seed, Check: true})
					if err != nil {
						t.Fatalf("seed %d: %v", seed, err)
					}
					return rec
				}
				a, b := run(tr), run(scaled)
				for i := range a.Jobs {
					x, y := a.Jobs[i], b.Jobs[i]
					for _, tp := range []*sim.Time{&x.Start, &x.End} {
						if *tp != workload.Unknown {
							*tp = k**tp + d
						}
					}
					x.Submit, x.Eligible = y.Submit, y.Eligible
					if diff := cmp.Diff(x, y); diff != "" {
						t.Fatalf("seed %d, job %s: scaled run differs (-want +got):\n%s", seed, tr.Jobs[i].ID, diff)
					}
				}
			}
		})
	}
}
