package policies

import (
	"math/rand/v2"
	"testing"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestReqSet compares reqSet with a map over random requests drawn from a
// small range (so that many repeat and collide), across resets and
// growth.
func TestReqSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	types := []string{"", "h100", "a100"}
	draw := func() bfReq {
		return bfReq{
			req: workload.Request{
				Nodes:   rng.Int32N(3),
				GPUs:    rng.Int32N(9),
				GPUType: types[rng.IntN(len(types))],
				CPUs:    rng.Int32N(4),
				MemMB:   rng.Int64N(3) * 1024,
			},
			part:  rng.Int32N(2),
			parts: uint64(rng.IntN(3)),
			limit: sim.Time(rng.IntN(5) * 600),
		}
	}
	var s reqSet
	want := map[bfReq]bool{}
	for round := range 50 {
		s.reset()
		clear(want)
		for range 40 + round*20 {
			k := draw()
			if got := s.has(&k); got != want[k] {
				t.Fatalf("round %d: has(%+v) = %v, want %v", round, k, got, want[k])
			}
			if !want[k] {
				s.add(&k)
				want[k] = true
			}
		}
		if s.n != len(want) {
			t.Fatalf("round %d: %d keys, want %d", round, s.n, len(want))
		}
	}
}
