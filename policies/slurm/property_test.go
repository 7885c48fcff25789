package slurm_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// promiser wraps a Slurm policy and remembers, for every job that was the
// highest-priority pending job after a backfill cycle and had a
// reservation, the start the latest such cycle predicted for it.
//
// Not the earliest: Slurm's will-run test releases running jobs in groups
// whose time windows start at the first end and double, so the same
// running jobs can give a later prediction at a later cycle (the groups
// shift as jobs end), and a job backfilled then may fill the gap the
// earlier prediction left. Each cycle's prediction is an upper bound that
// the cycle's backfilling and the main passes after it must respect.
type promiser struct {
	*slurm.Policy
	promised map[sim.JobRef]sim.Time
	// stolen lists lower-priority jobs the same pass started on the top
	// job's reserved nodes with a limit reaching into its reservation.
	stolen []string
}

func (p *promiser) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	plan := p.Policy.Schedule(due, v, rng)
	// The queue is in submit order (all priorities 1, one tier): the
	// highest-priority job left pending is the first not started.
	startedNow := map[sim.JobRef]bool{}
	for _, st := range plan.Starts {
		startedNow[st.Job] = true
	}
	top := sim.JobRef(-1)
	for _, pj := range v.Pending() {
		if !startedNow[pj.Ref] {
			top = pj.Ref
			break
		}
	}
	if rs := p.Reservations(); len(rs) > 0 && rs[0].Job == top {
		r := rs[0]
		p.promised[r.Job] = r.Predicted
		order := map[sim.JobRef]int{}
		for i, pj := range v.Pending() {
			order[pj.Ref] = i
		}
		for _, st := range plan.Starts {
			if order[st.Job] < order[top] {
				continue // higher priority than the top job left pending
			}
			pj := v.Pending()[order[st.Job]]
			if v.Now()+pj.Limit <= r.Start {
				continue // gone before the reservation begins
			}
			for _, a := range st.Alloc {
				if slices.Contains(r.Nodes, a.Node) {
					p.stolen = append(p.stolen, fmt.Sprintf("t=%d: job %d on node %d reserved for job %d from %d", v.Now(), st.Job, a.Node, top, r.Start))
				}
			}
		}
	}
	return plan
}

// TestSlurmTopReservationNeverDelayed: with every job running exactly its
// time limit and all priorities equal (Slurm's default weights: queue
// order is submit order), the highest-priority blocked job starts no later
// than the start its reservation last predicted, and no pass starts a
// lower-priority job on its reserved nodes for a time reaching into its
// reservation. Backfilled jobs, which may not
// touch its reserved nodes during their limits, and main passes, which
// stop its partition and take its nodes away from the others, never delay
// it. Runs policytest.Workload traces (two overlapping partitions,
// multi-resource requests) under Slurm's default parameters.
func TestSlurmTopReservationNeverDelayed(t *testing.T) {
	checked := 0
	for seed := range uint64(120) {
		c, tr := policytest.Workload(seed)
		for i := range tr.Jobs {
			tr.Jobs[i].Runtime = tr.Jobs[i].TimeLimit
		}
		s, err := slurm.New(slurm.DefaultArgs(), nil)
		if err != nil {
			t.Fatal(err)
		}
		s.AlwaysReserve = true
		p := &promiser{Policy: s, promised: map[sim.JobRef]sim.Time{}}
		rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: p, Seed: seed, Check: true})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, msg := range p.stolen {
			t.Errorf("seed %d: %s", seed, msg)
		}
		for ref, at := range p.promised {
			start := rec.Jobs[ref].Start
			checked++
			if start == workload.Unknown || start > at {
				t.Errorf("seed %d: job %s was promised a start by %d, started at %d", seed, tr.Jobs[ref].ID, at, start)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d reservations checked: workloads too light", checked)
	}
	t.Logf("%d top reservations checked", checked)
}
