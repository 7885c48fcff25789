package sim

import (
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

// These functions are the one definition of how a request maps onto nodes;
// the controller checks plans with them and placement strategies use them.
//
// A request with Nodes > 0 needs exactly Nodes distinct nodes, each giving
// ceil(total/Nodes) of every resource. A request with Nodes == 0 is split
// into units, spread over as many nodes as needed: one GPU per unit when it
// asks for GPUs (each unit carrying its share of CPUs and memory, rounded
// up), otherwise one CPU per unit (carrying its share of memory).
//
// A MIG request (Request.MIGProfile set) has the same shape with MIG
// instances of its profile in place of GPUs: GPUs counts instances, a unit
// is one instance, and a node gives them from NodeState.MIG (never from
// FreeGPUs); its NodeAlloc holds them in MIG (unplaced from Take) with
// GPUs zero.
//
// An MPS request (Request.MPSShare set, see mps.go) is a node-count
// request (the controller takes Nodes 0 as 1) whose every node gives the
// share on one GPU from NodeState.MPS and no whole GPUs; its NodeAlloc
// holds the share in MPS.

func ceilDiv32(a, b int32) int32 { return (a + b - 1) / b }
func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }

// PerNode returns what each node gives a request with Nodes > 0. It returns
// zeros for Nodes == 0.
func PerNode(req *workload.Request) (gpus, cpus int32, memMB int64) {
	if req.Nodes <= 0 {
		return 0, 0, 0
	}
	return ceilDiv32(req.GPUs, req.Nodes), ceilDiv32(req.CPUs, req.Nodes), ceilDiv64(req.MemMB, int64(req.Nodes))
}

// Units returns, for a request with Nodes == 0, how many units it needs and
// what one unit takes. It returns zero units for Nodes > 0.
func Units(req *workload.Request) (units, gpus, cpus int32, memMB int64) {
	switch {
	case req.Nodes > 0:
		return 0, 0, 0, 0
	case req.GPUs > 0:
		return req.GPUs, 1, ceilDiv32(req.CPUs, req.GPUs), ceilDiv64(req.MemMB, int64(req.GPUs))
	case req.CPUs > 0:
		return req.CPUs, 0, 1, ceilDiv64(req.MemMB, int64(req.CPUs))
	}
	return 0, 0, 0, 0
}

// UnitsOn returns how many units of a Nodes == 0 request fit in free, or,
// for Nodes > 0, 1 when the per-node share fits and 0 when it does not.
func UnitsOn(req *workload.Request, free NodeState) int32 {
	gpus := free.FreeGPUs
	if req.MIGProfile != 0 {
		gpus = free.MIG.Instances(req.MIGProfile)
	}
	if req.Nodes > 0 {
		g, c, m := PerNode(req)
		if req.MPSShare != 0 && !free.MPSFits(req.MPSShare) {
			return 0
		}
		if gpus >= g && free.FreeCPUs >= c && free.FreeMemMB >= m {
			return 1
		}
		return 0
	}
	units, g, c, m := Units(req)
	n := units
	if g > 0 {
		n = min(n, gpus/g)
	}
	if c > 0 {
		n = min(n, free.FreeCPUs/c)
	}
	if m > 0 {
		n = min(n, int32(min(free.FreeMemMB/m, int64(units))))
	}
	return max(n, 0)
}

// Take returns the allocation of n units (Nodes == 0) or of one node's share
// (Nodes > 0, n ignored) on node.
func Take(req *workload.Request, node int32, n int32) NodeAlloc {
	var a NodeAlloc
	if req.Nodes > 0 {
		g, c, m := PerNode(req)
		a = NodeAlloc{Node: node, GPUs: g, CPUs: c, MemMB: m}
	} else {
		_, g, c, m := Units(req)
		a = NodeAlloc{Node: node, GPUs: g * n, CPUs: c * n, MemMB: m * int64(n)}
	}
	if req.MIGProfile != 0 {
		a.MIG, a.GPUs = MIGInstances{Profile: req.MIGProfile, Count: a.GPUs}, 0
	}
	if req.MPSShare != 0 {
		a.MPS, a.GPUs = mpsAny(req.MPSShare), 0
	}
	return a
}

// sameShare reports whether a and b are the same share of a request: the
// same node, GPUs, CPUs and memory, the same number of MIG instances
// (placed or not) and the same MPS share (placed or not).
func sameShare(a, b NodeAlloc) bool {
	return a.Node == b.Node && a.GPUs == b.GPUs && a.CPUs == b.CPUs && a.MemMB == b.MemMB &&
		a.MIG.Count == b.MIG.Count && a.MPS.Share == b.MPS.Share
}

// Eligible reports whether node may run a job of partition part asking for
// gpuType ("" for any).
func Eligible(node *hwmodels.Node, part int32, gpuType string) bool {
	if part < 0 || part >= hwmodels.MaxPartitions || node.Partitions&(1<<uint(part)) == 0 {
		return false
	}
	return gpuType == "" || node.GPUType == gpuType
}

// Capacity returns a node's resources as a NodeState with nothing
// allocated: its whole GPUs (those not in MIG mode) and its MIG capacity
// (MIGCapacity), and its MPS state (MPSCapacity).
func Capacity(node *hwmodels.Node) NodeState {
	s := NodeState{FreeGPUs: node.GPUs, FreeCPUs: node.CPUs, FreeMemMB: node.MemMB}
	if node.MIG != nil {
		s.FreeGPUs -= min(max(node.MIG.GPUs, 0), node.GPUs)
		s.MIG = MIGCapacity(node)
	}
	if node.MPS != nil {
		s.MPS = MPSCapacity(node)
	}
	return s
}

// Needed returns how many "fit units" a request needs: Nodes for Nodes > 0,
// else its unit count. UnitsOn counts against it.
func Needed(req *workload.Request) int32 {
	if req.Nodes > 0 {
		return req.Nodes
	}
	u, _, _, _ := Units(req)
	return u
}
