package reports

import (
	"cmp"
	"math"
	"slices"

	"github.com/schedsim/schedsim/sim"
)

// nodeBusy is, for every node, the union of the runs holding it inside
// the window [from, to): sorted, disjoint, non-touching intervals, all
// nodes' in one slice. The summary (node utilization), the timeline
// (node-seconds per bin) and the energy model (idle gaps) all read it, so
// it is built once, at its exact size. A year of a large cluster has
// millions of intervals, so they are kept as 32-bit offsets from the
// window's start when the window is shorter than 2³² s (136 years), as it
// always is in practice; wide holds them otherwise.
type nodeBusy struct {
	from  sim.Time
	first []int // node n's intervals are iv[first[n]:first[n+1]] (or wide's)
	iv    []busySpan
	wide  []interval
	secs  int64 // node-seconds busy, over all nodes
}

// busySpan is an interval as offsets from nodeBusy.from.
type busySpan struct{ from, to uint32 }

// newNodeBusy finds the nodes' busy intervals in [from, to), or with
// intervals false only their total (seconds): of must not be called on
// the latter.
func newNodeBusy(rec *sim.Record, runs *runTable, from, to sim.Time, intervals bool) *nodeBusy {
	nodes := len(rec.Cluster.Nodes)
	b := &nodeBusy{from: from, first: make([]int, nodes+1)}
	// The runs inside the window, by start: visited in that order, each
	// node's runs merge into its union as they come, with no sort per
	// node (sorting each node's intervals was most of the analysis of a
	// run on many small nodes).
	type clipped struct {
		iv    interval
		alloc sim.Allocs
	}
	inside := make([]clipped, 0, len(rec.Jobs)+len(rec.Runs)) // every run at most once
	var buf []runSpan
	for i := range rec.Jobs {
		buf = runs.appendRuns(buf[:0], i)
		for _, r := range buf {
			if a, e := max(r.start, from), min(r.end, to); e > a {
				inside = append(inside, clipped{interval{a, e}, r.alloc})
			}
		}
	}
	sortByFrom(inside, func(c *clipped) sim.Time { return c.iv.from }, from, to)
	// union calls emit with each node's busy intervals, each node's in
	// order: an interval that starts at or before the end of the node's
	// open one extends it, any other closes it.
	cur := make([]interval, nodes)
	open := make([]bool, nodes)
	union := func(emit func(n int32, iv interval)) {
		clear(open)
		for k := range inside {
			c := &inside[k]
			for x, cnt := range c.alloc.Spans() {
				for n := x.Node; n < x.Node+int32(cnt); n++ {
					if open[n] && c.iv.from <= cur[n].to {
						cur[n].to = max(cur[n].to, c.iv.to)
						continue
					}
					if open[n] {
						emit(n, cur[n])
					}
					cur[n], open[n] = c.iv, true
				}
			}
		}
		for n := range nodes {
			if open[n] {
				emit(int32(n), cur[n])
			}
		}
	}
	union(func(n int32, iv interval) {
		b.first[n+1]++
		b.secs += int64(iv.to - iv.from)
	})
	if !intervals {
		return b
	}
	for n := range nodes {
		b.first[n+1] += b.first[n]
	}
	total := b.first[nodes]
	next := slices.Clone(b.first[:nodes])
	if to > from && int64(to-from) > math.MaxUint32 {
		b.wide = make([]interval, total)
		union(func(n int32, iv interval) {
			b.wide[next[n]] = iv
			next[n]++
		})
		return b
	}
	b.iv = make([]busySpan, total)
	union(func(n int32, iv interval) {
		b.iv[next[n]] = busySpan{uint32(iv.from - from), uint32(iv.to - from)}
		next[n]++
	})
	return b
}

// radixSortMax bounds the slices sortByFrom sorts by radix: its keys and
// the radix sort's buffer take 16 bytes an element for the sort, which
// a year of a large cluster (millions of runs) is spared.
const radixSortMax = 1 << 18

// sortByFrom sorts xs by from(x), which lies in [lo, hi]: by a radix
// sort of (from − lo, index) keys when they fit (from − lo below 2³¹,
// at most radixSortMax elements), else by slices.SortFunc. Elements of
// equal from may come in any order (the union of a node's intervals is
// the same for each).
func sortByFrom[T any](xs []T, from func(*T) sim.Time, lo, hi sim.Time) {
	if len(xs) < radixMin || len(xs) > radixSortMax || hi < lo || int64(hi-lo) >= 1<<31 {
		slices.SortFunc(xs, func(x, y T) int { return cmp.Compare(from(&x), from(&y)) })
		return
	}
	keys := make([]int64, len(xs))
	for i := range xs {
		keys[i] = int64(from(&xs[i])-lo)<<32 | int64(i)
	}
	sortInt64s(keys)
	// Place xs[uint32(keys[i])] at i, cycle by cycle; a placed slot's
	// key becomes -1.
	for i := range keys {
		if keys[i] < 0 {
			continue
		}
		tmp := xs[i]
		for j := i; ; {
			k := int(uint32(keys[j]))
			keys[j] = -1
			if k == i {
				xs[j] = tmp
				break
			}
			xs[j] = xs[k]
			j = k
		}
	}
}

// of appends node n's busy intervals to dst.
func (b *nodeBusy) of(dst []interval, n int) []interval {
	lo, hi := b.first[n], b.first[n+1]
	if b.wide != nil {
		return append(dst, b.wide[lo:hi]...)
	}
	for _, s := range b.iv[lo:hi] {
		dst = append(dst, interval{b.from + sim.Time(s.from), b.from + sim.Time(s.to)})
	}
	return dst
}

// seconds returns the node-seconds busy, over all nodes.
func (b *nodeBusy) seconds() int64 { return b.secs }
