package slurm

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/schedsim/schedsim/sim"
)

// TestBackfillAfter checks the hinted search of the reservation orders
// against sort.Search over random orders, times and hints (every hint,
// including out of range ones).
func TestBackfillAfter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b backfillState
	keys := func(ord []int32, hi bool) []sim.Time {
		var k []sim.Time
		for _, r := range ord {
			if hi {
				k = append(k, b.res[r].hi)
			} else {
				k = append(k, b.res[r].lo)
			}
		}
		return k
	}
	for trial := range 500 {
		n := rng.IntN(40)
		b.res = b.res[:0]
		for range n {
			lo := sim.Time(rng.IntN(20))
			b.res = append(b.res, bfRes{lo: lo, hi: lo + 1 + sim.Time(rng.IntN(20))})
		}
		lo, hi := make([]int32, n), make([]int32, n)
		for i := range n {
			lo[i], hi[i] = int32(i), int32(i)
		}
		slices.SortFunc(lo, func(x, y int32) int { return int(b.res[x].lo - b.res[y].lo) })
		slices.SortFunc(hi, func(x, y int32) int { return int(b.res[x].hi - b.res[y].hi) })
		loK, hiK := keys(lo, false), keys(hi, true)
		for tt := sim.Time(-1); tt <= 42; tt++ {
			wantLo := sort.Search(n, func(k int) bool { return b.res[lo[k]].lo > tt })
			wantHi := sort.Search(n, func(k int) bool { return b.res[hi[k]].hi > tt })
			for hint := -2; hint <= n+2; hint++ {
				if got := after(loK, tt, hint); got != wantLo {
					t.Fatalf("trial %d: after(lo, %d, hint %d) = %d, want %d", trial, tt, hint, got, wantLo)
				}
				if got := after(hiK, tt, hint); got != wantHi {
					t.Fatalf("trial %d: after(hi, %d, hint %d) = %d, want %d", trial, tt, hint, got, wantHi)
				}
			}
		}
	}
}
