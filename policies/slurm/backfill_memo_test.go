package slurm

import (
	"math/rand/v2"
	"testing"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestOutcomeSet compares outcomeSet with a map over random keys drawn
// from a small range (so that many repeat and collide), across resets and
// growth.
func TestOutcomeSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s outcomeSet
	want := map[outcomeKey]bool{}
	for round := range 50 {
		s.reset()
		clear(want)
		for range 40 + round*20 {
			k := outcomeKey{cls: rng.Int32N(20), limit: sim.Time(rng.IntN(30) * 600)}
			if got := s.has(k); got != want[k] {
				t.Fatalf("round %d: has(%+v) = %v, want %v", round, k, got, want[k])
			}
			if !want[k] {
				s.add(k)
				want[k] = true
			}
		}
		if s.n != len(want) {
			t.Fatalf("round %d: %d keys, want %d", round, s.n, len(want))
		}
	}
}

// TestClassOf checks that records asking the same get one class, and that
// the request, the partition and the partition set each tell classes
// apart.
func TestClassOf(t *testing.T) {
	var b backfillState
	job := func(gpus int32, typ string, part int32, parts uint64) *sim.PendingJob {
		return &sim.PendingJob{Part: part, Parts: parts, Limit: 3600, Req: workload.Request{GPUs: gpus, GPUType: typ, CPUs: 4 * gpus}}
	}
	a := b.classOf(job(2, "h100", 0, 1))
	if got := b.classOf(job(2, "h100", 0, 1)); got != a {
		t.Errorf("same request: class %d, want %d", got, a)
	}
	for _, j := range []*sim.PendingJob{job(4, "h100", 0, 1), job(2, "a100", 0, 1), job(2, "h100", 1, 2), job(2, "h100", 0, 3)} {
		if got := b.classOf(j); got == a {
			t.Errorf("%+v: class %d, the same as another request's", j, got)
		}
		if c := &b.classes[b.classOf(j)]; !c.is(j) || c.count != policies.NewDemand(j).Count || c.shape.Count != 0 {
			t.Errorf("%+v: class %+v", j, c)
		}
	}
	if c := &b.classes[a]; c.is(job(4, "h100", 0, 1)) {
		t.Errorf("class of 2 GPUs takes a job of 4")
	}
}
