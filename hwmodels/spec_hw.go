package hwmodels

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file decodes the hardware sections of a cluster spec: gpu_models,
// node_models, node_groups[].{model, mig, mps, weight, power}, fabric,
// power, runtime and slurm. SCHEMA.md documents them.

var (
	gpuModelKeys  = []string{"name", "like", "type", "memory_gb", "bandwidth_gbs", "bf16_tflops", "sms", "tdp_w", "idle_w", "busy_w", "nvlink_gen", "nvlink_gbs", "nvlink_topology", "mig"}
	nodeModelKeys = []string{"name", "like", "gpu", "interconnect", "nvswitches", "cpus", "memory", "hcas", "hca_gbps", "max_power_w", "base_power_w"}
	migKeys       = []string{"layout", "mode", "gpus", "reconfigure_delay"}
	mpsKeys       = []string{"max_clients"}
	groupPowerKey = []string{"base_w"}
	fabricKeys    = []string{"kind", "nodes", "link", "link_gbps", "leaf_size", "leaves_per_pod", "spines", "oversubscription", "pod_oversubscription", "su_size", "rails", "switches", "blocks", "block_sizes"}
	switchKeys    = []string{"name", "nodes", "switches", "link_gbps", "oversubscription"}
	powerKeys     = []string{"pue", "price_per_kwh", "currency", "suspend_time", "resume_timeout", "suspend_timeout", "suspended_w", "suspend_exc_nodes", "suspend_exc_parts"}
	runtimeKeys   = []string{"default_class", "classes", "ratios"}
	classKeys     = []string{"name", "basis", "comm_fraction"}
	ratioKeys     = []string{"from", "to", "class", "ratio"}
	slurmKeys     = []string{"settings", "partitions"}
)

// MaxMPSClients is the most MPS clients per GPU (Volta and later MPS: 48).
const MaxMPSClients = 48

// maxWatts bounds power figures, maxTFLOPS and maxBW datasheet figures.
const (
	maxWatts  = 1 << 20
	maxFigure = 1 << 24
)

// number decodes a number (integer or float scalar) in [lo, hi].
func (p *parser) number(n *yaml.Node, field string, lo, hi float64) (float64, error) {
	var v float64
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&v) != nil {
		return 0, p.errorf(n, field, ErrSyntax, "want a number, got %s", describe(n))
	}
	if !(v >= lo && v <= hi) {
		return 0, p.errorf(n, field, ErrRange, "must be between %g and %g, got %s", lo, hi, n.Value)
	}
	return v, nil
}

// ratio decodes an oversubscription: a number ≥ 1 or "N:M" (N/M ≥ 1).
func (p *parser) ratio(n *yaml.Node, field string) (float64, error) {
	const want = `a ratio >= 1: a number (2) or "N:M" ("2:1")`
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, ":") {
		a, b, _ := strings.Cut(n.Value, ":")
		x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if err1 != nil || err2 != nil || !(y > 0) {
			return 0, p.errorf(n, field, ErrSyntax, "want %s, got %s", want, describe(n))
		}
		if v := x / y; v >= 1 && v <= 1024 {
			return v, nil
		}
		return 0, p.errorf(n, field, ErrRange, "want %s, got %s", want, describe(n))
	}
	return p.number(n, field, 1, 1024)
}

// seconds decodes a duration in seconds: digits are seconds (60), a
// number with unit s, m or h ("90s", "30m", "2h"), or a Slurm time with a
// colon or dash ("1:00:00", "1-00:00:00").
func (p *parser) seconds(n *yaml.Node, field string) (int64, error) {
	const want = `seconds (60), "90s", "30m", "2h" or a Slurm time ("1:00:00")`
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return 0, p.errorf(n, field, ErrSyntax, "want %s, got %s", want, describe(n))
	}
	s := n.Value
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "s"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		s, mult = s[:len(s)-1], 60
	case strings.HasSuffix(s, "h"):
		s, mult = s[:len(s)-1], 3600
	}
	if x, err := strconv.ParseInt(s, 10, 64); err == nil {
		if x < 0 || x > 1<<40/mult {
			return 0, p.errorf(n, field, ErrRange, "must be between 0 and %d seconds, got %s", int64(1<<40), n.Value)
		}
		return x * mult, nil
	}
	if mult == 1 && strings.ContainsAny(s, ":-") {
		if secs, unlimited, err := ParseSlurmDuration(s); err == nil && !unlimited {
			return secs, nil
		}
	}
	return 0, p.errorf(n, field, ErrSyntax, "want %s, got %s", want, describe(n))
}

// i32 decodes an integer field of f into *dst when present.
func (p *parser) i32(f *fields, key string, lo, hi int64, dst *int32) error {
	if n := f.get(key); n != nil {
		v, err := p.intRange(n, f.field(key), lo, hi)
		if err != nil {
			return err
		}
		*dst = int32(v)
	}
	return nil
}

// gpuModels decodes gpu_models into p.c.GPUModels.
func (p *parser) gpuModels(n *yaml.Node) error {
	items, err := p.sequence(n, "gpu_models", "GPU models")
	if err != nil {
		return err
	}
	for i, it := range items {
		path := fmt.Sprintf("gpu_models[%d]", i)
		f, err := p.mapping(it, path, gpuModelKeys, nil)
		if err != nil {
			return err
		}
		nn := f.get("name")
		if nn == nil {
			return p.missing(f, "name", "the model name")
		}
		name, err := p.name(nn, f.field("name"))
		if err != nil {
			return err
		}
		if _, dup := p.c.GPU(name); dup || name == CustomGPUModel {
			return p.errorf(nn, f.field("name"), ErrDuplicate, "GPU model %q is already defined (built-in or earlier in gpu_models)", name)
		}
		g := GPUSpec{Name: name, Source: "cluster spec " + path}
		if ln := f.get("like"); ln != nil {
			like, _ := p.scalar(ln, f.field("like"), "a GPU model name")
			base, ok := p.c.GPU(like)
			if !ok {
				return p.errorf(ln, f.field("like"), ErrUnknownName, "unknown GPU model %q (want %s)", like, p.gpuChoices())
			}
			g = base
			g.Name, g.Source = name, "cluster spec "+path+", like "+like
		}
		if tn := f.get("type"); tn != nil {
			t, err := p.name(tn, f.field("type"))
			if err != nil {
				return err
			}
			g.DefaultType = strings.ToLower(t)
		}
		if g.DefaultType == "" {
			return p.missing(f, "type", "the GRES type jobs request it by (or like: a catalog model)")
		}
		for _, x := range []struct {
			key string
			dst *int32
			hi  int64
		}{
			{"memory_gb", &g.MemGB, maxFigure}, {"bandwidth_gbs", &g.MemBWGBs, maxFigure},
			{"bf16_tflops", &g.BF16TFLOPS, maxFigure}, {"sms", &g.SMs, maxFigure},
			{"nvlink_gen", &g.NVLinkGen, 16}, {"nvlink_gbs", &g.NVLinkGBs, maxFigure},
		} {
			if err := p.i32(f, x.key, 0, x.hi, x.dst); err != nil {
				return err
			}
		}
		tdpSet := f.get("tdp_w") != nil
		if err := p.i32(f, "tdp_w", 0, maxWatts, &g.TDPW); err != nil {
			return err
		}
		if tdpSet {
			g.IdleW, g.BusyW = idle(g.TDPW), g.TDPW
		}
		if err := p.i32(f, "idle_w", 0, maxWatts, &g.IdleW); err != nil {
			return err
		}
		if err := p.i32(f, "busy_w", 0, maxWatts, &g.BusyW); err != nil {
			return err
		}
		if tn := f.get("nvlink_topology"); tn != nil {
			t, _ := p.scalar(tn, f.field("nvlink_topology"), "nvswitch or bridge")
			if t != NVLinkSwitch && t != NVLinkBridge {
				return p.errorf(tn, f.field("nvlink_topology"), ErrRange, "want %s or %s, got %q", NVLinkSwitch, NVLinkBridge, t)
			}
			g.NVLinkTopo = t
		}
		if mn := f.get("mig"); mn != nil {
			m, _ := p.scalar(mn, f.field("mig"), "a MIG geometry name")
			geo, ok := LookupMIG(m)
			if !ok {
				return p.errorf(mn, f.field("mig"), ErrUnknownName, "unknown MIG geometry %q (want %s)", m, migGeometryChoices())
			}
			g.MIG = geo.Name
		}
		p.c.GPUModels = append(p.c.GPUModels, g)
	}
	slices.SortFunc(p.c.GPUModels, func(a, b GPUSpec) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// nodeModel returns the node model called name (spec, then catalog).
func (p *parser) nodeModel(name string) (NodeModel, bool) {
	for _, m := range p.c.NodeModels {
		if m.Name == name {
			return m, true
		}
	}
	return LookupNodeModel(name)
}

func (p *parser) nodeModelChoices() string {
	var names []string
	for _, m := range p.c.NodeModels {
		names = append(names, m.Name)
	}
	for _, m := range nodeCatalog {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// gpuChoices lists spec and catalog GPU model names for messages.
func (p *parser) gpuChoices() string {
	var names []string
	for _, g := range p.c.GPUModels {
		names = append(names, g.Name)
	}
	return strings.Join(append(names, gpuModelChoices()), ", ")
}

// nodeModels decodes node_models into p.c.NodeModels.
func (p *parser) nodeModels(n *yaml.Node) error {
	items, err := p.sequence(n, "node_models", "node models")
	if err != nil {
		return err
	}
	for i, it := range items {
		path := fmt.Sprintf("node_models[%d]", i)
		f, err := p.mapping(it, path, nodeModelKeys, nil)
		if err != nil {
			return err
		}
		nn := f.get("name")
		if nn == nil {
			return p.missing(f, "name", "the model name")
		}
		name, err := p.name(nn, f.field("name"))
		if err != nil {
			return err
		}
		if _, dup := p.nodeModel(name); dup {
			return p.errorf(nn, f.field("name"), ErrDuplicate, "node model %q is already defined (built-in or earlier in node_models)", name)
		}
		m := NodeModel{Name: name, Interconnect: InterconnectPCIe, Source: "cluster spec " + path}
		if ln := f.get("like"); ln != nil {
			like, _ := p.scalar(ln, f.field("like"), "a node model name")
			base, ok := p.nodeModel(like)
			if !ok {
				return p.errorf(ln, f.field("like"), ErrUnknownName, "unknown node model %q (want %s)", like, p.nodeModelChoices())
			}
			m = base
			m.Name, m.Source = name, "cluster spec "+path+", like "+like
		}
		if gn := f.get("gpu"); gn != nil {
			cnt, model, _, err := p.gpu(gn, f.field("gpu"))
			if err != nil {
				return err
			}
			m.GPUs, m.GPUModel = cnt, model
		}
		if in := f.get("interconnect"); in != nil {
			s, _ := p.scalar(in, f.field("interconnect"), "nvswitch, nvlink-bridge or pcie")
			if s != InterconnectNVSwitch && s != InterconnectBridge && s != InterconnectPCIe {
				return p.errorf(in, f.field("interconnect"), ErrRange, "want %s, %s or %s, got %q", InterconnectNVSwitch, InterconnectBridge, InterconnectPCIe, s)
			}
			m.Interconnect = s
		}
		if err := p.i32(f, "nvswitches", 0, 64, &m.NVSwitches); err != nil {
			return err
		}
		if err := p.i32(f, "cpus", 1, maxCPUsPerNode, &m.CPUs); err != nil {
			return err
		}
		if mn := f.get("memory"); mn != nil {
			if m.MemMB, err = p.memory(mn, f.field("memory")); err != nil {
				return err
			}
		}
		if err := p.i32(f, "hcas", 0, 64, &m.HCAs); err != nil {
			return err
		}
		if err := p.i32(f, "hca_gbps", 0, 1<<20, &m.HCAGbps); err != nil {
			return err
		}
		if err := p.i32(f, "max_power_w", 0, maxWatts, &m.MaxPowerW); err != nil {
			return err
		}
		if f.get("base_power_w") == nil && f.get("max_power_w") != nil {
			if g, ok := p.c.GPU(m.GPUModel); ok {
				m.BasePowerW = max(m.MaxPowerW-m.GPUs*g.TDPW, 0)
			}
		}
		if err := p.i32(f, "base_power_w", 0, maxWatts, &m.BasePowerW); err != nil {
			return err
		}
		if m.CPUs == 0 || m.MemMB == 0 {
			return p.missing(f, "cpus", "cpus and memory (or like: a node model)")
		}
		p.c.NodeModels = append(p.c.NodeModels, m)
	}
	slices.SortFunc(p.c.NodeModels, func(a, b NodeModel) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// groupHW is what nodeGroup takes from the hardware keys of a group.
type groupHW struct {
	model  *NodeModel
	mig    *MIGConfig
	mps    *MPSConfig
	weight int32
	base   float64
	baseOK bool
}

// groupHardware decodes node_groups[i].{model, weight, power}; mig and mps
// need the GPU and are decoded by groupSharing.
func (p *parser) groupHardware(f *fields) (groupHW, error) {
	h := groupHW{weight: 1}
	if mn := f.get("model"); mn != nil {
		name, err := p.scalar(mn, f.field("model"), "a node model name")
		if err != nil {
			return h, err
		}
		m, ok := p.nodeModel(name)
		if !ok {
			return h, p.errorf(mn, f.field("model"), ErrUnknownName, "unknown node model %q (want %s)", name, p.nodeModelChoices())
		}
		h.model = &m
		h.base, h.baseOK = float64(m.BasePowerW), true
	}
	if err := p.i32(f, "weight", 0, math.MaxInt32, &h.weight); err != nil {
		return h, err
	}
	if pn := f.get("power"); pn != nil {
		pf, err := p.mapping(pn, f.field("power"), groupPowerKey, nil)
		if err != nil {
			return h, err
		}
		if bn := pf.get("base_w"); bn != nil {
			if h.base, err = p.number(bn, pf.field("base_w"), 0, maxWatts); err != nil {
				return h, err
			}
			h.baseOK = true
		}
	}
	return h, nil
}

// groupSharing decodes node_groups[i].mig and .mps for nodes with gpus
// GPUs of model (resolved; nil for custom).
func (p *parser) groupSharing(f *fields, h *groupHW, gpus int32, model *GPUSpec) error {
	mn, sn := f.get("mig"), f.get("mps")
	if mn != nil && sn != nil {
		return p.errorf(sn, f.field("mps"), ErrRange, "mig and mps are exclusive on a node group in this version (MPS inside MIG instances is not modeled)")
	}
	if sn != nil {
		sf, err := p.mapping(sn, f.field("mps"), mpsKeys, nil)
		if err != nil {
			return err
		}
		cn := sf.get("max_clients")
		if cn == nil {
			return p.missing(sf, "max_clients", fmt.Sprintf("jobs sharing one GPU, 1 to %d", MaxMPSClients))
		}
		v, err := p.intRange(cn, sf.field("max_clients"), 1, MaxMPSClients)
		if err != nil {
			return err
		}
		if gpus == 0 {
			return p.errorf(sn, f.field("mps"), ErrRange, "the node group has no GPUs to share")
		}
		h.mps = &MPSConfig{MaxClients: int32(v)}
	}
	if mn == nil {
		return nil
	}
	field := f.field("mig")
	mf, err := p.mapping(mn, field, migKeys, nil)
	if err != nil {
		return err
	}
	if gpus == 0 {
		return p.errorf(mn, field, ErrRange, "the node group has no GPUs")
	}
	if model == nil || model.MIG == "" {
		name := CustomGPUModel
		if model != nil {
			name = model.Name
		}
		return p.errorf(mn, field, ErrRange, "GPU model %s has no MIG profile table (want a GPU model with one: %s)", name, migGeometryChoices())
	}
	geo, _ := LookupMIG(model.MIG)
	m := &MIGConfig{Geometry: geo, GPUs: gpus}
	if err := p.i32(mf, "gpus", 1, int64(gpus), &m.GPUs); err != nil {
		return err
	}
	mode := "fixed"
	if md := mf.get("mode"); md != nil {
		mode, _ = p.scalar(md, mf.field("mode"), "fixed or dynamic")
		if mode != "fixed" && mode != "dynamic" {
			return p.errorf(md, mf.field("mode"), ErrRange, "want fixed or dynamic, got %q", mode)
		}
	}
	ln := mf.get("layout")
	switch {
	case mode == "dynamic":
		if ln != nil {
			return p.errorf(ln, mf.field("layout"), ErrRange, "a dynamic MIG node group has no fixed layout (the scheduler repartitions empty GPUs)")
		}
		m.Dynamic = true
		m.ReconfigureDelay = 60
		if dn := mf.get("reconfigure_delay"); dn != nil {
			if m.ReconfigureDelay, err = p.seconds(dn, mf.field("reconfigure_delay")); err != nil {
				return err
			}
		}
	case ln == nil:
		return p.missing(mf, "layout", "the instances of each MIG GPU, [3g.40gb, 2g.20gb, 1g.10gb], or mode: dynamic")
	default:
		if dn := mf.get("reconfigure_delay"); dn != nil {
			return p.errorf(dn, mf.field("reconfigure_delay"), ErrRange, "only a dynamic MIG node group is reconfigured")
		}
		items := []*yaml.Node{ln}
		if ln.Kind == yaml.SequenceNode {
			items = ln.Content
		}
		var profiles []int32
		for i, it := range items {
			it = deref(it)
			fi := fmt.Sprintf("%s[%d]", mf.field("layout"), i)
			if ln.Kind != yaml.SequenceNode {
				fi = mf.field("layout")
			}
			s, err := p.scalar(it, fi, "MIG profile names")
			if err != nil {
				return err
			}
			for _, name := range strings.Split(s, ",") {
				pi, ok := geo.Profile(strings.TrimSpace(name))
				if !ok {
					return p.errorf(it, fi, ErrUnknownName, "unknown profile %q (want %s)", strings.TrimSpace(name), geo.ProfileNames())
				}
				profiles = append(profiles, pi)
			}
		}
		if len(profiles) == 0 {
			return p.errorf(ln, mf.field("layout"), ErrMissing, "must list at least one MIG profile")
		}
		if m.Layout, err = geo.Layout(profiles); err != nil {
			return p.errorf(ln, mf.field("layout"), ErrRange, "cannot be configured on %s: %v", model.Name, err.(*LayoutError).Reason)
		}
	}
	h.mig = m
	return nil
}

// fabric decodes the fabric section once nodes and groups are known.
func (p *parser) fabric(n *yaml.Node) error {
	f, err := p.mapping(n, "fabric", fabricKeys, nil)
	if err != nil {
		return err
	}
	kn := f.get("kind")
	if kn == nil {
		return p.missing(f, "kind", "fat-tree, superpod or tree")
	}
	kind, _ := p.scalar(kn, "fabric.kind", "fat-tree, superpod or tree")
	allowed := map[string][]string{
		FabricFatTree:  {"kind", "nodes", "link", "link_gbps", "leaf_size", "leaves_per_pod", "spines", "oversubscription", "pod_oversubscription", "blocks", "block_sizes"},
		FabricSuperPOD: {"kind", "nodes", "link", "link_gbps", "su_size", "rails", "blocks", "block_sizes"},
		FabricTree:     {"kind", "switches", "blocks", "block_sizes"},
	}
	keys, ok := allowed[kind]
	if !ok {
		return p.errorf(kn, "fabric.kind", ErrRange, "want fat-tree, superpod or tree, got %q", kind)
	}
	for _, k := range fabricKeys {
		if kn, set := f.keys[k]; set && !slices.Contains(keys, k) {
			return p.errorf(kn, f.field(k), ErrUnknownField, "not a key of a %s fabric (want %s)", kind, strings.Join(keys, ", "))
		}
	}
	var link int32
	if ln := f.get("link"); ln != nil {
		s, _ := p.scalar(ln, "fabric.link", "edr, hdr, ndr200, ndr or xdr")
		v, ok := LinkGbps(s)
		if !ok {
			return p.errorf(ln, "fabric.link", ErrRange, "unknown link rate %q (want edr, hdr, ndr200, ndr or xdr; or link_gbps)", s)
		}
		link = v
	}
	if err := p.i32(f, "link_gbps", 1, 1<<20, &link); err != nil {
		return err
	}
	nodes := make([]int32, len(p.c.Nodes))
	for i := range nodes {
		nodes[i] = int32(i)
	}
	if nn := f.get("nodes"); nn != nil {
		if nodes, err = p.partitionNodes(nn, "fabric.nodes"); err != nil {
			return err
		}
	}
	var fab *Fabric
	switch kind {
	case FabricFatTree:
		var ft FatTreeParams
		ft.LinkGbps = link
		ln := f.get("leaf_size")
		if ln == nil {
			return p.missing(f, "leaf_size", "nodes per leaf switch")
		}
		if err := p.i32(f, "leaf_size", 1, MaxClusterNodes, &ft.LeafSize); err != nil {
			return err
		}
		if err := p.i32(f, "leaves_per_pod", 1, MaxClusterNodes, &ft.LeavesPerPod); err != nil {
			return err
		}
		if err := p.i32(f, "spines", 1, 1<<16, &ft.Spines); err != nil {
			return err
		}
		if on := f.get("oversubscription"); on != nil {
			if ft.LeafOversubscription, err = p.ratio(on, "fabric.oversubscription"); err != nil {
				return err
			}
		}
		if on := f.get("pod_oversubscription"); on != nil {
			if ft.LeavesPerPod == 0 {
				return p.errorf(on, "fabric.pod_oversubscription", ErrRange, "only a three-level tree (leaves_per_pod) has pods")
			}
			if ft.PodOversubscription, err = p.ratio(on, "fabric.pod_oversubscription"); err != nil {
				return err
			}
		}
		fab, err = BuildFatTree(ft, nodes, len(p.c.Nodes))
	case FabricSuperPOD:
		var su, rails int32
		if err := p.i32(f, "su_size", 1, MaxClusterNodes, &su); err != nil {
			return err
		}
		if err := p.i32(f, "rails", 1, 64, &rails); err != nil {
			return err
		}
		if rails == 0 && len(nodes) > 0 {
			rails = p.c.Nodes[nodes[0]].GPUs
		}
		if link == 0 {
			link = 400
		}
		fab, err = BuildSuperPOD(su, rails, link, nodes, len(p.c.Nodes))
	case FabricTree:
		sn := f.get("switches")
		if sn == nil {
			return p.missing(f, "switches", "a list of switches with name and nodes or switches")
		}
		items, err := p.sequence(sn, "fabric.switches", "switches")
		if err != nil {
			return err
		}
		var sw []TreeSwitch
		for i, it := range items {
			path := fmt.Sprintf("fabric.switches[%d]", i)
			sf, err := p.mapping(it, path, switchKeys, nil)
			if err != nil {
				return err
			}
			ts := TreeSwitch{Line: deref(it).Line}
			nn := sf.get("name")
			if nn == nil {
				return p.missing(sf, "name", "the switch name")
			}
			if ts.Name, err = p.name(nn, sf.field("name")); err != nil {
				return err
			}
			if x := sf.get("nodes"); x != nil {
				ts.Nodes, _ = p.scalar(x, sf.field("nodes"), "a hostlist of nodes")
			}
			if x := sf.get("switches"); x != nil {
				ts.Switches, _ = p.scalar(x, sf.field("switches"), "a hostlist of switches")
			}
			if err := p.i32(sf, "link_gbps", 1, 1<<20, &ts.LinkGbps); err != nil {
				return err
			}
			if on := sf.get("oversubscription"); on != nil {
				if ts.Oversubscription, err = p.ratio(on, sf.field("oversubscription")); err != nil {
					return err
				}
			}
			sw = append(sw, ts)
		}
		fab, err = BuildTree(sw, func(name string) (int32, bool) {
			i, ok := p.nodeByName[name]
			return i, ok
		}, len(p.c.Nodes))
		if err != nil {
			// Point at the switch the message names, when it does.
			line := sn
			for i, s := range sw {
				if strings.HasPrefix(err.Error(), "switch "+strconv.Quote(s.Name)) {
					line = deref(items[i])
					break
				}
			}
			return p.errorf(line, "fabric.switches", ErrRange, "%v", err)
		}
	}
	if err != nil {
		return p.errorf(kn, "fabric", ErrRange, "%v", err)
	}
	if bn := f.get("blocks"); bn != nil {
		if err := p.fabricBlocks(fab, bn); err != nil {
			return err
		}
	}
	if err := p.blockSizes(fab, f); err != nil {
		return err
	}
	p.c.Fabric = fab
	for i := range p.c.Nodes {
		p.c.Nodes[i].Switches = fab.NodeChain(int32(i))
		if p.c.Nodes[i].Block = fab.BlockOf(int32(i)) + 1; p.c.Nodes[i].Block > 0 {
			p.c.Nodes[i].BlockLevels = &fab.Levels
		}
	}
	return nil
}

// power decodes the power section.
func (p *parser) power(n *yaml.Node) error {
	f, err := p.mapping(n, "power", powerKeys, nil)
	if err != nil {
		return err
	}
	m := &p.c.Power
	if x := f.get("pue"); x != nil {
		if m.PUE, err = p.number(x, "power.pue", 1, 10); err != nil {
			return err
		}
	}
	if x := f.get("price_per_kwh"); x != nil {
		if m.PricePerKWh, err = p.number(x, "power.price_per_kwh", 0, 1e6); err != nil {
			return err
		}
	}
	if x := f.get("currency"); x != nil {
		if m.Currency, err = p.name(x, "power.currency"); err != nil {
			return err
		}
	}
	if x := f.get("suspend_time"); x != nil {
		if m.SuspendTime, err = p.seconds(x, "power.suspend_time"); err != nil {
			return err
		}
	}
	if x := f.get("resume_timeout"); x != nil {
		if m.ResumeTimeout, err = p.seconds(x, "power.resume_timeout"); err != nil {
			return err
		}
	}
	if x := f.get("suspend_timeout"); x != nil {
		if m.SuspendTimeout, err = p.seconds(x, "power.suspend_timeout"); err != nil {
			return err
		}
	}
	if x := f.get("suspended_w"); x != nil {
		if m.SuspendedW, err = p.number(x, "power.suspended_w", 0, maxWatts); err != nil {
			return err
		}
	}
	exempt := make([]bool, len(p.c.Nodes))
	found := false
	if x := f.get("suspend_exc_nodes"); x != nil {
		nodes, err := p.partitionNodes(x, "power.suspend_exc_nodes")
		if err != nil {
			return err
		}
		for _, ni := range nodes {
			exempt[ni], found = true, true
		}
	}
	if x := f.get("suspend_exc_parts"); x != nil {
		items, err := p.sequence(x, "power.suspend_exc_parts", "partition names")
		if err != nil {
			return err
		}
		for i, it := range items {
			fi := fmt.Sprintf("power.suspend_exc_parts[%d]", i)
			name, err := p.name(deref(it), fi)
			if err != nil {
				return err
			}
			pi := p.c.PartitionIndex(name)
			if pi < 0 {
				return p.errorf(deref(it), fi, ErrUnknownName, "unknown partition %q", name)
			}
			for _, ni := range p.c.Partitions[pi].Nodes {
				exempt[ni], found = true, true
			}
		}
	}
	if found {
		for i, e := range exempt {
			if e {
				m.SuspendExempt = append(m.SuspendExempt, int32(i))
			}
		}
	}
	return nil
}

// runtime decodes the runtime section on top of DefaultRuntimeModel.
func (p *parser) runtime(n *yaml.Node) error {
	f, err := p.mapping(n, "runtime", runtimeKeys, nil)
	if err != nil {
		return err
	}
	m := &p.c.Runtime
	if cn := f.get("classes"); cn != nil {
		items, err := p.sequence(cn, "runtime.classes", "job classes")
		if err != nil {
			return err
		}
		for i, it := range items {
			path := fmt.Sprintf("runtime.classes[%d]", i)
			cf, err := p.mapping(it, path, classKeys, nil)
			if err != nil {
				return err
			}
			nn := cf.get("name")
			if nn == nil {
				return p.missing(cf, "name", "the class name")
			}
			name, err := p.name(nn, cf.field("name"))
			if err != nil {
				return err
			}
			c, ok := m.Class(name)
			if !ok {
				c = JobClass{Name: name, Basis: BasisTFLOPS, CommFraction: DefaultCommFraction}
			}
			if bn := cf.get("basis"); bn != nil {
				b, _ := p.scalar(bn, cf.field("basis"), "tflops or bandwidth")
				if b != BasisTFLOPS && b != BasisBandwidth {
					return p.errorf(bn, cf.field("basis"), ErrRange, "want %s or %s, got %q", BasisTFLOPS, BasisBandwidth, b)
				}
				c.Basis = b
			}
			if fn := cf.get("comm_fraction"); fn != nil {
				if c.CommFraction, err = p.number(fn, cf.field("comm_fraction"), 0, 1); err != nil {
					return err
				}
			}
			if j := slices.IndexFunc(m.Classes, func(x JobClass) bool { return x.Name == name }); j >= 0 {
				m.Classes[j] = c
			} else {
				m.Classes = append(m.Classes, c)
			}
		}
	}
	if dn := f.get("default_class"); dn != nil {
		name, err := p.name(dn, "runtime.default_class")
		if err != nil {
			return err
		}
		if _, ok := m.Class(name); !ok {
			return p.errorf(dn, "runtime.default_class", ErrUnknownName, "unknown job class %q", name)
		}
		m.DefaultClass = name
	}
	if rn := f.get("ratios"); rn != nil {
		items, err := p.sequence(rn, "runtime.ratios", "speed ratios")
		if err != nil {
			return err
		}
		for i, it := range items {
			path := fmt.Sprintf("runtime.ratios[%d]", i)
			rf, err := p.mapping(it, path, ratioKeys, nil)
			if err != nil {
				return err
			}
			var r SpeedRatio
			for _, k := range []string{"from", "to"} {
				x := rf.get(k)
				if x == nil {
					return p.missing(rf, k, "a GPU model name")
				}
				s, _ := p.scalar(x, rf.field(k), "a GPU model name")
				if _, ok := p.c.GPU(s); !ok {
					return p.errorf(x, rf.field(k), ErrUnknownName, "unknown GPU model %q (want %s)", s, p.gpuChoices())
				}
				if k == "from" {
					r.From = s
				} else {
					r.To = s
				}
			}
			if x := rf.get("class"); x != nil {
				r.Class, _ = p.scalar(x, rf.field("class"), "a job class")
				if _, ok := m.Class(r.Class); !ok {
					return p.errorf(x, rf.field("class"), ErrUnknownName, "unknown job class %q", r.Class)
				}
			}
			x := rf.get("ratio")
			if x == nil {
				return p.missing(rf, "ratio", "how many times faster jobs run on to than on from")
			}
			if r.Ratio, err = p.number(x, rf.field("ratio"), 1e-3, 1e3); err != nil {
				return err
			}
			m.Ratios = append(m.Ratios, r)
		}
	}
	return nil
}

// slurm decodes the slurm section: settings (a mapping of slurm.conf keys
// to values) and partitions (partition name → mapping of keys to values).
func (p *parser) slurm(n *yaml.Node) error {
	f, err := p.mapping(n, "slurm", slurmKeys, nil)
	if err != nil {
		return err
	}
	s := &SlurmSettings{}
	kv := func(n *yaml.Node, field string) ([]KeyValue, error) {
		n = deref(n)
		if n.Kind != yaml.MappingNode {
			return nil, p.errorf(n, field, ErrSyntax, "want a mapping of slurm.conf keys to values, got %s", describe(n))
		}
		var out []KeyValue
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := deref(n.Content[i]), deref(n.Content[i+1])
			if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
				return nil, p.errorf(k, field, ErrSyntax, "want key: value pairs of strings")
			}
			if slices.ContainsFunc(out, func(x KeyValue) bool { return strings.EqualFold(x.Key, k.Value) }) {
				return nil, p.errorf(k, joinField(field, k.Value), ErrDuplicate, "key given twice")
			}
			out = append(out, KeyValue{k.Value, v.Value})
		}
		return out, nil
	}
	if sn := f.get("settings"); sn != nil {
		if s.Settings, err = kv(sn, "slurm.settings"); err != nil {
			return err
		}
	}
	if pn := f.get("partitions"); pn != nil {
		pn = deref(pn)
		if pn.Kind != yaml.MappingNode {
			return p.errorf(pn, "slurm.partitions", ErrSyntax, "want a mapping of partition names to settings, got %s", describe(pn))
		}
		for i := 0; i+1 < len(pn.Content); i += 2 {
			k := deref(pn.Content[i])
			if p.c.PartitionIndex(k.Value) < 0 {
				return p.errorf(k, "slurm.partitions", ErrUnknownName, "unknown partition %q", k.Value)
			}
			field := "slurm.partitions." + k.Value
			kvs, err := kv(pn.Content[i+1], field)
			if err != nil {
				return err
			}
			s.Partitions = append(s.Partitions, PartitionSettings{Partition: k.Value, Settings: kvs})
		}
	}
	p.c.Slurm = s
	return nil
}

// blockSizes decodes fabric.block_sizes (Slurm's BlockSizes: node counts,
// the first the base block) and sets the fabric's block levels.
func (p *parser) blockSizes(fab *Fabric, f *fields) error {
	var sizes []int64
	bn := f.get("block_sizes")
	if bn != nil {
		items, err := p.sequence(bn, f.field("block_sizes"), "node counts such as [18, 36, 72]")
		if err != nil {
			return err
		}
		for _, it := range items {
			v, err := p.intRange(it, f.field("block_sizes"), 1, 1<<31-1)
			if err != nil {
				return err
			}
			sizes = append(sizes, v)
		}
	}
	if err := fab.SetBlockSizes(sizes); err != nil {
		if bn == nil {
			bn = f.get("blocks")
		}
		return p.errorf(bn, f.field("block_sizes"), ErrRange, "%v", err)
	}
	return nil
}

// fabricBlocks decodes fabric.blocks (fabric_block.go): a list of {name,
// nodes} multi-node NVLink domains.
func (p *parser) fabricBlocks(fab *Fabric, bn *yaml.Node) error {
	items, err := p.sequence(bn, "fabric.blocks", "blocks")
	if err != nil {
		return err
	}
	var bs []BlockSpec
	for i, it := range items {
		path := fmt.Sprintf("fabric.blocks[%d]", i)
		bf, err := p.mapping(it, path, []string{"name", "nodes"}, nil)
		if err != nil {
			return err
		}
		b := BlockSpec{Line: deref(it).Line}
		nn := bf.get("name")
		if nn == nil {
			return p.missing(bf, "name", "the block name")
		}
		if b.Name, err = p.name(nn, bf.field("name")); err != nil {
			return err
		}
		x := bf.get("nodes")
		if x == nil {
			return p.missing(bf, "nodes", "a hostlist of the block's nodes")
		}
		b.Nodes, _ = p.scalar(x, bf.field("nodes"), "a hostlist of nodes")
		bs = append(bs, b)
	}
	err = fab.SetBlocks(bs, func(name string) (int32, bool) {
		i, ok := p.nodeByName[name]
		return i, ok
	}, len(p.c.Nodes))
	if err != nil {
		line := bn
		for i, b := range bs {
			if strings.HasPrefix(err.Error(), "block "+strconv.Quote(b.Name)) {
				line = deref(items[i])
				break
			}
		}
		return p.errorf(line, "fabric.blocks", ErrRange, "%v", err)
	}
	return nil
}
