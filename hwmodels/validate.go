package hwmodels

import (
	"fmt"
)

// NodeIndex returns the index in c.Nodes of the node called name, or -1. It
// scans the nodes; callers resolving many names build their own map.
func (c *Cluster) NodeIndex(name string) int {
	for i := range c.Nodes {
		if c.Nodes[i].Name == name {
			return i
		}
	}
	return -1
}

// Validate checks the invariants every resolved Cluster holds, as
// ParseCluster, ExampleCluster and UniformCluster produce it, for clusters
// built or edited by hand (tests, transforms): at least one node and at most
// MaxClusterNodes; node names non-empty and unique; counts not negative;
// 1 to MaxPartitions partitions with unique non-empty names; each
// Partition.Nodes non-empty, ascending, without duplicates and in range;
// Node.Partitions exactly the set of partitions listing the node; exactly
// one partition with Default set, at index DefaultPartition; MaxTime,
// PriorityTier and PriorityJobFactor not negative; Node.Group in range when
// Groups is set. It returns the first
// violation found, or nil.
func (c *Cluster) Validate() error {
	if len(c.Nodes) == 0 {
		return fmt.Errorf("cluster %q: no nodes", c.Name)
	}
	if len(c.Nodes) > MaxClusterNodes {
		return fmt.Errorf("cluster %q: %d nodes, more than %d", c.Name, len(c.Nodes), MaxClusterNodes)
	}
	seen := make(map[string]int, len(c.Nodes))
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Name == "" {
			return fmt.Errorf("cluster %q: node %d has no name", c.Name, i)
		}
		if j, dup := seen[n.Name]; dup {
			return fmt.Errorf("cluster %q: nodes %d and %d are both called %q", c.Name, j, i, n.Name)
		}
		seen[n.Name] = i
		if c.Groups != nil && (n.Group < 0 || int(n.Group) >= len(c.Groups)) {
			return fmt.Errorf("cluster %q: node %q: group %d out of range [0, %d)", c.Name, n.Name, n.Group, len(c.Groups))
		}
		if n.GPUs < 0 || n.CPUs < 0 || n.MemMB < 0 {
			return fmt.Errorf("cluster %q: node %q: negative count (gpus %d, cpus %d, mem_mb %d)", c.Name, n.Name, n.GPUs, n.CPUs, n.MemMB)
		}
	}
	if len(c.Partitions) == 0 || len(c.Partitions) > MaxPartitions {
		return fmt.Errorf("cluster %q: %d partitions, want 1 to %d", c.Name, len(c.Partitions), MaxPartitions)
	}
	bits := make([]uint64, len(c.Nodes))
	names := make(map[string]int, len(c.Partitions))
	defaults := 0
	for pi := range c.Partitions {
		p := &c.Partitions[pi]
		if p.Name == "" {
			return fmt.Errorf("cluster %q: partition %d has no name", c.Name, pi)
		}
		if j, dup := names[p.Name]; dup {
			return fmt.Errorf("cluster %q: partitions %d and %d are both called %q", c.Name, j, pi, p.Name)
		}
		names[p.Name] = pi
		if len(p.Nodes) == 0 {
			return fmt.Errorf("cluster %q: partition %q has no nodes", c.Name, p.Name)
		}
		for k, ni := range p.Nodes {
			if ni < 0 || int(ni) >= len(c.Nodes) {
				return fmt.Errorf("cluster %q: partition %q: node index %d out of range [0, %d)", c.Name, p.Name, ni, len(c.Nodes))
			}
			if k > 0 && ni <= p.Nodes[k-1] {
				return fmt.Errorf("cluster %q: partition %q: node indices not strictly ascending at position %d", c.Name, p.Name, k)
			}
			bits[ni] |= 1 << uint(pi)
		}
		if p.MaxTime < 0 || p.PriorityTier < 0 || p.PriorityJobFactor < 0 {
			return fmt.Errorf("cluster %q: partition %q: negative max_time, priority_tier or priority_job_factor", c.Name, p.Name)
		}
		if p.Default {
			defaults++
			if pi != c.DefaultPartition {
				return fmt.Errorf("cluster %q: partition %q (%d) is marked default but DefaultPartition is %d", c.Name, p.Name, pi, c.DefaultPartition)
			}
		}
	}
	if defaults != 1 {
		return fmt.Errorf("cluster %q: %d default partitions, want exactly 1", c.Name, defaults)
	}
	for i := range c.Nodes {
		if c.Nodes[i].Partitions != bits[i] {
			return fmt.Errorf("cluster %q: node %q: Partitions is %#x, the partition lists give %#x", c.Name, c.Nodes[i].Name, c.Nodes[i].Partitions, bits[i])
		}
	}
	return nil
}
