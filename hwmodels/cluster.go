package hwmodels

// Node is one node of a resolved cluster.
type Node struct {
	Name string
	// GPUs is the number of GPUs; GPUModel the catalog model name
	// ("h100-sxm-80gb"); GPUType the GRES type name jobs request it by
	// ("h100"), lower case.
	GPUs     int32
	GPUModel string
	GPUType  string
	CPUs     int32
	MemMB    int64
	Features []string
	// Partitions has bit i set when the node belongs to Cluster.Partitions[i].
	Partitions uint64
}

// Partition is a Slurm partition: a named set of nodes with limits.
type Partition struct {
	Name string
	// Nodes are indices into Cluster.Nodes, ascending.
	Nodes []int32
	// MaxTime is the longest time limit a job may have, in seconds; zero
	// means UNLIMITED.
	MaxTime int64
	// MaxNodes is the most nodes a job may ask for (Slurm MaxNodes);
	// zero means UNLIMITED.
	MaxNodes int32
	// Default marks the partition jobs without one go to.
	Default           bool
	PriorityTier      int32
	PriorityJobFactor int32
}

// MaxPartitions is how many partitions a cluster may have (Node.Partitions
// is a 64-bit set).
const MaxPartitions = 64

// Cluster is a resolved cluster spec: every node listed individually in
// Slurm's node order (the order of the spec, ranges expanded ascending),
// which is the order "lowest-numbered node first" placement follows.
type Cluster struct {
	Name       string
	Nodes      []Node
	Partitions []Partition
	// DefaultPartition indexes Partitions.
	DefaultPartition int
}

// PartitionIndex returns the index of the partition called name, or -1.
func (c *Cluster) PartitionIndex(name string) int {
	for i := range c.Partitions {
		if c.Partitions[i].Name == name {
			return i
		}
	}
	return -1
}

// TotalGPUs returns the number of GPUs over all nodes.
func (c *Cluster) TotalGPUs() int64 {
	var n int64
	for i := range c.Nodes {
		n += int64(c.Nodes[i].GPUs)
	}
	return n
}
