package sim

import (
	"fmt"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

// MIG allocation (NVIDIA MIG User Guide; Slurm gres.conf MIG types; see
// ../shared/reference/slurm-gpu-facts.md §5.3, §6.1–6.2).
//
// A node group's MIG GPUs (hwmodels.MIGConfig.GPUs of each node, numbered
// 0 to GPUs−1 here) hold MIG instances; the node's other GPUs are whole
// GPUs. Whole-GPU requests use only whole GPUs (NodeState.FreeGPUs counts
// them) and MIG requests (workload.Request.MIGProfile) only instances of
// their profile, as Slurm, where each MIG instance is a GPU GRES of its
// own type.
//
//   - Fixed layout (hwmodels.MIGConfig.Layout): every MIG GPU holds the
//     layout's instances for the whole run, validated by geometry when the
//     spec was loaded. A job takes free instances of its profile; which GPU
//     holds them changes no later fit, so the free state counts free
//     instances per profile. Slurm works this way (it never repartitions).
//   - Dynamic (mode: dynamic): a MIG GPU starts unpartitioned. A job takes
//     free instances of its profile on GPUs partitioned for that profile,
//     or has an empty GPU (no instance in use) repartitioned: the GPU's
//     instances are destroyed and it is partitioned into as many instances
//     of the job's profile as one GPU holds (7 × 1g, 4 × 1g with 2 memory
//     slices, 3 × 2g, 2 × 3g, 1 × 4g, 1 × 7g), placed by geometry
//     (hwmodels.MIGGeometry.Layout). A GPU with an instance in use is never
//     repartitioned, so a profile that the free slices would hold by count
//     waits until the GPU empties. A start that repartitions any GPU holds
//     its allocation from the pass that starts it and begins running
//     ReconfigureDelay seconds later: JobRecord.Start and RunningJob.Start
//     are the pass's time plus the delay, and its time limit counts from
//     then; the instances stay partitioned after the job ends.
//   - No job runs on a GPU before its repartition completes. Jobs the same
//     pass starts on its other instances begin when it completes, as the
//     job that caused it does (one reconfiguration makes them all). After
//     that pass the GPU is unavailable (MIGFree.GPU reports it so, and it
//     gives no room) until the repartition completes: the controller
//     refuses a start on it, and policies, which place only where the free
//     state has room, are not offered it. A node event at the completion
//     makes it available again and asks for a pass.
//
// An allocation's instances (MIGInstances) are a plain struct a policy
// writes and reads as fields. The free state (MIGFree) is one opaque word
// read through methods: the view is read-only, and policies copy it per
// node per pass (with NodeState) and update their copies, so it stays
// small. The controller keeps the instances themselves (GPU, start slice,
// holder) and records them in Record.MIG.

// MaxMIGGPUs is the most GPUs in MIG mode one node may have.
const MaxMIGGPUs = 8

// MIGFree is a node's free MIG capacity (NodeState.MIG), zero for a node
// without MIG GPUs or out of service. It names its MIG geometry, so it can
// be read without the node:
//
//   - fixed layout: the free instances of each profile of the geometry;
//   - dynamic: for each MIG GPU, the profile it is partitioned for (or
//     none), how many of its instances are in use, and whether it is
//     available (not while it is being repartitioned).
//
// Use its methods; the bit layout is not part of the contract.
type MIGFree uint64

const (
	migDynamic   MIGFree = 1 << 63
	migGeoShift          = 60 // 3 bits: index into hwmodels.MIGGeometries(), plus 1
	migCountBits         = 6  // fixed: free instances per profile
	migGPUBits           = 7  // dynamic: used (3 bits), profile+1 (3 bits), available (1 bit)
	migAvail             = 1 << 6
)

// migGeos are the built-in geometries; migCodes[g][p] is profile p of
// geometry g as a workload.MIGProfile, so requests resolve without strings.
var (
	migGeos  = hwmodels.MIGGeometries()
	migCodes = func() [][]workload.MIGProfile {
		if len(migGeos) > 7 {
			panic("sim: more built-in MIG geometries than MIGFree numbers")
		}
		out := make([][]workload.MIGProfile, len(migGeos))
		for g := range migGeos {
			for _, p := range migGeos[g].Profiles {
				code, err := workload.ParseMIGProfile(p.Name)
				if err != nil {
					panic("sim: built-in MIG profile " + p.Name + ": " + err.Error())
				}
				out[g] = append(out[g], code)
			}
		}
		return out
	}()
)

// migGeoIndex returns the index of geo among the built-in geometries, or -1.
func migGeoIndex(geo *hwmodels.MIGGeometry) int {
	for i := range migGeos {
		if migGeos[i].Name == geo.Name {
			return i
		}
	}
	return -1
}

// MIGCapacity returns the free MIG capacity of node with nothing allocated:
// every instance of a fixed layout free, or every dynamic MIG GPU empty
// and unpartitioned. It is zero for a node without MIG GPUs.
func MIGCapacity(node *hwmodels.Node) MIGFree {
	m := node.MIG
	if m == nil || m.GPUs <= 0 || m.Geometry == nil {
		return 0
	}
	gi := migGeoIndex(m.Geometry)
	if gi < 0 {
		return 0
	}
	gpus := min(m.GPUs, MaxMIGGPUs)
	f := MIGFree(gi+1) << migGeoShift // never zero, even with every instance in use
	if m.Dynamic {
		f |= migDynamic
		for g := range gpus {
			f |= migAvail << (uint(g) * migGPUBits)
		}
		return f
	}
	for _, in := range m.Layout {
		f += MIGFree(gpus) << (uint(in.Profile) * migCountBits)
	}
	return f
}

// Dynamic reports whether the node's MIG GPUs are repartitioned by the
// scheduler (hwmodels.MIGConfig.Dynamic).
func (f MIGFree) Dynamic() bool { return f&migDynamic != 0 }

// Geometry returns the MIG geometry f belongs to, nil when f is zero.
func (f MIGFree) Geometry() *hwmodels.MIGGeometry {
	if f == 0 {
		return nil
	}
	return &migGeos[f.geo()]
}

func (f MIGFree) geo() int { return int(f>>migGeoShift)&7 - 1 }

// ProfileIndex returns the index of p in f's geometry, or -1 when the
// geometry has no such profile (or f is zero).
func (f MIGFree) ProfileIndex(p workload.MIGProfile) int32 {
	if f == 0 || p == 0 {
		return -1
	}
	for i, c := range migCodes[f.geo()] {
		if c == p {
			return int32(i)
		}
	}
	return -1
}

// count returns the free instances of profile pi (fixed layout).
func (f MIGFree) count(pi int32) int32 {
	return int32(f>>(uint(pi)*migCountBits)) & (1<<migCountBits - 1)
}

// GPU returns dynamic MIG GPU g's state: whether it is available (false
// while it is being repartitioned, and in a MIGMeet where it is in use
// for different profiles), the profile index it is partitioned for (-1:
// not partitioned) and how many of its instances are in use.
func (f MIGFree) GPU(g int) (avail bool, profile, used int32) {
	b := int32(f>>(uint(g)*migGPUBits)) & (1<<migGPUBits - 1)
	return b&migAvail != 0, (b>>3)&7 - 1, b & 7
}

func (f MIGFree) setGPU(g int, avail bool, profile, used int32) MIGFree {
	b := MIGFree(used) | MIGFree(profile+1)<<3
	if avail {
		b |= migAvail
	}
	sh := uint(g) * migGPUBits
	return f&^((1<<migGPUBits-1)<<sh) | b<<sh
}

// GPURoom returns how many instances of profile index pi dynamic MIG GPU g
// can take now, and whether taking them repartitions it (it is empty and
// partitioned for another profile, or not at all).
func (f MIGFree) GPURoom(g int, pi int32) (room int32, repartition bool) {
	avail, prof, used := f.GPU(g)
	if !avail || pi < 0 {
		return 0, false
	}
	limit := migGeos[f.geo()].Profiles[pi].MaxInstances
	switch {
	case prof == pi:
		return limit - used, false
	case used == 0:
		return limit, true
	}
	return 0, false
}

// Instances returns how many instances of profile p the node can give now
// (free instances of a fixed layout; for a dynamic node, the free
// instances on GPUs partitioned for p plus what empty GPUs would hold once
// repartitioned), 0 when the node has no MIG GPU with that profile.
func (f MIGFree) Instances(p workload.MIGProfile) int32 {
	pi := f.ProfileIndex(p)
	if pi < 0 {
		return 0
	}
	if !f.Dynamic() {
		return f.count(pi)
	}
	var n int32
	for g := range MaxMIGGPUs {
		r, _ := f.GPURoom(g, pi)
		n += r
	}
	return n
}

// Take returns f less the instances of a and a placed: on a dynamic node
// an unplaced allocation is placed on the lowest-numbered GPUs that can
// take its instances (repartitioning empty GPUs where needed). ok is
// false, and f is returned unchanged, when a does not fit: its profile is
// not the geometry's, its count is negative, its PerGPU does not sum to
// its count, or PerGPU is set on a fixed layout.
func (f MIGFree) Take(a MIGInstances) (MIGFree, MIGInstances, bool) {
	if a == (MIGInstances{}) {
		return f, a, true
	}
	pi := f.ProfileIndex(a.Profile)
	if pi < 0 || a.Count < 0 {
		return f, a, false
	}
	if !f.Dynamic() {
		if a.Placed() || f.count(pi) < a.Count {
			return f, a, false
		}
		return f - MIGFree(a.Count)<<(uint(pi)*migCountBits), a, true
	}
	if !a.Placed() {
		left := a.Count
		for g := 0; g < MaxMIGGPUs && left > 0; g++ {
			r, _ := f.GPURoom(g, pi)
			k := min(r, left)
			a.PerGPU[g] = uint8(k)
			left -= k
		}
		if left > 0 {
			return f, MIGInstances{Profile: a.Profile, Count: a.Count}, false
		}
	}
	if a.placedCount() != a.Count {
		return f, a, false
	}
	out := f
	for g, k8 := range a.PerGPU {
		k := int32(k8)
		if k == 0 {
			continue
		}
		if r, _ := out.GPURoom(g, pi); r < k {
			return f, a, false
		}
		_, prof, used := out.GPU(g)
		if prof != pi {
			used = 0 // repartitioned
		}
		out = out.setGPU(g, true, pi, used+k)
	}
	return out, a, true
}

// Pack returns the allocation of n instances of profile p that keeps the
// most room on a dynamic node, placed: on GPUs partitioned for p and in
// use, fullest first; then on empty GPUs partitioned for p; then on empty
// GPUs repartitioned for p, lowest-numbered first (ties by GPU number). On
// a fixed layout, where the instances are fixed, it is unplaced. ok is
// false when they do not fit (the allocation is then none on a dynamic
// node).
func (f MIGFree) Pack(p workload.MIGProfile, n int32) (MIGInstances, bool) {
	pi := f.ProfileIndex(p)
	if pi < 0 || n <= 0 {
		return MIGInstances{}, false
	}
	if !f.Dynamic() {
		return MIGInstances{Profile: p, Count: n}, f.count(pi) >= n
	}
	type cand struct {
		g, rank, room int32
	}
	var cs [MaxMIGGPUs]cand
	k := 0
	for g := range MaxMIGGPUs {
		room, rep := f.GPURoom(g, pi)
		if room == 0 {
			continue
		}
		_, _, used := f.GPU(g)
		rank := int32(0) // in use for p
		switch {
		case rep:
			rank = 2
		case used == 0:
			rank = 1
		}
		cs[k] = cand{int32(g), rank, room}
		k++
	}
	slices.SortFunc(cs[:k], func(a, b cand) int {
		if a.rank != b.rank {
			return int(a.rank - b.rank)
		}
		if a.rank == 0 && a.room != b.room {
			return int(a.room - b.room)
		}
		return int(a.g - b.g)
	})
	a := MIGInstances{Profile: p, Count: n}
	for _, c := range cs[:k] {
		if n == 0 {
			break
		}
		m := min(c.room, n)
		a.PerGPU[c.g] = uint8(m)
		n -= m
	}
	if n > 0 {
		return MIGInstances{}, false
	}
	return a, true
}

// Give returns f with the instances of a free again. On a dynamic node a
// must be placed (as the controller records it and Take returns it); an
// unplaced allocation gives nothing back there. Instances stay
// partitioned.
func (f MIGFree) Give(a MIGInstances) MIGFree {
	if a == (MIGInstances{}) || f == 0 {
		return f
	}
	if !f.Dynamic() {
		if pi := f.ProfileIndex(a.Profile); pi >= 0 && !a.Placed() && a.Count > 0 {
			f += MIGFree(a.Count) << (uint(pi) * migCountBits)
		}
		return f
	}
	for g, k := range a.PerGPU {
		if k > 0 {
			avail, prof, used := f.GPU(g)
			f = f.setGPU(g, avail, prof, max(used-int32(k), 0))
		}
	}
	return f
}

// MIGMeet returns what is free in both a and b, for a policy that needs
// the capacity free throughout an interval: on a fixed layout the fewer
// free instances of each profile; on a dynamic node, per GPU, the more
// instances in use, a GPU in use for different profiles being unavailable
// and one empty in both but partitioned differently counting as not
// partitioned. Taking an allocation that fits the meet fits each of a and
// b. MPSMeet (mps.go) is its counterpart for MPS shares.
func MIGMeet(a, b MIGFree) MIGFree {
	if a == 0 || b == 0 || a.Dynamic() != b.Dynamic() || a.geo() != b.geo() {
		return 0
	}
	if !a.Dynamic() {
		out := a &^ (1<<migGeoShift - 1)
		for pi := range int32(len(migGeos[a.geo()].Profiles)) {
			out |= MIGFree(min(a.count(pi), b.count(pi))) << (uint(pi) * migCountBits)
		}
		return out
	}
	out := a
	for g := range MaxMIGGPUs {
		av1, p1, u1 := a.GPU(g)
		av2, p2, u2 := b.GPU(g)
		switch {
		case !av1 || !av2:
			out = out.setGPU(g, false, -1, 0)
		case u1 == 0 && u2 == 0:
			if p1 != p2 {
				p1 = -1
			}
			out = out.setGPU(g, true, p1, 0)
		case u2 == 0:
			out = out.setGPU(g, true, p1, u1)
		case u1 == 0:
			out = out.setGPU(g, true, p2, u2)
		case p1 == p2:
			out = out.setGPU(g, true, p1, max(u1, u2))
		default:
			out = out.setGPU(g, false, -1, 0)
		}
	}
	return out
}

// MIGInstances is the MIG instances an allocation holds on one node
// (NodeAlloc.MIG); the zero value is none. A policy writes it as a
// literal: MIGInstances{Profile: p, Count: 2} leaves the GPUs to the
// controller (on a fixed layout the only form; on a dynamic node the
// lowest-numbered GPUs that can take them, as Take places them), and
// PerGPU, when set, places them on a dynamic node's GPUs (MIGFree.Pack
// chooses a placement). The controller records dynamic nodes'
// allocations placed.
type MIGInstances struct {
	// Profile is the instances' profile: the job's
	// workload.Request.MIGProfile, one of the node's MIG geometry.
	Profile workload.MIGProfile
	// Count is how many instances.
	Count int32
	// PerGPU, when not all zero, is how many of the instances each MIG GPU
	// of a dynamic node holds (numbered as MIGFree.GPU numbers them); it
	// sums to Count.
	PerGPU [MaxMIGGPUs]uint8
}

// Placed reports whether PerGPU places the instances.
func (a MIGInstances) Placed() bool { return a.PerGPU != [MaxMIGGPUs]uint8{} }

// placedCount returns the sum of PerGPU.
func (a MIGInstances) placedCount() int32 {
	var n int32
	for _, k := range a.PerGPU {
		n += int32(k)
	}
	return n
}

// Resolve returns the profile of a's instances on node's MIG geometry and
// how many instances a holds; nil and 0 when a is none or the node's
// geometry lacks its profile.
func (a MIGInstances) Resolve(node *hwmodels.Node) (*hwmodels.MIGProfile, int32) {
	if a == (MIGInstances{}) || node == nil || node.MIG == nil || node.MIG.Geometry == nil {
		return nil, 0
	}
	geo := node.MIG.Geometry
	for i := range geo.Profiles {
		if c, err := workload.ParseMIGProfile(geo.Profiles[i].Name); err == nil && c == a.Profile {
			return &geo.Profiles[i], a.Count
		}
	}
	return nil, 0
}

// Sub takes a from s: whole GPUs, CPUs, memory, MIG instances and an MPS
// share. On a dynamic MIG node an unplaced a.MIG is placed (see
// MIGFree.Take) and rewritten placed, so that Add gives back the same
// instances; an unplaced a.MPS is placed first fit (mps.go) and rewritten
// likewise. It reports false when the instances or the share do
// not fit (s.MIG and s.MPS are then unchanged).
func (s *NodeState) Sub(a *NodeAlloc) bool {
	s.FreeGPUs -= a.GPUs
	s.FreeCPUs -= a.CPUs
	s.FreeMemMB -= a.MemMB
	if a.MPS != (MPSShare{}) {
		var ok bool
		a.MPS, ok = s.takeMPS(a.MPS)
		return ok
	}
	if a.MIG == (MIGInstances{}) {
		return true
	}
	var ok bool
	s.MIG, a.MIG, ok = s.MIG.Take(a.MIG)
	return ok
}

// Add gives a back to s.
func (s *NodeState) Add(a *NodeAlloc) {
	s.FreeGPUs += a.GPUs
	s.FreeCPUs += a.CPUs
	s.FreeMemMB += a.MemMB
	if a.MIG != (MIGInstances{}) {
		s.MIG = s.MIG.Give(a.MIG)
	}
	if a.MPS != (MPSShare{}) {
		s.giveMPS(a.MPS)
	}
}

// MIGHold is one MIG instance a job held: from At (when its run was
// allocated, before any reconfiguration delay) until the end of that run.
type MIGHold struct {
	Job JobRef
	At  Time
	// Node indexes the cluster's nodes; GPU numbers the node's MIG GPUs
	// (0 to MIGConfig.GPUs−1).
	Node int32
	GPU  int32
	// Profile indexes the node's MIG geometry's profiles; Start is the
	// instance's first memory slice.
	Profile int32
	Start   int32
}

// MIGRepartition is a dynamic MIG GPU repartitioned for a job's profile
// at At; the job began ReconfigureDelay later.
type MIGRepartition struct {
	At      Time
	Job     JobRef
	Node    int32
	GPU     int32
	Profile int32
}

// migGPU is one MIG GPU's instances as the controller keeps them.
type migGPU struct {
	prof   int32                  // dynamic: the profile partitioned for, -1 none
	layout []hwmodels.MIGInstance // by start slice
	owner  []JobRef               // per instance: the job holding it, -1 free
	// ready is when the GPU's last repartition completes; hidden says the
	// free state shows it unavailable until then (after the pass that
	// repartitioned it).
	ready  Time
	hidden bool
}

// migState is the controller's MIG state; nil for clusters without MIG.
type migState struct {
	gpus    [][]migGPU // per node; nil for nodes without MIG GPUs
	holds   []MIGHold
	reparts []MIGRepartition
	// fresh lists the (node, GPU) pairs repartitioned in the current
	// pass, to be hidden when it ends.
	fresh [][2]int32
}

// setupMIG builds the MIG state of the cluster's MIG nodes.
func (c *controller) setupMIG() error {
	for i := range c.cluster.Nodes {
		node := &c.cluster.Nodes[i]
		m := node.MIG
		if m == nil || m.GPUs <= 0 {
			continue
		}
		if m.Geometry == nil || migGeoIndex(m.Geometry) < 0 {
			return fmt.Errorf("sim: node %s: MIG geometry is not a built-in one", node.Name)
		}
		if m.GPUs > MaxMIGGPUs || m.GPUs > node.GPUs {
			return fmt.Errorf("sim: node %s: %d GPUs in MIG mode, want 1 to %d and at most its %d GPUs", node.Name, m.GPUs, MaxMIGGPUs, node.GPUs)
		}
		if !m.Dynamic {
			if err := m.Geometry.Check(m.Layout); err != nil {
				return fmt.Errorf("sim: node %s: MIG layout: %w", node.Name, err)
			}
		}
		if c.mig == nil {
			c.mig = &migState{gpus: make([][]migGPU, len(c.cluster.Nodes))}
		}
		gs := make([]migGPU, m.GPUs)
		for g := range gs {
			gs[g].prof = -1
			if !m.Dynamic {
				gs[g].layout = slices.Clone(m.Layout)
				slices.SortFunc(gs[g].layout, func(a, b hwmodels.MIGInstance) int { return int(a.Start - b.Start) })
				gs[g].owner = slices.Repeat([]JobRef{-1}, len(m.Layout))
			}
		}
		c.mig.gpus[i] = gs
	}
	return nil
}

// migTake gives job ref the instances of a (an allocation the checks
// passed) on the controller's GPUs, rewrites a.MIG in the form to record,
// and returns how long the start waits for repartitions (0 or the node's
// ReconfigureDelay).
func (c *controller) migTake(ref JobRef, a *NodeAlloc) (Time, error) {
	n := &c.nodes[a.Node]
	pi := n.MIG.ProfileIndex(a.MIG.Profile)
	free, placed, ok := n.MIG.Take(a.MIG)
	if !ok || c.mig == nil || c.mig.gpus[a.Node] == nil {
		return 0, fmt.Errorf("node %s: MIG instances %s do not fit", c.cluster.Nodes[a.Node].Name, c.describeMIG(a.Node, a.MIG))
	}
	n.MIG, a.MIG = free, placed
	node := &c.cluster.Nodes[a.Node]
	geo := node.MIG.Geometry
	gs := c.mig.gpus[a.Node]
	var delay Time
	hold := func(g int, k int32, pi int32) {
		gpu := &gs[g]
		for x := range gpu.layout {
			if k == 0 {
				return
			}
			if gpu.owner[x] < 0 && gpu.layout[x].Profile == pi {
				gpu.owner[x] = ref
				k--
				c.mig.holds = append(c.mig.holds, MIGHold{Job: ref, At: c.now, Node: a.Node, GPU: int32(g), Profile: pi, Start: gpu.layout[x].Start})
			}
		}
		if k > 0 {
			panic(fmt.Sprintf("sim: MIG state drift on node %s GPU %d at t=%d: job=%q", node.Name, g, c.now, c.js.at(ref).ID))
		}
	}
	if !placed.Placed() {
		// Fixed layout: the lowest-numbered GPUs with a free instance.
		k := placed.Count
		for g := range gs {
			var here int32
			for x := range gs[g].layout {
				if gs[g].owner[x] < 0 && gs[g].layout[x].Profile == pi {
					here++
				}
			}
			here = min(here, k)
			hold(g, here, pi)
			k -= here
		}
		return 0, nil
	}
	for g := range gs {
		k := int32(placed.PerGPU[g])
		if k == 0 {
			continue
		}
		gpu := &gs[g]
		if gpu.hidden {
			// checkMIGShare refused it already (no room): a drift.
			panic(fmt.Sprintf("sim: start on MIG GPU %d of node %s during its repartition at t=%d: job=%q", g, node.Name, c.now, c.js.at(ref).ID))
		}
		if gpu.ready > c.now {
			// Repartitioned in this pass: begins when that completes.
			delay = max(delay, gpu.ready-c.now)
		}
		if gpu.prof != pi {
			// Repartition an empty GPU into the profile's homogeneous layout.
			for _, o := range gpu.owner {
				if o >= 0 {
					panic(fmt.Sprintf("sim: repartition of busy MIG GPU %d on node %s at t=%d: job=%q", g, node.Name, c.now, c.js.at(ref).ID))
				}
			}
			layout, err := geo.Layout(slices.Repeat([]int32{pi}, int(geo.Profiles[pi].MaxInstances)))
			if err != nil {
				return 0, fmt.Errorf("node %s: MIG GPU %d: %w", node.Name, g, err)
			}
			slices.SortFunc(layout, func(a, b hwmodels.MIGInstance) int { return int(a.Start - b.Start) })
			gpu.prof, gpu.layout = pi, layout
			gpu.owner = slices.Repeat([]JobRef{-1}, len(layout))
			c.mig.reparts = append(c.mig.reparts, MIGRepartition{At: c.now, Job: ref, Node: a.Node, GPU: int32(g), Profile: pi})
			d := max(Time(node.MIG.ReconfigureDelay), 0)
			delay = max(delay, d)
			if d > 0 {
				gpu.ready = c.now + d
				c.mig.fresh = append(c.mig.fresh, [2]int32{a.Node, int32(g)})
				c.pushNode(gpu.ready, a.Node, migReady)
			}
		}
		hold(g, k, pi)
	}
	return delay, nil
}

// migHide makes the GPUs repartitioned in the pass that just ended
// unavailable in the free state until their repartitions complete.
func (c *controller) migHide() {
	if c.mig == nil || len(c.mig.fresh) == 0 {
		return
	}
	for _, ng := range c.mig.fresh {
		n, g := ng[0], int(ng[1])
		gpu := &c.mig.gpus[n][g]
		if gpu.hidden || gpu.ready <= c.now {
			continue
		}
		gpu.hidden = true
		f := c.freeOf(n)
		_, prof, used := f.MIG.GPU(g)
		f.MIG = f.MIG.setGPU(g, false, prof, used)
		c.touch(n)
	}
	c.mig.fresh = c.mig.fresh[:0]
}

// migReadyAt makes node n's MIG GPUs whose repartitions have completed
// available again (a migReady node event).
func (c *controller) migReadyAt(n int32) {
	if c.mig == nil || c.mig.gpus[n] == nil {
		return
	}
	for g := range c.mig.gpus[n] {
		gpu := &c.mig.gpus[n][g]
		if !gpu.hidden || gpu.ready > c.now {
			continue
		}
		gpu.hidden = false
		f := c.freeOf(n)
		_, prof, used := f.MIG.GPU(g)
		f.MIG = f.MIG.setGPU(g, true, prof, used)
		c.touch(n)
		c.changed()
	}
	c.trigger()
}

// migRelease frees the instances job ref holds on a's node.
func (c *controller) migRelease(ref JobRef, a *NodeAlloc) {
	if c.mig == nil || c.mig.gpus[a.Node] == nil {
		return
	}
	for g := range c.mig.gpus[a.Node] {
		gpu := &c.mig.gpus[a.Node][g]
		for x, o := range gpu.owner {
			if o == ref {
				gpu.owner[x] = -1
			}
		}
	}
}

// checkMIGShare verifies a MIG job's share a on a node whose free state is
// free: instances of the job's profile only, no whole GPUs, fitting the
// free instances by the geometry's rules.
func (c *controller) checkMIGShare(req *workload.Request, a *NodeAlloc, free NodeState) error {
	node := &c.cluster.Nodes[a.Node]
	if req.MIGProfile == 0 {
		return fmt.Errorf("node %s: a whole-GPU job cannot hold MIG instances (%s)", node.Name, c.describeMIG(a.Node, a.MIG))
	}
	if a.GPUs != 0 || a.MIG == (MIGInstances{}) {
		return fmt.Errorf("node %s: a MIG job (%s) takes MIG instances, not %d whole GPUs", node.Name, req.MIGProfile, a.GPUs)
	}
	if a.MIG.Profile != req.MIGProfile {
		return fmt.Errorf("node %s: MIG instances %s are not of the job's profile %s", node.Name, c.describeMIG(a.Node, a.MIG), req.MIGProfile)
	}
	if n := a.MIG.placedCount(); a.MIG.Placed() && n != a.MIG.Count {
		return fmt.Errorf("node %s: MIG instances %s: PerGPU holds %d, Count says %d", node.Name, c.describeMIG(a.Node, a.MIG), n, a.MIG.Count)
	}
	if _, _, ok := free.MIG.Take(a.MIG); !ok {
		if busy := c.migRepartitioning(a.Node, a.MIG); busy != "" {
			return fmt.Errorf("node %s: MIG instances %s: %s", node.Name, c.describeMIG(a.Node, a.MIG), busy)
		}
		return fmt.Errorf("node %s: MIG instances %s do not fit: %d of %s can be given now", node.Name, c.describeMIG(a.Node, a.MIG), free.MIG.Instances(req.MIGProfile), req.MIGProfile)
	}
	return nil
}

// migRepartitioning says which GPU of a placed allocation a on node n is
// still being repartitioned, or "".
func (c *controller) migRepartitioning(n int32, a MIGInstances) string {
	if c.mig == nil || c.mig.gpus[n] == nil || !a.Placed() {
		return ""
	}
	for g := range c.mig.gpus[n] {
		if gpu := &c.mig.gpus[n][g]; a.PerGPU[g] > 0 && gpu.hidden {
			return fmt.Sprintf("MIG GPU %d is being repartitioned until t=%d", g, gpu.ready)
		}
	}
	return ""
}

// describeMIG renders a for messages: "2 × 1g.10gb" or "1g.10gb on GPUs
// 0:2 3:1".
func (c *controller) describeMIG(node int32, a MIGInstances) string {
	if !a.Placed() {
		return fmt.Sprintf("%d × %s", a.Count, a.Profile)
	}
	name := a.Profile.String()
	if p, _ := a.Resolve(&c.cluster.Nodes[node]); p != nil {
		name = p.Name
	}
	s := name + " on GPUs"
	for g, k := range a.PerGPU {
		if k > 0 {
			s += fmt.Sprintf(" %d:%d", g, k)
		}
	}
	return s
}

// checkMIG verifies, for Config.Check, that every MIG GPU's instances are
// a valid configuration by geometry, that they are held by running jobs
// exactly as their allocations say, and that each node's free MIG state is
// what its instances leave.
func (c *controller) checkMIG() {
	if c.mig == nil {
		return
	}
	held := map[[2]int32]int32{} // (job, node) → instances held
	for i, gs := range c.mig.gpus {
		if gs == nil {
			continue
		}
		node := &c.cluster.Nodes[i]
		geo := node.MIG.Geometry
		want := MIGCapacity(node)
		for g := range gs {
			gpu := &gs[g]
			if err := geo.Check(gpu.layout); err != nil {
				panic(fmt.Sprintf("sim: node %s MIG GPU %d at t=%d: %v", node.Name, g, c.now, err))
			}
			var used int32
			for x, o := range gpu.owner {
				if o < 0 {
					continue
				}
				used++
				held[[2]int32{int32(o), int32(i)}]++
				if !node.MIG.Dynamic {
					want -= 1 << (uint(gpu.layout[x].Profile) * migCountBits)
				}
			}
			if node.MIG.Dynamic {
				want = want.setGPU(g, !gpu.hidden, gpu.prof, used)
			}
		}
		have := c.nodes[i].MIG
		if c.offMask(int32(i)) != 0 {
			have = c.offFree[i].MIG
		}
		if have != want {
			panic(fmt.Sprintf("sim: node %s MIG free-state drift at t=%d: have %#x, want %#x", node.Name, c.now, uint64(have), uint64(want)))
		}
	}
	var n int
	for _, rj := range c.running {
		for _, a := range rj.Alloc {
			if a.MIG == (MIGInstances{}) {
				continue
			}
			n++
			if got := held[[2]int32{int32(rj.Ref), a.Node}]; got != a.MIG.Count {
				panic(fmt.Sprintf("sim: job %q holds %d MIG instances on node %s at t=%d, its allocation says %d",
					c.js.at(rj.Ref).ID, got, c.cluster.Nodes[a.Node].Name, c.now, a.MIG.Count))
			}
		}
	}
	if n != len(held) {
		panic(fmt.Sprintf("sim: MIG instances held by %d (job, node) pairs at t=%d, running allocations name %d", len(held), c.now, n))
	}
}
