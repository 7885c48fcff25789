package policies

import (
	"math/bits"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// maxIndexGPUs caps the levels of a freeIndex; a demand of more GPUs per
// node or unit uses the top level, a superset of the nodes it fits.
const maxIndexGPUs = 16

// freeIndex buckets nodes by free whole GPUs, so that a first-fit
// placement visits only nodes with enough of them instead of every node:
// level k (1 to top) is a bitmap of the nodes with at least k free GPUs.
// On a cluster without GPUs it buckets them by free CPUs instead (cpus
// set), so that CPU-only jobs on many small nodes (an SWF log's one-CPU
// nodes) skip the busy nodes too.
type freeIndex struct {
	top   int32
	cpus  bool     // keyed by free CPUs, not GPUs
	words int      // per level
	bits  []uint64 // level k at [(k-1)*words, k*words)
	// total is the free GPUs (CPUs) of all nodes, each counted up to top;
	// over is set when a node has more than top.
	total int64
	over  bool
}

// reset sizes x for nodes and fills it from free.
func (x *freeIndex) reset(nodes []hwmodels.Node, free []sim.NodeState) {
	x.top = 0
	for i := range nodes {
		x.top = max(x.top, nodes[i].GPUs)
	}
	x.cpus = x.top == 0
	if x.cpus {
		for i := range nodes {
			x.top = max(x.top, nodes[i].CPUs)
		}
	}
	x.over = x.top > maxIndexGPUs
	x.top = min(x.top, maxIndexGPUs)
	x.total = 0
	x.words = (len(nodes) + 63) / 64
	if n := int(x.top) * x.words; cap(x.bits) < n {
		x.bits = make([]uint64, n)
	} else {
		x.bits = x.bits[:n]
		clear(x.bits)
	}
	for i := range free {
		x.update(int32(i), 0, x.key(&free[i]))
	}
}

// key returns what x buckets f by: its free GPUs, or its free CPUs.
func (x *freeIndex) key(f *sim.NodeState) int32 {
	if x.cpus {
		return f.FreeCPUs
	}
	return f.FreeGPUs
}

// per returns what x buckets d by per unit or node; x serves d when it is
// above 0.
func (x *freeIndex) per(d *Demand) int32 {
	if x.cpus {
		return d.CPUs
	}
	return d.GPUs
}

// update moves node n from old to now free GPUs.
func (x *freeIndex) update(n, old, now int32) {
	old, now = min(max(old, 0), x.top), min(max(now, 0), x.top)
	x.total += int64(now - old)
	w, b := int(n>>6), uint64(1)<<(n&63)
	for k := int(now); k < int(old); k++ {
		x.bits[k*x.words+w] &^= b
	}
	for k := int(old); k < int(now); k++ {
		x.bits[k*x.words+w] |= b
	}
}

// candidates returns the bitmap of the nodes that may have k (> 0) free
// GPUs (CPUs), a superset of those that do; nil when no node has any.
func (x *freeIndex) candidates(k32 int32) []uint64 {
	if x.top == 0 {
		return nil
	}
	k := int(min(k32, x.top))
	return x.bits[(k-1)*x.words : k*x.words]
}

// lacks reports whether d (per(d) > 0) surely fits nowhere: fewer nodes
// in cand than it needs nodes, or, spread, fewer free GPUs (CPUs) in all
// than it needs. A blocked head is retried every pass; this spares the
// scan.
func (x *freeIndex) lacks(d *Demand, cand []uint64) bool {
	if d.spread {
		return !x.over && x.total < int64(d.Count)*int64(x.per(d))
	}
	n := 0
	for _, w := range cand {
		if n += bits.OnesCount64(w); n >= int(d.Count) {
			return false
		}
	}
	return true
}

// firstFitOn is firstFit visiting only the nodes set in cand (in cluster
// order), which must include every node with a unit of d free.
func firstFitOn(nodes []hwmodels.Node, free []sim.NodeState, cand []uint64, d *Demand, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	base := len(out)
	need := d.Count
	plain := d.plain()
	// Units of CPUs alone (an SWF log's jobs): a node that is not short
	// holds FreeCPUs / CPUs of them, which is what fitUnits computes then.
	cpuUnits := plain && d.spread && d.GPUs == 0 && d.MemMB == 0 && d.CPUs > 0
	for w, m := range cand {
		for ; m != 0; m &= m - 1 {
			i := w<<6 | bits.TrailingZeros64(m)
			if d.Short(&free[i]) || !d.Eligible(&nodes[i]) {
				continue
			}
			if plain { // as in firstFit
				n := int32(1)
				switch {
				case cpuUnits && d.CPUs == 1:
					n = min(free[i].FreeCPUs, need)
				case cpuUnits:
					n = min(free[i].FreeCPUs/d.CPUs, need)
				case d.spread:
					n = min(d.fitUnits(&free[i]), need)
				}
				out = append(out, sim.NodeAlloc{Node: int32(i), GPUs: n * d.GPUs, CPUs: n * d.CPUs, MemMB: int64(n) * d.MemMB})
				if need -= n; need == 0 {
					return out, true
				}
				continue
			}
			n := min(d.Fit(free[i]), need)
			if n == 0 {
				continue
			}
			out = append(out, d.allocOn(int32(i), n, free[i], false))
			if need -= n; need == 0 {
				return out, true
			}
		}
	}
	return out[:base], false
}
