package policies

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/schedsim/schedsim/sim"
)

// backfillState is the scratch state of one backfill cycle, kept between
// cycles so that a cycle allocates little once buffers have grown.
type backfillState struct {
	res      []bfRes  // reservations of this cycle
	pool     []int32  // backing store of res' node lists
	rel      []bfRel  // running jobs (and this pass's starts) by end
	relBuf   []bfRel  // the other buffer of buildRel's merge
	relNew   []bfRel  // buildRel's new entries
	relMark  []uint32 // per job: stamp of the buildRel that saw it running
	relPos   []int32  // per job: index in running (>= 0) or -1-index in the pass's starts
	relStamp uint32
	deferred []sim.JobRef // records whose reservation is not computed yet
	dparts   []int32      // their partitions
	dcls     []int32      // their classes
	mask     []bool       // nodes usable for the window under test
	masked   []int32      // the nodes mask leaves out, each once
	maskOK   bool         // mask is exactly that of the reservations (maskA, maskC) (no advance reservation added to it)
	maskA    int          // mask leaves out the reservations among the first maskA of loOrd
	maskC    int          // that are not among the first maskC of hiOrd
	maskVer  uint64       // changes with mask
	cnt      []int32      // per node: masked reservations holding it
	mpos     []int32      // per masked node: its index in masked
	loOrd    []int32      // reservations by start, then index
	hiOrd    []int32      // reservations by end, then index
	rankLo   []int32      // per reservation: its index in loOrd
	rankHi   []int32      // per reservation: its index in hiOrd
	ordN     int          // len(res) when loOrd and hiOrd were made
	wfree    []sim.NodeState
	contrib  []int32
	alloc    []sim.NodeAlloc
	order    []int32 // bf_busy_nodes node order
	acc      []int32 // placeUnits: per node, units gained by the jobs released
	accSeen  []uint32
	accStamp uint32
	users    []int32 // records tested per user (s.users index), for bf_max_job_user
	parts    [64]int
	relBuilt bool

	// Will-run profiles (exact placement) of the demands reserved since
	// the free state or rel last changed: profs[:nprof], wr the one of
	// the job being reserved.
	profs    []wrProfile
	nprof    int
	profNext int
	wr       *wrProfile
	profGen  uint64
	need     int64            // the count of the demand wr was made for
	running  []sim.RunningJob // the view's, during a cycle

	// The record under test and the deferred one being reserved, kept
	// here so that taking their address does not allocate.
	job, djob sim.PendingJob

	// Requests known to get no reservation (noRes) or not to start now
	// (noNow) on the cycle's state as it is: both outcomes are functions
	// of the request, its partitions and limit, the reservations, the free
	// state and rel, so a record asking the same is answered without the
	// test. Cleared when a reservation is made or a job starts.
	noRes outcomeSet
	noNow outcomeSet

	// The request classes seen (classOf), kept for the policy's life.
	classes []bfClass
	clsIdx  map[bfReq]int32

	// Skipping cycles (see Slurm.NoBackfillSkip). valid bounds the times
	// at which the last cycle's time-dependent tests come out the same;
	// why lists the reasons it set, in order; skipOK says the last cycle
	// may be repeated (it started nothing), and dirty that something it
	// depends on changed since. freeSnap and runSnap are the free state
	// and the running jobs it saw.
	valid    sim.Time
	why      []bfWhy
	skipOK   bool
	dirty    bool
	freeSnap []sim.NodeState
	runSnap  []bfRunKey
	skipped  int
}

// forget drops the memo of outcomes (a reservation was made or a job
// started).
func (b *backfillState) forget() {
	b.noRes.reset()
	b.noNow.reset()
}

// bfWhy is a pending reason a backfill cycle set.
type bfWhy struct {
	ref    sim.JobRef
	reason sim.PendingReason
}

// bfRunKey is a running job as a skipped cycle compares it.
type bfRunKey struct {
	ref sim.JobRef
	end sim.Time
}

// bfRes is a reservation: nodes held whole over [lo, hi).
type bfRes struct {
	job    sim.JobRef
	at     sim.Time // predicted start
	lo, hi sim.Time
	nodes  []int32
}

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
// changed: p.free and contrib).
//
// reachYes and reachNo bound the counts known to be able to start within
// bf_window on every node (count <= reachYes) or not (count >= reachNo).
type wrProfile struct {
	gen      uint64 // made by the gen-th call that made a profile
	d        demand // count 0
	base     int64
	contrib  []int32
	prev     []int32
	cur      []sim.NodeState
	seen     []uint32
	stamp    uint32
	ent      []wrEntry
	entEnd   []int32
	reachYes int64
	reachNo  int64
	maskVer  uint64 // the mask masked was summed on (0: none)
	masked   int64

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
func (g *groupScan) step(s *Slurm, rel []bfRel, usable func(i int) bool, release func(i int)) bool {
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
func (s *Slurm) willRunGrid(end sim.Time) sim.Time {
	delta := ((end-s.cfg.willRunPhase)%30 + 30) % 30
	return end + 30 - delta
}

// maxProfiles bounds the will-run profiles kept in a cycle.
const maxProfiles = 16

// wrEntry is a change of a node's units in a will-run profile.
type wrEntry struct {
	node, delta int32
}

// bfRel is a running job's resources coming free at end. key is Slurm's
// end_time, by which will-run orders and groups the running jobs: start
// + time limit, even once that has passed (the view's End then says when
// backfill expects the job gone: _guess_job_end), or End when earlier (a
// preemption's grace).
type bfRel struct {
	key   sim.Time
	end   sim.Time
	ref   sim.JobRef
	alloc []sim.NodeAlloc
}

// relKey returns the will-run key (bfRel.key) of a running job.
func (s *Slurm) relKey(r *sim.RunningJob) sim.Time {
	if int(r.Ref) < len(s.st) {
		if l := s.st[r.Ref].limit; l > 0 {
			return min(r.End, r.Start+sim.Time(l))
		}
	}
	return r.End
}

func (s *Slurm) floorRes(t sim.Time) sim.Time {
	r := s.cfg.bfResolution
	return t / r * r
}

// resvSpan returns the slots a reservation for a job starting at t with
// limit holds in the backfill map, [lo, hi): both ends rounded down to
// bf_resolution, and at least one slot (backfill.c: start_time and
// end_reserve divided by backfill_resolution, and _add_reservation's
// "occupies at least one bf_resolution slot").
func (s *Slurm) resvSpan(t, limit sim.Time) (lo, hi sim.Time) {
	lo = s.floorRes(t)
	hi = max(s.floorRes(endAt(t, limit)), lo+s.cfg.bfResolution)
	return lo, hi
}

// windowMask sets b.mask for a job tested at start with limit: the
// reservations it may not use are those whose slots meet [start,
// start+limit], closed at its end (backfill.c: a node_space record with
// end_time > start_res and begin_time <= end_time is applied), so a job
// whose limit ends exactly where a reservation begins does not get its
// nodes.
func (s *Slurm) windowMask(start, limit sim.Time) {
	s.setMask(start, endAt(start, limit))
}

// resvClash reports whether b.alloc, a job's placement at t with limit,
// uses a node that an earlier reservation holds in the slots the new one
// would meet (backfill.c _test_resv_overlap: a record with end_time >
// start_time and begin_time < end_reserve, both rounded down). When both
// round to the same slot boundary F, only a record running across F
// meets it, and none does when a reservation begins or ends at F (the
// map has a record boundary there).
func (s *Slurm) resvClash(t, limit sim.Time) bool {
	b := &s.bf
	flo, fhi := s.floorRes(t), s.floorRes(endAt(t, limit))
	if fhi > flo {
		s.setMask(flo, fhi-1)
		for _, a := range b.alloc {
			if !b.mask[a.Node] {
				return true
			}
		}
		return false
	}
	for _, r := range b.res {
		if r.lo == flo || r.hi == flo {
			return false
		}
	}
	for _, r := range b.res {
		if r.lo < flo && r.hi > flo {
			for _, a := range b.alloc {
				if slices.Contains(r.nodes, a.Node) {
					return true
				}
			}
		}
	}
	return false
}

// backfill is one cycle of Slurm's backfill scheduler (backfill.c
// _attempt_backfill), after the main pass of the same instant.
//
// A reservation is computed only when it could change a decision: when a
// later record fits now on the free nodes (ignoring reservations), every
// deferred reservation is computed first, in queue order. Records that
// cannot start now and have no record after them that could never need
// theirs. The starts are the same as computing every reservation eagerly.
func (s *Slurm) backfill(v sim.View, pend []sim.PendingJob) {
	b := &s.bf
	cfg := s.cfg
	now := v.Now()
	b.res = b.res[:0]
	b.pool = b.pool[:0]
	b.maskOK = false // its reservations are gone
	b.ordN = -1
	b.deferred = b.deferred[:0]
	b.dparts = b.dparts[:0]
	b.dcls = b.dcls[:0]
	b.relBuilt = false // built when the first reservation is computed
	b.dropProfiles()
	b.forget()
	b.running = v.Running()
	defer func() { b.running = nil }()
	if cfg.bfMaxJobUser > 0 {
		b.users = append(b.users[:0], make([]int32, len(s.users))...)
	}
	b.parts = [64]int{}
	b.valid = math.MaxInt64
	b.why = b.why[:0]
	tested := 0
	for k := range s.order {
		r := &s.order[k]
		js := &s.st[r.ref]
		if js.started == s.epoch {
			continue
		}
		if tested >= cfg.bfMaxJobTest {
			break
		}
		if cfg.bfMaxJobUser > 0 && int(b.users[js.user]) >= cfg.bfMaxJobUser ||
			cfg.bfMaxJobPart > 0 && b.parts[r.part] >= cfg.bfMaxJobPart {
			continue
		}
		tested++
		if cfg.bfMaxJobUser > 0 {
			b.users[js.user]++
		}
		b.parts[r.part]++
		job := &b.job
		*job = s.pendingJob(pend, r)
		if why := s.holdReason(v, job, js); why != sim.ReasonNone {
			s.bfReason(js, r.ref, why)
			continue
		}
		if r.cls < 0 || !b.classes[r.cls].is(job) {
			r.cls = b.classOf(job)
		}
		if s.fitsNow(job, r.cls) {
			if len(b.deferred) > 0 && s.pass.exact && s.blockedNow(job, r.cls) {
				s.bfReason(js, r.ref, sim.ReasonPriority)
			} else {
				s.materialize(v, pend)
				if s.startNow(job, r.cls) {
					s.markStarted(job)
					continue
				}
				s.bfReason(js, r.ref, sim.ReasonPriority) // the free nodes are reserved for higher-priority jobs
			}
		} else {
			s.bfReason(js, r.ref, sim.ReasonResources)
		}
		if now-job.Eligible >= cfg.bfMinAgeReserve {
			js.sized = true // its will-run test sets total_cpus
			b.deferred = append(b.deferred, r.ref)
			b.dparts = append(b.dparts, r.part)
			b.dcls = append(b.dcls, r.cls)
		} else {
			b.until(job.Eligible + cfg.bfMinAgeReserve) // old enough to reserve then
		}
	}
	if s.AlwaysReserve {
		s.materialize(v, pend)
	}
}

// fitsNow reports whether job fits now on the free state, reservations
// not considered. With FirstFit and no advance reservation, it fits
// exactly when its partition's nodes hold its units, which the job's
// will-run profile has summed (the profile is then at hand for startNow).
func (s *Slurm) fitsNow(job *sim.PendingJob, cls int32) bool {
	p := &s.pass
	if p.exact && len(p.windows) == 0 && job.Parts == 1<<uint(job.Part) {
		s.profile(cls)
		return s.bf.wr.base >= s.bf.need
	}
	base, ok := p.stage(job)
	if ok {
		p.discard(base)
	}
	return ok
}

// bfReason sets the reason of a record the cycle tested, logging it for
// the cycles that skip.
func (s *Slurm) bfReason(js *slurmJob, ref sim.JobRef, r sim.PendingReason) {
	js.reason = r
	s.bf.why = append(s.bf.why, bfWhy{ref: ref, reason: r})
}

// until notes that the cycle's outcome may differ from time t on.
func (b *backfillState) until(t sim.Time) {
	b.valid = min(b.valid, t)
}

// skipBackfill reports whether the cycle due now would repeat the last one
// that ran, and if so sets the reasons that one set. See
// Slurm.NoBackfillSkip for the conditions; the dirty flag covers what the
// passes since noticed (submits, ends, starts, priority recalculation,
// preemption, advance reservations), and the free state and running jobs
// are compared as well.
func (s *Slurm) skipBackfill(v sim.View) bool {
	b := &s.bf
	if s.NoBackfillSkip || !b.skipOK || b.dirty || v.Now() >= b.valid {
		return false
	}
	run := v.Running()
	if len(run) != len(b.runSnap) || !slices.Equal(v.Nodes(), b.freeSnap) {
		return false
	}
	for i := range run {
		if b.runSnap[i] != (bfRunKey{ref: run[i].Ref, end: run[i].End}) {
			return false
		}
	}
	for _, w := range b.why {
		s.st[w.ref].reason = w.reason
	}
	b.skipped++
	return true
}

// noteBackfill records, after a cycle that ran, whether a later one may
// repeat it: when it started nothing, no advance reservation exists and
// preemption is off (a cycle that started something changed the state).
func (s *Slurm) noteBackfill(v sim.View) {
	b := &s.bf
	b.dirty = false
	b.skipOK = !s.NoBackfillSkip && len(s.pass.starts) == 0 && len(s.pass.windows) == 0 &&
		s.cfg.preempt == preemptNone && b.valid > v.Now()
	if !b.skipOK {
		return
	}
	b.freeSnap = append(b.freeSnap[:0], v.Nodes()...)
	b.runSnap = b.runSnap[:0]
	for _, r := range v.Running() {
		b.runSnap = append(b.runSnap, bfRunKey{ref: r.Ref, end: r.End})
	}
}

// nowMask notes when the set of reservations meeting the window
// [now, now+limit] of a job starting now changes: a reservation in it
// leaves once now reaches its end, and one after it enters once
// now+limit reaches its start.
func (s *Slurm) nowMask(now, limit sim.Time) {
	b := &s.bf
	last := endAt(now, limit)
	for _, r := range b.res {
		switch {
		case r.hi > now && r.lo <= last:
			b.until(r.hi)
		case r.lo > last:
			b.until(r.lo - limit)
		}
	}
}

// buildRel lists the running jobs and the pass's starts by end, once per
// cycle: only cycles that compute a reservation need it. The list is kept
// from the cycle that last built it: the jobs still running with the same
// end stay in place, those gone are dropped, and the new ones, sorted,
// are merged in.
func (s *Slurm) buildRel() {
	b := &s.bf
	p := &s.pass
	if b.relBuilt {
		return
	}
	b.relBuilt = true // profiles made before (by startNow) have no entries yet
	b.relStamp += 2
	mark, seen := b.relStamp, b.relStamp+1
	top := sim.JobRef(-1)
	for _, r := range b.running {
		top = max(top, r.Ref)
	}
	for _, st := range p.starts {
		top = max(top, st.Job)
	}
	if n := int(top) + 1; len(b.relMark) < n {
		n = max(n, 2*len(b.relMark))
		b.relMark = slices.Grow(b.relMark, n-len(b.relMark))[:n]
		b.relPos = slices.Grow(b.relPos, n-len(b.relPos))[:n]
	}
	for i, r := range b.running {
		b.relMark[r.Ref] = mark
		b.relPos[r.Ref] = int32(i)
	}
	for k, st := range p.starts {
		b.relMark[st.Job] = mark
		b.relPos[st.Job] = int32(-k - 1)
	}
	source := func(ref sim.JobRef) bfRel {
		if i := b.relPos[ref]; i >= 0 {
			r := &b.running[i]
			return bfRel{key: s.relKey(r), end: r.End, ref: r.Ref, alloc: r.Alloc}
		} else {
			k := -i - 1
			return bfRel{key: p.ends[k], end: p.ends[k], ref: p.starts[k].Job, alloc: p.starts[k].Alloc}
		}
	}
	kept := b.rel[:0]
	for _, e := range b.rel {
		if int(e.ref) >= len(b.relMark) || b.relMark[e.ref] != mark {
			continue
		}
		if cur := source(e.ref); cur.end == e.end && cur.key == e.key {
			b.relMark[e.ref] = seen
			kept = append(kept, cur)
		}
	}
	fresh := b.relNew[:0]
	for _, r := range b.running {
		if b.relMark[r.Ref] == mark {
			fresh = append(fresh, source(r.Ref))
		}
	}
	for _, st := range p.starts {
		if b.relMark[st.Job] == mark {
			fresh = append(fresh, source(st.Job))
		}
	}
	slices.SortFunc(fresh, relCmp)
	out := b.relBuf[:0]
	i, j := 0, 0
	for i < len(kept) && j < len(fresh) {
		if relCmp(kept[i], fresh[j]) < 0 {
			out = append(out, kept[i])
			i++
		} else {
			out = append(out, fresh[j])
			j++
		}
	}
	out = append(out, kept[i:]...)
	out = append(out, fresh[j:]...)
	clear(fresh)
	b.relNew = fresh[:0]
	b.relBuf = b.rel[:0]
	b.rel = out
}

func relCmp(x, y bfRel) int {
	if c := cmp.Compare(x.key, y.key); c != 0 {
		return c
	}
	return cmp.Compare(x.ref, y.ref)
}

// materialize computes the deferred reservations in queue order.
func (s *Slurm) materialize(v sim.View, pend []sim.PendingJob) {
	b := &s.bf
	if len(b.deferred) > 0 {
		s.buildRel()
	}
	for i, ref := range b.deferred {
		k := outcomeKey{cls: b.dcls[i], limit: pend[s.st[ref].pi].Limit}
		if b.noRes.has(k) {
			continue // its until bounds are in place from the first time
		}
		r := qrec{ref: ref, part: b.dparts[i]}
		job := &b.djob
		*job = s.pendingJob(pend, &r)
		if !s.reserve(v.Now(), job, k.cls) {
			b.noRes.add(k)
		}
	}
	b.deferred = b.deferred[:0]
	b.dparts = b.dparts[:0]
	b.dcls = b.dcls[:0]
}

// setMask marks the nodes no reservation holds at any time of [lo, last]
// (reservations with hi > lo and lo <= last; see windowMask): b.mask
// is false for the nodes listed in b.masked, true for all others. Only the
// previous mask's nodes are reset, so the cost is that of the reserved
// nodes, not of the cluster.
//
// A mask left by the previous call for the same reservations is kept as
// it is: successive windows of a cycle often meet the same ones.
func (s *Slurm) setMask(lo, last sim.Time) {
	b := &s.bf
	if n := len(s.cluster.Nodes); len(b.mask) != n {
		b.mask = slices.Grow(b.mask[:0], n)[:n]
		for i := range b.mask {
			b.mask[i] = true
		}
		b.cnt = slices.Grow(b.cnt[:0], n)[:n]
		clear(b.cnt)
		b.mpos = slices.Grow(b.mpos[:0], n)[:n]
		b.masked = b.masked[:0]
		b.maskOK = false
	}
	s.orderRes()
	// The reservations meeting [lo, last] are those among the first a by
	// start (start <= last) that are not among the first c by end
	// (end <= lo).
	a := sort.Search(len(b.loOrd), func(k int) bool { return b.res[b.loOrd[k]].lo > last })
	c := sort.Search(len(b.hiOrd), func(k int) bool { return b.res[b.hiOrd[k]].hi > lo })
	if b.maskOK && a == b.maskA && c == b.maskC {
		return
	}
	if b.maskOK && a >= b.maskA && c >= b.maskC {
		// The window moved later: add the reservations it now meets,
		// drop those it has passed.
		for _, r := range b.loOrd[b.maskA:a] {
			if b.rankHi[r] >= int32(c) {
				b.addMask(r)
			}
		}
		for _, r := range b.hiOrd[b.maskC:c] {
			if b.rankLo[r] < int32(b.maskA) {
				b.dropMask(r)
			}
		}
	} else {
		for _, x := range b.masked {
			b.mask[x] = true
			b.cnt[x] = 0
		}
		b.masked = b.masked[:0]
		for _, r := range b.loOrd[:a] {
			if b.rankHi[r] >= int32(c) {
				b.addMask(r)
			}
		}
	}
	b.maskA, b.maskC = a, c
	b.maskOK = true
	b.maskVer++
}

// orderRes keeps loOrd and hiOrd, the reservations by start and by end
// (ties by index), for the reservations made so far. A new reservation
// changes the ranks, so the mask is then rebuilt.
func (s *Slurm) orderRes() {
	b := &s.bf
	if b.ordN == len(b.res) {
		return
	}
	b.ordN = len(b.res)
	b.maskOK = false
	b.loOrd, b.hiOrd = b.loOrd[:0], b.hiOrd[:0]
	for i := range b.res {
		b.loOrd = append(b.loOrd, int32(i))
		b.hiOrd = append(b.hiOrd, int32(i))
	}
	slices.SortFunc(b.loOrd, func(x, y int32) int {
		return cmp.Or(cmp.Compare(b.res[x].lo, b.res[y].lo), cmp.Compare(x, y))
	})
	slices.SortFunc(b.hiOrd, func(x, y int32) int {
		return cmp.Or(cmp.Compare(b.res[x].hi, b.res[y].hi), cmp.Compare(x, y))
	})
	b.rankLo = slices.Grow(b.rankLo[:0], len(b.res))[:len(b.res)]
	b.rankHi = slices.Grow(b.rankHi[:0], len(b.res))[:len(b.res)]
	for k, r := range b.loOrd {
		b.rankLo[r] = int32(k)
	}
	for k, r := range b.hiOrd {
		b.rankHi[r] = int32(k)
	}
}

// nextBound returns the first start or end of a reservation after t
// (math.MaxInt64: none).
func (s *Slurm) nextBound(t sim.Time) sim.Time {
	b := &s.bf
	s.orderRes()
	next := sim.Time(math.MaxInt64)
	if k := sort.Search(len(b.loOrd), func(k int) bool { return b.res[b.loOrd[k]].lo > t }); k < len(b.loOrd) {
		next = b.res[b.loOrd[k]].lo
	}
	if k := sort.Search(len(b.hiOrd), func(k int) bool { return b.res[b.hiOrd[k]].hi > t }); k < len(b.hiOrd) {
		next = min(next, b.res[b.hiOrd[k]].hi)
	}
	return next
}

// addMask takes reservation r's nodes out of the mask (counting how many
// masked reservations hold each node).
func (b *backfillState) addMask(r int32) {
	for _, x := range b.res[r].nodes {
		if b.cnt[x] == 0 {
			b.mask[x] = false
			b.mpos[x] = int32(len(b.masked))
			b.masked = append(b.masked, x)
		}
		b.cnt[x]++
	}
}

// dropMask gives reservation r's nodes back to the mask where no other
// masked reservation holds them.
func (b *backfillState) dropMask(r int32) {
	for _, x := range b.res[r].nodes {
		if b.cnt[x]--; b.cnt[x] == 0 {
			b.mask[x] = true
			i, last := b.mpos[x], b.masked[len(b.masked)-1]
			b.masked[i] = last
			b.mpos[last] = i
			b.masked = b.masked[:len(b.masked)-1]
		}
	}
}

// maskOut takes node x out of b.mask, listing it once in b.masked.
func (b *backfillState) maskOut(x int32) {
	if b.mask[x] {
		b.mask[x] = false
		b.masked = append(b.masked, x)
	}
}

// maskWindows clears b.mask for the nodes an advance reservation
// (maintenance window) holds at any time of [start, start+limit): exact
// times, not rounded to bf_resolution, as the controller checks them.
func (s *Slurm) maskWindows(start, limit sim.Time) {
	b := &s.bf
	end := endAt(start, limit)
	for i := range s.pass.windows {
		w := &s.pass.windows[i]
		if w.Start < end && w.End > start {
			b.maskOK = false
			b.maskVer++
			for _, n := range w.Nodes {
				b.maskOut(n)
			}
		}
	}
}

// windowClash reports whether b.alloc uses a node that an advance
// reservation holds at any time of [start, start+limit).
func (s *Slurm) windowClash(start, limit sim.Time) bool {
	end := endAt(start, limit)
	for i := range s.pass.windows {
		w := &s.pass.windows[i]
		if w.Start >= end || w.End <= start {
			continue
		}
		for _, a := range s.bf.alloc {
			if _, found := slices.BinarySearch(w.Nodes, a.Node); found {
				return true
			}
		}
	}
	return false
}

// startNow starts job if it fits now on nodes not reserved over its
// window [now, now+limit) (rounded to bf_resolution) and not held by an
// advance reservation during it, committing it to the pass.
func (s *Slurm) startNow(job *sim.PendingJob, cls int32) bool {
	b := &s.bf
	k := outcomeKey{cls: cls, limit: job.Limit}
	if b.noNow.has(k) {
		return false // nowMask's bounds are in place from the first time
	}
	if !s.tryNow(job, cls) {
		b.noNow.add(k)
		return false
	}
	return true
}

// blockedNow reports whether job, which fits now, cannot start now for the
// reservations made so far, with FirstFit (the unmasked nodes do not hold
// its units). The deferred reservations could only take more nodes, so
// it cannot start once they are made either: they need not be made for
// it, and are left deferred. This is startNow's test without the
// deferred reservations, and shares its memo.
func (s *Slurm) blockedNow(job *sim.PendingJob, cls int32) bool {
	b := &s.bf
	k := outcomeKey{cls: cls, limit: job.Limit}
	if b.noNow.has(k) {
		return true
	}
	now := s.pass.now
	s.windowMask(now, job.Limit)
	s.maskWindows(now, job.Limit)
	s.nowMask(now, job.Limit)
	s.profile(cls)
	if b.wr.base-s.maskedUnits() < b.need {
		b.noNow.add(k)
		return true
	}
	return false
}

// tryNow is startNow without the memo.
func (s *Slurm) tryNow(job *sim.PendingJob, cls int32) bool {
	p := &s.pass
	b := &s.bf
	now := p.now
	s.windowMask(now, job.Limit)
	s.maskWindows(now, job.Limit)
	s.nowMask(now, job.Limit)
	if p.exact {
		// FirstFit places the job exactly when the unmasked nodes hold
		// its units: count them from the job's profile first.
		s.profile(cls)
		if b.wr.base-s.maskedUnits() < b.need {
			return false
		}
	}
	b.wfree = append(b.wfree[:0], p.free...)
	for _, x := range b.masked {
		b.wfree[x] = sim.NodeState{}
	}
	base := len(p.allocs)
	var ok bool
	p.allocs, ok = p.placer.Place(p.nodes, b.wfree, job, p.allocs)
	if !ok {
		p.allocs = p.allocs[:base]
		return false
	}
	p.commit(job, base)
	k := len(p.starts) - 1
	if b.relBuilt {
		rel := bfRel{key: p.ends[k], end: p.ends[k], ref: job.Ref, alloc: p.starts[k].Alloc}
		i, _ := slices.BinarySearchFunc(b.rel, rel, relCmp)
		b.rel = slices.Insert(b.rel, i, rel)
	}
	b.dropProfiles() // the free state and rel changed
	b.forget()
	return true
}

// reserve finds job's earliest start within bf_window and, if there is
// one, reserves its nodes whole (backfill.c _attempt_backfill from
// TRY_LATER to _add_reservation, slurm-gpu-facts.md §2.3 steps 5–8):
//
//   - a start at most bf_window after now gets a reservation
//     (job_ptr->start_time > sched_start + backfill_window: none);
//   - the reservation is resvSpan's, both ends rounded down to
//     bf_resolution;
//   - the TRY_LATER retries go to the next reservation boundary
//     (node_space's next slot end) before the horizon, where the map
//     ends.
//
// It reports whether it made a reservation.
func (s *Slurm) reserve(now sim.Time, job *sim.PendingJob, cls int32) bool {
	b := &s.bf
	limit := job.Limit
	horizon := endAt(now, s.cfg.bfWindow)
	startRes := now
	exact := s.pass.exact || s.cfg.bfBusyNodes
	if exact {
		s.profile(cls)
		if !s.reachable(now, horizon) {
			return false
		}
	}
	for range 10000 {
		if startRes > horizon {
			b.until(startRes - s.cfg.bfWindow) // the horizon reaches it then
			return false
		}
		s.windowMask(startRes, limit)
		s.maskWindows(startRes, limit)
		first := startRes == now // the window and next depend on now
		if first {
			s.nowMask(now, limit)
		}
		next := s.nextBound(startRes) // next slot boundary after startRes
		if first {
			b.until(next) // every reservation start or end after now is a bound
		}
		for _, w := range s.pass.windows {
			if w.End > startRes {
				next = min(next, w.End) // the window's nodes come back
			}
		}
		if next != math.MaxInt64 && next >= horizon {
			// The map ends at the horizon: no slot ends there or later.
			b.until(next - s.cfg.bfWindow + 1) // the horizon passes it then
			next = math.MaxInt64
		}
		var t sim.Time
		var ok bool
		if exact {
			t, ok = s.willRunExact(job, startRes, min(next, horizon), next)
		} else {
			t, ok = s.willRun(job, startRes)
		}
		if first && ok {
			// t is now or the end of a release group after it, which
			// it stays until now passes it.
			b.until(max(t, now) + 1)
			if t <= now {
				b.until(now + 1)
			}
		}
		switch {
		case !ok && next == math.MaxInt64:
			return false // never, whatever ends
		case !ok || t > next:
			startRes = next // TRY_LATER: some reserved nodes free up then
			continue
		case t > horizon:
			// Beyond bf_window: no reservation, whether or not its
			// window meets another (a retry would start from t).
			b.until(t - s.cfg.bfWindow) // the horizon reaches it then
			return false
		}
		if s.resvClash(t, limit) || s.windowClash(t, limit) {
			startRes = t // the window at t meets another reservation: retry from t
			continue
		}
		off := len(b.pool)
		for _, a := range b.alloc {
			b.pool = append(b.pool, a.Node)
		}
		lo, hi := s.resvSpan(t, limit)
		b.res = append(b.res, bfRes{job: job.Ref, at: t, lo: lo, hi: hi, nodes: b.pool[off:len(b.pool):len(b.pool)]})
		b.forget()
		return true
	}
	return false
}

// willRun is cons_tres's will-run test on the nodes of b.mask
// (cons_common job_test.c _will_run_test): the earliest time >= startRes
// at which job fits, now or with the running jobs (and the pass's
// starts) released group by group as groupScan forms the groups on the
// job's nodes. The placement is left in b.alloc.
func (s *Slurm) willRun(job *sim.PendingJob, startRes sim.Time) (sim.Time, bool) {
	p := &s.pass
	b := &s.bf
	d := newDemand(job)
	n := len(p.nodes)
	b.wfree = slices.Grow(b.wfree[:0], n)[:n]
	b.contrib = slices.Grow(b.contrib[:0], n)[:n]
	var capSum int64
	for i := range p.nodes {
		if b.mask[i] && d.eligible(&p.nodes[i]) {
			b.wfree[i] = p.free[i]
			c := d.fit(b.wfree[i])
			b.contrib[i] = c
			capSum += int64(c)
		} else {
			b.wfree[i] = sim.NodeState{}
			b.contrib[i] = -1
		}
	}
	if capSum >= int64(d.count) && s.placeRes(job) {
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
			c := d.fit(*f)
			capSum += int64(c - b.contrib[a.Node])
			b.contrib[a.Node] = c
		}
	}
	var g groupScan
	for g.step(s, b.rel, usable, release) {
		if capSum >= int64(d.count) && s.placeRes(job) {
			return max(startRes, g.start), true
		}
	}
	return 0, false
}

// placeRes places job on b.wfree into b.alloc: with the pass's placer, or
// with bf_busy_nodes on the nodes busy now first (then the idle ones), each
// in cluster order.
func (s *Slurm) placeRes(job *sim.PendingJob) bool {
	p := &s.pass
	b := &s.bf
	if !s.cfg.bfBusyNodes {
		var ok bool
		b.alloc, ok = p.placer.Place(p.nodes, b.wfree, job, b.alloc[:0])
		return ok
	}
	b.order = b.order[:0]
	for pass := range 2 {
		for i := range p.nodes {
			busy := p.free[i] != sim.Capacity(&p.nodes[i])
			if busy == (pass == 0) {
				b.order = append(b.order, int32(i))
			}
		}
	}
	d := newDemand(job)
	need := d.count
	b.alloc = b.alloc[:0]
	for _, i := range b.order {
		if !d.eligible(&p.nodes[i]) {
			continue
		}
		k := min(d.fit(b.wfree[i]), need)
		if k == 0 {
			continue
		}
		b.alloc = append(b.alloc, d.alloc(i, k))
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
func (s *Slurm) placeUnits(d *demand, n int) bool {
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
	if n > 0 {
		s.profileEntries(n)
		for _, e := range w.ent[:w.entEnd[n-1]] {
			if !b.mask[e.node] {
				continue
			}
			if b.accSeen[e.node] != b.accStamp {
				b.accSeen[e.node] = b.accStamp
				b.acc[e.node] = 0
			}
			b.acc[e.node] += e.delta
		}
	}
	need := d.count
	b.alloc = b.alloc[:0]
	for x, c := range w.contrib {
		if c < 0 || !b.mask[x] {
			continue
		}
		if b.accSeen[x] == b.accStamp {
			c += b.acc[x]
		}
		if c <= 0 {
			continue
		}
		k := min(c, need)
		b.alloc = append(b.alloc, d.alloc(int32(x), k))
		if need -= k; need == 0 {
			return true
		}
	}
	b.alloc = b.alloc[:0]
	return false
}

// profile makes b.wr the will-run profile of request class cls's demand
// shape on the free state of now, and b.need its count, reusing the
// profile of an earlier demand of the same shape while the free state and
// rel are unchanged (the class remembers where it is).
func (s *Slurm) profile(cls int32) {
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
	n := len(p.nodes)
	w.contrib = slices.Grow(w.contrib[:0], n)[:n]
	var base int64
	for i := range p.nodes {
		c := int32(-1)
		if d.eligible(&p.nodes[i]) {
			c = 0
			if !d.short(&p.free[i]) {
				c = d.fit(p.free[i])
			}
			base += int64(c)
		}
		w.contrib[i] = c
	}
	w.base = base
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
}

// maskedUnits returns the units b.wr holds now on the nodes b.mask leaves
// out, kept per profile while the mask is the same.
func (s *Slurm) maskedUnits() int64 {
	b := &s.bf
	w := b.wr
	if w.maskVer != b.maskVer {
		var u int64
		for _, x := range b.masked {
			if c := w.contrib[x]; c > 0 {
				u += int64(c)
			}
		}
		w.maskVer, w.masked = b.maskVer, u
	}
	return w.masked
}

// dropProfiles forgets the will-run profiles (the free state or rel
// changed).
func (b *backfillState) dropProfiles() {
	b.nprof = 0
	b.profNext = 0
	b.wr = nil
}

// profileEntries makes sure the profile has the changes of rel[:n].
func (s *Slurm) profileEntries(n int) {
	b := &s.bf
	w := b.wr
	d := &w.d
	for i := len(w.entEnd); i < n; i++ {
		for _, a := range b.rel[i].alloc {
			if w.contrib[a.Node] < 0 {
				continue
			}
			if w.seen[a.Node] != w.stamp {
				w.seen[a.Node] = w.stamp
				w.cur[a.Node] = s.pass.free[a.Node]
				w.prev[a.Node] = w.contrib[a.Node]
			}
			f := &w.cur[a.Node]
			f.Add(&a) // MIG instances and MPS shares come back too
			c := d.fit(*f)
			if dc := c - w.prev[a.Node]; dc != 0 {
				w.prev[a.Node] = c
				w.ent = append(w.ent, wrEntry{node: a.Node, delta: dc})
			}
		}
		w.entEnd = append(w.entEnd, int32(len(w.ent)))
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
func (s *Slurm) reachable(now, horizon sim.Time) bool {
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
func (s *Slurm) reach(now, horizon sim.Time) bool {
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
func (s *Slurm) willRunExact(job *sim.PendingJob, startRes, use, stop sim.Time) (sim.Time, bool) {
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
func (s *Slurm) nextGroup(w *wrProfile) bool {
	b := &s.bf
	capSum := w.grpCap0
	if k := len(w.grp); k > 0 {
		capSum = w.grp[k-1].cap
	}
	usable := func(i int) bool {
		for _, a := range b.rel[i].alloc {
			if w.contrib[a.Node] >= 0 && b.mask[a.Node] {
				return true
			}
		}
		return false
	}
	release := func(i int) {
		s.profileEntries(i + 1)
		for _, e := range w.entries(i) {
			if b.mask[e.node] {
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
func (s *Slurm) placeAfter(job *sim.PendingJob, n int) bool {
	p := &s.pass
	b := &s.bf
	w := b.wr
	if d := newDemand(job); p.exact && !s.cfg.bfBusyNodes && job.Parts == 1<<uint(job.Part) &&
		d.mig == 0 && d.mps == 0 && (d.gpus > 0 || d.cpus > 0 || d.mem > 0) {
		return s.placeUnits(&d, n)
	}
	nn := len(p.nodes)
	b.wfree = slices.Grow(b.wfree[:0], nn)[:nn]
	for i := range b.wfree {
		if w.contrib[i] >= 0 && b.mask[i] {
			b.wfree[i] = p.free[i]
		} else {
			b.wfree[i] = sim.NodeState{}
		}
	}
	if n > 0 {
		for _, r := range b.rel[:n] {
			for _, a := range r.alloc {
				if w.contrib[a.Node] < 0 || !b.mask[a.Node] {
					continue
				}
				f := &b.wfree[a.Node]
				f.Add(&a) // MIG instances and MPS shares come back too
			}
		}
	}
	return s.placeRes(job)
}
