package policytest

import (
	"fmt"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// View is a fake sim.View built by hand. Free may be nil, in which case
// Nodes derives it from the cluster's capacity minus Running's allocations.
type View struct {
	T     sim.Time
	Queue []sim.PendingJob // in priority (submit) order
	Run   []sim.RunningJob // by Ref
	Free  []sim.NodeState  // indexed like C.Nodes; nil = derived
	C     *hwmodels.Cluster
	// Jobs backs Job; nil makes Job return a job with only its ID set.
	Jobs []workload.Job
	// Resv backs Reservations.
	Resv []sim.AdvanceReservation
	// Started and Ended back Delta's lists of the jobs that started and
	// ended since the previous pass.
	Started, Ended []sim.JobRef
	changed        []int32
}

var _ sim.View = (*View)(nil)

// Now implements sim.View.
func (v *View) Now() sim.Time { return v.T }

// Pending implements sim.View.
func (v *View) Pending() []sim.PendingJob { return v.Queue }

// Running implements sim.View.
func (v *View) Running() []sim.RunningJob { return v.Run }

// Reservations implements sim.View.
func (v *View) Reservations() []sim.AdvanceReservation { return v.Resv }

// Cluster implements sim.View.
func (v *View) Cluster() *hwmodels.Cluster { return v.C }

// Nodes implements sim.View. It panics if Running oversubscribes a node.
func (v *View) Nodes() []sim.NodeState {
	if v.Free == nil {
		v.Free = FreeAfter(v.C, v.Run)
	}
	return v.Free
}

// Delta implements sim.View: every node may have changed (a hand-made
// view has no previous pass), and the jobs started and ended are Started
// and Ended.
func (v *View) Delta() sim.Delta {
	if len(v.changed) != len(v.C.Nodes) {
		v.changed = v.changed[:0]
		for n := range v.C.Nodes {
			v.changed = append(v.changed, int32(n))
		}
	}
	return sim.Delta{Nodes: v.changed, Started: v.Started, Ended: v.Ended}
}

// Job implements sim.View, without the runtime (workload.Unknown).
func (v *View) Job(ref sim.JobRef) sim.JobInfo {
	j := workload.NewJob(fmt.Sprint(ref))
	if v.Jobs != nil {
		j = v.Jobs[ref]
	}
	return sim.JobInfo{ID: j.ID, Name: j.Name, User: j.User, Account: j.Account, QOS: j.QOS, Partition: j.Partition,
		ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID, TimeLimit: j.TimeLimit, Submit: j.Submit, Runtime: workload.Unknown}
}

// FreeAfter returns every node's capacity less what running holds. It
// panics if a node would go negative.
func FreeAfter(c *hwmodels.Cluster, running []sim.RunningJob) []sim.NodeState {
	free := make([]sim.NodeState, len(c.Nodes))
	for i := range c.Nodes {
		free[i] = sim.Capacity(&c.Nodes[i])
	}
	for _, r := range running {
		for _, a := range r.Alloc {
			f := &free[a.Node]
			f.FreeGPUs -= a.GPUs
			f.FreeCPUs -= a.CPUs
			f.FreeMemMB -= a.MemMB
			if f.FreeGPUs < 0 || f.FreeCPUs < 0 || f.FreeMemMB < 0 {
				panic(fmt.Sprintf("policytest: running job %d oversubscribes node %d", r.Ref, a.Node))
			}
		}
	}
	return free
}

// Node returns a node called name with gpus GPUs of type gpuType, cpus
// CPUs and memMB MiB, in the partitions whose bits are set in parts.
func Node(name string, gpus int32, gpuType string, cpus int32, memMB int64, parts uint64) hwmodels.Node {
	return hwmodels.Node{Name: name, GPUs: gpus, GPUType: gpuType, GPUModel: gpuType, CPUs: cpus, MemMB: memMB, Partitions: parts}
}

// Cluster returns a cluster of nodes with the named partitions (at least
// one; the first is the default), filling each partition's node list from
// the nodes' partition bits.
func Cluster(nodes []hwmodels.Node, parts ...string) *hwmodels.Cluster {
	if len(parts) == 0 {
		parts = []string{"main"}
	}
	c := &hwmodels.Cluster{Name: "test", Nodes: nodes}
	for p, name := range parts {
		part := hwmodels.Partition{Name: name, Default: p == 0}
		for i := range nodes {
			if nodes[i].Partitions&(1<<uint(p)) != 0 {
				part.Nodes = append(part.Nodes, int32(i))
			}
		}
		c.Partitions = append(c.Partitions, part)
	}
	return c
}

// GPUNodes returns a one-partition cluster of n identical nodes with gpus
// GPUs of type "h100", 8 CPUs per GPU (at least 8) and 64 GiB per GPU (at
// least 64 GiB), named n0, n1, ...
func GPUNodes(n int, gpus int32) *hwmodels.Cluster {
	nodes := make([]hwmodels.Node, n)
	for i := range nodes {
		nodes[i] = Node(fmt.Sprintf("n%d", i), gpus, "h100", max(8*gpus, 8), max(65536*int64(gpus), 65536), 1)
	}
	return Cluster(nodes)
}
