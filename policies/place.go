package policies

import (
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// Placer chooses the nodes a job would start on, given every node's free
// resources.
//
// Place appends the job's whole allocation to out and returns it with true,
// or returns out unchanged (same length) and false when the job does not
// fit. It is all-or-nothing: nothing is committed, free is not modified,
// and the caller either commits the staged allocation (subtracting it from
// its own free state) or discards it by truncating out. nodes and free are
// indexed alike (cluster order); Place must not retain them. Every returned
// NodeAlloc names a distinct node eligible for the job (in its partition,
// of its GPU type when it names one) and fits that node's free resources;
// together they satisfy the request (see workload.Request and the sim
// controller's rules). The same arguments give the same result.
//
// InOrder reports whether Place places as FirstFit does: it takes the
// eligible nodes in cluster order, from each as much of the request as it
// holds, and so succeeds exactly when their free capacity holds the
// request. What reasons from capacity alone relies on it: a pass's memory
// of refused requests, Conservative's kept schedule, and the slurm
// policy's switch to the topology tree that a cluster's TopologyPlugin
// asks for (a placer that is not in order stays).
type Placer interface {
	Place(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool)
	InOrder() bool
}

// FirstFit places a job on the lowest-numbered eligible nodes that fit, in
// cluster order, like Slurm's default linear selection (select/cons_tres
// without topology): a node-count job takes the first Nodes nodes whose
// free resources hold the per-node share; a spread job takes as many whole
// units as each node in turn holds until it has all of them. A job that
// may run in several partitions (sbatch -p a,b; PendingJob.Parts) is tried
// in its Part first, then in the others by index, and placed in the first
// that holds it whole.
type FirstFit struct{}

var _ Placer = FirstFit{}

// InOrder implements Placer: it is the order.
func (FirstFit) InOrder() bool { return true }

// Place implements Placer.
func (FirstFit) Place(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	d := NewDemand(job)
	out, ok := firstFit(nodes, free, &d, out)
	for m := d.parts &^ d.part; !ok && m != 0; m &= m - 1 {
		d.part = m & -m // the next partition, lowest index first
		out, ok = firstFit(nodes, free, &d, out)
	}
	return out, ok
}

// firstFit places d in its partition d.part, as FirstFit describes.
func firstFit(nodes []hwmodels.Node, free []sim.NodeState, d *Demand, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	base := len(out)
	need := d.Count
	plain := d.plain()
	for i := range nodes {
		f := &free[i]
		if d.Short(f) { // filter: not even one unit (inlined; the usual case, and free is denser than nodes)
			continue
		}
		if !d.Eligible(&nodes[i]) { // filter: partition and GPU type
			continue
		}
		if plain { // what Fit and allocOn come to without MIG or MPS
			n := int32(1)
			if d.spread {
				n = min(d.fitUnits(f), need)
			}
			out = append(out, sim.NodeAlloc{Node: int32(i), GPUs: n * d.GPUs, CPUs: n * d.CPUs, MemMB: int64(n) * d.MemMB})
			if need -= n; need == 0 {
				return out, true
			}
			continue
		}
		n := min(d.Fit(*f), need) // filter: what fits the node's free resources
		if n == 0 {
			continue
		}
		out = append(out, d.allocOn(int32(i), n, *f, false)) // select: lowest-numbered node first
		if need -= n; need == 0 {
			return out, true // commit is the caller's
		}
	}
	return out[:base], false // discard the staged nodes
}
