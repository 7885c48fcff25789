package reports

import (
	"cmp"
	"slices"

	"github.com/schedsim/schedsim/sim"
)

// nodeBusy is, for every node, the union of the runs holding it inside
// the window [from, to): sorted, disjoint, non-touching intervals, all
// nodes' in one slice. The summary (node utilization), the timeline
// (node-seconds per bin) and the energy model (idle gaps) all read it, so
// it is built once, at its exact size.
type nodeBusy struct {
	first []int32 // node n's intervals are iv[first[n]:first[n+1]]
	iv    []interval
}

func newNodeBusy(rec *sim.Record, runs *runTable, from, to sim.Time) *nodeBusy {
	nodes := len(rec.Cluster.Nodes)
	b := &nodeBusy{first: make([]int32, nodes+1)}
	var buf []runSpan
	each := func(f func(node int32, iv interval)) {
		for i := range rec.Jobs {
			buf = runs.appendRuns(buf[:0], i)
			for _, r := range buf {
				a, e := max(r.start, from), min(r.end, to)
				if e <= a {
					continue
				}
				for k := range r.alloc {
					f(r.alloc[k].Node, interval{a, e})
				}
			}
		}
	}
	each(func(n int32, _ interval) { b.first[n+1]++ })
	for n := range nodes {
		b.first[n+1] += b.first[n]
	}
	b.iv = make([]interval, b.first[nodes])
	next := slices.Clone(b.first[:nodes])
	each(func(n int32, iv interval) {
		b.iv[next[n]] = iv
		next[n]++
	})
	// Merge each node's intervals and close the gaps between nodes.
	w := int32(0)
	for n := range nodes {
		own := b.iv[b.first[n]:b.first[n+1]]
		slices.SortFunc(own, func(x, y interval) int { return cmp.Or(cmp.Compare(x.from, y.from), cmp.Compare(x.to, y.to)) })
		b.first[n] = w
		for _, iv := range own {
			if w > b.first[n] && iv.from <= b.iv[w-1].to {
				b.iv[w-1].to = max(b.iv[w-1].to, iv.to)
				continue
			}
			b.iv[w] = iv
			w++
		}
	}
	b.first[nodes] = w
	b.iv = slices.Clip(b.iv[:w])
	return b
}

// of returns node n's busy intervals.
func (b *nodeBusy) of(n int) []interval { return b.iv[b.first[n]:b.first[n+1]] }

// seconds returns the node-seconds busy, over all nodes.
func (b *nodeBusy) seconds() int64 {
	var s int64
	for _, iv := range b.iv {
		s += int64(iv.to - iv.from)
	}
	return s
}
