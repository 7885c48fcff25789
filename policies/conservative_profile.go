package policies

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/schedsim/schedsim/sim"
)

// The free-resource profile of Conservative's kept schedule.
//
// Per node (consNode): the free state now (the view's), the running jobs
// on it with their release times, and the reservations on it. A node's
// free state at time t is the free state now, plus the releases at or
// before t (in (release, JobRef) order), less the reservations that cover
// t (in queue order): the reference's segment state, computed at one node.
//
// Over all nodes (consProfile): the segment boundaries (now, release
// times, window ends, reservation starts and ends), each counting the
// reasons it exists for, and per segment and node class (and over all
// nodes) the free GPUs, CPUs and memory summed over the class's nodes,
// kept as differences between consecutive segments (so that a
// reservation changes two entries per node, however many segments it
// spans). A window's capacity is at most the least segment total over
// the window: a segment short of the job's need rules out every start
// whose window covers it, so a search finds the first start that could
// be feasible in one pass over the segments, O(segments), and checks
// nodes only there.
//
// Each plain node also has its timeline: its free GPUs, CPUs and memory
// from each change on, over the same reservations as the totals, which
// node checks read directly. Per segment, a bit per node says whether the
// node has a free GPU then (MIG and MPS nodes: always), so that a GPU
// job's check visits only the nodes with one throughout its window, found
// by and-ing the window's segments' words.

// consNode is one node of the profile.
type consNode struct {
	base    sim.NodeState
	rels    []consEntry // running jobs on the node, released at end
	res     []consEntry // reservations on the node: [start, end)
	win     []consSpan  // maintenance windows holding the node
	cls     int32       // node class: partitions and GPU type
	complex bool        // MIG or MPS node: states are computed whole
	// mps: the node shares GPUs by MPS, whose shares take GPUs out of
	// FreeGPUs beyond what allocations say; its GPUs count in the totals
	// as all free, always.
	mps  bool
	gpus int32
	// later counts the reservations of jobs at or after the walk's
	// position in the timeline of a lazy node (consState.lazyFrom).
	later int32
	stamp uint32 // meet holds the current candidate's meet
	meet  sim.NodeState
	tl    []consPoint // timeline: the totals' profile at this node
}

// consPoint is a node's free GPUs, CPUs and memory from t on.
type consPoint struct {
	t    sim.Time
	g, c int32
	m    int64
}

// consEntry is one job's allocation on a node.
type consEntry struct {
	start, end sim.Time
	id         int32
	a          sim.NodeAlloc
}

type consSpan struct{ start, end sim.Time }

// consEvent is a change of a node's free state at t (timeline building).
type consEvent struct {
	t    sim.Time
	g, c int32
	m    int64
}

// totalGPUs is what the node's free GPUs g count for in the totals.
func (nd *consNode) totalGPUs(g int32) int32 {
	if nd.mps {
		return nd.gpus
	}
	return g
}

// maxClasses bounds the node classes a job's class mask can name; nodes
// past it share the last class, which then over-counts (a bound, still).
const maxClasses = 64

// consProfile holds the segments and the search's scratch.
type consProfile struct {
	times []sim.Time // segment starts, ascending; times[0] = now
	tver  uint64     // changes whenever times does (consBefore)
	cnt   []int32    // reasons for each boundary (times[0]'s unused)
	// dif holds, per segment and class (and for all nodes, last), the
	// free GPUs, CPUs and MiB less those of the segment before (segment
	// 0: the totals).
	dif        []int64
	stride     int // 3 × (classes + 1)
	nclass     int
	allClasses uint64
	// timed: the walk is past its first search, so the totals and
	// timelines hold only the jobs placed so far (see walk).
	timed bool
	// fb holds nw words per segment: bit n%64 of word n/64 is set when
	// node n has a free GPU throughout the segment.
	fb []uint64
	nw int
	// lazy marks, during a timed walk, the nodes whose timelines still
	// hold reservations of jobs at or after the walk's position cur
	// (lazyFrom); partNodes marks each partition's nodes.
	lazy      []uint64
	cur       int32
	partNodes [64][]uint64
	maxGPUs   int64 // the most GPUs of a node
	acc       []int64
	evs       []consEvent

	out       []sim.NodeAlloc
	evt       []sim.Time
	order     []int32
	meetStamp uint32
}

// resetNodes builds the per-node state from the view's free state and
// the cluster.
func (s *consState) resetNodes(view []sim.NodeState) {
	s.clsMemo = consClassMemo{}
	n := len(s.nodes)
	s.node = slices.Grow(s.node[:0], n)[:n]
	s.nclass = 0
	type key struct {
		parts uint64
		typ   string
	}
	var keys []key
	s.classN = s.classN[:0]
	for i := range s.nodes {
		hn := &s.nodes[i]
		k := key{hn.Partitions, hn.GPUType}
		c := slices.Index(keys, k)
		if c < 0 {
			if len(keys) < maxClasses {
				keys = append(keys, k)
				s.classN = append(s.classN, 0)
			}
			c = len(keys) - 1
		}
		s.classN[c]++
		nd := &s.node[i]
		mps := sim.MPSCapacity(hn).Enabled()
		*nd = consNode{base: view[i], rels: nd.rels[:0], res: nd.res[:0], win: nd.win[:0], tl: nd.tl[:0], cls: int32(c),
			complex: mps || sim.MIGCapacity(hn) != 0, mps: mps, gpus: hn.GPUs}
	}
	s.nclass = len(keys)
	nw := (n + 63) / 64
	for p := range s.partNodes {
		s.partNodes[p] = slices.Grow(s.partNodes[p][:0], nw)[:nw]
		clear(s.partNodes[p])
	}
	s.maxGPUs = 0
	for i := range s.nodes {
		for m := s.nodes[i].Partitions; m != 0; m &= m - 1 {
			s.partNodes[bits.TrailingZeros64(m)][i>>6] |= 1 << uint(i&63)
		}
		s.maxGPUs = max(s.maxGPUs, int64(s.nodes[i].GPUs))
	}
	s.stride = 3 * (s.nclass + 1) // the last: all nodes
	s.allClasses = 1<<s.nclass - 1
	if len(s.nodeSeen) < n {
		s.nodeSeen = make([]uint32, n)
	}
}

// classesOf returns the classes of the nodes d may use in any of its
// partitions.
func (s *consState) classesOf(d *Demand) uint64 {
	if c := &s.clsMemo; c.ok && c.parts == d.parts && c.gpuType == d.gpuType {
		return c.classes
	}
	var m uint64
	for i := range s.nodes {
		if d.eligibleAny(&s.nodes[i]) {
			m |= 1 << s.node[i].cls
		}
	}
	s.clsMemo = consClassMemo{ok: true, parts: d.parts, gpuType: d.gpuType, classes: m}
	return m
}

// consClassMemo is classesOf's last answer: the classes depend on the
// demand's partitions and GPU type alone, which most jobs share with the
// job queued before them.
type consClassMemo struct {
	ok      bool
	parts   uint64
	gpuType string
	classes uint64
}

// setWindows keeps the view's maintenance windows and marks them on their
// nodes.
func (s *consState) setWindows(resv []sim.AdvanceReservation) {
	s.windows = s.windows[:0]
	for _, w := range resv {
		w.Nodes = slices.Clone(w.Nodes)
		s.windows = append(s.windows, w)
	}
	s.spanWindows()
}

func (s *consState) spanWindows() {
	for i := range s.node {
		s.node[i].win = s.node[i].win[:0]
	}
	for _, w := range s.windows {
		for _, n := range w.Nodes {
			if n >= 0 && int(n) < len(s.node) {
				s.node[n].win = append(s.node[n].win, consSpan{w.Start, w.End})
			}
		}
	}
}

// sameWindows reports whether the view's windows are the kept ones less
// those ended by now, dropping those.
func (s *consState) sameWindows(resv []sim.AdvanceReservation, now sim.Time) bool {
	j, dropped := 0, false
	for _, w := range s.windows {
		if w.End <= now {
			dropped = true
			continue
		}
		if j == len(resv) || resv[j].Name != w.Name || resv[j].Start != w.Start || resv[j].End != w.End || !slices.Equal(resv[j].Nodes, w.Nodes) {
			return false
		}
		j++
	}
	if j != len(resv) {
		return false
	}
	if dropped {
		s.windows = slices.DeleteFunc(s.windows, func(w sim.AdvanceReservation) bool { return w.End <= now })
		s.spanWindows()
	}
	return true
}

// resetProfile makes the profile one segment from now holding the nodes'
// free state.
func (s *consState) resetProfile(now sim.Time) {
	s.times = append(s.times[:0], now)
	s.tver++
	s.cnt = append(s.cnt[:0], 0)
	s.dif = slices.Grow(s.dif[:0], s.stride)[:s.stride]
	clear(s.dif)
	all := 3 * s.nclass
	for i := range s.node {
		nd := &s.node[i]
		for _, k := range [2]int{3 * int(nd.cls), all} {
			s.dif[k] += int64(nd.totalGPUs(nd.base.FreeGPUs))
			s.dif[k+1] += int64(nd.base.FreeCPUs)
			s.dif[k+2] += nd.base.FreeMemMB
		}
	}
}

// advance moves the profile's start to now (never back).
func (s *consState) advance(now sim.Time) {
	if now <= s.now {
		return
	}
	k, found := s.find(now)
	if !found {
		k--
	}
	if k > 0 {
		// The new first segment's totals: the differences up to it.
		for i := 1; i <= k; i++ {
			for j := range s.stride {
				s.dif[j] += s.dif[i*s.stride+j]
			}
		}
		copy(s.dif[k*s.stride:(k+1)*s.stride], s.dif[:s.stride])
		s.times = slices.Delete(s.times, 0, k)
		s.cnt = slices.Delete(s.cnt, 0, k)
		s.dif = slices.Delete(s.dif, 0, k*s.stride)
		s.fb = slices.Delete(s.fb, 0, k*s.nw)
	}
	s.times[0], s.cnt[0] = now, 0
	s.tver++
	s.now = now
	for n := range s.node {
		nd := &s.node[n]
		if nd.complex {
			continue
		}
		// The timeline from now: its first point covers now.
		i := 0
		for i+1 < len(nd.tl) && nd.tl[i+1].t <= now {
			i++
		}
		if i > 0 {
			nd.tl = slices.Delete(nd.tl, 0, i)
		}
		nd.tl[0].t = now
	}
}

// mark adds a reason for a boundary at t, making one if needed (nothing
// changes there yet).
func (s *consState) mark(t sim.Time) {
	if t <= s.now {
		return
	}
	i, found := s.find(t)
	if found {
		s.cnt[i]++
		return
	}
	s.times = slices.Insert(s.times, i, t)
	s.tver++
	s.cnt = slices.Insert(s.cnt, i, 1)
	s.dif = slices.Insert(s.dif, i*s.stride, make([]int64, s.stride)...)
	// The new segment splits segment i-1 (i > 0: t is after now).
	s.fb = slices.Insert(s.fb, i*s.nw, s.fb[(i-1)*s.nw:i*s.nw]...)
}

// unmark drops a reason for the boundary at t, and the boundary with its
// last reason: nothing changes there then.
func (s *consState) unmark(t sim.Time) {
	if t <= s.now {
		return
	}
	i, found := s.find(t)
	if !found {
		panic(fmt.Sprintf("policies: conservative: no profile boundary at t=%d (now %d)", t, s.now))
	}
	if s.cnt[i]--; s.cnt[i] > 0 {
		return
	}
	for _, d := range s.dif[i*s.stride : (i+1)*s.stride] {
		if d != 0 {
			panic(fmt.Sprintf("policies: conservative: profile changes at t=%d, which has no reason left", t))
		}
	}
	s.times = slices.Delete(s.times, i, i+1)
	s.tver++
	s.cnt = slices.Delete(s.cnt, i, i+1)
	s.dif = slices.Delete(s.dif, i*s.stride, (i+1)*s.stride)
	s.fb = slices.Delete(s.fb, i*s.nw, (i+1)*s.nw)
}

// find returns the first segment starting at or after t, and whether it
// starts at t (slices.BinarySearch, without its generic comparison).
func (s *consState) find(t sim.Time) (int, bool) {
	ts := s.times
	lo, hi := 0, len(ts)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if ts[h] < t {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, lo < len(ts) && ts[lo] == t
}

// consBefore caches consState.before for one time while the boundaries
// stay as they are.
type consBefore struct {
	ver  uint64
	u, x sim.Time
	row  int // x's segment
	ok   bool
}

// before returns the last segment start before u, and false when there
// is none (u is now or earlier); c caches it.
func (s *consState) before(c *consBefore, u sim.Time) (sim.Time, bool) {
	if c.ver == s.tver && c.u == u {
		return c.x, c.ok
	}
	i, _ := s.find(u)
	c.ver, c.u, c.ok, c.row = s.tver, u, i > 0, -1
	if c.ok {
		c.x, c.row = s.times[i-1], i-1
	}
	return c.x, c.ok
}

// row returns the segment starting at t (now or earlier: the first); t
// must be a boundary.
func (s *consState) row(t sim.Time) int {
	if t <= s.now {
		return 0
	}
	i, found := s.find(t)
	if !found {
		s.noBoundary(t)
	}
	return i
}

// rowAfter is row(t) for a boundary t after segment r's start: a few
// steps from r, the common case in a node's timeline, else row.
func (s *consState) rowAfter(r int, t sim.Time) int {
	ts := s.times
	for i := r + 1; i < len(ts) && i <= r+8; i++ {
		if ts[i] >= t {
			if ts[i] != t {
				s.noBoundary(t)
			}
			return i
		}
	}
	return s.row(t)
}

// noBoundary panics: t should be a boundary. (Out of row, which then
// inlines.)
//
//go:noinline
func (s *consState) noBoundary(t sim.Time) {
	panic(fmt.Sprintf("policies: conservative: no profile boundary at t=%d (now %d)", t, s.now))
}

// addAgg adds a change of node n's free resources over [from, to) to the
// totals; from and to are now or earlier, boundaries, or (to) beyond the
// last boundary.
func (s *consState) addAgg(from, to sim.Time, n int32, dg, dc int32, dm int64) {
	nd := &s.node[n]
	if nd.mps {
		dg = 0
	}
	if dg == 0 && dc == 0 && dm == 0 {
		return
	}
	lo, hi := s.rows(from, to)
	s.change(n, from, to, lo, hi, dg, dc, dm)
}

// rows returns the segments [lo, hi) of [from, to): hi is len(times)
// when to is past the last boundary.
func (s *consState) rows(from, to sim.Time) (lo, hi int) {
	lo, hi = s.row(from), len(s.times)
	if to <= s.times[hi-1] {
		hi = s.row(to)
	}
	return lo, hi
}

// resRows is rows of r's reservation, found from r's hints (the
// segments last found for its start and end) when they still hold: they
// do while no boundary before them comes or goes, as between the walk's
// taking r out of the totals (lazyFrom) and putting it back (placed).
func (s *consState) resRows(r *consJob) (lo, hi int) {
	ts := s.times
	if h := int(r.rowS); h < len(ts) && ts[h] == r.start {
		lo = h
	} else {
		lo = s.rowNear(h, r.start)
		r.rowS = int32(lo)
	}
	hi = len(ts)
	if r.end <= ts[hi-1] {
		if h := int(r.rowE); h < len(ts) && ts[h] == r.end {
			hi = h
		} else {
			hi = s.rowNear(h, r.end)
			r.rowE = int32(hi)
		}
	}
	return lo, hi
}

// rowNear is row(t) for a boundary t found at segment h before: a
// boundary that came or went since moved it a step or two, so the few
// segments on its side of h are looked at before a binary search.
func (s *consState) rowNear(h int, t sim.Time) int {
	ts := s.times
	if t <= s.now {
		return 0
	}
	h = min(h, len(ts)-1)
	switch {
	case ts[h] == t:
		return h
	case ts[h] < t:
		for i := h + 1; i < len(ts) && i <= h+3; i++ {
			if ts[i] >= t {
				if ts[i] != t {
					s.noBoundary(t)
				}
				return i
			}
		}
	default:
		for i := h - 1; i >= 0 && i >= h-3; i-- {
			if ts[i] <= t {
				if ts[i] != t {
					s.noBoundary(t)
				}
				return i
			}
		}
	}
	return s.row(t)
}

// change adds a change of node n's free resources over [from, to), the
// segments [lo, hi), to the totals and the node's timeline.
func (s *consState) change(n int32, from, to sim.Time, lo, hi int, dg, dc int32, dm int64) {
	nd := &s.node[n]
	i1 := -1
	if hi < len(s.times) {
		i1 = hi * s.stride
	}
	tg := int64(dg)
	if nd.mps {
		tg = 0 // see totalGPUs
	}
	s.difAdd(lo*s.stride, i1, 3*int(nd.cls), tg, int64(dc), dm)
	if !nd.complex {
		s.tlAdd(n, from, to, lo, dg, dc, dm)
	}
}

// difAdd adds a change over the segments from offset i0 to offset i1 (-1:
// to the end) to class offset c and to all nodes.
func (s *consState) difAdd(i0, i1, c int, dg, dc, dm int64) {
	for _, k := range [2]int{c, 3 * s.nclass} {
		d := s.dif[i0+k : i0+k+3]
		d[0], d[1], d[2] = d[0]+dg, d[1]+dc, d[2]+dm
		if i1 >= 0 {
			d = s.dif[i1+k : i1+k+3]
			d[0], d[1], d[2] = d[0]-dg, d[1]-dc, d[2]-dm
		}
	}
}

// aggReservation adds r's reservation to the totals and timelines (sign
// -1) or takes it out (sign 1): the totals per run of nodes of a class
// (aggTotals), the timelines node by node.
func (s *consState) aggReservation(r *consJob, sign int32) {
	s.aggTotals(r, sign)
	lo := int(r.rowS) // aggTotals' resRows found it
	for k := range r.alloc {
		if a := &r.alloc[k]; !s.node[a.Node].complex {
			s.tlAdd(a.Node, r.start, r.end, lo, sign*a.GPUs, sign*a.CPUs, int64(sign)*a.MemMB)
		}
	}
}

// aggTotals adds r's reservation to the totals (sign -1) or takes it out
// (sign 1), leaving the timelines.
func (s *consState) aggTotals(r *consJob, sign int32) {
	if sign < 0 && r.start < s.witEnd {
		s.witDirty = true // see noneStarts
	}
	lo, hi := s.resRows(r)
	i1 := -1
	if hi < len(s.times) {
		i1 = hi * s.stride
	}
	// Summed per run of nodes of one class (the allocation's nodes are
	// mostly of a few classes), and once for all nodes.
	i0 := lo * s.stride
	var g, c, m, tg, tc, tm int64
	cls := int32(-1)
	for k := range r.alloc {
		a := &r.alloc[k]
		nd := &s.node[a.Node]
		if nd.cls != cls {
			if cls >= 0 {
				s.difCol(i0, i1, 3*int(cls), g, c, m)
			}
			cls, g, c, m = nd.cls, 0, 0, 0
		}
		dg := int64(sign * a.GPUs)
		if nd.mps {
			dg = 0 // see totalGPUs
		}
		dc, dm := int64(sign*a.CPUs), int64(sign)*a.MemMB
		g, c, m, tg, tc, tm = g+dg, c+dc, m+dm, tg+dg, tc+dc, tm+dm
	}
	if cls >= 0 {
		s.difCol(i0, i1, 3*int(cls), g, c, m)
		s.difCol(i0, i1, 3*s.nclass, tg, tc, tm)
	}
}

// difCol is difAdd of one column group k alone.
func (s *consState) difCol(i0, i1, k int, dg, dc, dm int64) {
	d := s.dif[i0+k : i0+k+3 : i0+k+3]
	d[0] += dg
	d[1] += dc
	d[2] += dm
	if i1 >= 0 {
		d = s.dif[i1+k : i1+k+3 : i1+k+3]
		d[0] -= dg
		d[1] -= dc
		d[2] -= dm
	}
}

// addReservation puts job id's reservation in the profile.
func (s *consState) addReservation(id int32) {
	r := &s.recs[id]
	s.mark(r.start)
	s.mark(r.end)
	for k := range r.alloc {
		a := r.alloc[k]
		nd := &s.node[a.Node]
		nd.res = append(nd.res, consEntry{start: r.start, end: r.end, id: id, a: a})
	}
	s.take(r)
}

// dropReservation takes job id's reservation out of the profile, and out
// of the totals when it is in them.
func (s *consState) dropReservation(id int32, inTotals bool) {
	r := &s.recs[id]
	if inTotals {
		s.aggReservation(r, 1)
	}
	for k := range r.alloc {
		nd := &s.node[r.alloc[k].Node]
		nd.res = dropEntry(nd.res, id)
	}
	s.unmark(r.start)
	s.unmark(r.end)
}

// addRelease puts running job id's release at r.runEnd in the profile.
func (s *consState) addRelease(id int32) {
	r := &s.recs[id]
	s.mark(r.runEnd)
	s.addReleaseEntries(id)
	from := max(r.runEnd, s.now)
	for k := range r.alloc {
		a := &r.alloc[k]
		s.addAgg(from, math.MaxInt64, a.Node, a.GPUs, a.CPUs, a.MemMB)
	}
}

// addReleaseEntries lists running job id on its nodes.
func (s *consState) addReleaseEntries(id int32) {
	r := &s.recs[id]
	for k := range r.alloc {
		a := r.alloc[k]
		nd := &s.node[a.Node]
		nd.rels = append(nd.rels, consEntry{end: r.runEnd, id: id, a: a})
	}
}

// dropRelease takes running job id's release out of the profile.
func (s *consState) dropRelease(id int32) {
	r := &s.recs[id]
	from := max(r.runEnd, s.now)
	for k := range r.alloc {
		a := &r.alloc[k]
		s.addAgg(from, math.MaxInt64, a.Node, -a.GPUs, -a.CPUs, -a.MemMB)
		nd := &s.node[a.Node]
		nd.rels = dropEntry(nd.rels, id)
	}
	s.unmark(r.runEnd)
}

func dropEntry(es []consEntry, id int32) []consEntry {
	for i := range es {
		if es[i].id == id {
			es[i] = es[len(es)-1]
			return es[:len(es)-1]
		}
	}
	return es
}

// bound returns an upper bound of what of r's demand the nodes of its
// classes hold in a segment whose totals are acc: its per-unit (or
// per-node) needs divided into the class totals.
func (s *consState) bound(r *consJob, acc []int64, all bool) int64 {
	var g, c, m, nodes int64
	if all {
		k := 3 * s.nclass
		g, c, m, nodes = acc[k], acc[k+1], acc[k+2], int64(len(s.node))
	} else {
		for mask := r.classes; mask != 0; mask &= mask - 1 {
			cl := bits.TrailingZeros64(mask)
			g += acc[3*cl]
			c += acc[3*cl+1]
			m += acc[3*cl+2]
			nodes += int64(s.classN[cl])
		}
	}
	d := &r.d
	b := int64(math.MaxInt64)
	if !d.spread {
		b = nodes
	}
	if d.GPUs > 0 {
		b = min(b, max(g, 0)/int64(d.GPUs))
	}
	if d.CPUs > 0 {
		b = min(b, max(c, 0)/int64(d.CPUs))
	}
	if d.MemMB > 0 {
		b = min(b, max(m, 0)/d.MemMB)
	}
	return b
}

// search finds job r's reservation on the profile of the jobs queued
// before position before: the first segment start where FirstFit places
// it on the least free state over its window, as conservativeReference
// does. The segment totals rule out most starts; the nodes are checked at
// the others. certified's findings shorten it: no start before the job's
// own became feasible (the search begins there), or FirstFit still picks
// the same nodes at the job's start (taken without a check once nothing
// earlier fits). A start that lies inside a segment of the reference's
// profile (a boundary only a later job's reservation makes) is never the
// first feasible one: its window covers at least the segments of the
// boundary before it, and FirstFit's success only shrinks with the free
// state. It returns the start and the allocation (valid until the next
// search) and whether there is one, and sets r's slack and startDef.
func (s *consState) search(r *consJob, before int32) (sim.Time, []sim.NodeAlloc, bool) {
	count := int64(r.d.Count)
	slack := int64(math.MaxInt64)
	hint := !r.fresh && r.hints && r.same && r.placed
	k := 0
	if !r.fresh && r.early && r.placed {
		// No earlier start became feasible: they still lack r.slack.
		k, slack = s.row(r.start), r.slack
	}
	defer func() { r.slack = slack }()
	n := len(s.times)
	// acc: the totals of the segment before m over the job's classes
	// (all nodes' when it may use every class); only the columns the
	// bound reads are summed.
	acc := slices.Grow(s.acc[:0], s.stride)[:s.stride]
	clear(acc)
	s.acc = acc
	all := r.classes == s.allClasses
	// gpus: a spread demand of GPUs alone, bounded by the GPU totals.
	gpus := int64(0)
	if d := &r.d; d.spread && d.GPUs > 0 && d.CPUs == 0 && d.MemMB == 0 {
		gpus = int64(d.GPUs)
	}
	times, dif, stride := s.times, s.dif, s.stride
	c := 3 * s.nclass // all nodes' columns
	if k > 0 {
		switch {
		case all && gpus > 0:
			for i := c; i < k*stride; i += stride {
				acc[c] += dif[i]
			}
		case all:
			for i := 0; i < k*stride; i += stride {
				acc[c] += dif[i+c]
				acc[c+1] += dif[i+c+1]
				acc[c+2] += dif[i+c+2]
			}
		default:
			for mask := r.classes; mask != 0; mask &= mask - 1 {
				cl := 3 * bits.TrailingZeros64(mask)
				for i := 0; i < k*stride; i += stride {
					acc[cl] += dif[i+cl]
					acc[cl+1] += dif[i+cl+1]
					acc[cl+2] += dif[i+cl+2]
				}
			}
		}
	}
	// A start is feasible only if every segment its window covers has the
	// totals for the job: a short segment b rules out every start from
	// the current one up to b, whose windows all cover it; shortB is b's
	// bound.
	m, short, shortB := k, -1, int64(0)
	for k < n {
		start := times[k]
		end := EndAt(start, r.job.Limit)
		if all && gpus > 0 {
			// The common case: GPUs over every node, against count·gpus.
			m, acc[c], short, shortB = scanGPUs(times, dif[c:], stride, m, end, acc[c], count*gpus, short, shortB)
			if short >= k {
				slack = min(slack, count-max(shortB, 0)/gpus)
				k = short + 1
				continue
			}
		} else {
			for ; m < n && times[m] < end; m++ {
				if b := s.rowBound(r, acc, m, all, gpus); b < count {
					short, shortB = m, b
				}
			}
			if short >= k {
				slack = min(slack, count-shortB)
				k = short + 1
				continue
			}
		}
		if hint && start == r.start {
			// Nothing earlier fits, and FirstFit picks what it did.
			slack = min(slack, r.startDef)
			return start, r.alloc, true
		}
		ok, def := s.firstFit(r, start, end, before, k, m)
		slack = min(slack, def)
		if ok {
			r.startDef = def
			return start, s.out, true
		}
		k++
	}
	return 0, nil, false
}

// scanGPUs is search's segment scan for GPUs over every node: from
// segment m on, up to the first segment starting at or after end, it adds
// each segment's differences (col[m*stride], the all-nodes GPU column) to
// a, the running total, and records the last segment whose total is
// below need (short, with its total shortB). A function of its own, so
// that the loop keeps its values in registers (in search, every one of
// them lived on the stack; inlined, they do again).
//
//go:noinline
func scanGPUs(times []sim.Time, col []int64, stride, m int, end sim.Time, a, need int64, short int, shortB int64) (int, int64, int, int64) {
	for i := m * stride; m < len(times) && times[m] < end; m, i = m+1, i+stride {
		a += col[i]
		if a < need {
			short, shortB = m, a
		}
	}
	return m, a, short, shortB
}

// rowBound adds segment m's differences to acc and returns the bound of
// r's demand in it (bound).
func (s *consState) rowBound(r *consJob, acc []int64, m int, all bool, gpus int64) int64 {
	row := s.dif[m*s.stride : (m+1)*s.stride]
	if all {
		c := 3 * s.nclass
		acc[c] += row[c]
		if gpus > 0 {
			return max(acc[c], 0) / gpus
		}
		acc[c+1] += row[c+1]
		acc[c+2] += row[c+2]
	} else {
		for mask := r.classes; mask != 0; mask &= mask - 1 {
			c := 3 * bits.TrailingZeros64(mask)
			acc[c] += row[c]
			acc[c+1] += row[c+1]
			acc[c+2] += row[c+2]
		}
	}
	return s.bound(r, acc, all)
}

// firstFit is FirstFit.Place of r on the least free state over [start,
// end), each node's computed when first looked at. It returns the least
// capacity deficit of the partitions that failed (math.MaxInt64 if none).
func (s *consState) firstFit(r *consJob, start, end sim.Time, before int32, k, m int) (bool, int64) {
	s.meetStamp++
	d := r.d
	// A GPU demand can use only nodes with a free GPU throughout the
	// window: FirstFit skips the others (short) anyway.
	lo, hi := -1, -1
	if d.GPUs > 0 {
		lo, hi = k, m
	}
	def := int64(math.MaxInt64)
	ok := s.firstFitPart(&d, start, end, before, lo, hi, &def)
	for p := d.parts &^ d.part; !ok && p != 0; p &= p - 1 {
		d.part = p & -p // the next partition, lowest index first
		ok = s.firstFitPart(&d, start, end, before, lo, hi, &def)
	}
	return ok, def
}

// firstFitPart is firstFit (place.go) of d in its partition d.part; with
// lo >= 0, only on the nodes with a free GPU in every segment of [lo, hi).
func (s *consState) firstFitPart(d *Demand, start, end sim.Time, before int32, lo, hi int, def *int64) bool {
	s.out = s.out[:0]
	need := d.Count
	gpuOnly := d.GPUs > 0 && d.CPUs == 0 && d.MemMB == 0
	if lo < 0 {
		for i := range s.nodes {
			if s.fitNode(d, int32(i), start, end, before, gpuOnly, &need) {
				return true
			}
		}
	} else {
		nw := s.nw
		pn := s.partNodes[bits.TrailingZeros64(d.part)]
		for w := range nw {
			// The nodes of word w with a free GPU in every segment; a lazy
			// node of the partition may have more free than its bits say,
			// so it is made exact when FirstFit comes to it, and checked
			// again (the nodes after the one that completes the demand
			// stay lazy).
			cand := ^uint64(0)
			if w == nw-1 && len(s.nodes)%64 != 0 {
				cand = 1<<uint(len(s.nodes)%64) - 1
			}
			cand = andRows(s.fb, cand, lo, hi, nw, w)
			lazy := s.lazy[w] & pn[w]
			for visit := cand | lazy; visit != 0; visit &= visit - 1 {
				b := visit & -visit
				n := int32(w*64 + bits.TrailingZeros64(visit))
				if lazy&b != 0 {
					s.exact(n)
					k := lo
					for k < hi && s.fb[k*nw+w]&b != 0 {
						k++
					}
					if k < hi {
						continue
					}
				}
				if s.fitNode(d, n, start, end, before, gpuOnly, &need) {
					return true
				}
			}
		}
	}
	s.out = s.out[:0]
	*def = min(*def, int64(need)) // every eligible node gave what it holds
	return false
}

// andRows returns cand and-ed with word w of the free-GPU bits of
// segments [lo, hi) (nw words a segment), stopping at zero: a function
// of its own, whose loop keeps its values in registers (firstFitPart's
// reloaded them from the stack).
//
//go:noinline
func andRows(fb []uint64, cand uint64, lo, hi, nw, w int) uint64 {
	for i := lo*nw + w; lo < hi && cand != 0; lo, i = lo+1, i+nw {
		cand &= fb[i]
	}
	return cand
}

// fitNode is firstFitPart's step at node i: it appends what of d the
// node holds to s.out and reports whether that completes the demand.
func (s *consState) fitNode(d *Demand, i int32, start, end sim.Time, before int32, gpuOnly bool, need *int32) bool {
	if !d.Eligible(&s.nodes[i]) { // filter: partition and GPU type
		return false
	}
	f := s.meetOf(i, start, end, before, gpuOnly)
	if d.Short(f) {
		return false
	}
	n := min(d.Fit(*f), *need) // filter: what fits the node's least free state
	if n == 0 {
		return false
	}
	s.out = append(s.out, d.allocOn(i, n, *f, false)) // select: lowest-numbered node first
	*need -= n
	return *need == 0
}

// meetOf returns node n's least free state over [start, end) on the
// profile of the jobs queued before position before, with nothing free
// when a maintenance window holds it then (pass.usable).
func (s *consState) meetOf(n int32, start, end sim.Time, before int32, gpuOnly bool) *sim.NodeState {
	nd := &s.node[n]
	if nd.stamp == s.meetStamp {
		return &nd.meet
	}
	nd.stamp = s.meetStamp
	for _, w := range nd.win {
		if w.start < end && w.end > start {
			nd.meet = sim.NodeState{}
			return &nd.meet
		}
	}
	if nd.complex {
		nd.meet = s.meetWhole(nd, start, end, before)
		return &nd.meet
	}
	// The timeline holds the jobs before this one once exact (the walk is
	// timed).
	s.exact(n)
	var g, c int32
	var m int64
	if gpuOnly {
		g = nd.tlMinGPUs(start, end) // CPUs and memory do not matter
	} else {
		g, c, m = nd.tlMin(start, end)
	}
	nd.meet = nd.base
	nd.meet.FreeGPUs, nd.meet.FreeCPUs, nd.meet.FreeMemMB = g, c, m
	return &nd.meet
}

// tlAt returns the index of nd's timeline point that covers t (t >= now).
func (nd *consNode) tlAt(t sim.Time) int {
	tl := nd.tl
	lo, hi := 1, len(tl)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if tl[h].t <= t {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo - 1
}

// tlMinGPUs is tlMin's free GPUs alone.
func (nd *consNode) tlMinGPUs(start, end sim.Time) int32 {
	tl := nd.tl
	i := nd.tlAt(start)
	g := tl[i].g
	for i++; i < len(tl) && tl[i].t < end; i++ {
		g = min(g, tl[i].g)
	}
	return g
}

// tlMinGPUsTo is tlMinGPUs, stopping at the first point with fewer than
// floor free GPUs (then returned).
func (nd *consNode) tlMinGPUsTo(start, end sim.Time, floor int32) int32 {
	tl := nd.tl
	i := nd.tlAt(start)
	g := tl[i].g
	for i++; g >= floor && i < len(tl) && tl[i].t < end; i++ {
		g = min(g, tl[i].g)
	}
	return g
}

// tlMin returns the least free GPUs, CPUs and memory of nd's timeline
// over [start, end).
func (nd *consNode) tlMin(start, end sim.Time) (int32, int32, int64) {
	tl := nd.tl
	i := nd.tlAt(start)
	g, c, m := tl[i].g, tl[i].c, tl[i].m
	for i++; i < len(tl) && tl[i].t < end; i++ {
		g, c, m = min(g, tl[i].g), min(c, tl[i].c), min(m, tl[i].m)
	}
	return g, c, m
}

// timeline builds the nodes' timelines and free-GPU bits from their free
// state, releases and reservations (reset).
func (s *consState) timeline() {
	s.nw = (len(s.node) + 63) / 64
	s.fb = slices.Grow(s.fb[:0], len(s.times)*s.nw)[:len(s.times)*s.nw]
	clear(s.fb)
	for n := range s.node {
		if s.node[n].complex {
			s.setBits(int32(n), 0, len(s.times), true)
			continue
		}
		s.build(int32(n), math.MaxInt32)
	}
}

// build makes plain node n's timeline and its free-GPU bits those of its
// free state, releases and the reservations of the jobs queued before
// position cut: what taking every later job's reservation out of it
// change by change would leave, in one sweep (consState.exact). The
// node's bits must hold no more than the new timeline's.
func (s *consState) build(n, cut int32) {
	nd := &s.node[n]
	evs := s.evs[:0]
	for k := range nd.rels {
		e := &nd.rels[k]
		evs = append(evs, consEvent{max(e.end, s.now), e.a.GPUs, e.a.CPUs, e.a.MemMB})
	}
	for k := range nd.res {
		e := &nd.res[k]
		if s.recs[e.id].pos >= cut {
			continue
		}
		evs = append(evs, consEvent{max(e.start, s.now), -e.a.GPUs, -e.a.CPUs, -e.a.MemMB})
		if e.end < math.MaxInt64 {
			evs = append(evs, consEvent{e.end, e.a.GPUs, e.a.CPUs, e.a.MemMB})
		}
	}
	for i := 1; i < len(evs); i++ { // few: insertion sort
		for j := i; j > 0 && evs[j].t < evs[j-1].t; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
	s.evs = evs
	p := consPoint{t: s.now, g: nd.base.FreeGPUs, c: nd.base.FreeCPUs, m: nd.base.FreeMemMB}
	tl := nd.tl[:0]
	for _, e := range evs {
		if e.t > p.t {
			if k := len(tl); k == 0 || !tl[k-1].same(&p) {
				tl = append(tl, p)
			}
			p.t = e.t
		}
		p.g, p.c, p.m = p.g+e.g, p.c+e.c, p.m+e.m
	}
	if k := len(tl); k == 0 || !tl[k-1].same(&p) {
		tl = append(tl, p)
	}
	nd.tl = tl
	// The bits: only set, as they hold at most the new timeline's (after
	// timeline clears them, or, for exact, of a timeline that held every
	// reservation on the node: as many free GPUs at most, anywhere).
	r := 0
	for k := range tl {
		next := len(s.times)
		if k+1 < len(tl) {
			next = r
			for next < len(s.times) && s.times[next] < tl[k+1].t {
				next++
			}
		}
		if tl[k].g > 0 {
			s.setBits(n, r, next, true)
		}
		r = next
	}
}

// setBits sets (on) or clears node n's bit in segments [lo, hi).
func (s *consState) setBits(n int32, lo, hi int, on bool) {
	if lo >= hi {
		return
	}
	nw, b := s.nw, uint64(1)<<uint(n&63)
	fb := s.fb[lo*nw+int(n>>6) : (hi-1)*nw+int(n>>6)+1]
	if on {
		for k := 0; k < len(fb); k += nw {
			fb[k] |= b
		}
	} else {
		for k := 0; k < len(fb); k += nw {
			fb[k] &^= b
		}
	}
}

// take puts r's reservation in the totals and timelines.
func (s *consState) take(r *consJob) { s.aggReservation(r, -1) }

// tlAdd adds a change over [from, to), starting at segment lo (-1: not
// known; found when a bit changes), to node n's timeline and free-GPU
// bits.
func (s *consState) tlAdd(n int32, from, to sim.Time, lo int, dg, dc int32, dm int64) {
	nd := &s.node[n]
	from = max(from, s.now)
	i := nd.tlSplit(from)
	j := len(nd.tl)
	if to < math.MaxInt64 {
		j = nd.tlSplit(to)
	}
	flip := false // some point's free GPUs crossed zero
	for k := i; k < j; k++ {
		p := &nd.tl[k]
		flip = flip || (p.g > 0) != (p.g+dg > 0)
		p.g, p.c, p.m = p.g+dg, p.c+dc, p.m+dm
	}
	if flip {
		// Each flipped point's segments, up to the next point's (points
		// lie on boundaries); a point made by the splits above has the
		// bits of the one it was split from already.
		r := -1 // the row of point k, when known
		for k := i; k < j; k++ {
			p := &nd.tl[k]
			if (p.g > 0) == (p.g-dg > 0) {
				r = -1
				continue
			}
			if r < 0 {
				r = lo
				if k > i || lo < 0 {
					r = s.row(p.t)
				}
			}
			next := len(s.times)
			if k+1 < len(nd.tl) {
				next = s.rowAfter(r, nd.tl[k+1].t)
			}
			s.setBits(n, r, next, p.g > 0)
			r = next
		}
	}
	// A point that no longer changes anything goes.
	if j < len(nd.tl) && nd.tl[j].same(&nd.tl[j-1]) {
		nd.tl = slices.Delete(nd.tl, j, j+1)
	}
	if i > 0 && nd.tl[i].same(&nd.tl[i-1]) {
		nd.tl = slices.Delete(nd.tl, i, i+1)
	}
}

func (p *consPoint) same(q *consPoint) bool { return p.g == q.g && p.c == q.c && p.m == q.m }

// tlSplit returns the index of the timeline point at t (t >= now), making
// one if needed.
func (nd *consNode) tlSplit(t sim.Time) int {
	i := nd.tlAt(t)
	if nd.tl[i].t == t {
		return i
	}
	p := nd.tl[i]
	p.t = t
	nd.tl = append(nd.tl, p) // slices.Insert, without its generic checks
	copy(nd.tl[i+2:], nd.tl[i+1:])
	nd.tl[i+1] = p
	return i + 1
}

// minFree returns the least free GPUs, CPUs and memory of nd (not a MIG
// or MPS node) over [start, end) on the profile of the jobs queued before
// position before: each is least at start or where a reservation begins.
func (s *consState) minFree(nd *consNode, start, end sim.Time, before int32) (int32, int32, int64) {
	g, c, m := s.freeAt(nd, start, before)
	for k := range nd.res {
		e := &nd.res[k]
		if e.start > start && e.start < end && s.recs[e.id].pos < before {
			g2, c2, m2 := s.freeAt(nd, e.start, before)
			g, c, m = min(g, g2), min(c, c2), min(m, m2)
		}
	}
	return g, c, m
}

// freeAt returns the free GPUs, CPUs and memory of nd at t.
func (s *consState) freeAt(nd *consNode, t sim.Time, before int32) (int32, int32, int64) {
	g, c, m := nd.base.FreeGPUs, nd.base.FreeCPUs, nd.base.FreeMemMB
	for k := range nd.rels {
		if e := &nd.rels[k]; e.end <= t {
			g, c, m = g+e.a.GPUs, c+e.a.CPUs, m+e.a.MemMB
		}
	}
	for k := range nd.res {
		if e := &nd.res[k]; e.start <= t && t < e.end && s.recs[e.id].pos < before {
			g, c, m = g-e.a.GPUs, c-e.a.CPUs, m-e.a.MemMB
		}
	}
	return g, c, m
}

// meetWhole is meetOf for a MIG or MPS node: the states at start and at
// each change inside the window, each computed as the reference's segment
// state, met in time order (meetNode).
func (s *consState) meetWhole(nd *consNode, start, end sim.Time, before int32) sim.NodeState {
	evt := append(s.evt[:0], start)
	for k := range nd.rels {
		if e := nd.rels[k].end; e > start && e < end {
			evt = append(evt, e)
		}
	}
	for k := range nd.res {
		e := &nd.res[k]
		if s.recs[e.id].pos >= before {
			continue
		}
		if e.start > start && e.start < end {
			evt = append(evt, e.start)
		}
		if e.end > start && e.end < end {
			evt = append(evt, e.end)
		}
	}
	slices.Sort(evt)
	evt = slices.Compact(evt)
	s.evt = evt
	var w sim.NodeState
	for i, t := range evt {
		st := s.stateAt(nd, t, before)
		if i == 0 {
			w = st
		} else {
			meetNode(&w, &st)
		}
	}
	return w
}

// stateAt returns nd's whole free state at t: the releases up to t given
// back in (release time, JobRef) order, then the reservations covering t
// taken in queue order, as conservativeReference builds its segments.
func (s *consState) stateAt(nd *consNode, t sim.Time, before int32) sim.NodeState {
	st := nd.base
	ord := s.order[:0]
	for k := range nd.rels {
		if nd.rels[k].end <= t {
			ord = append(ord, int32(k))
		}
	}
	slices.SortFunc(ord, func(a, b int32) int {
		ea, eb := &nd.rels[a], &nd.rels[b]
		ta, tb := max(ea.end, s.now), max(eb.end, s.now)
		if ta != tb {
			return cmpTime(ta, tb)
		}
		return int(s.recs[ea.id].job.Ref - s.recs[eb.id].job.Ref)
	})
	for _, k := range ord {
		a := nd.rels[k].a
		st.Add(&a)
	}
	ord = ord[:0]
	for k := range nd.res {
		e := &nd.res[k]
		if e.start <= t && t < e.end && s.recs[e.id].pos < before {
			ord = append(ord, int32(k))
		}
	}
	slices.SortFunc(ord, func(a, b int32) int {
		return int(s.recs[nd.res[a].id].pos - s.recs[nd.res[b].id].pos)
	})
	for _, k := range ord {
		a := nd.res[k].a
		st.Sub(&a)
	}
	s.order = ord
	return st
}

func cmpTime(a, b sim.Time) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}
