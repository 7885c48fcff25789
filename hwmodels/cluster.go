package hwmodels

import "strings"

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
	// Group indexes Cluster.Groups: the node group the node comes from.
	Group int32
	// Switches is the node's leaf switch and its ancestors in
	// Cluster.Fabric, leaf first (Fabric.NodeChain), nil when the cluster
	// has no fabric or the node hangs off no switch. Shared; read only.
	Switches []int32
	// Block is 1 + the index into Cluster.Fabric.Blocks of the node's
	// multi-node NVLink domain, 0 for none.
	Block int32
	// BlockLevels are the fabric's block aggregation levels (Slurm's
	// BlockSizes), nil when Block is 0. Shared; read only.
	BlockLevels *BlockLevels
	// MIG is the node's MIG configuration (its group's), nil when none of
	// its GPUs is in MIG mode. Shared; read only.
	MIG *MIGConfig
	// MPS is the node's MPS sharing (its group's), nil without. Shared;
	// read only.
	MPS *MPSConfig
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
	// DefaultTime is the time limit of a job that gives none, in seconds
	// (Slurm DefaultTime); zero means MaxTime. It is at most MaxTime.
	DefaultTime int64
	// DefCPUPerGPU, DefMemPerCPU and DefMemPerGPU (MiB) are the CPUs and
	// memory a job that gives none is allocated (Slurm DefCpuPerGPU,
	// DefMemPerCPU, DefMemPerGPU); zero means none.
	DefCPUPerGPU int32
	DefMemPerCPU int64
	DefMemPerGPU int64
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
	// Groups are the node groups in spec order; Node.Group indexes them.
	// A Cluster built by hand may leave it nil.
	Groups []NodeGroup
	// GPUModels and NodeModels are the spec's own models (gpu_models,
	// node_models), sorted by name; they shadow nothing (names must not
	// clash with the built-in catalogs).
	GPUModels  []GPUSpec
	NodeModels []NodeModel
	// Fabric is the network between nodes, nil when the spec has none.
	Fabric *Fabric
	// Power and Runtime are the energy and runtime models' parameters.
	Power   PowerModel
	Runtime RuntimeModel
	// Slurm holds slurm.conf settings kept for the slurm policy, nil when
	// the spec has none.
	Slurm *SlurmSettings
}

// NodeGroup is a set of identical nodes of the spec.
type NodeGroup struct {
	// Name is the group's name as written (its hostlist); the nodes are
	// Cluster.Nodes[First:End].
	Name       string
	First, End int32
	// NodeModel is the node model name the group took defaults from, "".
	NodeModel string
	// GPU is the resolved GPU model (catalog or spec), nil without GPUs or
	// for model custom.
	GPU *GPUSpec
	// MIG is the group's MIG configuration, nil when no GPU is in MIG mode;
	// MPS its MPS sharing, nil without.
	MIG *MIGConfig
	MPS *MPSConfig
	// Weight is Slurm's node Weight (lower is preferred), default 1.
	Weight int32
	// BasePowerW is the non-GPU power of each node (node_groups[].power.
	// base_w, else the node model's, else 0).
	BasePowerW float64
}

// MIGConfig is a node group's MIG mode. GRES types of MIG instances are
// "<gpu type>_<profile>" ("h100_1g.10gb"), as gres.conf names them.
type MIGConfig struct {
	Geometry *MIGGeometry
	// GPUs is how many of each node's GPUs are in MIG mode; the rest are
	// whole GPUs.
	GPUs int32
	// Dynamic: the scheduler may repartition a MIG GPU, but only while it
	// holds no instance in use, and a repartition takes ReconfigureDelay
	// seconds. Otherwise Layout is the fixed layout of every MIG GPU,
	// validated by geometry, as operators configure it.
	Dynamic          bool
	ReconfigureDelay int64
	Layout           []MIGInstance
}

// MPSConfig is MPS sharing: each GPU of the group's nodes may be shared by
// up to MaxClients jobs, each capped at its share of the SMs
// (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = its share × 100).
type MPSConfig struct {
	MaxClients int32
}

// SlurmSettings are slurm.conf values the simulator keeps verbatim for the
// slurm policy: global keys (SchedulerParameters, Priority*, Preempt*, …)
// and per-partition keys the spec has no field for (MaxNodes,
// OverSubscribe, PreemptMode, …). Keys are as Slurm spells them.
type SlurmSettings struct {
	Settings   []KeyValue
	Partitions []PartitionSettings
}

// KeyValue is one setting.
type KeyValue struct{ Key, Value string }

// PartitionSettings are one partition's kept keys.
type PartitionSettings struct {
	Partition string
	Settings  []KeyValue
}

// Get returns the value of key (case-insensitive) and whether it is set.
func (s *SlurmSettings) Get(key string) (string, bool) {
	if s == nil {
		return "", false
	}
	for _, kv := range s.Settings {
		if strings.EqualFold(kv.Key, key) {
			return kv.Value, true
		}
	}
	return "", false
}

// PartitionKeys returns the kept keys of partition name, or nil.
func (s *SlurmSettings) PartitionKeys(name string) []KeyValue {
	if s == nil {
		return nil
	}
	for _, p := range s.Partitions {
		if p.Partition == name {
			return p.Settings
		}
	}
	return nil
}

// GRES is a count of one GRES type on a node.
type GRES struct {
	Name  string // "gpu" or "mps"
	Type  string // "h100", "h100_1g.10gb", "" untyped
	Count int32
	// MIG marks a MIG instance type; Profile its profile name.
	MIG     bool
	Profile string
}

// GroupOf returns the group of node i, or nil when the cluster has none.
func (c *Cluster) GroupOf(i int) *NodeGroup {
	g := c.Nodes[i].Group
	if g < 0 || int(g) >= len(c.Groups) {
		return nil
	}
	return &c.Groups[g]
}

// NodeGRES returns node i's GRES as Slurm would list them: whole GPUs of
// the node's type, the instances of a fixed MIG layout (count per node,
// sorted by profile order), every profile of a dynamic MIG geometry with
// the count that could exist at most, and mps (100 per GPU, Slurm's usual
// gres.conf Count) when MPS is on.
func (c *Cluster) NodeGRES(i int) []GRES {
	n := &c.Nodes[i]
	g := c.GroupOf(i)
	var out []GRES
	whole := n.GPUs
	if g != nil && g.MIG != nil {
		whole -= g.MIG.GPUs
	}
	if whole > 0 {
		out = append(out, GRES{Name: "gpu", Type: n.GPUType, Count: whole})
	}
	if g != nil && g.MIG != nil && g.MIG.GPUs > 0 {
		geo := g.MIG.Geometry
		for pi := range geo.Profiles {
			var per int32
			if g.MIG.Dynamic {
				per = geo.Profiles[pi].MaxInstances
			} else {
				for _, in := range g.MIG.Layout {
					if in.Profile == int32(pi) {
						per++
					}
				}
			}
			if per > 0 {
				name := geo.Profiles[pi].Name
				out = append(out, GRES{Name: "gpu", Type: MIGGRESType(n.GPUType, name), Count: per * g.MIG.GPUs, MIG: true, Profile: name})
			}
		}
	}
	if g != nil && g.MPS != nil && n.GPUs > 0 {
		out = append(out, GRES{Name: "mps", Count: 100 * n.GPUs})
	}
	return out
}

// MIGGRESType is the GRES type of a MIG profile on GPUs of gresType:
// "h100" and "1g.10gb" give "h100_1g.10gb"; an untyped GPU gives the
// profile name.
func MIGGRESType(gresType, profile string) string {
	if gresType == "" {
		return profile
	}
	return gresType + "_" + profile
}

// GPU returns the GPU model called name: a spec model (GPUModels) or a
// catalog one.
func (c *Cluster) GPU(name string) (GPUSpec, bool) {
	for _, g := range c.GPUModels {
		if g.Name == name {
			return g, true
		}
	}
	return LookupGPU(name)
}

// NodePower returns node i's power figures: its group's base power and its
// GPU model's idle and busy power (zero for a GPU without figures).
func (c *Cluster) NodePower(i int) NodePower {
	n := &c.Nodes[i]
	p := NodePower{GPUs: n.GPUs}
	if g := c.GroupOf(i); g != nil {
		p.BaseW = g.BasePowerW
		if g.GPU != nil {
			p.GPUIdleW, p.GPUBusyW = float64(g.GPU.IdleW), float64(g.GPU.BusyW)
		}
	}
	return p
}

// PeakPowerW returns the cluster's IT power with every node up and every
// GPU busy, in watts (before PUE).
func (c *Cluster) PeakPowerW() float64 {
	var w float64
	for i := range c.Nodes {
		w += c.NodePower(i).PeakW()
	}
	return w
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
