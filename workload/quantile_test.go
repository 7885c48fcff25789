package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantile checks hand-computed type 7 values, h = (n−1)·q
// interpolating between x[⌊h⌋] and x[⌊h⌋+1]; they agree with Python's
// statistics.quantiles(xs, n=100, method="inclusive") and R's
// quantile(xs, q). h is computed from q's decimal, so a quantile at an
// integer h is that order statistic exactly.
func TestQuantile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64 // sorted
		q    float64
		want float64
	}{
		{"empty", nil, 0.5, 0},
		{"one", []float64{7}, 0.99, 7},
		{"min", []float64{1, 3, 7}, 0, 1},
		{"max", []float64{1, 3, 7}, 1, 7},
		{"below 0 is the min", []float64{1, 3, 7}, -1, 1},
		{"above 1 is the max", []float64{1, 3, 7}, 2, 7},
		{"p1 of 3", []float64{1, 3, 7}, 0.01, 1.04},                       // h=0.02: 1 + 0.02·2
		{"p33 of 3", []float64{1, 3, 7}, 0.33, 2.32},                      // h=0.66: 1 + 0.66·2
		{"median odd", []float64{1, 3, 7}, 0.5, 3},                        // h=1
		{"median even", []float64{1, 2, 3, 4}, 0.5, 2.5},                  // h=1.5
		{"p25 of 1..10", seq(1, 10), 0.25, 3.25},                          // h=2.25: 3 + 0.25
		{"p90 of 1..10", seq(1, 10), 0.9, 9.1},                            // h=8.1: 9 + 0.1
		{"p95 of 1..10", seq(1, 10), 0.95, 9.55},                          // h=8.55
		{"p99 of 1..10", seq(1, 10), 0.99, 9.91},                          // h=8.91
		{"p95 of 21", seq(0, 20), 0.95, 19},                               // h=19 exactly: no interpolation from x[18]
		{"p2.5 of 1..41", seq(1, 41), 0.025, 2},                           // h=1 exactly
		{"p95 fixture", []float64{0, 0, 30, 800, 2000, 3540}, 0.95, 3155}, // h=4.75
		{"ties", []float64{5, 5, 5, 5}, 0.95, 5},
		{"third", []float64{0, 3}, 1.0 / 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Exact where h is an integer; else within the last step's
			// rounding (1 + 2·0.66 is 2.3200000000000003).
			if got := Quantile(tt.xs, tt.q); got != tt.want && !(math.Abs(got-tt.want) <= 1e-12*math.Abs(tt.want)) {
				t.Errorf("Quantile(%v, %v) = %v, want %v", tt.xs, tt.q, got, tt.want)
			}
		})
	}
	// At an integer h, the order statistic itself: h from the binary q
	// would be 28.999999999999996 (100·0.29) and 7.000000000000001
	// (100·0.07), and interpolate.
	for _, q := range []float64{0.29, 0.07, 0.57, 0.95} {
		if got, want := Quantile(seq(0, 100), q), math.Round(100*q); got != want {
			t.Errorf("Quantile(0..100, %v) = %v, want %v exactly", q, got, want)
		}
	}
	if got := Quantile([]float64{1, 2}, math.NaN()); !math.IsNaN(got) {
		t.Errorf("Quantile at NaN = %v, want NaN", got)
	}
}

// quantileInt is the integer type 7 percentile reports used before it
// shared Quantile: ⌊h⌋ and h − ⌊h⌋ = r/100 in integers, one rounding in
// the interpolation. Quantile must give the same float64 for every
// integer percent, so that the figures of summary.json did not change.
func quantileInt(xs []int64, pct int) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	h100 := int64(n-1) * int64(pct)
	lo, r := int(h100/100), h100%100
	if r == 0 {
		return float64(xs[lo])
	}
	return float64(xs[lo]) + float64(xs[lo+1]-xs[lo])*float64(r)/100
}

func TestQuantileMatchesIntegerPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		xs := make([]int64, 1+rng.IntN(300))
		for i := range xs {
			xs[i] = rng.Int64N(1 << 40)
		}
		slices.Sort(xs)
		for pct := 0; pct <= 100; pct++ {
			want := quantileInt(xs, pct)
			got := QuantileFunc(int64(len(xs)), float64(pct)/100, func(i int64) float64 { return float64(xs[i]) })
			if got != want {
				t.Fatalf("n=%d pct=%d: %v, want %v (the integer formula)", len(xs), pct, got, want)
			}
		}
	}
}

// ksReference is the two-sample KS distance by its definition: the
// largest |F_a(x) − F_b(x)| over every sample point x, F counted afresh.
func ksReference(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		if len(a) == len(b) {
			return 0
		}
		return 1
	}
	cdf := func(xs []float64, x float64) float64 {
		var c int
		for _, v := range xs {
			if v <= x {
				c++
			}
		}
		return float64(c) / float64(len(xs))
	}
	var d float64
	for _, x := range slices.Concat(a, b) {
		d = max(d, math.Abs(cdf(a, x)-cdf(b, x)))
	}
	return d
}

func TestKS(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		want float64
	}{
		{"equal", []float64{1, 2, 3}, []float64{3, 2, 1}, 0},
		// F_a jumps to 1/2 at 0 and 1 at 10; F_b to 1/2 at 1 and 1 at 10:
		// at x in [0,1) they differ by 1/2.
		{"shifted one", []float64{0, 10}, []float64{1, 10}, 0.5},
		// a = {0,0,0,1}, b = {1,1,1,1}: at 0 F_a = 3/4, F_b = 0.
		{"ties", []float64{0, 0, 0, 1}, []float64{1, 1, 1, 1}, 0.75},
		{"disjoint", []float64{1, 2}, []float64{5, 6, 7}, 1},
		{"one empty", []float64{1}, nil, 1},
		{"other empty", nil, []float64{1}, 1},
		{"both empty", nil, nil, 0},
	} {
		if got := KS(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: KS = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Against the definition, on samples with many ties.
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		a := make([]float64, rng.IntN(30))
		b := make([]float64, rng.IntN(30))
		for i := range a {
			a[i] = float64(rng.IntN(10))
		}
		for i := range b {
			b[i] = float64(rng.IntN(12))
		}
		orig := slices.Clone(a)
		if got, want := KS(a, b), ksReference(a, b); math.Abs(got-want) > 1e-12 {
			t.Fatalf("KS(%v, %v) = %v, want %v", a, b, got, want)
		}
		if !slices.Equal(a, orig) {
			t.Fatal("KS sorted its argument")
		}
	}
}

func seq(from, to float64) []float64 {
	var xs []float64
	for x := from; x <= to; x++ {
		xs = append(xs, x)
	}
	return xs
}
