package hwmodels

import (
	"fmt"
	"slices"
	"strings"
)

// ClusterSummary describes a resolved cluster for people (schedsim cluster
// show) and tools (its --json form). Totals count physical GPUs; GPUsByType
// counts GRES by type, MIG instances under their own types.
type ClusterSummary struct {
	Name       string                      `json:"name"`
	Nodes      int                         `json:"nodes"`
	GPUs       int64                       `json:"gpus"`
	CPUs       int64                       `json:"cpus"`
	MemMB      int64                       `json:"memory_mb"`
	NodeGroups []GroupSummary              `json:"node_groups"`
	GPUsByType map[string]int64            `json:"gpus_by_type"`
	Partitions map[string]PartitionSummary `json:"partitions"`
	// PartitionOrder lists Partitions' names in cluster order.
	PartitionOrder []string          `json:"partition_order"`
	Fabric         *FabricSummary    `json:"fabric,omitempty"`
	Power          PowerSummary      `json:"power"`
	Slurm          []KeyValue        `json:"-"`
	SlurmSettings  map[string]string `json:"slurm_settings,omitempty"`
}

// GroupSummary is one node group: Slurm's NodeName line for it and the
// hardware behind it.
type GroupSummary struct {
	Nodes      string   `json:"nodes"`
	Count      int      `json:"count"`
	GPUModel   string   `json:"gpu_model,omitempty"`
	NodeModel  string   `json:"node_model,omitempty"`
	GRES       []GRES   `json:"gres,omitempty"`
	CPUs       int32    `json:"cpus"`
	MemMB      int64    `json:"memory_mb"`
	Features   []string `json:"features,omitempty"`
	Weight     int32    `json:"weight"`
	MIG        string   `json:"mig,omitempty"`
	MPS        int32    `json:"mps_max_clients,omitempty"`
	PeakPowerW float64  `json:"peak_power_w"`
	// SlurmLine is the group as a slurm.conf NodeName line.
	SlurmLine string `json:"slurm_line"`
}

// PartitionSummary is one partition; SlurmLine is it as a slurm.conf
// PartitionName line (spec fields, then the kept slurm.partitions keys).
type PartitionSummary struct {
	Nodes             string            `json:"nodes"`
	NodeCount         int               `json:"node_count"`
	GPUs              int64             `json:"gpus"`
	MaxTime           int64             `json:"max_time_s"`
	MaxNodes          int32             `json:"max_nodes,omitempty"`
	DefaultTime       int64             `json:"default_time_s,omitempty"`
	DefCPUPerGPU      int32             `json:"def_cpu_per_gpu,omitempty"`
	DefMemPerCPU      int64             `json:"def_mem_per_cpu_mb,omitempty"`
	DefMemPerGPU      int64             `json:"def_mem_per_gpu_mb,omitempty"`
	Default           bool              `json:"default"`
	PriorityTier      int32             `json:"priority_tier"`
	PriorityJobFactor int32             `json:"priority_job_factor"`
	Slurm             []KeyValue        `json:"-"`
	SlurmSettings     map[string]string `json:"slurm,omitempty"`
	SlurmLine         string            `json:"slurm_line"`
}

// FabricSummary describes the fabric.
type FabricSummary struct {
	Kind       string  `json:"kind"`
	Switches   int     `json:"switches"`
	Leaves     int     `json:"leaves"`
	Levels     int32   `json:"levels"`
	Attached   int     `json:"attached_nodes"`
	LinkGbps   int32   `json:"link_gbps,omitempty"`
	MaxOversub float64 `json:"max_oversubscription"`
	Rails      int32   `json:"rails,omitempty"`
	// Blocks are the NVLink domains (topology/block base blocks) in
	// definition order, and BlockSizes the node counts a job may be
	// confined to (topology.conf BlockSizes, or Slurm's default levels).
	Blocks     []BlockSummary `json:"blocks,omitempty"`
	BlockSizes []int32        `json:"block_sizes,omitempty"`
}

// BlockSummary is one block: its name and nodes (a hostlist), as a
// topology.conf BlockName line has them.
type BlockSummary struct {
	Name  string `json:"name"`
	Nodes string `json:"nodes"`
	Count int    `json:"node_count"`
}

// PowerSummary is the cluster's peak power.
type PowerSummary struct {
	PeakITW       float64 `json:"peak_it_w"`
	PUE           float64 `json:"pue"`
	PeakFacilityW float64 `json:"peak_facility_w"`
	PricePerKWh   float64 `json:"price_per_kwh,omitempty"`
	Currency      string  `json:"currency,omitempty"`
	// SuspendTime, ResumeTimeout and SuspendTimeout are power saving's
	// (seconds; SuspendTime 0: off); SuspendExempt counts the nodes it
	// never powers down.
	SuspendTime    int64 `json:"suspend_time_s,omitempty"`
	ResumeTimeout  int64 `json:"resume_timeout_s,omitempty"`
	SuspendTimeout int64 `json:"suspend_timeout_s,omitempty"`
	SuspendExempt  int   `json:"suspend_exempt_nodes,omitempty"`
	// Unpowered is the number of nodes whose power the model does not know
	// (GPU without figures and no base power).
	Unpowered int `json:"nodes_without_power_figures"`
}

// FormatSlurmTime formats seconds as Slurm prints a time limit,
// [D-]HH:MM:SS with the day count only when there is one; 0 is UNLIMITED.
func FormatSlurmTime(secs int64) string {
	if secs <= 0 {
		return "UNLIMITED"
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// Summarize describes c.
func Summarize(c *Cluster) ClusterSummary {
	s := ClusterSummary{Name: c.Name, Nodes: len(c.Nodes), GPUsByType: map[string]int64{}, Partitions: map[string]PartitionSummary{}}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		s.GPUs += int64(n.GPUs)
		s.CPUs += int64(n.CPUs)
		s.MemMB += n.MemMB
		for _, g := range c.NodeGRES(i) {
			if g.Name == "gpu" {
				t := g.Type
				if t == "" {
					t = "(untyped)"
				}
				s.GPUsByType[t] += int64(g.Count)
			}
		}
		p := c.NodePower(i)
		s.Power.PeakITW += p.PeakW()
		if p.PeakW() == 0 {
			s.Power.Unpowered++
		}
	}
	groups := c.Groups
	if groups == nil {
		groups = []NodeGroup{{Name: "all", First: 0, End: int32(len(c.Nodes))}}
	}
	for _, g := range groups {
		if g.End <= g.First {
			continue
		}
		first := int(g.First)
		n := &c.Nodes[first]
		var names []string
		for i := g.First; i < g.End; i++ {
			names = append(names, c.Nodes[i].Name)
		}
		gs := GroupSummary{Nodes: CompressHostlist(names), Count: int(g.End - g.First), NodeModel: g.NodeModel,
			GRES: c.NodeGRES(first), CPUs: n.CPUs, MemMB: n.MemMB, Features: n.Features, Weight: g.Weight,
			PeakPowerW: c.NodePower(first).PeakW() * float64(g.End-g.First)}
		if n.GPUs > 0 {
			gs.GPUModel = n.GPUModel
		}
		if g.MIG != nil {
			if g.MIG.Dynamic {
				gs.MIG = fmt.Sprintf("dynamic on %d GPUs per node, reconfigure %ds", g.MIG.GPUs, g.MIG.ReconfigureDelay)
			} else {
				var ins []string
				for _, in := range g.MIG.Layout {
					ins = append(ins, fmt.Sprintf("%s@%d", g.MIG.Geometry.Profiles[in.Profile].Name, in.Start))
				}
				gs.MIG = fmt.Sprintf("fixed on %d GPUs per node: %s", g.MIG.GPUs, strings.Join(ins, " "))
			}
		}
		if g.MPS != nil {
			gs.MPS = g.MPS.MaxClients
		}
		line := fmt.Sprintf("NodeName=%s CPUs=%d RealMemory=%d", gs.Nodes, n.CPUs, n.MemMB)
		var gres []string
		for _, x := range gs.GRES {
			if x.Type == "" {
				gres = append(gres, fmt.Sprintf("%s:%d", x.Name, x.Count))
			} else {
				gres = append(gres, fmt.Sprintf("%s:%s:%d", x.Name, x.Type, x.Count))
			}
		}
		if len(gres) > 0 {
			line += " Gres=" + strings.Join(gres, ",")
		}
		if len(n.Features) > 0 {
			line += " Features=" + strings.Join(n.Features, ",")
		}
		if g.Weight != 1 && c.Groups != nil {
			line += fmt.Sprintf(" Weight=%d", g.Weight)
		}
		gs.SlurmLine = line
		s.NodeGroups = append(s.NodeGroups, gs)
	}
	for pi := range c.Partitions {
		p := &c.Partitions[pi]
		var names []string
		var gpus int64
		for _, ni := range p.Nodes {
			names = append(names, c.Nodes[ni].Name)
			gpus += int64(c.Nodes[ni].GPUs)
		}
		ps := PartitionSummary{Nodes: CompressHostlist(names), NodeCount: len(p.Nodes), GPUs: gpus, MaxTime: p.MaxTime,
			MaxNodes: p.MaxNodes, DefaultTime: p.DefaultTime, DefCPUPerGPU: p.DefCPUPerGPU, DefMemPerCPU: p.DefMemPerCPU, DefMemPerGPU: p.DefMemPerGPU,
			Default: p.Default, PriorityTier: p.PriorityTier, PriorityJobFactor: p.PriorityJobFactor}
		line := fmt.Sprintf("PartitionName=%s Nodes=%s MaxTime=%s", p.Name, ps.Nodes, FormatSlurmTime(p.MaxTime))
		if p.MaxNodes > 0 {
			line += fmt.Sprintf(" MaxNodes=%d", p.MaxNodes)
		}
		if p.DefaultTime > 0 {
			line += " DefaultTime=" + FormatSlurmTime(p.DefaultTime)
		}
		for _, d := range []struct {
			key string
			v   int64
		}{{"DefCpuPerGPU", int64(p.DefCPUPerGPU)}, {"DefMemPerCPU", p.DefMemPerCPU}, {"DefMemPerGPU", p.DefMemPerGPU}} {
			if d.v > 0 {
				line += fmt.Sprintf(" %s=%d", d.key, d.v)
			}
		}
		if p.Default {
			line += " Default=YES"
		}
		line += fmt.Sprintf(" PriorityTier=%d PriorityJobFactor=%d", p.PriorityTier, p.PriorityJobFactor)
		ps.Slurm = c.Slurm.PartitionKeys(p.Name)
		if len(ps.Slurm) > 0 {
			ps.SlurmSettings = map[string]string{}
		}
		for _, kv := range ps.Slurm {
			line += " " + kv.Key + "=" + kv.Value
			ps.SlurmSettings[kv.Key] = kv.Value
		}
		ps.SlurmLine = line
		s.Partitions[p.Name] = ps
		s.PartitionOrder = append(s.PartitionOrder, p.Name)
	}
	if f := c.Fabric; f != nil {
		fs := &FabricSummary{Kind: f.Kind, Switches: len(f.Switches), Attached: f.AttachedNodes(), Rails: f.Rails, MaxOversub: 1}
		for _, sw := range f.Switches {
			if len(sw.Nodes) > 0 {
				fs.Leaves++
			}
			fs.Levels = max(fs.Levels, sw.Level+1)
			fs.LinkGbps = max(fs.LinkGbps, sw.LinkGbps)
			fs.MaxOversub = max(fs.MaxOversub, sw.Oversubscription)
		}
		for _, b := range f.Blocks {
			names := make([]string, 0, len(b.Nodes))
			for _, n := range b.Nodes {
				if int(n) < len(c.Nodes) {
					names = append(names, c.Nodes[n].Name)
				}
			}
			fs.Blocks = append(fs.Blocks, BlockSummary{Name: b.Name, Nodes: CompressHostlist(names), Count: len(b.Nodes)})
		}
		if len(f.Blocks) > 0 {
			for k := range 16 {
				if f.Levels.Levels&(1<<k) != 0 {
					fs.BlockSizes = append(fs.BlockSizes, f.Levels.Base<<k)
				}
			}
		}
		s.Fabric = fs
	}
	s.Power.PUE = max(c.Power.PUE, 1)
	s.Power.PeakFacilityW = s.Power.PeakITW * s.Power.PUE
	s.Power.PricePerKWh, s.Power.Currency = c.Power.PricePerKWh, c.Power.Currency
	if c.Power.SuspendTime > 0 {
		s.Power.SuspendTime, s.Power.ResumeTimeout, s.Power.SuspendTimeout = c.Power.SuspendTime, c.Power.ResumeTimeout, c.Power.SuspendTimeout
		s.Power.SuspendExempt = len(c.Power.SuspendExempt)
	}
	if c.Slurm != nil && len(c.Slurm.Settings) > 0 {
		s.Slurm = slices.Clone(c.Slurm.Settings)
		s.SlurmSettings = map[string]string{}
		for _, kv := range c.Slurm.Settings {
			s.SlurmSettings[kv.Key] = kv.Value
		}
	}
	return s
}
