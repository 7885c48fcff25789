package policies_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// easyLockstep runs an EASY that keeps its state from pass to pass and,
// on the same view at every pass, a fresh EASY that has seen no earlier
// pass (so nothing it keeps can explain a decision) and keeps every
// failure it meets within the pass (no dropCovered), and fails the run at
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
	ref.NoPrune()
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

// TestEASYRetriesAfterLaterStart is the case that rules out "a pass
// after only submissions starts nothing that failed in the last one".
// Nodes X and Y have 8 CPUs; X is in partitions all and px, Y in all
// and py. At 0: R1 (px, 4 CPUs, limit 100) starts on X, R2 (py, 4 CPUs,
// long) on Y; the head H (8 CPUs on one node) is reserved on X at 100.
// J (4 CPUs, limit 5000) fits X first and would hold it at 100: it
// waits. K (4 CPUs, limit 50) starts on X, gone by 100. At 1 a
// submission N comes: J now fits only on Y, which H does not need, so
// it starts there at 1.
func TestEASYRetriesAfterLaterStart(t *testing.T) {
	c := policytest.Cluster([]hwmodels.Node{
		policytest.Node("x", 0, "", 8, 1024, 0b011),
		policytest.Node("y", 0, "", 8, 1024, 0b101),
	}, "all", "px", "py")
	tr := &workload.Trace{Source: "TestEASYRetriesAfterLaterStart"}
	add := func(id, part string, at, limit, run workload.Time, cpus int32) {
		j := workload.NewJob(id)
		j.Submit, j.TimeLimit, j.Runtime, j.Partition = at, limit, run, part
		j.Request = workload.Request{Nodes: 1, CPUs: cpus}
		tr.Jobs = append(tr.Jobs, j)
	}
	add("R1", "px", 0, 100, 100, 4)
	add("R2", "py", 0, 10000, 10000, 4)
	add("H", "all", 0, 1000, 1000, 8)
	add("J", "all", 0, 5000, 5000, 4)
	add("K", "all", 0, 50, 50, 4)
	add("N", "all", 1, 1000, 1000, 8)
	fast := policies.NewEASY(nil)
	l := &easyLockstep{fast: fast}
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: l, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if l.err != nil {
		t.Fatal(l.err)
	}
	j := rec.Jobs[3]
	if j.Start != 1 || j.Alloc.Len() != 1 || j.Alloc.At(0).Node != 1 {
		t.Errorf("J started at %d on %v, want at 1 on node 1 (y)", j.Start, j.Alloc.Append(nil))
	}
	if k := rec.Jobs[4]; k.Start != 0 || k.Alloc.At(0).Node != 0 {
		t.Errorf("K started at %d on %v, want at 0 on node 0 (x)", k.Start, k.Alloc.Append(nil))
	}
}
