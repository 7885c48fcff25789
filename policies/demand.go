package policies

import (
	"math"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Demand is a job's request in the shape placement works with, resolved
// once per job with sim's request arithmetic (sim.PerNode, sim.Units):
// either count whole nodes each giving the per-node share (Request.Nodes >
// 0), or count units spread over any nodes (Request.Nodes == 0), a unit
// being one GPU (with its share of CPUs and memory) or, for CPU-only jobs,
// one CPU (with its share of memory). A MIG Demand (mig set) counts MIG
// instances of its profile in place of GPUs: inst per unit or per node,
// gpus zero. An MPS Demand (mps set) is a node-count Demand whose every
// node gives an MPS share of one GPU (sim.NodeState.MPSPlace), gpus zero.
type Demand struct {
	part    uint64 // the job's partition as a Node.Partitions bit
	parts   uint64 // every partition the job may run in (PendingJob.Parts), part included
	gpuType string // "" = any GPU type
	spread  bool   // count units over any nodes, not count whole nodes
	Count   int32  // units (spread) or nodes
	GPUs    int32  // per unit or per node
	CPUs    int32  // per unit or per node
	MemMB   int64  // MiB per unit or per node
	MIG     workload.MIGProfile
	inst    int32 // MIG instances per unit or per node
	MPS     int32 // MPS share per node (percent of one GPU), 0 for none
}

// NewDemand resolves job's request. A request with no nodes, GPUs or CPUs
// is taken as one node, as the controller normalizes it.
func NewDemand(job *sim.PendingJob) Demand {
	r := job.Req
	d := Demand{gpuType: r.GPUType}
	if job.Part >= 0 && job.Part < hwmodels.MaxPartitions {
		d.part = 1 << uint(job.Part)
	}
	d.parts = job.Parts | d.part
	if r.MPSShare != 0 {
		d.MPS, r.GPUs = r.MPSShare, 0
		r.Nodes = max(r.Nodes, 1)
	}
	if r.Nodes <= 0 {
		if u, g, c, m := sim.Units(&r); u > 0 {
			d.spread, d.Count, d.GPUs, d.CPUs, d.MemMB = true, u, g, c, m
			return d.migShape(&r)
		}
		r.Nodes = 1
	}
	d.Count = r.Nodes
	d.GPUs, d.CPUs, d.MemMB = sim.PerNode(&r)
	return d.migShape(&r)
}

// migShape turns the GPUs of a MIG request into MIG instances.
func (d Demand) migShape(r *workload.Request) Demand {
	if r.MIGProfile != 0 {
		d.MIG, d.inst, d.GPUs = r.MIGProfile, d.GPUs, 0
	}
	return d
}

// Eligible reports whether the job may run on n at all: n is in the job's
// partition and, when the job names a GPU type, has that type (as
// sim.Eligible).
func (d *Demand) Eligible(n *hwmodels.Node) bool {
	return n.Partitions&d.part != 0 && (d.gpuType == "" || n.GPUType == d.gpuType)
}

// Fit returns what fits in f: the number of whole units for a spread
// demand (not capped at count, unlike sim.UnitsOn), or 1 when the per-node
// share fits (0 otherwise) for a node-count demand. It does not check
// eligibility.
//
// Fit is too large to inline; loops over many nodes call short first.
func (d *Demand) Fit(f sim.NodeState) int32 { return d.fitAt(&f) }

// FitAt is Fit of *f, for hot loops: Fit's copy of the state stays when
// fitAt's address reaches the call of fitUnits.
func (d *Demand) FitAt(f *sim.NodeState) int32 { return d.fitAt(f) }

// fitAt is Fit of *f, for loops that would otherwise copy each node's
// state.
func (d *Demand) fitAt(f *sim.NodeState) int32 {
	if d.Short(f) {
		return 0
	}
	if !d.spread && d.MIG == 0 && d.MPS == 0 {
		return 1
	}
	return d.fitUnits(f)
}

// plain reports whether d asks for no MIG instances and no MPS share:
// what fits a node that is not short is then 1 (node count) or
// fitUnits's whole units (spread, at least 1), and allocOn is Alloc.
func (d *Demand) plain() bool { return d.MIG == 0 && d.MPS == 0 }

// Short reports whether f lacks the GPUs, CPUs or memory of even one unit
// or share: the common case on a busy cluster, and small enough to inline.
func (d *Demand) Short(f *sim.NodeState) bool {
	return f.FreeGPUs < d.GPUs || f.FreeCPUs < d.CPUs || f.FreeMemMB < d.MemMB
}

// fitUnits is fit past the first checks: the units of a spread demand, or
// a MIG demand's share. It is kept out of fit so that fit stays small
// enough to inline.
func (d *Demand) fitUnits(f *sim.NodeState) int32 {
	if d.MIG != 0 {
		return d.fitMIG(f)
	}
	if d.MPS != 0 {
		if f.MPSFits(d.MPS) {
			return 1
		}
		return 0
	}
	n := int32(math.MaxInt32)
	if d.GPUs > 0 {
		n = min(n, f.FreeGPUs/d.GPUs)
	}
	if d.CPUs > 0 {
		n = min(n, f.FreeCPUs/d.CPUs)
	}
	if d.MemMB > 0 {
		n = int32(min(int64(n), f.FreeMemMB/d.MemMB))
	}
	return max(n, 0)
}

// fitMIG is fit for a MIG demand, whose GPUs are MIG instances of its
// profile; kept out of fit so that fit stays small enough to inline.
func (d *Demand) fitMIG(f *sim.NodeState) int32 {
	n := f.MIG.Instances(d.MIG) / d.inst
	if n == 0 || !d.spread {
		return min(n, 1)
	}
	if d.CPUs > 0 {
		n = min(n, f.FreeCPUs/d.CPUs)
	}
	if d.MemMB > 0 {
		n = int32(min(int64(n), f.FreeMemMB/d.MemMB))
	}
	return max(n, 0)
}

// Alloc returns what units units (1 for a node-count demand) take on node,
// as sim.Take does.
func (d *Demand) Alloc(node int32, units int32) sim.NodeAlloc {
	a := sim.NodeAlloc{Node: node, GPUs: units * d.GPUs, CPUs: units * d.CPUs, MemMB: int64(units) * d.MemMB}
	if d.MIG != 0 {
		a.MIG = sim.MIGInstances{Profile: d.MIG, Count: units * d.inst}
	}
	if d.MPS > 0 {
		// Over 100 never fits; capped so that it stays over 100.
		a.MPS = sim.MPSShare{GPU: sim.MPSAnyGPU, Share: int16(min(d.MPS, 127))}
	}
	return a
}

// allocOn returns what units units take on node, as alloc, with MIG
// instances on a dynamic MIG node placed on the GPUs of its free state f:
// the lowest-numbered GPUs that can take them, or, with pack, the GPUs
// sim.MIGFree.Pack chooses. An MPS share is placed on a GPU of f: the
// lowest-numbered MPS GPU with room, else a free GPU, or, with pack, the
// fullest MPS GPU with room (sim.NodeState.MPSPlace); placing it here, on
// the state the placer saw, keeps EASY's shadow bookkeeping (which
// subtracts the allocation from a later free state) from choosing another
// GPU. A placement made on the free state of now stays valid when more is
// free, as at a later shadow time: its MPS GPU then has as much room, or
// has no clients left and its GPU is free again.
func (d *Demand) allocOn(node int32, units int32, f sim.NodeState, pack bool) sim.NodeAlloc {
	a := d.Alloc(node, units)
	if a.MPS != (sim.MPSShare{}) {
		a.MPS, _ = f.MPSPlace(d.MPS, pack)
	}
	if a.MIG != (sim.MIGInstances{}) && f.MIG.Dynamic() {
		if pack {
			a.MIG, _ = f.MIG.Pack(d.MIG, a.MIG.Count)
		} else {
			_, a.MIG, _ = f.MIG.Take(a.MIG)
		}
	}
	return a
}

// eligibleAny reports whether the job may run on n in any of its
// partitions.
func (d *Demand) eligibleAny(n *hwmodels.Node) bool {
	return n.Partitions&d.parts != 0 && (d.gpuType == "" || n.GPUType == d.gpuType)
}

// harder reports whether d can fit nowhere that e cannot: same eligibility
// and shape, and at least as much of everything. Whether a demand fits by
// capacity is monotone in this order, which lets a pass remember failures.
func (d *Demand) harder(e *Demand) bool {
	return d.part == e.part && d.parts == e.parts && d.gpuType == e.gpuType && d.spread == e.spread &&
		d.Count >= e.Count && d.GPUs >= e.GPUs && d.CPUs >= e.CPUs && d.MemMB >= e.MemMB &&
		d.MIG == e.MIG && d.inst >= e.inst && d.MPS >= e.MPS
}

// capacity returns how much of d fits in free over the nodes of all its
// partitions: units for a spread demand, nodes otherwise. Any placement of
// d needs capacity >= d.count; for a job of one partition FirstFit
// succeeds exactly then (a job of several must find it in one of them).
func (d *Demand) capacity(nodes []hwmodels.Node, free []sim.NodeState) int64 {
	var c int64
	for i := range nodes {
		if d.eligibleAny(&nodes[i]) && !d.Short(&free[i]) {
			c += int64(d.Fit(free[i]))
		}
	}
	return c
}

// Take subtracts a from free. Unplaced MIG instances on a dynamic MIG
// node (PerGPU zero) and unplaced MPS shares (GPU sim.MPSAnyGPU) are
// placed and a is rewritten placed (sim.NodeState.Sub), so giving a back
// frees the same GPUs' instances and shares.
func Take(free []sim.NodeState, a []sim.NodeAlloc) {
	for i := range a {
		free[a[i].Node].Sub(&a[i])
	}
}

// EndAt returns now+limit, saturating instead of overflowing.
func EndAt(now, limit workload.Time) workload.Time {
	if limit > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + limit
}
