package policies_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
)

// easyLockstep runs an EASY that keeps its state from pass to pass and,
// on the same view at every pass, a fresh EASY that has seen no earlier
// pass (so nothing it keeps can explain a decision), and fails the run at
// the first pass where their starts or reservations differ.
type easyLockstep struct {
	fast   *policies.EASY
	always bool
	err    error
	passes int
}

func (l *easyLockstep) Name() string { return "easy" }

func (l *easyLockstep) JobStarted(ref sim.JobRef, at sim.Time, alloc []sim.NodeAlloc) {
	l.fast.JobStarted(ref, at, alloc)
}

func (l *easyLockstep) JobEnded(ref sim.JobRef, at sim.Time, alloc []sim.NodeAlloc, st sim.State) {
	l.fast.JobEnded(ref, at, alloc, st)
}

func (l *easyLockstep) Begin(info sim.RunInfo) (sim.Timing, error) { return l.fast.Begin(info) }

func (l *easyLockstep) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	ref := policies.NewEASY(nil)
	ref.AlwaysReserve = l.always
	if _, err := ref.Begin(sim.RunInfo{Cluster: v.Cluster()}); err != nil {
		l.err = err
	}
	want := startsOf(ref.Schedule(due, v, rng))
	wantRes := reservationOf(ref)
	got := l.fast.Schedule(due, v, rng)
	l.passes++
	if l.err != nil {
		return got
	}
	switch gotRes := reservationOf(l.fast); {
	case !reflect.DeepEqual(startsOf(got), want):
		l.err = fmt.Errorf("t=%d pass %d: starts %v, fresh EASY %v", v.Now(), l.passes, startsOf(got), want)
	case !reflect.DeepEqual(gotRes, wantRes):
		l.err = fmt.Errorf("t=%d pass %d: reservation %+v, fresh EASY %+v", v.Now(), l.passes, gotRes, wantRes)
	}
	return got
}

// reservationOf is e's reservation with its slices copied, or nil.
func reservationOf(e *policies.EASY) *policies.Reservation {
	r, ok := e.Reservation()
	if !ok {
		return nil
	}
	r.Alloc, r.Extra = slices.Clone(r.Alloc), slices.Clone(r.Extra)
	return &r
}

// TestEASYMatchesFreshPasses runs EASY, which keeps buffers and a memory
// of the last pass's failures from pass to pass, in lockstep with a fresh
// EASY at every pass, on the random workloads of
// TestConservativeMatchesReference (failures and requeue, drains, node
// downs and maintenance windows, dependencies, Slurm's end-of-limit
// settings, deep queues, wide clusters, MIG and MPS): every pass must
// start the same jobs on the same nodes and report the same reservation,
// with the reservation computed lazily and with AlwaysReserve.
func TestEASYMatchesFreshPasses(t *testing.T) {
	cases := consCases(t)
	passes, skipped := 0, 0
	for i, k := range cases {
		for _, always := range []bool{false, true} {
			if always && i%4 != 0 {
				continue
			}
			cfg := k.cfg
			cfg.Check = true
			fast := policies.NewEASY(nil)
			fast.AlwaysReserve = always
			l := &easyLockstep{fast: fast, always: always}
			cfg.Policy = policytest.Timed(l, k.timing)
			if _, err := sim.Run(cfg); err != nil {
				t.Fatalf("%s: %v", k.name, err)
			}
			if l.err != nil {
				t.Fatalf("%s (AlwaysReserve %v): %v", k.name, always, l.err)
			}
			passes += l.passes
			skipped += fast.Skipped()
		}
	}
	if passes < 20000 {
		t.Errorf("only %d passes compared", passes)
	}
	if skipped < 1000 {
		t.Errorf("only %d queued jobs left untried after only new submissions", skipped)
	}
	t.Logf("%d passes, %d jobs left untried", passes, skipped)
}
