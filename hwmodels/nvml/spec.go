package nvml

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
)

// Host is what the probe knows of the machine besides its GPUs.
type Host struct {
	// Name is the host name; CPUs the logical CPUs; MemoryMiB the memory
	// (MemTotal of /proc/meminfo).
	Name      string
	CPUs      int
	MemoryMiB int64
}

// NVLinkGBsPerLink is the bidirectional bandwidth of one NVLink3 or
// NVLink4 link (25 GB/s each way): 12 links make the A100's 600 GB/s, 18
// the H100's 900 GB/s (../shared/reference/slurm-gpu-facts.md §6.4).
const NVLinkGBsPerLink = 50

// SpecName turns a host name into a cluster-spec name: letters, digits,
// '-', '_' and '.', at most 100 bytes; "node" when nothing is left.
func SpecName(s string) string {
	s, _, _ = strings.Cut(s, ".") // short host name
	b := []byte(strings.ToLower(s))
	out := b[:0]
	for _, c := range b {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			out = append(out, c)
		}
	}
	if len(out) > 100 {
		out = out[:100]
	}
	if len(out) == 0 {
		return "node"
	}
	return string(out)
}

// NodeSpec returns a cluster spec (hwmodels/SCHEMA.md, version 1) holding
// one gpu_models entry, one node_models entry named name, and a node group
// of one node (the host) using it: what hwmodels.ParseCluster accepts, and
// what an operator pastes into a cluster.yaml. Every value is commented
// with where it comes from. The GPU model is "like" the catalog model
// MatchGPU finds, overriding what NVML measured (SMs, TDP = default power
// limit, busy power = the limit in force when capped, idle power when the
// GPUs were idle, NVLink bandwidth from the active links). GPUs of
// different kinds on one node are described by GPU 0's kind, with a
// comment.
func NodeSpec(r *Readings, h Host, name string) ([]byte, error) {
	if len(r.GPUs) == 0 {
		return nil, fmt.Errorf("no GPUs to describe")
	}
	name = SpecName(name)
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	g0 := &r.GPUs[0]
	model, inCatalog := MatchGPU(g0.Name, g0.MemoryMiB)
	var cat hwmodels.GPUSpec
	if inCatalog {
		cat, _ = hwmodels.LookupGPU(model)
	}
	gpuName := name + "-gpu"

	w("# schedsim probe: %d x %s read through NVML on %s\n", len(r.GPUs), g0.Name, h.Name)
	w("# (driver %s, CUDA %s). Use this file as a cluster spec, or paste its\n", orUnknown(r.System.Driver), orUnknown(r.System.CUDADriver))
	w("# gpu_models and node_models entries into yours (node_groups[].model: %s).\n", name)
	for i := range r.GPUs {
		if r.GPUs[i].Name != g0.Name || r.GPUs[i].MemoryMiB != g0.MemoryMiB {
			w("# NOTE: GPU %d is a %s (%d MiB); the model below describes GPU 0 only.\n", i, r.GPUs[i].Name, r.GPUs[i].MemoryMiB)
		}
	}
	w("version: 1\nname: %s\n", name)

	// GPU model.
	w("gpu_models:\n  - name: %s\n", gpuName)
	if inCatalog {
		w("    like: %s   # catalog match for %q, %d MiB\n", model, g0.Name, g0.MemoryMiB)
	} else {
		typ := gresType(g0.Name)
		w("    type: %s   # %q is not in the catalog: no datasheet figures\n", typ, g0.Name)
		w("    memory_gb: %d   # %d MiB\n", (g0.MemoryMiB+1023)/1024, g0.MemoryMiB)
	}
	if g0.SMs > 0 {
		w("    sms: %d   # NVML multiprocessor count\n", g0.SMs)
	}
	if tdp := math.Round(g0.DefaultPowerLimitW); tdp > 0 {
		w("    tdp_w: %.0f   # default power limit\n", tdp)
		if lim := math.Round(g0.PowerLimitW); lim > 0 && lim < tdp {
			w("    busy_w: %.0f   # power limit in force (capped below the default)\n", lim)
		}
	}
	if idle, n := idlePower(r.GPUs); n > 0 {
		w("    idle_w: %.0f   # mean draw of the %d GPU(s) at 0 %% utilization when probed\n", idle, n)
	}
	topo, switches, activeMin, read := nvlinkTopology(r.GPUs)
	if read {
		w("    nvlink_gbs: %d   # %d active links x %d GB/s (fewest active on any GPU)\n", activeMin*NVLinkGBsPerLink, activeMin, NVLinkGBsPerLink)
		if activeMin > 0 {
			t := hwmodels.NVLinkBridge
			if topo == hwmodels.InterconnectNVSwitch {
				t = hwmodels.NVLinkSwitch
			}
			if !inCatalog || cat.NVLinkTopo != t {
				w("    nvlink_topology: %s   # from the links' remote devices\n", t)
			}
		}
	}

	// Node model.
	w("node_models:\n  - name: %s\n", name)
	w("    gpu: {model: %s, count: %d}\n", gpuName, len(r.GPUs))
	switch {
	case !read:
		w("    interconnect: %s   # NVML gave no NVLink state\n", hwmodels.InterconnectPCIe)
	case topo == hwmodels.InterconnectNVSwitch:
		w("    interconnect: %s   # links end at NVSwitches\n", topo)
		w("    nvswitches: %d   # distinct NVSwitch PCI bus ids behind the links\n", switches)
	case topo == hwmodels.InterconnectBridge:
		w("    interconnect: %s   # links end at other GPUs\n", topo)
	default:
		w("    interconnect: %s   # no active NVLink\n", topo)
	}
	w("    cpus: %d   # logical CPUs (Slurm CPUs; set cores if your slurm.conf counts cores)\n", max(h.CPUs, 1))
	w("    memory: %d   # MiB, MemTotal (Slurm RealMemory is usually set a little lower)\n", max(h.MemoryMiB, 1))

	// Node group of this host.
	w("node_groups:\n  - name: %s\n    model: %s\n", name, name)
	if layout, n, note := migLayout(r.GPUs); note != "" {
		w("    # %s\n", note)
	} else if n > 0 {
		w("    mig:   # MIG instances present when probed\n      layout: [%s]\n", strings.Join(layout, ", "))
		if n < len(r.GPUs) {
			w("      gpus: %d\n", n)
		}
	}
	return []byte(b.String()), nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// gresType guesses a GRES type from an NVML name outside the catalog:
// the last word with a digit ("NVIDIA RTX 6000 Ada" → "6000"), lower
// case, else "gpu".
func gresType(name string) string {
	words := strings.Fields(strings.ToLower(strings.TrimPrefix(name, "NVIDIA ")))
	for _, w := range words {
		if strings.ContainsAny(w, "0123456789") {
			return SpecName(w)
		}
	}
	return "gpu"
}

// idlePower is the mean power of the GPUs reading 0 % utilization (MIG
// GPUs give none and are left out).
func idlePower(gpus []GPU) (float64, int) {
	var sum float64
	n := 0
	for _, g := range gpus {
		if g.UtilizationPct == 0 && g.PowerW > 0 {
			sum += g.PowerW
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// nvlinkTopology says how the node's GPUs are joined: InterconnectNVSwitch
// when links end at NVSwitches (or, remote type unknown, at devices that
// are not GPUs of this node), InterconnectBridge when they end at GPUs,
// InterconnectPCIe without an active link. switches counts the distinct
// switch bus ids, activeMin the fewest active links of any GPU; read is
// false when no GPU reported its links.
func nvlinkTopology(gpus []GPU) (topo string, switches, activeMin int, read bool) {
	own := map[string]bool{}
	for _, g := range gpus {
		own[strings.ToLower(g.PCIBusID)] = true
	}
	sw := map[string]bool{}
	toGPU := false
	activeMin = math.MaxInt
	for _, g := range gpus {
		if len(g.NVLinks) > 0 {
			read = true
		}
		active := 0
		for _, l := range g.NVLinks {
			if !l.Active {
				continue
			}
			active++
			id := strings.ToLower(l.RemoteBusID)
			switch {
			case l.RemoteType == RemoteSwitch, l.RemoteType != RemoteGPU && id != "" && !own[id]:
				sw[id] = true
			default:
				toGPU = true
			}
		}
		activeMin = min(activeMin, active)
	}
	if !read {
		return hwmodels.InterconnectPCIe, 0, 0, false
	}
	switch {
	case len(sw) > 0:
		return hwmodels.InterconnectNVSwitch, len(sw), activeMin, true
	case toGPU:
		return hwmodels.InterconnectBridge, 0, activeMin, true
	}
	return hwmodels.InterconnectPCIe, 0, activeMin, true
}

// migLayout returns the MIG layout shared by the GPUs in MIG mode with
// instances, and how many GPUs have it; note says why there is none to
// write when the GPUs differ.
func migLayout(gpus []GPU) (layout []string, n int, note string) {
	for _, g := range gpus {
		if g.MIG == nil || !g.MIG.Current || len(g.MIG.Instances) == 0 {
			continue
		}
		var l []string
		for _, in := range g.MIG.Instances {
			l = append(l, in.Profile)
		}
		if n > 0 && !slices.Equal(l, layout) {
			return nil, 0, fmt.Sprintf("MIG layouts differ between GPUs (GPU %d: %s); set node_groups[].mig by hand", g.Index, strings.Join(l, ","))
		}
		layout = l
		n++
	}
	return layout, n, ""
}
