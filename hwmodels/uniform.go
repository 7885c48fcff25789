package hwmodels

import (
	"fmt"
)

// UniformCluster returns a cluster of nodes identical nodes called
// node0001, node0002, … (zero-padded to four digits, or more when nodes
// needs them), one node group node[0001-NNNN], in one default partition "all" with no MaxTime and
// PriorityTier and PriorityJobFactor 1. Each node has cpusPerNode CPUs,
// gpusPerNode GPUs and memMB MiB of memory. The GPUs are untyped (GPUType
// "", as Slurm's "Gres=gpu:N") of model CustomGPUModel; with no GPUs the
// model is "" too. The nodes have no features. Power and Runtime are the
// defaults (DefaultPowerModel, DefaultRuntimeModel); there is no fabric.
//
// It is the machine an SWF log's header describes (MaxNodes nodes sharing
// MaxProcs processors), for replaying the log. The caller checks values it
// read from input first: UniformCluster panics if nodes is not in
// [1, MaxClusterNodes] or a count is negative.
func UniformCluster(name string, nodes int, cpusPerNode, gpusPerNode int32, memMB int64) *Cluster {
	if nodes < 1 || nodes > MaxClusterNodes || cpusPerNode < 0 || gpusPerNode < 0 || memMB < 0 {
		panic(fmt.Sprintf("hwmodels.UniformCluster: nodes=%d cpus=%d gpus=%d mem_mb=%d: want 1 <= nodes <= %d and counts >= 0",
			nodes, cpusPerNode, gpusPerNode, memMB, MaxClusterNodes))
	}
	model := ""
	if gpusPerNode > 0 {
		model = CustomGPUModel
	}
	width := max(4, decimalLen(uint64(nodes)))
	c := &Cluster{Name: name, Nodes: make([]Node, nodes)}
	for i := range c.Nodes {
		c.Nodes[i] = Node{
			Name:       string(appendPadded([]byte("node"), uint64(i+1), width)),
			GPUs:       gpusPerNode,
			GPUModel:   model,
			CPUs:       cpusPerNode,
			MemMB:      memMB,
			Partitions: 1,
		}
	}
	c.Partitions = []Partition{allPartition(nodes)}
	c.Groups = []NodeGroup{{Name: c.Nodes[0].Name, First: 0, End: int32(nodes), Weight: 1}}
	if nodes > 1 {
		c.Groups[0].Name = string(appendPadded([]byte("node["), 1, width)) + "-" + string(appendPadded(nil, uint64(nodes), width)) + "]"
	}
	c.Power, c.Runtime = DefaultPowerModel(), DefaultRuntimeModel()
	return c
}
