package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
)

// Communication model (RuntimeScaling.Comm): multi-node jobs share the
// fabric's uplinks, and a job's run stretches while its collectives get
// less bandwidth than it was recorded with. Formulas and a worked example
// in docs/hardware.md, "Communication model".
//
// Traffic. Bandwidth is counted in node injection bandwidths (a node
// sends at most 1; hwmodels.Fabric.UplinkCapacity gives the uplinks' in
// the same unit). A job on nodes v_0 < … < v_{n-1} (cluster order, which
// is Slurm's rank order) puts on the uplink of switch s, per direction:
//
//   - CommRing (NCCL's ring all-reduce, the default): one unit per ring
//     edge v_i → v_{i+1 mod n} leaving s's subtree (s below the two
//     nodes' lowest common switch). Kept in one leaf, nothing; 63+1 or
//     32+32 over two leaves, 1 on each leaf's uplink; nodes interleaved
//     over leaves, one unit per leaf change.
//   - CommTree (double binary tree, and all-to-all-like patterns): each
//     node's traffic spread evenly over its n−1 peers, so k_s (n − k_s) /
//     (n − 1) units, k_s the job's nodes below s: a 32+32 job puts 16.25
//     on each leaf's uplink.
//
// Sharing. The links' capacity is shared max-min fair (progressive
// filling): every job crossing uplinks gets the same fraction r of its
// demand, raised together until a link is full; the jobs on full links
// keep that r, the others go on, up to r = 1 (full speed). Jobs crossing
// no uplink have r = 1.
//
// Stretch. A job spends fraction f (its class's CommFraction) of its
// recorded time in collectives at the bus bandwidth it was recorded with,
// b_ref = min(NVLink, NIC) per GPU (the catalog's NVLink of its GPU model,
// hwmodels.GPUSpec.NVLinkGBsPerGPU, and the fabric's link speed,
// Fabric.NICGBsPerGPU, or the fabric's calibrated IntraGBs and InterGBs
// from schedsim calibrate --nccl); with r it gets b = min(NVLink, NIC × r), so it
// runs x = 1 + f (b_ref / b − 1) times as long (1 + f (1/r − 1) when a
// figure is missing). One-node jobs and jobs on unattached nodes have
// x = 1.
//
// Events. x changes only when a job using an uplink starts or ends: then
// every such job's rates are recomputed, its remaining work W (recorded
// seconds after the speed ratio, kept in float64) lowered by the wall time
// since its last change divided by its old x, and its end moved to
// now + ceil(W × x) (rounded up once per change, never below now). A
// superseded end event is dropped by its generation. Everything iterates
// jobs by JobRef and switches by index, so a run is a pure function of its
// inputs.
//
// NVLink domains. A job whose nodes all lie in one fabric block (a
// multi-node NVLink domain such as an NVL72 rack) talks over NVLink and
// uses no uplink: its stretch is fixed at start (commBlock), below 1 when
// NVLink is faster than the NICs it was recorded with.

// Communication patterns of RuntimeScaling.Comm.
const (
	CommRing = "ring"
	CommTree = "tree"
)

// commJob is a running job that crosses uplinks.
type commJob struct {
	ref   JobRef
	links []commLink    // by switch index
	f     float64       // communication fraction
	bRef  float64       // recorded bus bandwidth per GPU (GB/s), 0: unknown
	nvl   float64       // NVLink per GPU (GB/s), 0: unknown
	nic   float64       // NIC per GPU (GB/s), 0: unknown
	work  float64       // recorded seconds of work left at last
	last  Time          // when work was last brought up to date
	x     float64       // current stretch
	r     float64       // scratch: bandwidth fraction
	froze bool          // scratch
	base  Time          // speed-scaled seconds the run started with
	ch    RuntimeChange // the run's change record before the model
}

type commLink struct {
	sw     int32
	demand float64
}

// commState is the communication model's state (runtimeState.comm).
type commState struct {
	pattern string
	jobs    []commJob // by ref
	chIdx   []int32   // per job: index into runtimeState.changes + 1, 0: none
	use     []float64 // scratch per switch
	act     []float64 // scratch per switch
	under   []int32   // scratch per switch
}

func newCommState(pattern string, cl *hwmodels.Cluster, jobs int) (*commState, error) {
	switch pattern {
	case CommRing, CommTree:
	default:
		return nil, fmt.Errorf("sim: runtime model: comm %q: want %s or %s", pattern, CommRing, CommTree)
	}
	cs := &commState{pattern: pattern, chIdx: make([]int32, jobs)}
	if f := cl.Fabric; f != nil {
		cs.use = make([]float64, len(f.Switches))
		cs.act = make([]float64, len(f.Switches))
		cs.under = make([]int32, len(f.Switches))
	}
	return cs, nil
}

// demand returns the uplinks job nodes (ascending) load and by how much.
func (cs *commState) demand(f *hwmodels.Fabric, nodes []int32) []commLink {
	n := len(nodes)
	if f == nil || n < 2 {
		return nil
	}
	clear(cs.act)
	switch cs.pattern {
	case CommRing:
		for i, a := range nodes {
			b := nodes[(i+1)%n]
			ca, cb := f.NodeChain(a), f.NodeChain(b)
			if ca == nil || cb == nil || ca[0] == cb[0] {
				continue
			}
			for _, s := range ca {
				if slices.Contains(cb, s) {
					break
				}
				cs.act[s]++
			}
		}
	case CommTree:
		clear(cs.under)
		for _, a := range nodes {
			for _, s := range f.NodeChain(a) {
				cs.under[s]++
			}
		}
		for s, k := range cs.under {
			if k > 0 && int(k) < n {
				cs.act[s] = float64(k) * float64(int32(n)-k) / float64(n-1)
			}
		}
	}
	var out []commLink
	for s, d := range cs.act {
		if d > 0 && f.Switches[s].Parent >= 0 {
			out = append(out, commLink{sw: int32(s), demand: d})
		}
	}
	return out
}

// commStart registers job ref, starting at begin with run speed-scaled
// seconds of work, and returns its run's length under the current sharing
// (every other job's end moves with it).
func (c *controller) commStart(ref JobRef, alloc []NodeAlloc, begin, run Time, f float64) Time {
	rs, cs := c.rt, c.rt.comm
	fab := c.cluster.Fabric
	rs.nodes = rs.nodes[:0]
	for _, a := range alloc {
		rs.nodes = append(rs.nodes, a.Node)
	}
	slices.Sort(rs.nodes)
	if fab.SameBlock(rs.nodes) {
		return c.commBlock(alloc, run, f)
	}
	links := cs.demand(fab, rs.nodes)
	if len(links) == 0 || f <= 0 {
		return run
	}
	cs.chIdx[ref] = 0
	j := commJob{ref: ref, links: links, f: f, work: float64(run), last: begin, x: 1, base: run, nic: fab.NICGBsPerGPU()}
	for _, a := range alloc {
		if m := c.cluster.Nodes[a.Node].GPUModel; m != "" && a.GPUs > 0 {
			if g := rs.spec(c.cluster, m); g != nil && g.NVLinkGBs > 0 {
				v := g.NVLinkGBsPerGPU()
				if j.nvl == 0 || v < j.nvl {
					j.nvl = v
				}
			}
		}
	}
	if fab.IntraGBs > 0 {
		j.nvl = fab.IntraGBs // calibrated (schedsim calibrate --nccl)
	}
	if j.nvl > 0 && j.nic > 0 {
		j.bRef = min(j.nvl, j.nic)
	}
	i, _ := cs.find(ref)
	cs.jobs = slices.Insert(cs.jobs, i, j)
	c.commRebalance(ref)
	return rs.actual[ref]
}

// commEnd drops job ref (its run ended or was cut short) and gives its
// bandwidth to the others.
func (c *controller) commEnd(ref JobRef) {
	if c.rt == nil || c.rt.comm == nil {
		return
	}
	cs := c.rt.comm
	i, ok := cs.find(ref)
	if !ok {
		return
	}
	cs.jobs = slices.Delete(cs.jobs, i, i+1)
	c.commRebalance(-1)
}

// commRebalance recomputes every registered job's bandwidth fraction and
// stretch; jobs whose stretch changed get their remaining work brought up
// to date and a new end. starting is the job being started (its end is
// scheduled by start), -1 for none.
func (c *controller) commRebalance(starting JobRef) {
	rs, cs := c.rt, c.rt.comm
	fab := c.cluster.Fabric
	// Progressive filling: raise the common level of the unfrozen jobs
	// until a link is full or the level reaches 1.
	for k := range cs.jobs {
		cs.jobs[k].r, cs.jobs[k].froze = 0, false
	}
	for {
		clear(cs.use)
		clear(cs.act)
		active := 0
		for k := range cs.jobs {
			j := &cs.jobs[k]
			for _, l := range j.links {
				if j.froze {
					cs.use[l.sw] += j.r * l.demand
				} else {
					cs.act[l.sw] += l.demand
				}
			}
			if !j.froze {
				active++
			}
		}
		if active == 0 {
			break
		}
		level := 1.0
		for s, d := range cs.act {
			if d > 0 {
				level = min(level, max(fab.UplinkCapacity(int32(s))-cs.use[s], 0)/d)
			}
		}
		for k := range cs.jobs {
			j := &cs.jobs[k]
			if j.froze {
				continue
			}
			j.r = level
			full := level >= 1
			for _, l := range j.links {
				d := cs.act[l.sw]
				if (fab.UplinkCapacity(l.sw)-cs.use[l.sw])/d <= level*(1+1e-12) {
					full = true
				}
			}
			j.froze = full
		}
	}
	for k := range cs.jobs {
		j := &cs.jobs[k]
		x := 1.0
		if j.r < 1 {
			ratio := 1 / max(j.r, 1e-9)
			if j.bRef > 0 {
				ratio = j.bRef / min(j.nvl, j.nic*max(j.r, 1e-9))
			}
			x = 1 + j.f*(ratio-1)
		}
		if x == j.x && j.ref != starting {
			continue
		}
		now := max(c.now, j.last)
		j.work = max(j.work-float64(now-j.last)/j.x, 0)
		j.last, j.x = now, x
		start := c.rec[j.ref].Start
		left := Time(math.Ceil(j.work*x - 1e-9))
		rs.actual[j.ref] = now - start + max(left, 0)
		if j.ref == starting {
			continue // scaleRun records it
		}
		c.commRecord(j)
		if _, inGrace := c.grace[j.ref]; inGrace {
			continue // its end is the grace time's
		}
		end, st, recorded := c.runEnd(j.ref, start)
		c.rec[j.ref].State, c.rec[j.ref].Recorded = st, recorded
		c.bumpGen(j.ref)
		c.q.Push(int64(end), c.runEndClass(j.ref, end, st), int32(j.ref), c.gen[j.ref])
	}
}

// commRecord keeps job j's entry in Record.RuntimeChanges up to date: the
// run's length so far predicted and its overall stretch.
func (c *controller) commRecord(j *commJob) {
	rs, cs := c.rt, c.rt.comm
	act := rs.actual[j.ref]
	if cs.chIdx[j.ref] == 0 {
		if act == j.base {
			return
		}
		rs.changes = append(rs.changes, j.ch)
		cs.chIdx[j.ref] = int32(len(rs.changes))
	}
	ch := &rs.changes[cs.chIdx[j.ref]-1]
	ch.Actual = act
	ch.Stretch = float64(act) / float64(max(j.base, 1))
}

// commBlock returns the length of a run inside one multi-node NVLink
// domain (hwmodels.Block): its collectives run over NVLink, not the NICs
// it was recorded with, and take no uplink. b = NVLink per GPU (or the
// calibrated IntraGBs), b_ref = min(NVLink, NIC): x = 1 + f (b_ref/b − 1),
// below 1 where NVLink is faster, fixed for the run; ceil(run × x). With a
// figure missing the run does not change.
func (c *controller) commBlock(alloc []NodeAlloc, run Time, f float64) Time {
	fab := c.cluster.Fabric
	nvl, nic := fab.IntraGBs, fab.NICGBsPerGPU()
	if nvl == 0 {
		for _, a := range alloc {
			if m := c.cluster.Nodes[a.Node].GPUModel; m != "" && a.GPUs > 0 {
				if g := c.rt.spec(c.cluster, m); g != nil && g.NVLinkGBs > 0 && (nvl == 0 || g.NVLinkGBsPerGPU() < nvl) {
					nvl = g.NVLinkGBsPerGPU()
				}
			}
		}
	}
	if nvl <= 0 || nic <= 0 || f <= 0 || run <= 0 {
		return run
	}
	x := 1 + f*(min(nvl, nic)/nvl-1)
	return max(Time(math.Ceil(float64(run)*x-1e-9)), 1)
}

// find returns job ref's index in jobs and whether it is registered.
func (cs *commState) find(ref JobRef) (int, bool) {
	return slices.BinarySearchFunc(cs.jobs, ref, func(x commJob, r JobRef) int { return cmp.Compare(x.ref, r) })
}
