package reports

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// How MIG instances and MPS shares count (see doc.go, "MIG instances and
// MPS shares"): an instance is worth its compute slices over a GPU's 7
// (hwmodels.MIGComputeSlices) of a GPU, so a 1g instance is 1/7 GPU, a 3g
// instance 3/7 and a 7g instance a whole GPU, whatever its memory slices;
// an MPS share of N percent is N/100 of a GPU. Sums are kept exactly in
// 700ths of a GPU (7 × 100, so both are whole numbers) and rounded to
// whole GPU-seconds only where a count is written (roundGPUParts).

// gpuUnit is what reports count allocations in: 1/700 of a GPU.
const gpuUnit = int64(hwmodels.MIGComputeSlices) * 100

// gpuParts returns what a holds in 700ths of a GPU: 700 per whole GPU,
// 100 per compute slice of each MIG instance, and 7 per percent of an MPS
// share.
func gpuParts(cl *hwmodels.Cluster, a *sim.NodeAlloc) int64 {
	g := gpuUnit * int64(a.GPUs)
	if a.MIG.Count != 0 {
		if p, n := a.MIG.Resolve(&cl.Nodes[a.Node]); p != nil {
			g += gpuUnit / int64(hwmodels.MIGComputeSlices) * int64(p.ComputeSlices) * int64(n)
		}
	}
	if a.MPS.Share != 0 {
		g += gpuUnit / 100 * int64(a.MPS.Share)
	}
	return g
}

// roundGPUParts converts x 700ths (≥ 0) to whole units, rounding half up.
func roundGPUParts(x int64) int64 { return (2*x + gpuUnit) / (2 * gpuUnit) }

// mpsTotal returns the MPS shares of alloc summed over its nodes (percent;
// sacct's gres/mps count with 100 per GPU).
func mpsTotal(alloc []sim.NodeAlloc) int64 {
	var n int64
	for i := range alloc {
		n += int64(alloc[i].MPS.Share)
	}
	return n
}

// migLabel lists the MIG instances of alloc as profile:count, summed over
// nodes, in profile-name order, comma-separated ("1g.10gb:2"); "" when
// alloc holds none.
func migLabel(cl *hwmodels.Cluster, alloc []sim.NodeAlloc) string {
	counts, names := migCounts(cl, alloc)
	if len(names) == 0 {
		return ""
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ":" + strconv.FormatInt(counts[n], 10)
	}
	return strings.Join(parts, ",")
}

// migCounts returns the MIG instances of alloc by profile name, and the
// names sorted.
func migCounts(cl *hwmodels.Cluster, alloc []sim.NodeAlloc) (map[string]int64, []string) {
	var counts map[string]int64
	var names []string
	for i := range alloc {
		a := &alloc[i]
		if a.MIG.Count == 0 {
			continue
		}
		p, n := a.MIG.Resolve(&cl.Nodes[a.Node])
		if p == nil {
			continue
		}
		if counts == nil {
			counts = map[string]int64{}
		}
		if _, ok := counts[p.Name]; !ok {
			names = append(names, p.Name)
		}
		counts[p.Name] += int64(n)
	}
	slices.Sort(names)
	return counts, names
}

// migGPUs returns how many of node's GPUs are in MIG mode (at most
// sim.MaxMIGGPUs, as the controller models them).
func migGPUs(node *hwmodels.Node) int32 {
	if node.MIG == nil || node.MIG.Geometry == nil {
		return 0
	}
	return min(node.MIG.GPUs, sim.MaxMIGGPUs, node.GPUs)
}

// hasMIG reports whether cl has a node with MIG GPUs.
func hasMIG(cl *hwmodels.Cluster) bool {
	for i := range cl.Nodes {
		if migGPUs(&cl.Nodes[i]) > 0 {
			return true
		}
	}
	return false
}

// migTRES returns the AllocTRES entries of a MIG allocation as sacct
// prints them: each instance is a GPU GRES of its own type, so gres/gpu
// counts the instances and gres/gpu:TYPE=N names them, TYPE the profile
// prefixed with the job's requested GPU type and "_" when it named one
// (gres.conf's h100_1g.20gb).
func migTRES(cl *hwmodels.Cluster, alloc []sim.NodeAlloc, gpuType string) (total int64, typed []string) {
	counts, names := migCounts(cl, alloc)
	for _, n := range names {
		total += counts[n]
		t := n
		if gpuType != "" {
			t = gpuType + "_" + n
		}
		typed = append(typed, fmt.Sprintf("gres/gpu:%s=%d", t, counts[n]))
	}
	return total, typed
}

// migSweep is the MIG state of every MIG GPU during the timeline's
// snapshot sweep, rebuilt from Record.MIG: which instances (by start
// slice) are held and, on a dynamic GPU, the profile it was last
// partitioned for (that of its last hold; a dynamic GPU is only ever held
// for the profile it is partitioned for, and stays partitioned).
type migSweep struct {
	cl   *hwmodels.Cluster
	gpus [][]migSweepGPU // per node; nil for nodes without MIG GPUs
	// layouts caches each (geometry, profile)'s homogeneous layout as a
	// dynamic GPU is partitioned.
	layouts map[[2]string][]hwmodels.MIGInstance
}

type migSweepGPU struct {
	prof int32 // dynamic: profile index partitioned for, -1 none
	held uint8 // bit s: the instance starting at memory slice s is held
}

// newMIGSweep returns the sweep state of cl, nil without MIG GPUs.
func newMIGSweep(cl *hwmodels.Cluster) *migSweep {
	if !hasMIG(cl) {
		return nil
	}
	m := &migSweep{cl: cl, gpus: make([][]migSweepGPU, len(cl.Nodes)), layouts: map[[2]string][]hwmodels.MIGInstance{}}
	for n := range cl.Nodes {
		if k := migGPUs(&cl.Nodes[n]); k > 0 {
			m.gpus[n] = slices.Repeat([]migSweepGPU{{prof: -1}}, int(k))
		}
	}
	return m
}

// hold applies (on) or releases one held instance.
func (m *migSweep) hold(h *sim.MIGHold, on bool) {
	if int(h.Node) >= len(m.gpus) || int(h.GPU) >= len(m.gpus[h.Node]) || h.Start < 0 || h.Start >= hwmodels.MIGMemSlices {
		return
	}
	g := &m.gpus[h.Node][h.GPU]
	if on {
		g.held |= 1 << uint(h.Start)
		g.prof = h.Profile
	} else {
		g.held &^= 1 << uint(h.Start)
	}
}

// layout returns the instances of MIG GPU g of node n.
func (m *migSweep) layout(n int, g *migSweepGPU) []hwmodels.MIGInstance {
	mc := m.cl.Nodes[n].MIG
	if !mc.Dynamic {
		return mc.Layout
	}
	if g.prof < 0 || int(g.prof) >= len(mc.Geometry.Profiles) {
		return nil
	}
	key := [2]string{mc.Geometry.Name, mc.Geometry.Profiles[g.prof].Name}
	l, ok := m.layouts[key]
	if !ok {
		l, _ = mc.Geometry.Layout(slices.Repeat([]int32{g.prof}, int(mc.Geometry.Profiles[g.prof].MaxInstances)))
		m.layouts[key] = l
	}
	return l
}

// fragmentation returns node n's free MIG compute slices and the part of
// them no active shape could use (see Sample.FreeMIGSlices). A MIG shape
// can use the node when the node is in one of its partitions, has its GPU
// type (if named), and has free its per-node CPUs, memory and instances
// (free instances of the profile, plus all a dynamic empty GPU would hold
// once repartitioned); it then uses the free instances of its profile
// and, on a dynamic node, every empty GPU.
func (m *migSweep) fragmentation(n int, active []int, shapes []pendingShape, freeCPU int32, freeMem int64) (free, unusable int32) {
	gs := m.gpus[n]
	if gs == nil {
		return 0, 0
	}
	node := &m.cl.Nodes[n]
	geo := node.MIG.Geometry
	dynamic := node.MIG.Dynamic
	capacity := sim.MIGCapacity(node)
	// Free instances by profile index; empty dynamic GPUs.
	var freeBy [16]int32
	var empty int32
	for k := range gs {
		g := &gs[k]
		if dynamic && g.held == 0 {
			empty++
			free += hwmodels.MIGComputeSlices
			continue
		}
		for _, in := range m.layout(n, g) {
			if g.held&(1<<uint(in.Start)) == 0 && int(in.Profile) < len(freeBy) {
				freeBy[in.Profile]++
				free += geo.Profiles[in.Profile].ComputeSlices
			}
		}
	}
	if free == 0 {
		return 0, 0
	}
	var usable [16]bool
	useEmpty := false
	for _, k := range active {
		sh := &shapes[k]
		if sh.mig == 0 || node.Partitions&sh.parts == 0 || sh.gpuType != "" && sh.gpuType != node.GPUType ||
			freeCPU < sh.cpus || node.MemMB != 0 && freeMem < sh.memMB {
			continue
		}
		pi := capacity.ProfileIndex(sh.mig)
		if pi < 0 || int(pi) >= len(freeBy) {
			continue
		}
		have := freeBy[pi]
		if dynamic {
			have += empty * geo.Profiles[pi].MaxInstances
		}
		if have >= sh.gpus {
			usable[pi] = true
			useEmpty = useEmpty || dynamic
		}
	}
	unusable = free
	if useEmpty {
		unusable -= empty * hwmodels.MIGComputeSlices
	}
	for pi := range geo.Profiles {
		if pi < len(usable) && usable[pi] {
			unusable -= freeBy[pi] * geo.Profiles[pi].ComputeSlices
		}
	}
	return free, unusable
}
