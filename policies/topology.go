package policies

import (
	"cmp"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// TopologyTree places a job as Slurm's topology/tree plugin does
// (eval_nodes_tree.c, slurm-gpu-facts.md §5.4), on the fabric the cluster
// spec describes (hwmodels.Node.Switches):
//
//  1. filter: the eligible nodes the job's share fits on;
//  2. the top switch: the lowest-level switch whose subtree holds enough
//     of them, the tightest such (least spare capacity), lowest index on
//     ties; no such switch (the nodes share no ancestor) means no fit, as
//     Slurm never spans switches without a common ancestor;
//  3. leaves under it, one at a time: a leaf that alone holds the rest of
//     the job, the tightest such; else the leaf holding the most; nodes
//     inside a leaf best-fit (fewest free GPUs left).
//
// The job so uses the fewest leaf switches and the lowest common switch
// Slurm's greedy finds. Simplifications: Slurm's tie-break on summed switch
// distance and its node Weight ordering are not modeled.
//
// MaxLeaves > 0 is Slurm's --switches=N for every job, strict: a
// placement over more leaves is refused, so the job waits.
//
// A job's own --switches=N@T (workload.Request.Switches, SwitchWait) is
// honoured when Clock is set (the slurm policy sets it): while the job
// has waited less than min(T, MaxSwitchWait) since it became eligible
// (T not given: MaxSwitchWait, job_mgr.c _max_switch_wait), the placement
// found must use at most N leaves, else it is refused and the job waits;
// afterwards the job takes any placement (eval_nodes_tree.c
// _eval_nodes_topo: time_waiting >= wait4switch sets best_switch, and
// select/cons_tres refuses a run-now or will-run placement without it).
// Slurm counts the wait from the first time its select plugin evaluates
// the job (wait4switch_start); the eligible time is that first pass, to
// within a pass. Without Clock a job's own --switches is ignored.
//
// Nodes without a switch (no fabric, or not in topology.conf) are islands
// of one node; on a cluster without any fabric TopologyTree is BestFit.
//
// A TopologyTree keeps scratch buffers between calls; use one per policy.
type TopologyTree struct {
	MaxLeaves int32
	// Clock returns the time of the pass being placed; nil: no clock.
	Clock func() sim.Time
	// MaxSwitchWait is SchedulerParameters' max_switch_wait in seconds.
	MaxSwitchWait sim.Time
	limit         int32 // the leaf limit of the job being placed, 0 none
	best          BestFit
	capOf         []int64 // per switch: capacity below it
	levelOf       []int32
	units         []int32 // per node: what fits (0: not a candidate)
	leafCap       []int64
	picked        []int32
}

var _ Placer = (*TopologyTree)(nil)

// InOrder implements Placer: it picks nodes by switch.
func (*TopologyTree) InOrder() bool { return false }

// Place implements Placer.
func (t *TopologyTree) Place(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	t.limit = t.MaxLeaves
	if n := int32(job.Req.Switches); n > 0 && t.switchHeld(job) && (t.limit == 0 || n < t.limit) {
		t.limit = n
	}
	return placeEachPartition(nodes, free, job, out, t.place)
}

// HeldUntil returns when job's --switches limit stops holding, if it
// holds now: a pass's outcome may change then without any other event.
func (t *TopologyTree) HeldUntil(job *sim.PendingJob) (sim.Time, bool) {
	if job.Req.Switches == 0 || !t.switchHeld(job) {
		return 0, false
	}
	wait := t.MaxSwitchWait
	if w := sim.Time(job.Req.SwitchWait); w > 0 && w < wait {
		wait = w
	}
	return job.Eligible + wait, true
}

// switchHeld reports whether job's --switches limit is still in force:
// it has waited less than min(T, MaxSwitchWait) since it became eligible.
func (t *TopologyTree) switchHeld(job *sim.PendingJob) bool {
	if t.Clock == nil {
		return false
	}
	wait := t.MaxSwitchWait
	if w := sim.Time(job.Req.SwitchWait); w > 0 && w < wait {
		wait = w
	}
	return t.Clock()-job.Eligible < wait
}

func (t *TopologyTree) place(nodes []hwmodels.Node, free []sim.NodeState, d *Demand, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	// Switch count and levels from the nodes' chains.
	nsw := 0
	for i := range nodes {
		for _, s := range nodes[i].Switches {
			nsw = max(nsw, int(s)+1)
		}
	}
	if nsw == 0 {
		return t.best.place(nodes, free, d, out, nil)
	}
	// Unattached nodes are islands: pseudo-switches nsw + node index.
	total := nsw + len(nodes)
	t.capOf = resize(t.capOf, total)
	t.levelOf = resize(t.levelOf, total)
	t.units = resize(t.units, len(nodes))
	for i := range nodes {
		n := int32(0)
		if d.Eligible(&nodes[i]) {
			if n = d.Fit(free[i]); !d.spread && n > 0 {
				n = 1
			}
		}
		t.units[i] = n
		chain := nodes[i].Switches
		if len(chain) == 0 {
			t.capOf[nsw+i] += int64(n)
			continue
		}
		for k, s := range chain {
			t.capOf[s] += int64(n)
			t.levelOf[s] = max(t.levelOf[s], int32(k))
		}
	}
	need := int64(d.Count)
	top := -1
	for s := 0; s < total; s++ {
		if t.capOf[s] < need {
			continue
		}
		if top < 0 || t.levelOf[s] < t.levelOf[top] || t.levelOf[s] == t.levelOf[top] && t.capOf[s] < t.capOf[top] {
			top = s
		}
	}
	if top < 0 {
		return out, false
	}
	// Leaves below top and their capacities.
	leafOf := func(i int) int {
		if len(nodes[i].Switches) == 0 {
			return nsw + i
		}
		return int(nodes[i].Switches[0])
	}
	under := func(i int) bool {
		if top >= nsw {
			return i == top-nsw
		}
		return slices.Contains(nodes[i].Switches, int32(top))
	}
	t.leafCap = resize(t.leafCap, total)
	for i := range nodes {
		if t.units[i] > 0 && under(i) {
			t.leafCap[leafOf(i)] += int64(t.units[i])
		}
	}
	base := len(out)
	rest := d.Count
	leaves := int32(0)
	for rest > 0 {
		pick := -1
		for s := 0; s < total; s++ {
			c := t.leafCap[s]
			if c == 0 {
				continue
			}
			if pick < 0 {
				pick = s
				continue
			}
			pc := t.leafCap[pick]
			switch alone, pAlone := c >= int64(rest), pc >= int64(rest); {
			case alone && !pAlone:
				pick = s
			case alone && pAlone && c < pc: // tightest
				pick = s
			case !alone && !pAlone && c > pc: // most
				pick = s
			}
		}
		if pick < 0 {
			return out[:base], false
		}
		if leaves++; t.limit > 0 && leaves > t.limit {
			return out[:base], false
		}
		t.leafCap[pick] = 0
		// Nodes of the leaf, best fit.
		t.picked = t.picked[:0]
		for i := range nodes {
			if t.units[i] > 0 && leafOf(i) == pick && under(i) {
				t.picked = append(t.picked, int32(i))
			}
		}
		sub := *d
		sub.Count = rest
		if !d.spread {
			sub.Count = min(rest, int32(len(t.picked)))
		} else {
			var c int32
			for _, i := range t.picked {
				c += t.units[i]
			}
			sub.Count = min(rest, c)
		}
		var ok bool
		if out, ok = t.best.place(nodes, free, &sub, out, t.picked); !ok {
			return out[:base], false
		}
		rest -= sub.Count
	}
	slices.SortFunc(out[base:], func(x, y sim.NodeAlloc) int { return cmp.Compare(x.Node, y.Node) })
	return out, true
}

// resize returns s with length n, zeroed.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// TopologyBlock places a job as Slurm's topology/block plugin does
// (src/plugins/topology/block/eval_nodes_block.c: eval_nodes_block,
// _get_block_level and _choose_best_bblock; topology/block is Slurm 23.11
// and later, so the 22.05 source has none) on the cluster's multi-node
// NVLink domains (fabric.blocks, hwmodels.Node.Block) and their levels
// (fabric.block_sizes, Slurm's BlockSizes; hwmodels.Node.BlockLevels):
//
//  1. filter: the eligible nodes in a block the job's share fits on
//     (Slurm considers only nodes in blocks);
//  2. the level (_get_block_level): the job's nodes in base blocks,
//     rounded up to a power of two, then up to the next configured level;
//     2^level consecutive base blocks (definition order) form a block; no
//     level that large makes the whole topology one block. The level
//     below it (the largest configured one under the job's size) is the
//     "llblock": the job may use at most ceil(nodes / llblock nodes) of
//     them, Slurm's fewest;
//  3. the block: of those that hold the job within that many llblocks,
//     the one with the fewest usable nodes ("lowest sufficient count of
//     nodes to minimize fragmentation"; on equal counts the later block,
//     as its bnc <= block_node_cnt test keeps the last);
//  4. base blocks in it one at a time (_choose_best_bblock): first an
//     llblock already used, else one that alone holds the rest, the
//     smallest such, else the largest; then within those a base block
//     that holds the rest, the smallest such, else the largest (later on
//     ties); nodes inside a base block best-fit. A base block that adds
//     nothing stalls the search and the job does not fit, as in Slurm.
//
// A spread job (GPUs without a node count) counts its size in nodes as
// its units over the most units a usable node holds, rounded up.
// Simplifications: node weights, required nodes and segments
// (--segment) are not modeled. On a cluster without blocks it is
// BestFit.
//
// A TopologyBlock keeps scratch buffers between calls; use one per policy.
type TopologyBlock struct {
	best     BestFit
	units    []int32
	cap      []int64 // per base block: units that fit
	llCap    []int64 // per llblock
	sorted   []int64
	required []bool
	picked   []int32
}

var _ Placer = (*TopologyBlock)(nil)

// InOrder implements Placer: it picks nodes by block, not in node order.
func (*TopologyBlock) InOrder() bool { return false }

// Place implements Placer.
func (t *TopologyBlock) Place(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	return placeEachPartition(nodes, free, job, out, t.place)
}

// blockLevel is _get_block_level: for a job of n nodes on base blocks of
// base nodes, the configured level of the block it is confined to (-1:
// none is that large) and the level of its llblock.
func blockLevel(n, base int64, levels uint16) (level, ll int) {
	per := (n + base - 1) / base // base blocks the job needs
	want := 0
	for 1<<want < per {
		want++
	}
	ll = 0
	for k := want - 1; k >= 0; k-- { // bit_fls_from_bit(levels, want-1)
		if levels&(1<<k) != 0 {
			ll = k
			break
		}
	}
	for k := want; k < 16; k++ { // bit_ffs_from_bit(levels, want)
		if levels&(1<<k) != 0 {
			return k, ll
		}
	}
	return -1, ll
}

func (t *TopologyBlock) place(nodes []hwmodels.Node, free []sim.NodeState, d *Demand, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	nb := int32(0)
	var lv *hwmodels.BlockLevels
	for i := range nodes {
		if nodes[i].Block > nb {
			nb, lv = nodes[i].Block, nodes[i].BlockLevels
		}
	}
	if nb == 0 {
		return t.best.place(nodes, free, d, out, nil)
	}
	levels := hwmodels.BlockLevels{Levels: hwmodels.DefaultBlockLevels}
	if lv != nil {
		levels = *lv
	}
	if levels.Base <= 0 { // a spec resolved without SetBlockSizes
		for i := range nodes {
			if nodes[i].Block == 1 {
				levels.Base++
			}
		}
	}
	t.units = resize(t.units, len(nodes))
	t.cap = resize(t.cap, int(nb))
	maxUnits := int32(0)
	for i := range nodes {
		n := int32(0)
		if nodes[i].Block > 0 && d.Eligible(&nodes[i]) {
			if n = d.Fit(free[i]); !d.spread && n > 0 {
				n = 1
			}
			t.cap[nodes[i].Block-1] += int64(n)
		}
		t.units[i] = n
		maxUnits = max(maxUnits, n)
	}
	if maxUnits == 0 {
		return out, false
	}
	need := int64(d.Count)
	jobNodes := need
	if d.spread {
		jobNodes = (need + int64(maxUnits) - 1) / int64(maxUnits)
	}
	// Steps 2 and 3: the level, the llblock limit, the block.
	level, llLevel := blockLevel(jobNodes, int64(levels.Base), levels.Levels)
	perBlock, blocks := nb, int32(1)
	if level >= 0 {
		perBlock = 1 << level
		blocks = (nb + perBlock - 1) / perBlock
	}
	perLL := int32(1) << llLevel
	maxLL := (jobNodes + int64(perLL)*int64(levels.Base) - 1) / (int64(perLL) * int64(levels.Base))
	useLL := int64(perBlock) != int64(perLL)*maxLL
	llCnt := (nb + perLL - 1) / perLL
	if useLL {
		t.llCap = resize(t.llCap, int(llCnt))
		for b := int32(0); b < nb; b++ {
			t.llCap[b/perLL] += t.cap[b]
		}
	}
	pick := int32(-1)
	var pickCap int64
	for blk := int32(0); blk < blocks; blk++ {
		var bnc int64
		for b := blk * perBlock; b < min(nb, (blk+1)*perBlock); b++ {
			bnc += t.cap[b]
		}
		avail := bnc
		if useLL {
			// The block's fullest maxLL llblocks (eval_nodes_block sorts
			// the first bblock_per_block / bblock_per_llblock of them).
			off := blk * (perBlock / perLL)
			n := min(perBlock/perLL, llCnt-off)
			t.sorted = append(t.sorted[:0], t.llCap[off:off+n]...)
			slices.SortFunc(t.sorted, func(x, y int64) int { return cmp.Compare(y, x) })
			avail = 0
			for _, c := range t.sorted[:min(int64(n), maxLL)] {
				avail += c
			}
		}
		if avail >= need && (pick < 0 || bnc <= pickCap) {
			pick, pickCap = blk, bnc
		}
	}
	if pick < 0 {
		return out, false
	}
	// Step 4: base blocks of the block.
	lo, hi := pick*perBlock, min(nb, (pick+1)*perBlock)
	t.required = resize(t.required, int(nb))
	base := len(out)
	rest := int64(d.Count)
	for rest > 0 {
		bb, bbFit, bbSame := int32(-1), false, true
		for i := lo; i < hi; i++ {
			if !t.required[i] {
				bb, bbFit, bbSame = t.chooseBBlock(i, rest, llLevel, useLL, lo, hi, bb, bbFit, bbSame)
			}
		}
		if bb < 0 || maxLL <= 0 && !bbSame {
			return out[:base], false
		}
		t.required[bb] = true
		t.picked = t.picked[:0]
		var c int64
		for i := range nodes {
			if t.units[i] > 0 && nodes[i].Block == bb+1 {
				t.picked = append(t.picked, int32(i))
				c += int64(t.units[i])
			}
		}
		if c == 0 { // stalled
			return out[:base], false
		}
		sub := *d
		sub.Count = int32(min(rest, c))
		var ok bool
		if out, ok = t.best.place(nodes, free, &sub, out, t.picked); !ok {
			return out[:base], false
		}
		rest -= int64(sub.Count)
		if !bbSame {
			maxLL--
		}
	}
	slices.SortFunc(out[base:], func(x, y sim.NodeAlloc) int { return cmp.Compare(x.Node, y.Node) })
	return out, true
}

// chooseBBlock is _choose_best_bblock: whether base block i beats the
// best so far (bb, -1 for none) for the rest of the job, returning the
// new best, whether it alone holds the rest, and whether its llblock is
// one the job already uses.
func (t *TopologyBlock) chooseBBlock(i int32, rest int64, llLevel int, useLL bool, lo, hi, bb int32, bbFit, bbSame bool) (int32, bool, bool) {
	fit := t.cap[i] >= rest
	if useLL && (bb < 0 || bb>>llLevel != i>>llLevel) {
		same := false
		for j := max(lo, i>>llLevel<<llLevel); j < hi && j>>llLevel == i>>llLevel; j++ {
			if t.required[j] {
				same = true
				break
			}
		}
		if bb < 0 || same && !bbSame {
			return i, fit, same
		}
		if !same && bbSame {
			return bb, bbFit, bbSame
		}
		bll, ll := t.llCap[bb>>llLevel], t.llCap[i>>llLevel]
		llFit, bllFit := ll >= rest, bll >= rest
		switch {
		case llFit && !bllFit:
			return i, fit, same
		case !llFit && bllFit:
			return bb, bbFit, bbSame
		case llFit && ll < bll, !llFit && ll > bll: // fewest nodes that hold it; else most
			return i, fit, same
		case ll != bll:
			return bb, bbFit, bbSame
		}
	}
	if bb < 0 || fit && !bbFit || !fit && !bbFit && t.cap[i] >= t.cap[bb] || fit && t.cap[i] <= t.cap[bb] {
		return i, fit, bbSame
	}
	return bb, bbFit, bbSame
}

// placeEachPartition tries place in each of the job's partitions in turn
// and returns the first placement found.
func placeEachPartition(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc,
	place func([]hwmodels.Node, []sim.NodeState, *Demand, []sim.NodeAlloc) ([]sim.NodeAlloc, bool)) ([]sim.NodeAlloc, bool) {
	d := NewDemand(job)
	for _, part := range partitionBits(job) {
		d.part = part
		var ok bool
		if out, ok = place(nodes, free, &d, out); ok {
			return out, true
		}
	}
	return out, false
}
