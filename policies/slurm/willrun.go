package slurm

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
)

// The will-run test of the backfill cycle: when and where a job could
// start if the running jobs were released at their end_time, as
// select/cons_tres's _will_run_test (cons_common job_test.c, 22.05) finds
// it, with the fast path's profiles (per demand shape, the unit changes
// as each running job is released) and the groups they form per mask.

// wrProfile is a demand shape's will-run profile on the cycle's free state
// and rel: per node the units it holds on the free state of now (-1: not
// eligible), their sum, and per running job the change of each node's
// units as rel[i] is released (ent[entEnd[i-1]:entEnd[i]]), computed on
// demand, in rel order, up to the jobs a will-run test reached. The
// shape is the demand without its count: units per node do not depend on
// how many the job wants, so demands of every size share it. A node's
// units change only with the jobs on it, released in rel order whatever
// the mask, so the changes hold for every mask.
//
// cur and prev hold a node's free state and units after the jobs
// computed so far, valid where seen is stamp (other nodes have not
// changed: p.Free and contrib).
//
// reachYes and reachNo bound the counts known to be able to start within
// bf_window on every node (count <= reachYes) or not (count >= reachNo).
type wrProfile struct {
	gen      uint64          // made by the gen-th call that made a profile
	d        policies.Demand // count 0
	base     int64
	contrib  []int32
	upl      [][]uint64 // max(contrib, 0) bit-sliced: bit k of node x's in word x/64 of upl[k]
	prev     []int32
	cur      []sim.NodeState
	seen     []uint32
	stamp    uint32
	ent      []wrEntry
	entEnd   []int32
	entSum   []int64 // entSum[i]: the sum of rel[i]'s changes
	reachYes int64
	reachNo  int64
	allElig  bool   // every node is eligible (contrib >= 0)
	maskVer  uint64 // the mask masked was summed on (0: none)
	masked   int64
	logEpoch uint64 // the mask's change log (mlog) when masked was summed
	logPos   int    // and its length then

	// The will-run groups on the nodes the demand may use under the
	// mask grpVer (0: none), as _will_run_test forms them (groupScan),
	// computed on demand: grp[g], and the scan that continues them.
	// grpCap0 is the units on those nodes now. Many will-run tests of a
	// cycle share the demand shape and the mask and differ only in
	// count and start.
	grpVer  uint64
	grpCap0 int64
	grp     []wrGroup
	scan    groupScan

	// The changes of each node's units as the rel jobs are released in
	// order of end (b.relEnd), not of key: eEnt[eEntEnd[k-1]:eEntEnd[k]]
	// for the k-th, computed on demand, with their own free states (eCur,
	// ePrev where eSeen is eStamp). unitsBound sums them.
	eEnt    []wrEntry
	eEntEnd []int32
	eCur    []sim.NodeState
	ePrev   []int32
	eSeen   []uint32
	eStamp  uint32

	// What the reservation searches of this profile learnt (bfFact):
	// per search (certs, oldest first), its facts, facts[lo:hi].
	facts []bfFact
	certs []bfCert

	// fin is the profile with every rel job released, for the bound
	// past every end (finalBound).
	fin finalUnits

	// ub is the state of unitsBound for this profile, kept across the
	// reservation searches of the cycle: a search starting earlier than
	// the last one ended walks the releases back instead of starting over.
	ub unitsBound
}

// bfFact is what a retry of reserve at start lo learnt: with lo's next
// reservation boundary hi (math.MaxInt64: none), the units on the mask's
// nodes once every job ending by then is released were at most ub
// (unitsBound, by hi or, past the horizon, by any time). The mask left
// out the reservations meeting lo's window, the latest of them starting
// at lo+lim (lim 0: none starts after lo). It holds for every later
// search of the cycle with the same profile and a limit of at least lim,
// at any start t in [lo, hi): reservations are only added in a cycle, so
// a reservation the mask left out ends after lo, so at or after hi, so
// after t, and begins by lo+lim, so within t's window: t's mask lies
// within lo's. And t's next boundary is at most hi (a boundary then is
// one now), by which no more jobs end, and units only grow as jobs end.
// So when ub is short of a search's need, the bound, and with it the
// will-run test (see unitsBound), finds no start by next at any retry in
// [lo, hi): they are all TRY_LATER. lim is at most the limit of the
// search that learnt it, and often well below it: a search with a
// shorter limit uses the facts of a longer one whose window met no
// reservation starting past its own.
type bfFact struct {
	lo, hi sim.Time
	ub     int64
	lim    sim.Time
}

// bfCert is one reservation search's facts: facts[lo:hi] of its
// profile, in the order of their starts; lim and ub are the least of
// their lims and bounds.
type bfCert struct {
	lim    sim.Time
	ub     int64
	lo, hi int32
}

// factCursor walks one bfCert's facts as a search's start advances:
// facts[next:hi] are those not looked at yet, and [lo, e) is the span
// the usable ones before them (bound short of the search's need, lim at
// most its limit) cover, each starting within the union of those before
// it, ub and lim the largest of theirs (e <= lo: none yet). Every retry
// point of the span lies in one of those facts, so the span is a fact
// with that bound and lim.
type factCursor struct {
	next, hi int32
	lo, e    sim.Time
	ub       int64
	lim      sim.Time
}

// maxCerts bounds the searches whose facts a search consults: the later
// ones know of more reservations.
const maxCerts = 16

// openFacts starts a search of b.wr's profile with limit: it consults
// the facts of the last maxCerts searches that have one for a limit at
// most limit and a bound short of the need, and records its own.
func (s *Policy) openFacts(limit sim.Time) {
	b := &s.bf
	w := b.wr
	b.cq = b.cq[:0]
	for k := len(w.certs) - 1; k >= 0 && k >= len(w.certs)-maxCerts; k-- {
		if c := &w.certs[k]; c.lim <= limit && c.ub < b.need && c.hi > c.lo {
			b.cq = append(b.cq, factCursor{next: c.lo, hi: c.hi, lo: math.MinInt64, e: math.MinInt64})
		}
	}
	b.cqLo = math.MinInt64 // the cursors have found no span yet
	n := int32(len(w.facts))
	w.certs = append(w.certs, bfCert{lim: math.MaxInt64, ub: math.MaxInt64, lo: n, hi: n})
}

// addFact records f as a fact of the current search (openFacts).
func (s *Policy) addFact(f bfFact) {
	w := s.bf.wr
	w.facts = append(w.facts, f)
	c := &w.certs[len(w.certs)-1]
	c.hi = int32(len(w.facts))
	c.lim, c.ub = min(c.lim, f.lim), min(c.ub, f.ub)
}

// ruledOut reports whether the facts consulted show every retry point
// of the current search, with limit, in [t, e) TRY_LATER, for the
// largest such e that one cursor's span shows: f is [t, e) with the
// span's bound and lim. t only advances during a search, so each cursor
// reads its facts once a search, and the call returns at once while
// every span found starts after t (b.cqLo).
func (s *Policy) ruledOut(t, limit sim.Time) (f bfFact, ok bool) {
	b := &s.bf
	if t < b.cqLo {
		return f, false
	}
	lo := sim.Time(math.MaxInt64)
	for i := 0; i < len(b.cq); {
		q := &b.cq[i]
		if q.e <= t && !s.nextSpan(q, t, limit) {
			// Spent: drop it.
			b.cq[i] = b.cq[len(b.cq)-1]
			b.cq = b.cq[:len(b.cq)-1]
			continue
		}
		if q.lo <= t && (!ok || q.e > f.hi) {
			f, ok = bfFact{lo: t, hi: q.e, ub: q.ub, lim: q.lim}, true
		}
		lo = min(lo, q.lo)
		i++
	}
	b.cqLo = lo
	return f, ok
}

// nextSpan moves q to the first span of usable facts that ends after t
// (a span grows while the next usable fact starts within it), reporting
// false when there is none.
func (s *Policy) nextSpan(q *factCursor, t, limit sim.Time) bool {
	b := &s.bf
	facts := b.wr.facts
	have := false
	for ; q.next < q.hi; q.next++ {
		g := &facts[q.next]
		usable := g.ub < b.need && g.lim <= limit
		if have {
			if usable && g.lo <= q.e {
				q.e, q.ub, q.lim = max(q.e, g.hi), max(q.ub, g.ub), max(q.lim, g.lim)
				continue
			}
			if q.e > t {
				return true
			}
			have = false
		}
		if usable {
			have = true
			q.lo, q.e, q.ub, q.lim = g.lo, g.hi, g.ub, g.lim
		}
	}
	return have && q.e > t
}

// unitsBound is the state of the bound reserve tests its TRY_LATER
// retries against (Policy.unitsBound), kept per profile for the cycle: the
// first k jobs of b.relEnd released, ex per node the units that gained
// (listed in touched), d the units on b.mask's nodes with them released,
// as of the mask's change log at (epoch, pos).
type unitsBound struct {
	gen     uint64 // the profile's gen (0: none)
	t       sim.Time
	k       int
	ex      []int32
	touched []int32
	tbits   []uint64 // touched as a node set
	d       int64
	epoch   uint64
	pos     int
}

// wrGroup is a will-run group: rel[:end] is consumed after it, a job
// fitting then starts at start, and the demand's nodes hold cap units.
type wrGroup struct {
	end   int32
	start sim.Time
	cap   int64
}

// groupScan walks rel as cons_tres's _will_run_test (cons_common
// job_test.c, 22.05) releases the running jobs for a will-run test, one
// group per call of next:
//
//   - jobs are taken in end_time order (bfRel.key); a job on none of the
//     test's nodes is skipped ("job has no usable nodes");
//   - the first job taken sets the grid end: its end_time rounded up to
//     the next 30 s boundary of the epoch (end_time + 30 − end_time % 30,
//     a boundary itself moving a full 30 s), the boundaries falling at
//     will_run_phase + k·30 of simulated time;
//   - after each job taken, the group ends if the job after it in the
//     list (taken or not) ends after grid end + window: so a job on none
//     of the nodes, within the window, lets the next job on them in
//     whatever its end (the loop checks only the job it peeked);
//   - between groups the window (30 s at first) doubles, or grows by
//     bf_window_linear, until it reaches that job's end;
//   - a job fitting after a group starts when the jobs released end:
//     the latest end (the view's End) among them.
type groupScan struct {
	next   int // rel index of the next job to take
	haveB  bool
	b      sim.Time // the grid end
	window sim.Time
	done   bool
	start  sim.Time // latest end of the jobs released
}

// step consumes rel for the next group, calling release(i) for every job
// taken; usable(i) says whether rel[i] is on the test's nodes. It
// reports false when no group is left.
func (g *groupScan) step(s *Policy, rel []bfRel, usable func(i int) bool, release func(i int)) bool {
	if g.done {
		return false
	}
	if g.window == 0 {
		g.window = 30
	}
	released := false
	for {
		if g.next >= len(rel) {
			g.done = true
			break
		}
		i := g.next
		g.next++
		if !usable(i) {
			continue
		}
		r := &rel[i]
		if !g.haveB {
			g.b, g.haveB = s.willRunGrid(r.key), true
		}
		release(i)
		g.start = max(g.start, r.end)
		released = true
		if g.next >= len(rel) {
			g.done = true
			break
		}
		if rel[g.next].key > g.b+g.window {
			break
		}
	}
	if !released {
		g.done = true
		return false
	}
	if !g.done {
		for peek := rel[g.next].key; ; {
			if s.cfg.bfWindowLinear > 0 {
				g.window += s.cfg.bfWindowLinear
			} else {
				g.window *= 2
			}
			if peek <= g.b+g.window {
				break
			}
		}
	}
	return true
}

// willRunGrid returns end rounded up to the next 30 s boundary of the
// will-run grid (strictly after end: a boundary moves a full 30 s), as
// _will_run_test aligns its windows: end_time + (30 − end_time % 30).
func (s *Policy) willRunGrid(end sim.Time) sim.Time {
	delta := ((end-s.cfg.willRunPhase)%30 + 30) % 30
	return end + 30 - delta
}

// maxProfiles bounds the will-run profiles kept in a cycle.
const maxProfiles = 16

// wrEntry is a change of a node's units in a will-run profile.
type wrEntry struct {
	node, delta int32
}

// willRun is cons_tres's will-run test on the nodes of b.mask
// (cons_common job_test.c _will_run_test): the earliest time >= startRes
// at which job fits, now or with the running jobs (and the pass's
// starts) released group by group as groupScan forms the groups on the
// job's nodes. The placement is left in b.alloc.
func (s *Policy) willRun(job *sim.PendingJob, startRes sim.Time) (sim.Time, bool) {
	p := &s.pass
	b := &s.bf
	d := policies.NewDemand(job)
	n := len(p.Nodes)
	b.wfree = slices.Grow(b.wfree[:0], n)[:n]
	b.contrib = slices.Grow(b.contrib[:0], n)[:n]
	var capSum int64
	for i := range p.Nodes {
		if b.inMask(int32(i)) && d.Eligible(&p.Nodes[i]) {
			b.wfree[i] = p.Free[i]
			c := d.FitAt(&b.wfree[i])
			b.contrib[i] = c
			capSum += int64(c)
		} else {
			b.wfree[i] = sim.NodeState{}
			b.contrib[i] = -1
		}
	}
	if capSum >= int64(d.Count) && s.placeRes(job) {
		return startRes, true
	}
	usable := func(i int) bool {
		for _, a := range b.rel[i].alloc {
			if b.contrib[a.Node] >= 0 {
				return true
			}
		}
		return false
	}
	release := func(i int) {
		for _, a := range b.rel[i].alloc {
			if b.contrib[a.Node] < 0 {
				continue
			}
			f := &b.wfree[a.Node]
			f.Add(&a) // MIG instances and MPS shares come back too
			c := d.FitAt(f)
			capSum += int64(c - b.contrib[a.Node])
			b.contrib[a.Node] = c
		}
	}
	var g groupScan
	for g.step(s, b.rel, usable, release) {
		if capSum >= int64(d.Count) && s.placeRes(job) {
			return max(startRes, g.start), true
		}
	}
	return 0, false
}

// placeRes places job on b.wfree into b.alloc: with the pass's placer, or
// with bf_busy_nodes on the nodes busy now first (then the idle ones), each
// in cluster order.
func (s *Policy) placeRes(job *sim.PendingJob) bool {
	p := &s.pass
	b := &s.bf
	if !s.cfg.bfBusyNodes {
		var ok bool
		b.alloc, ok = p.Placer().Place(p.Nodes, b.wfree, job, b.alloc[:0])
		return ok
	}
	b.order = b.order[:0]
	for pass := range 2 {
		for i := range p.Nodes {
			busy := p.Free[i] != sim.Capacity(&p.Nodes[i])
			if busy == (pass == 0) {
				b.order = append(b.order, int32(i))
			}
		}
	}
	d := policies.NewDemand(job)
	need := d.Count
	b.alloc = b.alloc[:0]
	for _, i := range b.order {
		if !d.Eligible(&p.Nodes[i]) {
			continue
		}
		k := min(d.FitAt(&b.wfree[i]), need)
		if k == 0 {
			continue
		}
		b.alloc = append(b.alloc, d.Alloc(i, k))
		if need -= k; need == 0 {
			return true
		}
	}
	return false
}

// placeUnits is placeAfter for FirstFit on one partition, for a demand
// that needs some GPU, CPU or memory and no MIG or MPS: FirstFit takes
// from each node in order min(its units, what is still needed), and a
// node's units after rel[:n] is released are its profile units now plus
// the changes of those jobs, so the free state need not be rebuilt.
func (s *Policy) placeUnits(d *policies.Demand, n int) bool {
	b := &s.bf
	w := b.wr
	if nn := len(w.contrib); len(b.acc) != nn {
		b.acc = make([]int32, nn)
		b.accSeen = make([]uint32, nn)
		b.accStamp = 0
	}
	if b.accStamp++; b.accStamp == 0 {
		clear(b.accSeen)
		b.accStamp = 1
	}
	// The nodes that may hold units: those with some now (upl) or
	// gaining some from the jobs released (accBits), in the mask.
	b.accBits = slices.Grow(b.accBits[:0], len(b.out))[:len(b.out)]
	clear(b.accBits)
	if n > 0 {
		s.profileEntries(n)
		for _, e := range w.ent[:w.entEnd[n-1]] {
			if !b.inMask(e.node) {
				continue
			}
			if b.accSeen[e.node] != b.accStamp {
				b.accSeen[e.node] = b.accStamp
				b.acc[e.node] = 0
				b.accBits[e.node>>6] |= 1 << uint(e.node&63)
			}
			b.acc[e.node] += e.delta
		}
	}
	need := d.Count
	b.alloc = b.alloc[:0]
	for i, o := range b.out {
		cand := b.accBits[i]
		for _, pl := range w.upl {
			cand |= pl[i]
		}
		for cand &^= o; cand != 0; cand &= cand - 1 {
			x := i<<6 | bits.TrailingZeros64(cand)
			c := w.contrib[x] // eligible: upl and the entries hold none elsewhere
			if b.accSeen[x] == b.accStamp {
				c += b.acc[x]
			}
			if c <= 0 {
				continue
			}
			k := min(c, need)
			b.alloc = append(b.alloc, d.Alloc(int32(x), k))
			if need -= k; need == 0 {
				return true
			}
		}
	}
	b.alloc = b.alloc[:0]
	return false
}

// profile makes b.wr the will-run profile of request class cls's demand
// shape on the free state of now, and b.need its count, reusing the
// profile of an earlier demand of the same shape while the free state and
// rel are unchanged (the class remembers where it is).
func (s *Policy) profile(cls int32) {
	p := &s.pass
	b := &s.bf
	c := &b.classes[cls]
	b.need = int64(c.count)
	if c.slot >= 0 && c.slot < int32(b.nprof) && b.profs[c.slot].gen == c.gen {
		b.wr = &b.profs[c.slot]
		return
	}
	d := c.shape
	for i := range b.profs[:b.nprof] {
		if b.profs[i].d == d {
			b.wr = &b.profs[i]
			c.slot, c.gen = int32(i), b.wr.gen
			return
		}
	}
	slot := b.profNext
	if b.nprof < maxProfiles {
		if b.nprof == len(b.profs) {
			b.profs = append(b.profs, wrProfile{})
		}
		slot = b.nprof
		b.nprof++
	} else {
		b.profNext = (b.profNext + 1) % maxProfiles
	}
	w := &b.profs[slot]
	b.wr = w
	b.profGen++
	w.gen = b.profGen
	c.slot, c.gen = int32(slot), w.gen
	w.d = d
	w.reachYes, w.reachNo = 0, math.MaxInt64
	w.maskVer, w.grpVer = 0, 0
	w.facts, w.certs = w.facts[:0], w.certs[:0]
	n := len(p.Nodes)
	e := s.baseShape(d)
	w.contrib, w.upl, w.base, w.allElig = e.contrib, e.upl, e.base, e.allElig
	if len(w.seen) != n {
		w.seen = make([]uint32, n)
		w.prev = make([]int32, n)
		w.cur = make([]sim.NodeState, n)
		w.stamp = 0
	}
	if w.stamp++; w.stamp == 0 {
		clear(w.seen)
		w.stamp = 1
	}
	w.ent = w.ent[:0]
	w.entEnd = w.entEnd[:0]
	w.entSum = w.entSum[:0]
	if len(w.eSeen) != n {
		w.eSeen = make([]uint32, n)
		w.ePrev = make([]int32, n)
		w.eCur = make([]sim.NodeState, n)
		w.eStamp = 0
	}
	if w.eStamp++; w.eStamp == 0 {
		clear(w.eSeen)
		w.eStamp = 1
	}
	w.eEnt = w.eEnt[:0]
	w.eEntEnd = w.eEntEnd[:0]
	w.fin.ok = false
}

// maskedUnits returns the units b.wr holds now on the nodes b.mask leaves
// out, kept per profile while the mask is the same.
func (s *Policy) maskedUnits() int64 {
	b := &s.bf
	w := b.wr
	if w.maskVer != b.maskVer {
		var u int64
		if w.maskVer != 0 && w.logEpoch == b.logEpoch && len(b.mlog)-w.logPos < len(b.out) {
			// Follow the changes since.
			u = w.masked
			for _, e := range b.mlog[w.logPos:] {
				u += w.units(e.w, e.gone) - w.units(e.w, e.back)
			}
		} else {
			for i, o := range b.out {
				if o != 0 {
					u += w.units(int32(i), o)
				}
			}
		}
		w.maskVer, w.masked = b.maskVer, u
		w.logEpoch, w.logPos = b.logEpoch, len(b.mlog)
	}
	return w.masked
}

// baseShape is one demand shape's units per node on the free state of
// a pass (snap; -1 where the node is not eligible), their sum and bit
// planes: a profile's contrib, base and upl, kept across passes so that
// the next profile of the shape refits only the nodes whose free state
// changed (a few, where most jobs run on; the planes then change a node
// at a time). The profiles of the shape read them until dropped.
type baseShape struct {
	ok      bool
	snap    []sim.NodeState
	mark    policies.FreeMark // the free state's changes when snap was taken
	contrib []int32
	upl     [][]uint64
	base    int64
	allElig bool
}

// maxBaseShapes bounds the shapes kept.
const maxBaseShapes = maxProfiles

// baseShape returns the units of demand shape d on the pass's free state.
func (s *Policy) baseShape(d policies.Demand) *baseShape {
	p := &s.pass
	b := &s.bf
	e, _ := b.baseShapes.get(d, maxBaseShapes)
	n := len(p.Nodes)
	if !e.ok || len(e.snap) != n {
		e.ok = true
		e.snap = append(e.snap[:0], p.Free...)
		e.contrib = slices.Grow(e.contrib[:0], n)[:n]
		var base int64
		e.allElig = true
		for i := range p.Nodes {
			c := int32(-1)
			if d.Eligible(&p.Nodes[i]) {
				c = 0
				if !d.Short(&p.Free[i]) {
					c = d.FitAt(&p.Free[i])
				}
				base += int64(c)
			} else {
				e.allElig = false
			}
			e.contrib[i] = c
		}
		e.base = base
		e.upl = setPlanes(e.upl, e.contrib)
		e.mark = p.FreeMark()
		return e
	}
	// Only the nodes whose free state changed since snap can differ from
	// it, where the pass says which (a mirrored free state).
	changed, known := p.FreeChanged(e.mark)
	e.mark = p.FreeMark()
	all := len(p.Free)
	if known {
		all = len(changed)
	}
	for k := range all {
		x := k
		if known {
			x = int(changed[k])
		}
		f := &p.Free[x]
		if sameState(&e.snap[x], f) {
			continue
		}
		e.snap[x] = *f
		old := e.contrib[x]
		if old < 0 {
			continue // not eligible, whatever its state
		}
		c := int32(0)
		if !d.Short(f) {
			c = d.FitAt(f)
		}
		if c != old {
			e.contrib[x] = c
			e.base += int64(c - old)
			e.upl = setPlane(e.upl, (n+63)/64, x, old, c)
		}
	}
	return e
}

// setPlane changes node x's value in the bit planes upl (setPlanes, nw
// words a plane) from old to c, adding planes as c needs them.
func setPlane(upl [][]uint64, nw, x int, old, c int32) [][]uint64 {
	w, bit := x>>6, uint64(1)<<uint(x&63)
	for j := 0; old > 0; j, old = j+1, old>>1 {
		if old&1 != 0 {
			upl[j][w] &^= bit
		}
	}
	for k := bits.Len32(uint32(max(c, 0))); len(upl) < k; {
		upl = append(upl, make([]uint64, nw))
	}
	for j := 0; c > 0; j, c = j+1, c>>1 {
		if c&1 != 0 {
			upl[j][w] |= bit
		}
	}
	return upl
}

// setPlanes sets upl, reusing its storage, to the bit planes of vals: bit x
// of plane k is bit k of vals[x] (a value below 1 sets none).
func setPlanes(upl [][]uint64, vals []int32) [][]uint64 {
	var top int32
	for _, c := range vals {
		top = max(top, c)
	}
	k, nw := bits.Len32(uint32(top)), (len(vals)+63)/64
	if cap(upl) < k {
		upl = slices.Grow(upl[:cap(upl)], k-cap(upl))
	}
	upl = upl[:k]
	for j := range upl {
		upl[j] = slices.Grow(upl[j][:0], nw)[:nw]
		clear(upl[j])
	}
	for x, c := range vals {
		for j := 0; c > 0; j, c = j+1, c>>1 {
			if c&1 != 0 {
				upl[j][x>>6] |= 1 << uint(x&63)
			}
		}
	}
	return upl
}

// units returns the profile's units now (none where not eligible) on the
// nodes of set in word i.
func (w *wrProfile) units(i int32, set uint64) int64 {
	if set == 0 {
		return 0
	}
	var u int64
	for k, pl := range w.upl {
		u += int64(bits.OnesCount64(pl[i]&set)) << uint(k)
	}
	return u
}

// dropProfiles forgets the will-run profiles (the free state or rel
// changed).
func (b *backfillState) dropProfiles() {
	b.finOK = false
	b.nprof = 0
	b.profNext = 0
	b.wr = nil
}

// profileEntries makes sure the profile has the changes of rel[:n].
func (s *Policy) profileEntries(n int) {
	b := &s.bf
	w := b.wr
	d := &w.d
	for i := len(w.entEnd); i < n; i++ {
		var sum int64
		for _, a := range b.rel[i].alloc {
			if w.contrib[a.Node] < 0 {
				continue
			}
			if w.seen[a.Node] != w.stamp {
				w.seen[a.Node] = w.stamp
				w.cur[a.Node] = s.pass.Free[a.Node]
				w.prev[a.Node] = w.contrib[a.Node]
			}
			f := &w.cur[a.Node]
			f.Add(&a) // MIG instances and MPS shares come back too
			c := d.FitAt(f)
			if dc := c - w.prev[a.Node]; dc != 0 {
				w.prev[a.Node] = c
				w.ent = append(w.ent, wrEntry{node: a.Node, delta: dc})
				sum += int64(dc)
			}
		}
		w.entEnd = append(w.entEnd, int32(len(w.ent)))
		w.entSum = append(w.entSum, sum)
	}
}

// entries returns the profile's changes as rel[i] is released.
func (w *wrProfile) entries(i int) []wrEntry {
	lo := int32(0)
	if i > 0 {
		lo = w.entEnd[i-1]
	}
	return w.ent[lo:w.entEnd[i]]
}

// reachable reports whether job, whose profile is made, could start
// within bf_window on some mask: when it cannot on every node (no mask),
// reserve would make no reservation, whatever the TRY_LATER retries find.
func (s *Policy) reachable(now, horizon sim.Time) bool {
	b := &s.bf
	w := b.wr
	switch {
	case b.need <= w.reachYes:
		return true
	case b.need >= w.reachNo:
		// reach found for that count as for this one that the start
		// lies past the horizon: its bound is in place.
		return false
	}
	ok := s.reach(now, horizon)
	if ok {
		w.reachYes = b.need
	} else {
		w.reachNo = b.need
	}
	return ok
}

// reach bounds the start of any will-run test of the profile's demand:
// on any mask the job fits at the earliest once the jobs up to rel[j]
// are released, j the first at which it fits on every node, and it
// starts no earlier than the end of the job that completes its units,
// rel[j] or one after it: so no earlier than the least End of rel[j:].
func (s *Policy) reach(now, horizon sim.Time) bool {
	b := &s.bf
	w := b.wr
	capSum := w.base
	if capSum >= b.need {
		return true // it fits now
	}
	j := -1
	for i := range b.rel {
		s.profileEntries(i + 1)
		for _, e := range w.entries(i) {
			capSum += int64(e.delta)
		}
		if capSum >= b.need {
			j = i
			break
		}
	}
	if j < 0 {
		return false // it fits nowhere, whatever ends
	}
	lb := sim.Time(math.MaxInt64)
	for _, r := range b.rel[j:] {
		lb = min(lb, r.end)
	}
	if max(now, lb) > horizon {
		b.until(max(now, lb) - s.cfg.bfWindow) // the horizon reaches it then
		return false
	}
	return true
}

// willRunExact is willRun for a placement that succeeds exactly when the
// nodes of b.mask hold the job's units (FirstFit on one partition, or
// bf_busy_nodes): it sums the job's profile over the nodes b.mask leaves
// in, group by group, without rebuilding the free state; the groups of
// a mask are kept for the tests that share it. The placement is made
// (into b.alloc) only when the caller will use it: when the start is
// found and not after use. It returns what willRun returns, except that
// once the groups pass stop it returns the first group start past stop
// (true) without looking further: reserve then tries later from stop
// whatever the start, and its bounds on skipping are at or before stop
// already.
func (s *Policy) willRunExact(job *sim.PendingJob, startRes, use, stop sim.Time) (sim.Time, bool) {
	b := &s.bf
	w := b.wr
	if w.grpVer != b.maskVer {
		w.grpVer = b.maskVer
		w.grp = w.grp[:0]
		w.scan = groupScan{}
		w.grpCap0 = w.base - s.maskedUnits()
	}
	need := b.need
	n, t := 0, startRes
	if w.grpCap0 < need {
		for g := 0; ; g++ {
			if g == len(w.grp) && !s.nextGroup(w) {
				return 0, false
			}
			gr := &w.grp[g]
			if t = max(startRes, gr.start); t > stop {
				return t, true
			}
			if gr.cap >= need {
				n = int(gr.end)
				break
			}
		}
	}
	if t > use {
		return t, true // TRY_LATER or beyond bf_window: the placement is not used
	}
	if s.placeAfter(job, n) {
		return t, true
	}
	return s.willRun(job, startRes) // not reached with an exact placement
}

// nextGroup appends the profile's next will-run group under b.mask,
// reporting false when there is none.
func (s *Policy) nextGroup(w *wrProfile) bool {
	b := &s.bf
	capSum := w.grpCap0
	if k := len(w.grp); k > 0 {
		capSum = w.grp[k-1].cap
	}
	usable := func(i int) bool {
		r := &b.rel[i]
		if w.allElig {
			for _, nw := range r.words {
				if nw.bits&^b.out[nw.w] != 0 {
					return true
				}
			}
			return false // every node it is on is masked
		}
		for _, a := range r.alloc {
			if w.contrib[a.Node] >= 0 && b.inMask(a.Node) {
				return true
			}
		}
		return false
	}
	release := func(i int) {
		s.profileEntries(i + 1)
		in := true // every node of rel[i] in the mask: all its changes count
		for _, nw := range b.rel[i].words {
			if nw.bits&b.out[nw.w] != 0 {
				in = false
				break
			}
		}
		if in {
			capSum += w.entSum[i]
			return
		}
		for _, e := range w.entries(i) {
			if b.inMask(e.node) {
				capSum += int64(e.delta)
			}
		}
	}
	if !w.scan.step(s, b.rel, usable, release) {
		return false
	}
	w.grp = append(w.grp, wrGroup{end: int32(w.scan.next), start: w.scan.start, cap: capSum})
	return true
}

// placeAfter places job into b.alloc on the free state after rel[:n] is
// released, on the nodes of b.mask, as willRun does.
func (s *Policy) placeAfter(job *sim.PendingJob, n int) bool {
	p := &s.pass
	b := &s.bf
	w := b.wr
	if d := policies.NewDemand(job); p.Exact && !s.cfg.bfBusyNodes && job.Parts == 1<<uint(job.Part) &&
		d.MIG == 0 && d.MPS == 0 && (d.GPUs > 0 || d.CPUs > 0 || d.MemMB > 0) {
		return s.placeUnits(&d, n)
	}
	nn := len(p.Nodes)
	b.wfree = slices.Grow(b.wfree[:0], nn)[:nn]
	for i := range b.wfree {
		if w.contrib[i] >= 0 && b.inMask(int32(i)) {
			b.wfree[i] = p.Free[i]
		} else {
			b.wfree[i] = sim.NodeState{}
		}
	}
	if n > 0 {
		for _, r := range b.rel[:n] {
			for _, a := range r.alloc {
				if w.contrib[a.Node] < 0 || !b.inMask(a.Node) {
					continue
				}
				f := &b.wfree[a.Node]
				f.Add(&a) // MIG instances and MPS shares come back too
			}
		}
	}
	return s.placeRes(job)
}

// orderRelEnd makes b.relEnd the rel indices by end, then index, when rel
// changed since it was made.
func (b *backfillState) orderRelEnd() {
	if b.relEndOK {
		return
	}
	b.relEndOK = true
	b.relEnd = b.relEnd[:0]
	for i := range b.rel {
		b.relEnd = append(b.relEnd, int32(i))
	}
	slices.SortFunc(b.relEnd, func(x, y int32) int {
		return cmp.Or(cmp.Compare(b.rel[x].end, b.rel[y].end), cmp.Compare(x, y))
	})
}

// endEntries makes sure the profile has the changes of the first k jobs
// of b.relEnd.
func (s *Policy) endEntries(k int) {
	b := &s.bf
	w := b.wr
	d := &w.d
	for i := len(w.eEntEnd); i < k; i++ {
		for _, a := range b.rel[b.relEnd[i]].alloc {
			x := a.Node
			if w.contrib[x] < 0 {
				continue
			}
			if w.eSeen[x] != w.eStamp {
				w.eSeen[x] = w.eStamp
				w.eCur[x] = s.pass.Free[x]
				w.ePrev[x] = w.contrib[x]
			}
			f := &w.eCur[x]
			f.Add(&a)
			c := d.FitAt(f)
			if dc := c - w.ePrev[x]; dc != 0 {
				w.ePrev[x] = c
				w.eEnt = append(w.eEnt, wrEntry{node: x, delta: dc})
			}
		}
		w.eEntEnd = append(w.eEntEnd, int32(len(w.eEnt)))
	}
}

// unitsBound returns an upper bound on the units of b.wr's demand on the
// nodes of b.mask in any will-run group that starts at or before t: the
// units those nodes hold once every rel job ending by t is released.
// A group starting at or before t has released only such jobs (its start
// is the latest end among those it released), and a node's units only
// grow as jobs release theirs. So when the bound is short of the need,
// the will-run test finds no start at or before t. The profile keeps the
// state between calls (w.ub): it follows the mask by its change log and
// t by the jobs whose end it passes, forwards or backwards, so the
// searches of a cycle, each starting again near now, walk only the
// releases between their times.
func (s *Policy) unitsBound(t sim.Time) int64 {
	b := &s.bf
	w := b.wr
	if t == math.MaxInt64 {
		got := s.finalBound()
		if boundCheck != nil {
			boundCheck(s, t, got)
		}
		return got
	}
	u := &w.ub
	if n := len(w.contrib); len(u.ex) != n {
		u.ex = make([]int32, n)
		u.tbits = make([]uint64, (n+63)/64)
		u.touched = u.touched[:0]
		u.gen = 0
	}
	switch {
	case u.gen != w.gen:
		for _, x := range u.touched {
			u.ex[x] = 0
			u.tbits[x>>6] = 0
		}
		u.touched = u.touched[:0]
		u.gen, u.k, u.d = w.gen, 0, w.base-s.maskedUnits()
	case u.epoch != b.logEpoch:
		u.d = w.base - s.maskedUnits()
		for _, x := range u.touched {
			if b.inMask(x) {
				u.d += int64(u.ex[x])
			}
		}
	default:
		for _, e := range b.mlog[u.pos:] {
			// A change has nodes gone or nodes back, not both.
			if e.gone != 0 {
				u.d -= w.units(e.w, e.gone)
				for m := e.gone & u.tbits[e.w]; m != 0; m &= m - 1 {
					u.d -= int64(u.ex[e.w<<6|int32(bits.TrailingZeros64(m))]) // left the mask
				}
			} else {
				u.d += w.units(e.w, e.back)
				for m := e.back & u.tbits[e.w]; m != 0; m &= m - 1 {
					u.d += int64(u.ex[e.w<<6|int32(bits.TrailingZeros64(m))])
				}
			}
		}
	}
	u.t, u.epoch, u.pos = t, b.logEpoch, len(b.mlog)
	b.orderRelEnd()
	// Back: the jobs released that end after t are held again (their
	// nodes stay touched, with what is left of their gain).
	for u.k > 0 && b.rel[b.relEnd[u.k-1]].end > t {
		u.k--
		lo := int32(0)
		if u.k > 0 {
			lo = w.eEntEnd[u.k-1]
		}
		for _, e := range w.eEnt[lo:w.eEntEnd[u.k]] {
			u.ex[e.node] -= e.delta
			if b.inMask(e.node) {
				u.d -= int64(e.delta)
			}
		}
	}
	for u.k < len(b.relEnd) && b.rel[b.relEnd[u.k]].end <= t {
		s.endEntries(u.k + 1)
		lo := int32(0)
		if u.k > 0 {
			lo = w.eEntEnd[u.k-1]
		}
		for _, e := range w.eEnt[lo:w.eEntEnd[u.k]] {
			if bit := uint64(1) << uint(e.node&63); u.tbits[e.node>>6]&bit == 0 {
				u.tbits[e.node>>6] |= bit
				u.touched = append(u.touched, e.node)
			}
			u.ex[e.node] += e.delta
			if b.inMask(e.node) {
				u.d += int64(e.delta)
			}
		}
		u.k++
	}
	got := u.d
	if boundCheck != nil {
		boundCheck(s, t, got)
	}
	return got
}

// finalUnits is a profile's units per node once every rel job is
// released, as bit planes (upl's layout), their sum, and their sum on the
// nodes b.mask leaves out as of the mask's change log at (epoch, pos).
type finalUnits struct {
	ok      bool
	ver     uint64 // b.finVer they were made on
	base    int64
	upl     [][]uint64
	maskVer uint64
	masked  int64
	epoch   uint64
	pos     int
}

// finalBound is unitsBound(math.MaxInt64): the units on b.mask's nodes
// with every rel job released. A reservation search's last retry before
// the horizon asks for it (its next boundary is none), and the other
// retries for bounds near now: kept apart, neither walks the releases
// to the other's time. The final units are made once per profile, and
// the masked sum follows the mask by its change log.
func (s *Policy) finalBound() int64 {
	b := &s.bf
	w := b.wr
	f := &w.fin
	s.finalFree()
	if !f.ok || f.ver != b.finVer {
		e := s.finShape(w)
		f.ok, f.ver = true, b.finVer
		f.base, f.upl = e.base, e.upl
		f.maskVer, f.masked = 0, 0
	}
	units := func(i int32, set uint64) int64 {
		var u int64
		if set != 0 {
			for k, pl := range f.upl {
				u += int64(bits.OnesCount64(pl[i]&set)) << uint(k)
			}
		}
		return u
	}
	if f.maskVer != b.maskVer {
		var u int64
		if f.maskVer != 0 && f.epoch == b.logEpoch && len(b.mlog)-f.pos < len(b.out) {
			u = f.masked
			for _, e := range b.mlog[f.pos:] {
				u += units(e.w, e.gone) - units(e.w, e.back)
			}
		} else {
			for i, o := range b.out {
				u += units(int32(i), o)
			}
		}
		f.maskVer, f.masked = b.maskVer, u
		f.epoch, f.pos = b.logEpoch, len(b.mlog)
	}
	return f.base - f.masked
}

// finShape is one demand shape's units per node on b.finFree as made
// the ver-th time (finalUnits' base and upl), shared by the profiles of
// that shape until finFree changes: the passes in between (finKeep) keep
// them.
type finShape struct {
	ver  uint64
	base int64
	upl  [][]uint64
}

// shapeSlots holds a few values per demand shape; a new shape takes the
// oldest one's slot, zeroed (a profile may still read the slices of the
// value it held).
type shapeSlots[T any] struct {
	d    []policies.Demand
	v    []T
	next int
}

// get returns d's value, and whether it is new (zero).
func (c *shapeSlots[T]) get(d policies.Demand, most int) (*T, bool) {
	for i := range c.d {
		if c.d[i] == d {
			return &c.v[i], false
		}
	}
	var zero T
	if len(c.d) < most {
		c.d, c.v = append(c.d, d), append(c.v, zero)
		return &c.v[len(c.v)-1], true
	}
	i := c.next
	c.next = (c.next + 1) % most
	c.d[i], c.v[i] = d, zero
	return &c.v[i], true
}

// maxFinShapes bounds the shapes whose final units are kept.
const maxFinShapes = 8

// finShape returns the final units of b.wr's demand shape on b.finFree.
func (s *Policy) finShape(w *wrProfile) *finShape {
	b := &s.bf
	e, _ := b.finShapes.get(w.d, maxFinShapes)
	if e.ver == b.finVer {
		return e // finVer is at least 1 once finFree is made
	}
	e.ver, e.base = b.finVer, 0
	fu := append(b.finUnits[:0], w.contrib...)
	for _, x := range b.finNodes {
		if fu[x] >= 0 {
			fu[x] = w.d.FitAt(&b.finFree[x])
		}
	}
	b.finUnits = fu
	for x, c := range fu {
		c = max(c, 0)
		fu[x] = c
		e.base += int64(c)
	}
	e.upl = setPlanes(e.upl, fu)
	return e
}

// finalFree makes b.finFree the free state with every rel job released,
// on the nodes listed in b.finNodes (the others are p.Free's), once for
// the profiles of a free state and rel: a profile's final units are its
// demand's fit there, whatever the order of the releases.
func (s *Policy) finalFree() {
	b := &s.bf
	if b.finOK {
		return
	}
	b.finOK = true
	free := s.pass.Free
	if s.finKeep(free) {
		if finCheck != nil {
			finCheck(s)
		}
		return
	}
	b.finVer++
	if len(b.finSeen) != len(free) {
		b.finSeen = make([]bool, len(free))
		b.finFree = make([]sim.NodeState, len(free))
		b.finNodes = b.finNodes[:0]
	}
	for _, x := range b.finNodes {
		b.finSeen[x] = false
	}
	b.finNodes = b.finNodes[:0]
	for i := range b.rel {
		for _, a := range b.rel[i].alloc {
			if !b.finSeen[a.Node] {
				b.finSeen[a.Node] = true
				b.finNodes = append(b.finNodes, a.Node)
				b.finFree[a.Node] = free[a.Node]
			}
			b.finFree[a.Node].Add(&a)
		}
	}
	s.finRecord(free)
}

// finCache is what b.finFree was made from, so that a later finalFree can
// keep it (finKeep): the free state then (snap) and the rel jobs, each
// with its run's start pass and a copy of its allocation (alloc[lo:hi]);
// a rel entry names its own (bfRel.fin, carried over by buildRel). plain: no
// allocation held MIG instances or an MPS share (their Sub and Add are
// not plain sums; finKeep then always makes it again).
type finCache struct {
	ok    bool
	plain bool
	snap  []sim.NodeState
	mark  policies.FreeMark // the free state's changes when snap was last equal to it
	jobs  []finJob
	alloc []sim.NodeAlloc
	dead  int
	call  uint32
	seen  []uint32 // per node: exp holds it when seen is call
	exp   []sim.NodeState
	touch []int32
	remap []int32 // finCompact's scratch
}

type finJob struct {
	ref     sim.JobRef
	started uint32 // the epoch of its run's start pass (slurmJob.started)
	anon    bool   // no slurmJob: never matched
	dead    bool
	seen    uint32
	lo, hi  int32
}

// finRun returns the start pass of ref's run, and whether the policy
// knows the job.
func (s *Policy) finRun(ref sim.JobRef) (uint32, bool) {
	if int(ref) < len(s.st) {
		return s.st[ref].started, true
	}
	return 0, false
}

// finKeep reports whether b.finFree, made from the free state and rel
// recorded in b.fin, still holds for free and b.rel, and if so updates
// the record. A run in both (same job, same start pass: the policy
// starts a job once a pass, and only a pass starts one) holds the same
// allocation in both. Then finFree = free + the rel allocations is
// unchanged when free differs from the recorded state exactly by the
// allocations of the runs that left rel (given back) and of those that
// joined (taken): a job that ends hands its allocation from rel to the
// free state, a job that starts takes it back, and neither moves the
// sum. Anything else (a node down or back, a run held past its end)
// shows as a difference and makes it again.
func (s *Policy) finKeep(free []sim.NodeState) bool {
	b := &s.bf
	c := &b.fin
	if !c.ok || !c.plain || len(c.snap) != len(free) {
		return false
	}
	c.call++
	if c.call == 0 {
		clear(c.seen)
		c.call = 1
	}
	if len(c.seen) != len(free) {
		c.seen = make([]uint32, len(free))
		c.exp = make([]sim.NodeState, len(free))
	}
	call := c.call
	c.touch = c.touch[:0]
	touch := func(x int32) *sim.NodeState {
		if c.seen[x] != call {
			c.seen[x] = call
			c.exp[x] = c.snap[x]
			c.touch = append(c.touch, x)
		}
		return &c.exp[x]
	}
	fresh := 0
	for i := range b.rel {
		e := &b.rel[i]
		if k := e.fin - 1; k >= 0 && int(k) < len(c.jobs) {
			j := &c.jobs[k]
			if st, known := s.finRun(e.ref); known && j.ref == e.ref && !j.anon && !j.dead && j.started == st && j.seen != call {
				j.seen = call
				continue
			}
		}
		fresh++
		for k := range e.alloc {
			a := &e.alloc[k]
			if a.MIG != (sim.MIGInstances{}) || a.MPS != (sim.MPSShare{}) {
				return false
			}
			st := touch(a.Node)
			st.FreeGPUs -= a.GPUs
			st.FreeCPUs -= a.CPUs
			st.FreeMemMB -= a.MemMB
		}
	}
	for k := range c.jobs {
		j := &c.jobs[k]
		if j.dead || j.seen == call {
			continue
		}
		for _, a := range c.alloc[j.lo:j.hi] {
			touch(a.Node).Add(&a)
		}
	}
	// snap is the free state as of c.mark: where the pass says which
	// nodes changed since (a mirrored free state), only they and the
	// touched can differ from what is wanted.
	check := func(x int32) bool {
		want := &c.snap[x]
		if c.seen[x] == call {
			want = &c.exp[x]
		}
		return sameState(want, &free[x])
	}
	if changed, known := s.pass.FreeChanged(c.mark); known && len(changed)+len(c.touch) < len(free) {
		for _, x := range changed {
			if !check(x) {
				return false
			}
		}
		for _, x := range c.touch {
			if !check(x) {
				return false
			}
		}
	} else {
		for x := range free {
			if !check(int32(x)) {
				return false
			}
		}
	}
	c.mark = s.pass.FreeMark()
	// Kept: bring the record to free and b.rel. A node a joining run took
	// from that had no rel job before gets its final state, the free
	// state it had then.
	for _, x := range c.touch {
		if !b.finSeen[x] {
			b.finSeen[x] = true
			b.finNodes = append(b.finNodes, x)
			b.finFree[x] = c.snap[x]
		}
		c.snap[x] = free[x]
	}
	for k := range c.jobs {
		if j := &c.jobs[k]; !j.dead && j.seen != call {
			j.dead = true
			c.dead++
		}
	}
	if fresh > 0 {
		n := int32(len(c.jobs)) // the entries matched are before n
		for i := range b.rel {
			e := &b.rel[i]
			if k := e.fin - 1; k >= 0 && k < n && c.jobs[k].seen == call && c.jobs[k].ref == e.ref {
				continue
			}
			s.finAdd(e)
			c.jobs[len(c.jobs)-1].seen = call
		}
	}
	if c.dead > len(c.jobs)/2 {
		s.finCompact()
	}
	return true
}

// sameState is a == b, field by field: the struct comparison calls
// memequal, a node at a time.
func sameState(a, b *sim.NodeState) bool {
	return a.FreeGPUs == b.FreeGPUs && a.FreeCPUs == b.FreeCPUs && a.FreeMemMB == b.FreeMemMB &&
		a.MIG == b.MIG && a.MPS[0] == b.MPS[0] && a.MPS[1] == b.MPS[1]
}

// finRecord records free and b.rel as those b.finFree was made from.
func (s *Policy) finRecord(free []sim.NodeState) {
	b := &s.bf
	c := &b.fin
	c.jobs, c.alloc, c.dead = c.jobs[:0], c.alloc[:0], 0
	c.snap = append(c.snap[:0], free...)
	c.mark = s.pass.FreeMark()
	c.ok, c.plain = true, true
	for i := range b.rel {
		s.finAdd(&b.rel[i])
	}
}

// finAdd appends e to the record.
func (s *Policy) finAdd(e *bfRel) {
	c := &s.bf.fin
	st, known := s.finRun(e.ref)
	lo := int32(len(c.alloc))
	for k := range e.alloc {
		a := &e.alloc[k]
		if a.MIG != (sim.MIGInstances{}) || a.MPS != (sim.MPSShare{}) {
			c.plain = false
		}
		c.alloc = append(c.alloc, *a)
	}
	c.jobs = append(c.jobs, finJob{ref: e.ref, started: st, anon: !known, lo: lo, hi: int32(len(c.alloc))})
	e.fin = int32(len(c.jobs))
}

// finCompact drops the record's dead entries, renaming the live ones in
// b.rel, which holds every live one.
func (s *Policy) finCompact() {
	b := &s.bf
	c := &b.fin
	c.remap = slices.Grow(c.remap[:0], len(c.jobs))[:len(c.jobs)]
	n, m := int32(0), int32(0)
	for k := range c.jobs {
		j := c.jobs[k]
		c.remap[k] = 0
		if j.dead {
			continue
		}
		// In place: entries and allocations only move down.
		lo := m
		m += int32(copy(c.alloc[m:], c.alloc[j.lo:j.hi]))
		j.lo, j.hi = lo, m
		c.jobs[n] = j
		n++
		c.remap[k] = n
	}
	c.jobs, c.alloc, c.dead = c.jobs[:n], c.alloc[:m], 0
	for i := range b.rel {
		if f := b.rel[i].fin; f > 0 && int(f) <= len(c.remap) {
			b.rel[i].fin = c.remap[f-1]
		}
	}
}

// boundCheck, when set (by the package's tests), is called with every
// bound unitsBound returns, to compare it with a plain sum.
// finCheck, when set (by the package's tests), is called whenever
// finalFree kept finFree, to compare it with one made afresh.
var finCheck func(s *Policy)

var boundCheck func(s *Policy, t sim.Time, got int64)
