package policies

import (
	"cmp"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// TopologyTree places a job as Slurm's topology/tree plugin does
// (eval_nodes_tree.c, slurm-gpu-facts.md §5.4), on the fabric the cluster
// spec describes (hwmodels.Node.Switches):
//
//  1. filter: the eligible nodes the job's share fits on;
//  2. the top switch: the lowest-level switch whose subtree holds enough
//     of them, the tightest such (least spare capacity), lowest index on
//     ties; no such switch (the nodes share no ancestor) means no fit, as
//     Slurm never spans switches without a common ancestor;
//  3. leaves under it, one at a time: a leaf that alone holds the rest of
//     the job, the tightest such; else the leaf holding the most; nodes
//     inside a leaf best-fit (fewest free GPUs left).
//
// The job so uses the fewest leaf switches and the lowest common switch
// Slurm's greedy finds. Simplifications: Slurm's tie-break on summed switch
// distance and its node Weight ordering are not modeled.
//
// MaxLeaves > 0 is Slurm's --switches=N for every job: a placement over
// more leaves is refused, so the job waits. Slurm's @max-wait part (give
// up the limit after max-wait, default and cap max_switch_wait = 300 s)
// needs the job's eligible time and the clock, which a Placer does not
// see; until the request carries it the limit is strict.
//
// Nodes without a switch (no fabric, or not in topology.conf) are islands
// of one node; on a cluster without any fabric TopologyTree is BestFit.
//
// A TopologyTree keeps scratch buffers between calls; use one per policy.
type TopologyTree struct {
	MaxLeaves int32
	best      BestFit
	capOf     []int64 // per switch: capacity below it
	levelOf   []int32
	units     []int32 // per node: what fits (0: not a candidate)
	leafCap   []int64
	picked    []int32
}

var _ Placer = (*TopologyTree)(nil)

// InOrder implements Placer: it picks nodes by switch.
func (*TopologyTree) InOrder() bool { return false }

// Place implements Placer.
func (t *TopologyTree) Place(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	return placeEachPartition(nodes, free, job, out, t.place)
}

func (t *TopologyTree) place(nodes []hwmodels.Node, free []sim.NodeState, d *demand, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	// Switch count and levels from the nodes' chains.
	nsw := 0
	for i := range nodes {
		for _, s := range nodes[i].Switches {
			nsw = max(nsw, int(s)+1)
		}
	}
	if nsw == 0 {
		return t.best.place(nodes, free, d, out, nil)
	}
	// Unattached nodes are islands: pseudo-switches nsw + node index.
	total := nsw + len(nodes)
	t.capOf = resize(t.capOf, total)
	t.levelOf = resize(t.levelOf, total)
	t.units = resize(t.units, len(nodes))
	for i := range nodes {
		n := int32(0)
		if d.eligible(&nodes[i]) {
			if n = d.fit(free[i]); !d.spread && n > 0 {
				n = 1
			}
		}
		t.units[i] = n
		chain := nodes[i].Switches
		if len(chain) == 0 {
			t.capOf[nsw+i] += int64(n)
			continue
		}
		for k, s := range chain {
			t.capOf[s] += int64(n)
			t.levelOf[s] = max(t.levelOf[s], int32(k))
		}
	}
	need := int64(d.count)
	top := -1
	for s := 0; s < total; s++ {
		if t.capOf[s] < need {
			continue
		}
		if top < 0 || t.levelOf[s] < t.levelOf[top] || t.levelOf[s] == t.levelOf[top] && t.capOf[s] < t.capOf[top] {
			top = s
		}
	}
	if top < 0 {
		return out, false
	}
	// Leaves below top and their capacities.
	leafOf := func(i int) int {
		if len(nodes[i].Switches) == 0 {
			return nsw + i
		}
		return int(nodes[i].Switches[0])
	}
	under := func(i int) bool {
		if top >= nsw {
			return i == top-nsw
		}
		return slices.Contains(nodes[i].Switches, int32(top))
	}
	t.leafCap = resize(t.leafCap, total)
	for i := range nodes {
		if t.units[i] > 0 && under(i) {
			t.leafCap[leafOf(i)] += int64(t.units[i])
		}
	}
	base := len(out)
	rest := d.count
	leaves := int32(0)
	for rest > 0 {
		pick := -1
		for s := 0; s < total; s++ {
			c := t.leafCap[s]
			if c == 0 {
				continue
			}
			if pick < 0 {
				pick = s
				continue
			}
			pc := t.leafCap[pick]
			switch alone, pAlone := c >= int64(rest), pc >= int64(rest); {
			case alone && !pAlone:
				pick = s
			case alone && pAlone && c < pc: // tightest
				pick = s
			case !alone && !pAlone && c > pc: // most
				pick = s
			}
		}
		if pick < 0 {
			return out[:base], false
		}
		if leaves++; t.MaxLeaves > 0 && leaves > t.MaxLeaves {
			return out[:base], false
		}
		t.leafCap[pick] = 0
		// Nodes of the leaf, best fit.
		t.picked = t.picked[:0]
		for i := range nodes {
			if t.units[i] > 0 && leafOf(i) == pick && under(i) {
				t.picked = append(t.picked, int32(i))
			}
		}
		sub := *d
		sub.count = rest
		if !d.spread {
			sub.count = min(rest, int32(len(t.picked)))
		} else {
			var c int32
			for _, i := range t.picked {
				c += t.units[i]
			}
			sub.count = min(rest, c)
		}
		var ok bool
		if out, ok = t.best.place(nodes, free, &sub, out, t.picked); !ok {
			return out[:base], false
		}
		rest -= sub.count
	}
	slices.SortFunc(out[base:], func(x, y sim.NodeAlloc) int { return cmp.Compare(x.Node, y.Node) })
	return out, true
}

// resize returns s with length n, zeroed.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// TopologyBlock places a job as Slurm's topology/block plugin does
// (src/plugins/topology/block/eval_nodes_block.c, eval_nodes_block and
// _choose_best_bblock; topology/block is Slurm 23.11 and later, so the
// 22.05 source has none) on the cluster's multi-node NVLink domains
// (fabric.blocks, hwmodels.Node.Block):
//
//  1. filter: the eligible nodes in a block the job's share fits on
//     (Slurm considers only nodes in blocks);
//  2. one block: of the blocks that alone hold the job, the one with
//     the fewest usable nodes (Slurm's "lowest sufficient count of nodes
//     to minimize fragmentation"; on equal counts the later block, as its
//     bnc <= block_node_cnt test keeps the last);
//  3. else base blocks one at a time, minimizing their number
//     (_choose_best_bblock): a block that alone holds the rest, the
//     smallest such; else the one holding most (later on ties); nodes
//     inside a block best-fit.
//
// Simplifications: BlockSizes aggregation levels (blocks of 2^k base
// blocks) are not modeled, so a job larger than a block takes base blocks
// across the whole topology, as Slurm does when no configured level holds
// it; node weights are not modeled. On a cluster without blocks it is
// BestFit.
//
// A TopologyBlock keeps scratch buffers between calls; use one per policy.
type TopologyBlock struct {
	best   BestFit
	units  []int32
	cap    []int64
	picked []int32
}

var _ Placer = (*TopologyBlock)(nil)

// InOrder implements Placer: it picks nodes by block, not in node order.
func (*TopologyBlock) InOrder() bool { return false }

// Place implements Placer.
func (t *TopologyBlock) Place(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	return placeEachPartition(nodes, free, job, out, t.place)
}

func (t *TopologyBlock) place(nodes []hwmodels.Node, free []sim.NodeState, d *demand, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	nb := int32(0)
	for i := range nodes {
		nb = max(nb, nodes[i].Block)
	}
	if nb == 0 {
		return t.best.place(nodes, free, d, out, nil)
	}
	t.units = resize(t.units, len(nodes))
	t.cap = resize(t.cap, int(nb)+1)
	for i := range nodes {
		n := int32(0)
		if nodes[i].Block > 0 && d.eligible(&nodes[i]) {
			if n = d.fit(free[i]); !d.spread && n > 0 {
				n = 1
			}
		}
		t.units[i] = n
		t.cap[nodes[i].Block] += int64(n)
	}
	need := int64(d.count)
	one := int32(-1)
	for b := int32(1); b <= nb; b++ {
		if t.cap[b] >= need && (one < 0 || t.cap[b] <= t.cap[one]) {
			one = b
		}
	}
	base := len(out)
	rest := d.count
	for rest > 0 {
		pick := one
		if pick < 0 {
			for b := int32(1); b <= nb; b++ {
				c := t.cap[b]
				if c == 0 {
					continue
				}
				if pick < 0 {
					pick = b
					continue
				}
				pc := t.cap[pick]
				switch fit, pFit := c >= int64(rest), pc >= int64(rest); {
				case fit && !pFit, fit && pFit && c <= pc, !fit && !pFit && c >= pc:
					pick = b
				}
			}
		}
		if pick < 0 {
			return out[:base], false
		}
		one = -1
		t.cap[pick] = 0
		t.picked = t.picked[:0]
		var c int32
		for i := range nodes {
			if t.units[i] > 0 && nodes[i].Block == pick {
				t.picked = append(t.picked, int32(i))
				c += t.units[i]
			}
		}
		sub := *d
		sub.count = min(rest, c)
		var ok bool
		if out, ok = t.best.place(nodes, free, &sub, out, t.picked); !ok {
			return out[:base], false
		}
		rest -= sub.count
	}
	slices.SortFunc(out[base:], func(x, y sim.NodeAlloc) int { return cmp.Compare(x.Node, y.Node) })
	return out, true
}

// placeEachPartition tries place in each of the job's partitions in turn
// and returns the first placement found.
func placeEachPartition(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc,
	place func([]hwmodels.Node, []sim.NodeState, *demand, []sim.NodeAlloc) ([]sim.NodeAlloc, bool)) ([]sim.NodeAlloc, bool) {
	d := newDemand(job)
	for _, part := range partitionBits(job) {
		d.part = part
		var ok bool
		if out, ok = place(nodes, free, &d, out); ok {
			return out, true
		}
	}
	return out, false
}
