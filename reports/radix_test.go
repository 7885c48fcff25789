package reports

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortInt64sAsSlicesSort compares sortInt64s with slices.Sort on
// random slices of every length up to past the radix threshold: narrow
// and wide ranges, negatives, duplicates and the int64 extremes.
func TestSortInt64sAsSlicesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for iter := range 400 {
		n := rng.IntN(3 * radixMin)
		xs := make([]int64, n)
		for i := range xs {
			switch iter % 4 {
			case 0:
				xs[i] = rng.Int64N(100) // many duplicates
			case 1:
				xs[i] = rng.Int64N(1<<27) - 1<<20 // waits, a few negative
			case 2:
				xs[i] = int64(rng.Uint64()) // the whole range
			default:
				xs[i] = [...]int64{math.MinInt64, math.MaxInt64, -1, 0, 1}[rng.IntN(5)]
			}
		}
		want := slices.Clone(xs)
		slices.Sort(want)
		sortInt64s(xs)
		if !slices.Equal(xs, want) {
			t.Fatalf("iteration %d (%d values): sortInt64s differs from slices.Sort", iter, n)
		}
	}
}

// BenchmarkSortWaits sorts 20,000 waits shaped like the HPC2N log's (half
// of them 0, the rest up to 35 hours) with sortInt64s and slices.Sort.
func BenchmarkSortWaits(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]int64, 20000)
	for i := range src {
		if rng.IntN(2) == 0 {
			src[i] = rng.Int64N(125000)
		}
	}
	xs := make([]int64, len(src))
	for _, tc := range []struct {
		name string
		sort func([]int64)
	}{{"radix", sortInt64s}, {"pdqsort", slices.Sort[[]int64]}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				copy(xs, src)
				tc.sort(xs)
			}
		})
	}
}
