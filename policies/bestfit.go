package policies

import (
	"cmp"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// BestFit places a job on the eligible nodes it leaves fullest: a
// node-count job takes the Nodes nodes with the fewest free GPUs left after
// its share (then fewest free CPUs, then lowest index); a spread job first
// looks for one node that holds all its units, choosing the one left with
// the fewest free GPUs, else takes the node that holds the most units
// (lowest index on ties) and repeats for the rest. Packing jobs tightly
// keeps whole nodes free for large jobs. A job that may run in several
// partitions is tried in its Part first, then the others by index.
//
// A MIG job is placed the same way with MIG instances of its profile in
// place of GPUs (fewest takeable instances left), on each node's GPUs as
// sim.MIGFree.Pack chooses them (fullest GPU partitioned for the profile
// first, repartitioning an empty GPU last).
//
// An MPS job (a share of one GPU per node) goes first to nodes where it
// joins a GPU already in MPS use rather than taking a free GPU, then to
// those leaving the least share on its GPU, then by free GPUs and CPUs
// left; on the node it takes the fullest MPS GPU with room
// (sim.NodeState.MPSPlace, best fit).
//
// A BestFit keeps scratch buffers between calls; use one per policy.
type BestFit struct {
	cand []candidate
	// migPack ranks a MIG job's candidate nodes first by how many dynamic
	// MIG GPUs the job's instances would repartition, then by how many
	// empty GPUs they would take (MIGPacking).
	migPack bool
}

var _ Placer = (*BestFit)(nil)

// InOrder implements Placer: best fit picks nodes by how well they fit.
func (*BestFit) InOrder() bool { return false }

// candidate is a node a job fits on, with its best-fit key.
type candidate struct {
	node     int32
	units    int32 // units that fit (spread) or 1
	leftGPUs int32 // free GPUs (MIG instances of a MIG job) left after the job's share
	leftCPUs int32
	// MIGPacking: empty MIG GPUs the share would repartition, and take
	// without repartition; MPS: 1 when the share takes a free GPU, and the
	// share left on its GPU; zero otherwise.
	rep, empty int32
}

// partitionBits returns the job's partitions as Node.Partitions bits, its
// Part first, then the others by index.
func partitionBits(job *sim.PendingJob) []uint64 {
	var out []uint64
	if job.Part >= 0 && job.Part < hwmodels.MaxPartitions {
		out = append(out, 1<<uint(job.Part))
	}
	for m := job.Parts; m != 0; m &= m - 1 {
		if b := m & -m; len(out) == 0 || b != out[0] {
			out = append(out, b)
		}
	}
	return out
}

// Place implements Placer.
func (b *BestFit) Place(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	d := NewDemand(job)
	for _, part := range partitionBits(job) {
		d.part = part
		var ok bool
		if out, ok = b.place(nodes, free, &d, out, nil); ok {
			return out, true
		}
	}
	return out, false
}

// place best-fits d on the eligible nodes (restricted to within when it
// is not nil).
func (b *BestFit) place(nodes []hwmodels.Node, free []sim.NodeState, d *Demand, out []sim.NodeAlloc, within []int32) ([]sim.NodeAlloc, bool) {
	b.cand = b.cand[:0]
	add := func(i int32) {
		if !d.Eligible(&nodes[i]) { // filter: partition and GPU type
			return
		}
		n := d.Fit(free[i]) // filter: what fits the node's free resources
		if n == 0 {
			return
		}
		units := int32(1)
		if d.spread {
			units = min(n, d.Count)
		}
		c := candidate{node: i, units: units,
			leftGPUs: free[i].FreeGPUs - units*d.GPUs, leftCPUs: free[i].FreeCPUs - units*d.CPUs}
		if d.MIG != 0 {
			c.leftGPUs = free[i].MIG.Instances(d.MIG) - units*d.inst
			if b.migPack {
				c.rep, c.empty = migCost(free[i].MIG, d.MIG, units*d.inst)
			}
		}
		if d.MPS != 0 {
			c.rep, c.empty, c.leftGPUs = mpsCost(&free[i], d.MPS)
		}
		b.cand = append(b.cand, c)
	}
	if within != nil {
		for _, i := range within {
			add(i)
		}
	} else {
		for i := range nodes {
			add(int32(i))
		}
	}
	base := len(out)
	if !d.spread {
		if int32(len(b.cand)) < d.Count {
			return out, false
		}
		// score: fewest GPUs, then CPUs, left; select the first count.
		slices.SortFunc(b.cand, func(x, y candidate) int {
			return cmp.Or(cmp.Compare(x.rep, y.rep), cmp.Compare(x.empty, y.empty),
				cmp.Compare(x.leftGPUs, y.leftGPUs), cmp.Compare(x.leftCPUs, y.leftCPUs), cmp.Compare(x.node, y.node))
		})
		for _, c := range b.cand[:d.Count] {
			out = append(out, d.allocOn(c.node, 1, free[c.node], true))
		}
		slices.SortFunc(out[base:], func(x, y sim.NodeAlloc) int { return cmp.Compare(x.Node, y.Node) })
		return out, true
	}
	need := d.Count
	for need > 0 {
		best := -1
		for k := range b.cand {
			c := &b.cand[k]
			if c.units == 0 {
				continue
			}
			if best < 0 {
				best = k
				continue
			}
			bc := &b.cand[best]
			fitsAll, bestFitsAll := c.units >= need, bc.units >= need
			switch {
			case fitsAll && !bestFitsAll:
				best = k
			case fitsAll && bestFitsAll:
				// Tightest: fewest GPUs left once need units are taken
				// (MIGPacking: fewest GPUs repartitioned or emptied first).
				per := d.GPUs + d.inst
				if l, bl := c.leftGPUs+(c.units-need)*per, bc.leftGPUs+(bc.units-need)*per; c.rep < bc.rep ||
					c.rep == bc.rep && (c.empty < bc.empty || c.empty == bc.empty && (l < bl || l == bl && c.node < bc.node)) {
					best = k
				}
			case !fitsAll && !bestFitsAll:
				if c.units > bc.units || c.units == bc.units && c.node < bc.node {
					best = k
				}
			}
		}
		if best < 0 {
			return out[:base], false
		}
		c := &b.cand[best]
		n := min(c.units, need)
		out = append(out, d.allocOn(c.node, n, free[c.node], true))
		need -= n
		c.units = 0
	}
	// Allocations in node order, as the other placers give them.
	slices.SortFunc(out[base:], func(x, y sim.NodeAlloc) int { return cmp.Compare(x.Node, y.Node) })
	return out, true
}

// mpsCost ranks an MPS share on a node whose free state is f (best fit):
// rep is 1 when the share takes a free GPU (0 when it joins one in MPS
// use), left the share left on its GPU, and gpus the free GPUs left.
func mpsCost(f *sim.NodeState, share int32) (rep, left, gpus int32) {
	var used, clients int32
	if a, ok := f.MPSPlace(share, true); ok {
		used, clients = f.MPS.GPU(int(a.GPU))
	}
	gpus = f.FreeGPUs
	if clients == 0 {
		rep, gpus = 1, gpus-1
	}
	return rep, 100 - used - share, gpus
}
