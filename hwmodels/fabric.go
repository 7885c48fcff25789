package hwmodels

import (
	"fmt"
	"slices"
	"strings"
)

// Fabric kinds (Fabric.Kind, the spec's fabric.kind).
const (
	// FabricFatTree is an InfiniBand or RoCE fat-tree of two levels (leaf,
	// spine) or three (leaf, pod aggregation, core), with leaf_size nodes
	// per leaf in cluster order and an oversubscription ratio per level.
	FabricFatTree = "fat-tree"
	// FabricSuperPOD is the rail-optimized DGX SuperPOD layout: scalable
	// units (SU) of 32 nodes, each SU one logical leaf (its 8 rail leaf
	// switches, rail r connecting NIC r of every node of the SU), spines
	// above, non-blocking; more than 8 SUs add a core level.
	FabricSuperPOD = "superpod"
	// FabricTree is an explicit switch tree, Slurm's topology/tree
	// (topology.conf SwitchName lines, or fabric.switches in the spec).
	FabricTree = "tree"
)

// Switch is one switch of a fabric, or a logical switch standing for a
// group of identical ones (a fat-tree's spine layer, a SuperPOD SU's rail
// leaves), as Slurm's topology/tree models them.
type Switch struct {
	Name string
	// Level is 0 for leaf switches (those with nodes) and one more than the
	// highest child otherwise, as Slurm computes switch levels.
	Level int32
	// Parent indexes Fabric.Switches, -1 for a top switch.
	Parent int32
	// Nodes are the cluster node indices attached (leaves), ascending;
	// Children the switch indices below, ascending.
	Nodes    []int32
	Children []int32
	// LinkGbps is the port speed (0: unknown). Oversubscription is the
	// ratio of the bandwidth below the switch to its uplink bandwidth
	// (2 for 2:1); 1 is non-blocking, and a top switch has 1.
	LinkGbps         int32
	Oversubscription float64
}

// Fabric is the network between nodes: switches in a forest (a tree when
// there is one top switch). Nodes not attached to any switch have no leaf.
// Build it with BuildFatTree, BuildSuperPOD or BuildTree; ParseCluster
// does from the spec's fabric section. Read it, don't modify it.
type Fabric struct {
	Kind     string
	Switches []Switch
	// Rails is the number of rails per node of a SuperPOD (NICs per
	// node), 0 otherwise.
	Rails int32
	// IntraGBs and InterGBs are calibrated all-reduce bus bandwidths per
	// GPU in GB/s inside a node and between nodes (schedsim calibrate
	// --nccl); 0 leaves the communication model the catalog's NVLink and
	// the link speed (fabric_comm.go).
	IntraGBs, InterGBs float64
	// Blocks are the multi-node NVLink domains (fabric_block.go), nil
	// without; blockOf each node's index into Blocks, -1 for none.
	Blocks  []Block
	blockOf []int32
	// Levels are the block aggregation levels (SetBlockSizes); zero
	// without blocks.
	Levels BlockLevels
	// leafOf is each node's leaf switch, -1 when not attached.
	leafOf []int32
	// chains[s] is s and its ancestors, s first; nodes share their leaf's.
	chains [][]int32
	// attached[s] is the number of nodes below switch s (fabric_comm.go).
	attached []int32
}

// LeafOf returns the leaf switch of node (an index into Switches), or -1
// when the node hangs off no switch.
func (f *Fabric) LeafOf(node int32) int32 {
	if f == nil || node < 0 || int(node) >= len(f.leafOf) {
		return -1
	}
	return f.leafOf[node]
}

// Chain returns switch s and its ancestors, s first (shared; read only).
func (f *Fabric) Chain(s int32) []int32 {
	if f == nil || s < 0 || int(s) >= len(f.chains) {
		return nil
	}
	return f.chains[s]
}

// NodeChain returns the node's leaf and its ancestors, leaf first, or nil.
func (f *Fabric) NodeChain(node int32) []int32 { return f.Chain(f.LeafOf(node)) }

// LowestCommonSwitch returns the lowest switch all nodes hang below, or -1
// when some node is not attached or the nodes have no common ancestor.
// One node gives its leaf.
func (f *Fabric) LowestCommonSwitch(nodes []int32) int32 {
	if f == nil || len(nodes) == 0 {
		return -1
	}
	common := f.NodeChain(nodes[0])
	for _, n := range nodes[1:] {
		c := f.NodeChain(n)
		if c == nil {
			return -1
		}
		common = commonSuffix(common, c)
		if len(common) == 0 {
			return -1
		}
	}
	if len(common) == 0 {
		return -1
	}
	return common[0]
}

// commonSuffix returns the longest common suffix of two ancestor chains
// (ancestors are at the end): the shared ancestors, lowest first.
func commonSuffix(a, b []int32) []int32 {
	i, j := len(a)-1, len(b)-1
	for i >= 0 && j >= 0 && a[i] == b[j] {
		i--
		j--
	}
	return a[i+1:]
}

// Path returns the switches a message from node a to node b crosses: a's
// leaf up to the lowest common switch, then down to b's leaf. Nodes on one
// leaf give that leaf alone; nil when either node is unattached or they
// share no switch.
func (f *Fabric) Path(a, b int32) []int32 {
	ca, cb := f.NodeChain(a), f.NodeChain(b)
	if ca == nil || cb == nil {
		return nil
	}
	common := commonSuffix(ca, cb)
	if len(common) == 0 {
		return nil
	}
	up := ca[:len(ca)-len(common)+1] // through the common switch
	down := cb[:len(cb)-len(common)]
	out := slices.Clone(up)
	for i := len(down) - 1; i >= 0; i-- {
		out = append(out, down[i])
	}
	return out
}

// Leaves returns the number of distinct leaf switches the nodes hang off
// (unattached nodes count one each): Slurm's switch count for --switches.
func (f *Fabric) Leaves(nodes []int32) int {
	seen := map[int32]bool{}
	n := 0
	for _, x := range nodes {
		l := f.LeafOf(x)
		if l < 0 {
			n++
			continue
		}
		if !seen[l] {
			seen[l] = true
			n++
		}
	}
	return n
}

// PathOversubscription returns the oversubscription a job on nodes sees:
// the largest Oversubscription of the switches whose uplinks its traffic
// crosses, that is every switch on the nodes' chains below their lowest
// common switch. It is 1 when the nodes share a leaf (traffic stays in
// the leaf, or inside a node) and when the fabric is nil; when the nodes
// have no common switch, the largest ratio on their whole chains.
func (f *Fabric) PathOversubscription(nodes []int32) float64 {
	if f == nil || len(nodes) < 2 {
		return 1
	}
	lcs := f.LowestCommonSwitch(nodes)
	o := 1.0
	for _, n := range nodes {
		for _, s := range f.NodeChain(n) {
			if s == lcs {
				break
			}
			o = max(o, f.Switches[s].Oversubscription)
		}
	}
	return o
}

// finish computes levels, chains and leafOf once Switches (with Parent,
// Nodes, Children) is complete; nodes is the cluster's node count. It
// errors on a cycle.
func (f *Fabric) finish(nodes int) error {
	n := len(f.Switches)
	f.chains = make([][]int32, n)
	for s := range f.Switches {
		var c []int32
		for x := int32(s); x >= 0; x = f.Switches[x].Parent {
			if len(c) > n {
				return fmt.Errorf("switch %q: its parents form a cycle", f.Switches[s].Name)
			}
			c = append(c, x)
		}
		f.chains[s] = slices.Clip(c)
	}
	for s := range f.Switches {
		f.Switches[s].Level = 0
	}
	for s := range f.Switches {
		for i, x := range f.chains[s] {
			f.Switches[x].Level = max(f.Switches[x].Level, int32(i))
		}
	}
	f.leafOf = make([]int32, nodes)
	for i := range f.leafOf {
		f.leafOf[i] = -1
	}
	f.attached = make([]int32, n)
	for s := range f.Switches {
		for _, nd := range f.Switches[s].Nodes {
			f.leafOf[nd] = int32(s)
		}
		for _, x := range f.chains[s] {
			f.attached[x] += int32(len(f.Switches[s].Nodes))
		}
	}
	return nil
}

// AttachedNodes returns how many nodes hang off a switch.
func (f *Fabric) AttachedNodes() int {
	n := 0
	for _, l := range f.leafOf {
		if l >= 0 {
			n++
		}
	}
	return n
}

// FatTreeParams describes a fat-tree.
type FatTreeParams struct {
	// LeafSize is the number of nodes per leaf switch (≥ 1).
	LeafSize int32
	// LeavesPerPod > 0 makes a three-level tree: pods of that many leaves
	// under an aggregation switch each, a core on top.
	LeavesPerPod int32
	// Spines is the number of physical spine (or core) switches; the model
	// has one logical switch per level group, so it is descriptive only.
	Spines int32
	// LeafOversubscription is the leaves' down:up ratio (≥ 1);
	// PodOversubscription the aggregation switches' (three levels).
	LeafOversubscription float64
	PodOversubscription  float64
	LinkGbps             int32
}

// BuildFatTree attaches nodes (cluster node indices, in the order they
// fill leaves) to a fat-tree; total is the cluster's node count. Leaves are
// named leaf01, leaf02, …; pods pod01, …; the top switch spine (two
// levels) or core (three).
func BuildFatTree(p FatTreeParams, nodes []int32, total int) (*Fabric, error) {
	if p.LeafSize < 1 {
		return nil, fmt.Errorf("leaf_size must be >= 1, got %d", p.LeafSize)
	}
	if p.LeafOversubscription == 0 {
		p.LeafOversubscription = 1
	}
	if p.PodOversubscription == 0 {
		p.PodOversubscription = 1
	}
	f := &Fabric{Kind: FabricFatTree}
	leaves := (len(nodes) + int(p.LeafSize) - 1) / int(p.LeafSize)
	width := decimalLen(uint64(max(leaves, 1)))
	width = max(width, 2)
	for l := 0; l < leaves; l++ {
		lo, hi := l*int(p.LeafSize), min((l+1)*int(p.LeafSize), len(nodes))
		ns := slices.Clone(nodes[lo:hi])
		slices.Sort(ns)
		f.Switches = append(f.Switches, Switch{Name: string(appendPadded([]byte("leaf"), uint64(l+1), width)),
			Nodes: ns, LinkGbps: p.LinkGbps, Oversubscription: p.LeafOversubscription})
	}
	top := func(name string, children []int32) int32 {
		idx := int32(len(f.Switches))
		f.Switches = append(f.Switches, Switch{Name: name, Parent: -1, Children: children, LinkGbps: p.LinkGbps, Oversubscription: 1})
		for _, c := range children {
			f.Switches[c].Parent = idx
		}
		return idx
	}
	all := func(lo, hi int) []int32 {
		var c []int32
		for i := lo; i < hi; i++ {
			c = append(c, int32(i))
		}
		return c
	}
	if p.LeavesPerPod > 0 {
		pods := (leaves + int(p.LeavesPerPod) - 1) / int(p.LeavesPerPod)
		pw := max(decimalLen(uint64(max(pods, 1))), 2)
		var podIdx []int32
		for q := 0; q < pods; q++ {
			lo, hi := q*int(p.LeavesPerPod), min((q+1)*int(p.LeavesPerPod), leaves)
			i := top(string(appendPadded([]byte("pod"), uint64(q+1), pw)), all(lo, hi))
			f.Switches[i].Oversubscription = p.PodOversubscription
			podIdx = append(podIdx, i)
		}
		top("core", podIdx)
	} else {
		top("spine", all(0, leaves))
	}
	return f, f.finish(total)
}

// SuperPODSUSize is the nodes per scalable unit of the DGX SuperPOD
// reference architecture (H100/B200 generations; the DGX A100 SuperPOD used
// 20, settable per spec). superPODSUsPerGroup is how many SUs one spine
// group serves before a core level is added (our model: the reference
// gives 2-tier fabrics up to 8 SUs and 3-tier from 16).
const (
	SuperPODSUSize      = 32
	superPODSUsPerGroup = 8
)

// BuildSuperPOD attaches nodes (in order) to a rail-optimized SuperPOD of
// scalable units of suSize nodes (0: SuperPODSUSize) with rails rails per
// node. Each SU is one logical leaf named su01, su02, … (its rail leaves:
// traffic between nodes of one SU stays on the rail leaves, one hop);
// the spine above is non-blocking. Up to 8 SUs hang off one spine; more
// are grouped 8 to a spine group (sg01, …) under a core.
func BuildSuperPOD(suSize, rails, linkGbps int32, nodes []int32, total int) (*Fabric, error) {
	if suSize == 0 {
		suSize = SuperPODSUSize
	}
	if suSize < 1 {
		return nil, fmt.Errorf("su_size must be >= 1, got %d", suSize)
	}
	ft := FatTreeParams{LeafSize: suSize, LinkGbps: linkGbps, LeafOversubscription: 1, PodOversubscription: 1}
	sus := (len(nodes) + int(suSize) - 1) / int(suSize)
	if sus > superPODSUsPerGroup {
		ft.LeavesPerPod = superPODSUsPerGroup
	}
	f, err := BuildFatTree(ft, nodes, total)
	if err != nil {
		return nil, err
	}
	f.Kind, f.Rails = FabricSuperPOD, rails
	w := max(decimalLen(uint64(max(sus, 1))), 2)
	for i := range f.Switches {
		s := &f.Switches[i]
		switch {
		case strings.HasPrefix(s.Name, "leaf"):
			s.Name = string(appendPadded([]byte("su"), uint64(i+1), w))
		case strings.HasPrefix(s.Name, "pod"):
			s.Name = "sg" + strings.TrimPrefix(s.Name, "pod")
		}
	}
	return f, nil
}

// TreeSwitch is one switch of an explicit tree (a topology.conf SwitchName
// line, or a fabric.switches entry), before resolution.
type TreeSwitch struct {
	Name string
	// Nodes and Switches are hostlists ("gpu[001-032]", "leaf[0-1]"), ""
	// for none.
	Nodes, Switches  string
	LinkGbps         int32
	Oversubscription float64
	// Line is where it was defined (for messages), 0 if unknown.
	Line int
}

// BuildTree resolves an explicit switch tree against the cluster's node
// names (nodeIndex maps a name to its index; total is the node count).
// Errors: a duplicate switch, an unknown node or switch, a node under two
// leaves, a switch under two parents, a cycle, a switch with neither
// nodes nor switches. Each error names the switch.
func BuildTree(sw []TreeSwitch, nodeIndex func(string) (int32, bool), total int) (*Fabric, error) {
	f := &Fabric{Kind: FabricTree}
	byName := map[string]int32{}
	for i, s := range sw {
		if s.Name == "" {
			return nil, fmt.Errorf("switch %d has no name", i)
		}
		if j, dup := byName[s.Name]; dup {
			return nil, fmt.Errorf("switch %q defined twice (first at line %d)", s.Name, sw[j].Line)
		}
		if s.Nodes == "" && s.Switches == "" {
			return nil, fmt.Errorf("switch %q: has neither nodes nor switches", s.Name)
		}
		o := s.Oversubscription
		if o == 0 {
			o = 1
		}
		if !(o >= 1) {
			return nil, fmt.Errorf("switch %q: oversubscription must be >= 1, got %v", s.Name, o)
		}
		byName[s.Name] = int32(i)
		f.Switches = append(f.Switches, Switch{Name: s.Name, Parent: -1, LinkGbps: s.LinkGbps, Oversubscription: o})
	}
	owner := map[int32]int32{}
	for i, s := range sw {
		if s.Nodes != "" {
			names, err := ExpandHostlist(s.Nodes)
			if err != nil {
				return nil, fmt.Errorf("switch %q: nodes: %w", s.Name, err)
			}
			for _, nm := range names {
				ni, ok := nodeIndex(nm)
				if !ok {
					return nil, fmt.Errorf("switch %q: unknown node %q", s.Name, nm)
				}
				if prev, dup := owner[ni]; dup && prev != int32(i) {
					return nil, fmt.Errorf("switch %q: node %q is already under switch %q", s.Name, nm, sw[prev].Name)
				}
				if _, dup := owner[ni]; !dup {
					owner[ni] = int32(i)
					f.Switches[i].Nodes = append(f.Switches[i].Nodes, ni)
				}
			}
			slices.Sort(f.Switches[i].Nodes)
		}
		if s.Switches != "" {
			names, err := ExpandHostlist(s.Switches)
			if err != nil {
				return nil, fmt.Errorf("switch %q: switches: %w", s.Name, err)
			}
			for _, nm := range names {
				c, ok := byName[nm]
				if !ok {
					return nil, fmt.Errorf("switch %q: unknown switch %q", s.Name, nm)
				}
				if c == int32(i) {
					return nil, fmt.Errorf("switch %q lists itself", s.Name)
				}
				if p := f.Switches[c].Parent; p >= 0 && p != int32(i) {
					return nil, fmt.Errorf("switch %q: switch %q is already under switch %q", s.Name, nm, sw[p].Name)
				}
				if f.Switches[c].Parent < 0 {
					f.Switches[c].Parent = int32(i)
					f.Switches[i].Children = append(f.Switches[i].Children, c)
				}
			}
			slices.Sort(f.Switches[i].Children)
		}
	}
	if err := f.finish(total); err != nil {
		return nil, err
	}
	for s := range f.Switches {
		if f.Switches[s].Parent < 0 {
			f.Switches[s].Oversubscription = 1
		}
	}
	return f, nil
}

// LinkGbps returns the port speed of an InfiniBand rate name (edr 100, hdr
// 200, ndr200 200, ndr 400, xdr 800), case-insensitive.
func LinkGbps(rate string) (int32, bool) {
	switch strings.ToLower(rate) {
	case "edr":
		return 100, true
	case "hdr", "ndr200":
		return 200, true
	case "ndr":
		return 400, true
	case "xdr":
		return 800, true
	}
	return 0, false
}
