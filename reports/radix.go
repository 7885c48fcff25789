package reports

import (
	"slices"
	"sync"
)

// radixMin is the length from which sortInt64s sorts by radix: below it
// slices.Sort is as fast.
const radixMin = 512

// sortInt64s sorts xs ascending, as slices.Sort does (the sorted order of
// integers is unique, so the result is the same): a least-significant-
// digit radix sort by bytes for long slices, skipping the bytes every
// value shares (waits in seconds use three or four of the eight). A
// summary sorts its 20,000 waits several times (all jobs, each partition,
// each grouping), where pdqsort took most of statsOf.
func sortInt64s(xs []int64) {
	n := len(xs)
	if n < radixMin {
		slices.Sort(xs)
		return
	}
	var counts [8][256]int
	for _, x := range xs {
		u := uint64(x) ^ 1<<63 // signed order as unsigned
		for d := range 8 {
			counts[d][byte(u>>(8*d))]++
		}
	}
	bp := radixScratch.Get().(*[]int64)
	if cap(*bp) < n {
		*bp = make([]int64, n)
	}
	src, dst := xs, (*bp)[:n]
	for d := range 8 {
		c := &counts[d]
		if c[byte((uint64(src[0])^1<<63)>>(8*d))] == n {
			continue // every value has this byte
		}
		off := 0
		for b := range c {
			c[b], off = off, off+c[b]
		}
		for _, x := range src {
			b := byte((uint64(x) ^ 1<<63) >> (8 * d))
			dst[c[b]] = x
			c[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &xs[0] {
		copy(xs, src)
	}
	radixScratch.Put(bp)
}

// radixScratch holds sortInt64s's buffers for the next sort (a summary
// sorts several lists of about the same length).
var radixScratch = sync.Pool{New: func() any { return new([]int64) }}
