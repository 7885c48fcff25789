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
}

// busySpan is an interval as offsets from nodeBusy.from.
type busySpan struct{ from, to uint32 }

func newNodeBusy(rec *sim.Record, runs *runTable, from, to sim.Time) *nodeBusy {
	nodes := len(rec.Cluster.Nodes)
	b := &nodeBusy{from: from, first: make([]int, nodes+1)}
	var buf []runSpan
	each := func(f func(node int32, iv interval)) {
		for i := range rec.Jobs {
			buf = runs.appendRuns(buf[:0], i)
			for _, r := range buf {
				a, e := max(r.start, from), min(r.end, to)
				if e <= a {
					continue
				}
				for _, x := range r.alloc.All() {
					f(x.Node, interval{a, e})
				}
			}
		}
	}
	each(func(n int32, _ interval) { b.first[n+1]++ })
	for n := range nodes {
		b.first[n+1] += b.first[n]
	}
	total := b.first[nodes]
	next := slices.Clone(b.first[:nodes])
	if to > from && int64(to-from) > math.MaxUint32 {
		b.wide = make([]interval, total)
		each(func(n int32, iv interval) {
			b.wide[next[n]] = iv
			next[n]++
		})
		w := merge(b.first, b.wide, func(iv interval) (sim.Time, sim.Time) { return iv.from, iv.to },
			func(iv *interval, to sim.Time) { iv.to = to })
		b.wide = slices.Clip(b.wide[:w])
		return b
	}
	b.iv = make([]busySpan, total)
	each(func(n int32, iv interval) {
		b.iv[next[n]] = busySpan{uint32(iv.from - from), uint32(iv.to - from)}
		next[n]++
	})
	w := merge(b.first, b.iv, func(iv busySpan) (uint32, uint32) { return iv.from, iv.to },
		func(iv *busySpan, to uint32) { iv.to = to })
	b.iv = slices.Clip(b.iv[:w])
	return b
}

// merge sorts and merges each node's intervals in place, closes the gaps
// between nodes, updates first and returns the number kept.
func merge[T any, V cmp.Ordered](first []int, ivs []T, span func(T) (V, V), setTo func(*T, V)) int {
	nodes := len(first) - 1
	w := 0
	for n := range nodes {
		own := ivs[first[n]:first[n+1]]
		slices.SortFunc(own, func(x, y T) int {
			xf, xt := span(x)
			yf, yt := span(y)
			return cmp.Or(cmp.Compare(xf, yf), cmp.Compare(xt, yt))
		})
		first[n] = w
		for _, iv := range own {
			f, t := span(iv)
			if w > first[n] {
				if _, lt := span(ivs[w-1]); f <= lt {
					setTo(&ivs[w-1], max(lt, t))
					continue
				}
			}
			ivs[w] = iv
			w++
		}
	}
	first[nodes] = w
	return w
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
func (b *nodeBusy) seconds() int64 {
	var s int64
	for _, iv := range b.iv {
		s += int64(iv.to - iv.from)
	}
	for _, iv := range b.wide {
		s += int64(iv.to - iv.from)
	}
	return s
}
