package workload

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// This file holds the project's statistics of samples: one quantile
// definition and the two-sample Kolmogorov–Smirnov distance. workload
// is the lowest package that every user (traces' inspect figures, the
// workload model fits, reports, the conformance comparison) may import.

// Quantile returns the q-quantile (0 <= q <= 1; outside, the nearer end)
// of sorted (ascending) by linear interpolation between order statistics,
// Hyndman and Fan's type 7 (R's default, NumPy's "linear"), the project's
// one definition:
//
//	h = (n−1)·q,  Q(q) = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])
//
// with x 0-indexed. q is taken as the shortest decimal that prints as it
// (0.95 is 95/100, not the binary 0.94999999999999996), so h and its
// fraction are exact: the 0.95-quantile of 21 values is the 20th, not an
// interpolation from the 19th, and the only rounding is in the last
// step, x[⌊h⌋] + (x[⌊h⌋+1] − x[⌊h⌋])·r/10^k. It returns 0 for no values
// and NaN for a NaN q.
func Quantile(sorted []float64, q float64) float64 {
	return QuantileFunc(int64(len(sorted)), q, func(i int64) float64 { return sorted[i] })
}

// QuantileFunc is Quantile of n values whose i-th smallest (0-based) x
// returns, for samples not held as a sorted []float64 (integers, counts
// per value).
func QuantileFunc(n int64, q float64, x func(i int64) float64) float64 {
	switch {
	case n <= 0:
		return 0
	case q != q:
		return math.NaN()
	}
	lo, num, den := position(n-1, min(max(q, 0), 1))
	if lo >= n-1 {
		return x(n - 1)
	}
	a := x(lo)
	if num == 0 {
		return a
	}
	return a + (x(lo+1)-a)*float64(num)/float64(den)
}

// position returns ⌊m·q⌋ and m·q − ⌊m·q⌋ as num/den, exactly, with q in
// [0, 1] read as its shortest decimal of at most 18 places (in binary
// otherwise).
func position(m int64, q float64) (lo int64, num, den uint64) {
	whole, frac, _ := strings.Cut(strconv.FormatFloat(q, 'f', -1, 64), ".")
	if len(frac) <= 18 {
		d, err := strconv.ParseUint(whole+frac, 10, 64) // q·10^k
		if err == nil {
			den = 1
			for range len(frac) {
				den *= 10
			}
			// m·q·10^k < 2^64·10^k: the quotient fits.
			hi, low := bits.Mul64(uint64(m), d)
			quo, rem := bits.Div64(hi, low, den)
			return int64(quo), rem, den
		}
	}
	h := float64(m) * q
	f := math.Floor(h)
	return int64(f), uint64((h - f) * (1 << 53)), 1 << 53
}

// KS returns the two-sample Kolmogorov–Smirnov statistic of a and b: the
// largest distance between their empirical distribution functions
// (gonum's stat.KolmogorovSmirnov); 0 when both are empty, 1 when only
// one is. a and b need not be sorted and are not changed.
func KS(a, b []float64) float64 {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return stat.KolmogorovSmirnov(a, nil, b, nil)
}
