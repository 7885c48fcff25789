package slurm

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/schedsim/schedsim/policies"
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
	out      []uint64     // the nodes left out of the window under test (bit x%64 of word x/64): the mask is the others
	nmask    int          // the cluster size out is made for
	maskOK   bool         // mask is exactly that of the reservations (maskA, maskC) (no advance reservation added to it)
	maskA    int          // mask leaves out the reservations among the first maskA of loOrd
	maskC    int          // that are not among the first maskC of hiOrd
	maskVer  uint64       // changes with mask
	cpl      [][]uint64   // per node, the masked reservations holding it, bit-sliced: bit k of the count in cpl[k]
	wpool    []nodeWord   // backing store of res' node words
	wtmp     []nodeWord   // reserve's scratch for a new reservation's words
	loOrd    []int32      // reservations by start, then index
	hiOrd    []int32      // reservations by end, then index
	rankLo   []int32      // per reservation: its index in loOrd
	rankHi   []int32      // per reservation: its index in hiOrd
	loKey    []sim.Time   // loKey[k] is loOrd[k]'s start
	hiKey    []sim.Time   // hiKey[k] is hiOrd[k]'s end
	ordN     int          // len(res) when loOrd and hiOrd were made
	wfree    []sim.NodeState
	contrib  []int32
	alloc    []sim.NodeAlloc
	order    []int32 // bf_busy_nodes node order
	acc      []int32 // placeUnits: per node, units gained by the jobs released
	accSeen  []uint32
	accStamp uint32
	accBits  []uint64 // placeUnits: the nodes with an acc entry, as a node set
	users    []int32  // records tested per user (s.users index), for bf_max_job_user
	parts    [64]int
	relBuilt bool

	// Nodes out of service this pass (upNodes), as of epoch upEpoch; held
	// is its scratch.
	down    []bool
	held    []sim.NodeState
	upEpoch uint32

	// relEnd lists rel's indices by end (orderRelEnd), when relEndOK.
	relEnd   []int32
	relEndOK bool
	cq       []factCursor // the facts reserve consults (openFacts)
	cqLo     sim.Time     // no span of cq starts before it (ruledOut)

	// The free state with every rel job released (finalFree), valid
	// while finOK, on finNodes (finSeen); finUnits is finalBound's
	// scratch.
	finFree  []sim.NodeState
	finSeen  []bool
	finNodes []int32
	finOK    bool
	finUnits []int32
	fin      finCache
	cgWork   []sim.NodeState // completingPlace's scratch
	// baseShapes are the profiles' units now per demand shape, kept
	// across passes (baseShape).
	baseShapes shapeSlots[baseShape]
	// finVer counts the times finFree was made afresh; finShapes are the
	// final units made on it, per demand shape.
	finVer    uint64
	finShapes shapeSlots[finShape]
	noFacts   bool // reserve consults none (tests)

	// mlog logs the words of out that changed since the mask was last
	// rebuilt (logEpoch), so that a profile's units on the masked nodes
	// follow the mask by its changes.
	mlog     []maskChange
	logEpoch uint64

	// The window [maskLo, maskLast] the mask was set for (setMask).
	maskLo, maskLast sim.Time
	nbLo, nbHi       int // nextBound's last answers, where it starts next
	// setMask's last search of hiKey: after(hiKey, hiAt) is hiAtK,
	// while hiAtOK (the orders unchanged since). A retry's nextBound
	// asks the same.
	hiAt   sim.Time
	hiAtK  int
	hiAtOK bool

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
	words  []nodeWord // nodes as words
}

// nodeWord is 64 nodes of a node set: node 64·w+i for each set bit i of
// bits. A set lists its words in node order; a word may repeat when the
// nodes are not sorted (the bits of its entries are then disjoint).
type nodeWord struct {
	w    int32
	bits uint64
}

// addNode adds node x to the node words ws.
func addNode(ws []nodeWord, x int32) []nodeWord {
	w, bit := x>>6, uint64(1)<<uint(x&63)
	if n := len(ws); n > 0 && ws[n-1].w == w {
		ws[n-1].bits |= bit
		return ws
	}
	return append(ws, nodeWord{w: w, bits: bit})
}

// allocWords returns the nodes of alloc as words.
func allocWords(alloc []sim.NodeAlloc) []nodeWord {
	var ws []nodeWord
	for _, a := range alloc {
		ws = addNode(ws, a.Node)
	}
	return ws
}

// maskChange is a change of one word of out: the nodes that left the
// mask (gone) and those that came back (back).
type maskChange struct {
	w          int32
	gone, back uint64
}

// inMask reports whether node x is in the mask.
func (b *backfillState) inMask(x int32) bool {
	return b.out[x>>6]&(1<<uint(x&63)) == 0
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
	words []nodeWord // alloc's nodes as words
	fin   int32      // index+1 of its entry in the finalFree record (0: none)
	run   uint32     // its run's start pass (slurmJob.started; 0: not known)
}

// relKey returns the will-run key (bfRel.key) of a running job.
func (s *Policy) relKey(r *sim.RunningJob) sim.Time {
	if int(r.Ref) < len(s.st) {
		if l := s.st[r.Ref].limit; l > 0 {
			return min(r.End, r.Start+sim.Time(l))
		}
	}
	return r.End
}

func (s *Policy) floorRes(t sim.Time) sim.Time {
	r := s.cfg.bfResolution
	return t / r * r
}

// resvSpan returns the slots a reservation for a job starting at t with
// limit holds in the backfill map, [lo, hi): both ends rounded down to
// bf_resolution, and at least one slot (backfill.c: start_time and
// end_reserve divided by backfill_resolution, and _add_reservation's
// "occupies at least one bf_resolution slot").
func (s *Policy) resvSpan(t, limit sim.Time) (lo, hi sim.Time) {
	lo = s.floorRes(t)
	hi = max(s.floorRes(policies.EndAt(t, limit)), lo+s.cfg.bfResolution)
	return lo, hi
}

// windowMask sets b.mask for a job tested at start with limit: the
// reservations it may not use are those whose slots meet [start,
// start+limit], closed at its end (backfill.c: a node_space record with
// end_time > start_res and begin_time <= end_time is applied), so a job
// whose limit ends exactly where a reservation begins does not get its
// nodes.
func (s *Policy) windowMask(start, limit sim.Time) {
	s.setMask(start, policies.EndAt(start, limit))
}

// resvClash reports whether b.alloc, a job's placement at t with limit,
// uses a node that an earlier reservation holds in the slots the new one
// would meet (backfill.c _test_resv_overlap: a record with end_time >
// start_time and begin_time < end_reserve, both rounded down). When both
// round to the same slot boundary F, only a record running across F
// meets it, and none does when a reservation begins or ends at F (the
// map has a record boundary there).
func (s *Policy) resvClash(t, limit sim.Time) bool {
	b := &s.bf
	flo, fhi := s.floorRes(t), s.floorRes(policies.EndAt(t, limit))
	if fhi > flo {
		s.setMask(flo, fhi-1)
		for _, a := range b.alloc {
			if !b.inMask(a.Node) {
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
func (s *Policy) backfill(v sim.View, pend []sim.PendingJob) {
	b := &s.bf
	cfg := s.cfg
	now := v.Now()
	b.res = b.res[:0]
	b.pool = b.pool[:0]
	b.wpool = b.wpool[:0]
	b.maskOK = false // its reservations are gone
	b.ordN = -1
	b.deferred = b.deferred[:0]
	b.dparts = b.dparts[:0]
	b.dcls = b.dcls[:0]
	b.relBuilt = false // built when the first reservation is computed
	b.dropProfiles()
	b.forget()
	b.running = s.bfRunning(v)
	defer func() { b.running = nil }()
	// Nodes completing a killed job (completing): planned from now + 1.
	cgFree, cg := s.completing(v)
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
		if js.started == s.epoch || s.bfPreempting(r.ref) {
			continue // started, or preempting, in another partition
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
		*job = s.pendingJob(r)
		if why := s.holdReason(v, job, js); why != sim.ReasonNone {
			s.bfReason(js, r.ref, why)
			continue
		}
		if r.cls < 0 || !b.classes[r.cls].is(job) {
			r.cls = b.classOf(job)
		}
		if s.switchTree != nil {
			if t, ok := s.switchTree.HeldUntil(job); ok {
				b.until(t) // its --switches wait ends: it may place otherwise
			}
		}
		waits := s.bfPreemptWait(v, r.ref) != nil
		if !waits && cg != nil && s.cgMayPlace(job, cgFree, cg) {
			// As the reference: the reservations of the records before
			// it first (completing's placement is on the nodes they leave).
			s.materialize(v, pend)
			s.windowMask(now, job.Limit)
			s.maskWindows(now, job.Limit)
			if alloc, _, uses := s.completingPlace(job, cgFree, cg, func(i int) bool { return b.inMask(int32(i)) }); uses {
				s.bfReason(js, r.ref, sim.ReasonResources)
				if now-job.Eligible >= cfg.bfMinAgeReserve {
					s.size(v, job, js)
					if !s.reserveOn(job, now+1, alloc) {
						s.reserveFrom(now, job, r.cls, now+1)
					}
				}
				continue
			}
		}
		if waits {
			// Its preemption is in progress: the main pass starts it,
			// and it holds the nodes it preempted for (preemptRes).
			s.bfReason(js, r.ref, sim.ReasonResources)
		} else if s.fitsNow(job, r.cls) {
			if len(b.deferred) > 0 && s.pass.Exact && s.blockedNow(job, r.cls) {
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
		if !waits && s.cfg.preempt != preemptNone && s.bfPreempt(v, pend, job, js, r) {
			continue // reserved with its preemptable jobs gone
		}
		if now-job.Eligible >= cfg.bfMinAgeReserve {
			s.size(v, job, js)
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

// size notes that the cycle's will-run test of job sets its total_cpus
// (the job size factor counts them from then on), unless the test does
// not run: _attempt_backfill skips a job whose partition has fewer nodes
// up than it needs (avail_bitmap, and-ed with up_node_bitmap, has fewer
// than min_nodes) before _try_sched. On Slurm 22.05
// (conformance/records/gen-23/run1) G10, on 4 nodes with gn1 down from
// 19:12:49 to 19:13:27, kept the job size factor of the 4 CPUs it asked
// for at the recalculation of 19:13:00 (priority 1857, not the 2100 of
// 128 CPUs), so G08 (3 nodes, 1975) was tested before it and reserved
// gn1, gn3 and gn4, and small jobs stayed off them.
func (s *Policy) size(v sim.View, job *sim.PendingJob, js *slurmJob) {
	if js.sized || job.Req.Nodes > 1 && s.upNodes(v, job.Part) < int(job.Req.Nodes) {
		return
	}
	js.sized = true
}

// upNodes counts the nodes of partition part in service this pass (not
// down or drained: a node in service shows free what running jobs do not
// hold; a drained node that its running jobs fill counts as one).
func (s *Policy) upNodes(v sim.View, part int32) int {
	b := &s.bf
	if b.upEpoch != s.epoch {
		b.upEpoch = s.epoch
		nodes := s.cluster.Nodes
		b.held = append(b.held[:0], make([]sim.NodeState, len(nodes))...)
		for _, rj := range v.Running() {
			for k := range rj.Alloc {
				b.held[rj.Alloc[k].Node].Add(&rj.Alloc[k])
			}
		}
		view := v.Nodes()
		b.down = append(b.down[:0], make([]bool, len(nodes))...)
		for i := range nodes {
			h, f, c := b.held[i], view[i], sim.Capacity(&nodes[i])
			b.down[i] = h.FreeGPUs+f.FreeGPUs != c.FreeGPUs || h.FreeCPUs+f.FreeCPUs != c.FreeCPUs || h.FreeMemMB+f.FreeMemMB != c.FreeMemMB
		}
	}
	n := 0
	for _, x := range s.cluster.Partitions[part].Nodes {
		if !b.down[x] {
			n++
		}
	}
	return n
}

// fitsNow reports whether job fits now on the free state, reservations
// not considered. With FirstFit and no advance reservation, it fits
// exactly when its partition's nodes hold its units, which the job's
// will-run profile has summed (the profile is then at hand for startNow).
func (s *Policy) fitsNow(job *sim.PendingJob, cls int32) bool {
	p := &s.pass
	if p.Exact && len(p.Windows) == 0 && job.Parts == 1<<uint(job.Part) {
		s.profile(cls)
		return s.bf.wr.base >= s.bf.need
	}
	base, ok := p.Stage(job)
	if ok {
		p.Discard(base)
	}
	return ok
}

// bfReason sets the reason of a record the cycle tested, logging it for
// the cycles that skip.
func (s *Policy) bfReason(js *slurmJob, ref sim.JobRef, r sim.PendingReason) {
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
func (s *Policy) skipBackfill(v sim.View) bool {
	b := &s.bf
	if s.NoBackfillSkip || !b.skipOK || b.dirty || v.Now() >= b.valid {
		return false
	}
	run := v.Running()
	if len(run) != len(b.runSnap) || !slices.Equal(v.Nodes(), b.freeSnap) {
		return false
	}
	for i := range run {
		if b.runSnap[i] != (bfRunKey{ref: run[i].Ref, end: run[i].End}) || run[i].Killed {
			return false // a killed job's nodes are completing (completing)
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
func (s *Policy) noteBackfill(v sim.View) {
	b := &s.bf
	b.dirty = false
	b.skipOK = !s.NoBackfillSkip && len(s.pass.Starts) == 0 && len(s.pass.Windows) == 0 &&
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
// now+limit reaches its start. Only the earliest of each kind bounds
// the cycle, so it is found in the kept orders: the first by start
// after the window, and the first by end after now among those
// starting in it (nowMaskPlain is the same over every reservation).
func (s *Policy) nowMask(now, limit sim.Time) {
	b := &s.bf
	s.orderRes()
	last := policies.EndAt(now, limit)
	t := sim.Time(math.MaxInt64)
	a := after(b.loKey, last, b.maskA) // loOrd[:a] start by last
	if a < len(b.loKey) {
		t = b.loKey[a] - limit
	}
	for k := after(b.hiKey, now, 0); k < len(b.hiOrd); k++ {
		if b.rankLo[b.hiOrd[k]] < int32(a) {
			t = min(t, b.hiKey[k])
			break
		}
	}
	if nowCheck != nil {
		nowCheck(s, now, limit, t)
	}
	b.until(t)
}

// nowCheck, when set (by the package's tests), is called with every
// bound nowMask sets, to compare it with nowMaskPlain's.
var nowCheck func(s *Policy, now, limit, got sim.Time)

// nowMaskPlain is the bound nowMask sets, made over every reservation.
func (s *Policy) nowMaskPlain(now, limit sim.Time) sim.Time {
	b := &s.bf
	last := policies.EndAt(now, limit)
	t := sim.Time(math.MaxInt64)
	for _, r := range b.res {
		switch {
		case r.hi > now && r.lo <= last:
			t = min(t, r.hi)
		case r.lo > last:
			t = min(t, r.lo-limit)
		}
	}
	return t
}

// buildRel lists the running jobs and the pass's starts by end, once per
// cycle: only cycles that compute a reservation need it. The list is kept
// from the cycle that last built it: the jobs still running with the same
// end stay in place, those gone are dropped, and the new ones, sorted,
// are merged in.
func (s *Policy) buildRel() {
	b := &s.bf
	p := &s.pass
	if b.relBuilt {
		return
	}
	b.relBuilt = true // profiles made before (by startNow) have no entries yet
	b.finOK = false
	b.relEndOK = false
	b.relStamp += 2
	mark, seen := b.relStamp, b.relStamp+1
	top := sim.JobRef(-1)
	for _, r := range b.running {
		top = max(top, r.Ref)
	}
	for _, st := range p.Starts {
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
	for k, st := range p.Starts {
		b.relMark[st.Job] = mark
		b.relPos[st.Job] = int32(-k - 1)
	}
	source := func(ref sim.JobRef) bfRel {
		run, _ := s.finRun(ref)
		if i := b.relPos[ref]; i >= 0 {
			r := &b.running[i]
			return bfRel{key: s.relKey(r), end: r.End, ref: r.Ref, alloc: r.Alloc, run: run}
		} else {
			k := -i - 1
			return bfRel{key: p.End(int(k)), end: p.End(int(k)), ref: p.Starts[k].Job, alloc: p.Starts[k].Alloc, run: run}
		}
	}
	kept := b.rel[:0]
	for _, e := range b.rel {
		if int(e.ref) >= len(b.relMark) || b.relMark[e.ref] != mark {
			continue
		}
		// The same run on as many nodes keeps its node words; a run's
		// allocation only shrinks (a job killed at its time limit keeps
		// only its batch host for KillWait, sim/kill.go), and then, or for
		// another run, they are made again.
		if cur := source(e.ref); cur.end == e.end && cur.key == e.key && cur.run == e.run && len(cur.alloc) == len(e.alloc) {
			b.relMark[e.ref] = seen
			cur.words, cur.fin = e.words, e.fin
			kept = append(kept, cur)
		}
	}
	fresh := b.relNew[:0]
	for _, r := range b.running {
		if b.relMark[r.Ref] == mark {
			fresh = append(fresh, source(r.Ref))
		}
	}
	for _, st := range p.Starts {
		if b.relMark[st.Job] == mark {
			fresh = append(fresh, source(st.Job))
		}
	}
	for i := range fresh {
		fresh[i].words = allocWords(fresh[i].alloc)
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
	s.ensureMask()
}

func relCmp(x, y bfRel) int {
	if c := cmp.Compare(x.key, y.key); c != 0 {
		return c
	}
	return cmp.Compare(x.ref, y.ref)
}

// materialize computes the deferred reservations in queue order.
func (s *Policy) materialize(v sim.View, pend []sim.PendingJob) {
	b := &s.bf
	if len(b.deferred) > 0 {
		s.buildRel()
	}
	for i, ref := range b.deferred {
		if w := s.pre.waits[ref]; w != nil && w.held == s.epoch {
			r := qrec{ref: ref, part: b.dparts[i]}
			job := &b.djob
			*job = s.pendingJob(&r)
			s.preemptRes(job, w)
			continue
		}
		k := outcomeKey{cls: b.dcls[i], limit: s.pendOf(ref).Limit}
		if b.noRes.has(k) {
			continue // its until bounds are in place from the first time
		}
		r := qrec{ref: ref, part: b.dparts[i]}
		job := &b.djob
		*job = s.pendingJob(&r)
		if !s.reserve(v.Now(), job, k.cls) {
			b.noRes.add(k)
		}
	}
	b.deferred = b.deferred[:0]
	b.dparts = b.dparts[:0]
	b.dcls = b.dcls[:0]
}

// setMask marks the nodes no reservation holds at any time of [lo, last]
// (reservations with hi > lo and lo <= last; see windowMask): the nodes
// set in b.out are left out, all others are in. A reservation enters and
// leaves the mask by word operations on its node words (addMask,
// dropMask), so the cost is that of the reserved words.
//
// A mask left by the previous call for the same reservations is kept as
// it is: successive windows of a cycle often meet the same ones.
func (s *Policy) setMask(lo, last sim.Time) {
	b := &s.bf
	s.ensureMask()
	s.orderRes()
	// The reservations meeting [lo, last] are those among the first a by
	// start (start <= last) that are not among the first c by end
	// (end <= lo).
	a := after(b.loKey, last, b.maskA)
	c := after(b.hiKey, lo, b.maskC)
	b.hiAt, b.hiAtK, b.hiAtOK = lo, c, true
	if b.maskOK && a == b.maskA && c == b.maskC {
		return
	}
	if b.maskOK {
		// A reservation is in the mask when it is among the first a by
		// start and not among the first c by end: only those whose rank
		// lies between the old and the new bounds can change.
		// The rank in the order walked is the index itself.
		a0, c0 := int32(b.maskA), int32(b.maskC)
		a1, c1 := int32(a), int32(c)
		loL, loH := min(a0, a1), max(a0, a1)
		for k := loL; k < loH; k++ {
			r := b.loOrd[k]
			h := b.rankHi[r]
			was, is := k < a0 && h >= c0, k < a1 && h >= c1
			if is != was {
				if is {
					b.addMask(r)
				} else {
					b.dropMask(r)
				}
			}
		}
		for k := min(c0, c1); k < max(c0, c1); k++ {
			r := b.hiOrd[k]
			l := b.rankLo[r]
			if l >= loL && l < loH {
				continue // done by start
			}
			was, is := l < a0 && k >= c0, l < a1 && k >= c1
			if is != was {
				if is {
					b.addMask(r)
				} else {
					b.dropMask(r)
				}
			}
		}
	} else {
		clear(b.out)
		for _, pl := range b.cpl {
			clear(pl)
		}
		b.newEpoch()
		for _, r := range b.loOrd[:a] {
			if b.rankHi[r] >= int32(c) {
				b.addMask(r)
			}
		}
	}
	b.maskA, b.maskC = a, c
	b.maskLo, b.maskLast = lo, last
	b.maskOK = true
	b.maskVer++
	if len(b.mlog) > 4*len(b.out)+16 {
		b.newEpoch()
	}
}

// maskReach returns how far after lo the latest reservation the mask
// leaves out starts (0: none starts after lo): setMask's window may end
// there or later for the same reservations to meet it.
func (s *Policy) maskReach(lo sim.Time) sim.Time {
	b := &s.bf
	for k := b.maskA - 1; k >= 0; k-- {
		if b.rankHi[b.loOrd[k]] >= int32(b.maskC) {
			return max(0, b.loKey[k]-lo)
		}
	}
	return 0
}

// ensureMask sizes b.mask to the cluster, every node in, when it is not.
func (s *Policy) ensureMask() {
	b := &s.bf
	if n := len(s.cluster.Nodes); b.nmask != n || b.out == nil {
		b.nmask = n
		nw := (n + 63) / 64
		b.out = make([]uint64, nw, max(nw, 1))
		b.cpl = b.cpl[:0]
		b.maskOK = false
		b.newEpoch()
	}
}

// newEpoch starts the mask's change log afresh: the profiles sum their
// masked units again.
func (b *backfillState) newEpoch() {
	b.logEpoch++
	b.mlog = b.mlog[:0]
}

// orderRes keeps loOrd and hiOrd, the reservations by start and by end
// (ties by index), for the reservations made so far. A reservation made
// since is inserted into both (its index is the largest, so it goes
// after its equals), and into the mask when it meets the mask's window.
func (s *Policy) orderRes() {
	b := &s.bf
	if b.ordN == len(b.res) {
		return
	}
	b.hiAtOK = false
	if b.ordN >= 0 && b.ordN == len(b.res)-1 {
		s.insertRes(int32(b.ordN))
		b.ordN = len(b.res)
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
	b.loKey, b.hiKey = b.loKey[:0], b.hiKey[:0]
	for k, r := range b.loOrd {
		b.rankLo[r] = int32(k)
		b.loKey = append(b.loKey, b.res[r].lo)
	}
	for k, r := range b.hiOrd {
		b.rankHi[r] = int32(k)
		b.hiKey = append(b.hiKey, b.res[r].hi)
	}
}

// insertRes inserts reservation r, the last made, into loOrd and hiOrd
// and, when the mask is kept, into the mask.
func (s *Policy) insertRes(r int32) {
	b := &s.bf
	res := &b.res[r]
	k := after(b.loKey, res.lo, 0)
	b.loOrd = slices.Insert(b.loOrd, k, r)
	b.loKey = slices.Insert(b.loKey, k, res.lo)
	b.rankLo = append(b.rankLo, 0)
	for j := k; j < len(b.loOrd); j++ {
		b.rankLo[b.loOrd[j]] = int32(j)
	}
	k = after(b.hiKey, res.hi, 0)
	b.hiOrd = slices.Insert(b.hiOrd, k, r)
	b.hiKey = slices.Insert(b.hiKey, k, res.hi)
	b.rankHi = append(b.rankHi, 0)
	for j := k; j < len(b.hiOrd); j++ {
		b.rankHi[b.hiOrd[j]] = int32(j)
	}
	if !b.maskOK {
		return
	}
	// It sorts after every reservation with its start (end), so it is
	// among the first maskA (maskC) exactly when its start is at most
	// maskLast (its end at most maskLo).
	in := res.lo <= b.maskLast
	if in {
		b.maskA++
	}
	if res.hi <= b.maskLo {
		b.maskC++
		in = false
	}
	if in {
		b.addMask(r)
		b.maskVer++
	}
}

// nextBound returns the first start or end of a reservation after t
// (math.MaxInt64: none).
func (s *Policy) nextBound(t sim.Time) sim.Time {
	b := &s.bf
	s.orderRes()
	next := sim.Time(math.MaxInt64)
	if k := after(b.loKey, t, b.nbLo); k < len(b.loKey) {
		b.nbLo = k
		next = b.loKey[k]
	}
	k := b.hiAtK
	if !b.hiAtOK || b.hiAt != t {
		k = after(b.hiKey, t, b.nbHi)
	}
	if k < len(b.hiKey) {
		b.nbHi = k
		next = min(next, b.hiKey[k])
	}
	return next
}

// after returns the number of keys (ascending: loKey or hiKey, the
// starts or ends of the reservations in order) at most t: the index of
// the first after t. The search starts from hint, where a retry's window
// moving a little later finds it in a step or two, and halves the range
// otherwise.
func after(keys []sim.Time, t sim.Time, hint int) int {
	key := func(k int) sim.Time { return keys[k] }
	n := len(keys)
	lo, up := 0, n // the answer is in [lo, up]
	if hint = min(max(hint, 0), n); hint > 0 && key(hint-1) > t {
		up = hint - 1
	} else {
		lo = hint
		for step := 1; lo < n; step *= 2 {
			if key(lo) > t {
				up = lo
				break
			}
			lo++
			if probe := lo + step; probe < n && key(probe) <= t {
				lo = probe + 1
			} else {
				up = min(n, lo+step)
				break
			}
		}
	}
	for lo < up {
		m := int(uint(lo+up) >> 1)
		if key(m) > t {
			up = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// addMask takes reservation r's nodes out of the mask, counting how many
// masked reservations hold each node: a bit-sliced increment of the
// counts on its words.
func (b *backfillState) addMask(r int32) {
	for _, nw := range b.res[r].words {
		carry := nw.bits
		for k := 0; carry != 0; k++ {
			if k == len(b.cpl) {
				b.cpl = append(b.cpl, make([]uint64, len(b.out)))
			}
			pl := b.cpl[k]
			c := pl[nw.w] & carry
			pl[nw.w] ^= carry
			carry = c
		}
		old := b.out[nw.w]
		if gone := nw.bits &^ old; gone != 0 {
			b.out[nw.w] = old | gone
			b.mlog = append(b.mlog, maskChange{w: nw.w, gone: gone})
		}
	}
}

// dropMask gives reservation r's nodes back to the mask where no other
// masked reservation holds them: a bit-sliced decrement. Only r's nodes
// change count, and out is the nodes with a count above 0 (the mask is
// kept only then: maskOK), so the planes are read only until the
// decrement is done and every one of r's nodes is seen still held.
func (b *backfillState) dropMask(r int32) {
	for _, nw := range b.res[r].words {
		borrow := nw.bits
		var held uint64
		for _, pl := range b.cpl {
			v := pl[nw.w]
			if borrow != 0 {
				c := ^v & borrow
				v ^= borrow
				pl[nw.w] = v
				borrow = c
			}
			if held |= v; borrow == 0 && nw.bits&^held == 0 {
				break
			}
		}
		if back := nw.bits &^ held; back != 0 {
			b.out[nw.w] &^= back
			b.mlog = append(b.mlog, maskChange{w: nw.w, back: back})
		}
	}
}

// maskOut takes node x out of b.mask.
func (b *backfillState) maskOut(x int32) {
	if b.inMask(x) {
		bit := uint64(1) << uint(x&63)
		b.out[x>>6] |= bit
		b.mlog = append(b.mlog, maskChange{w: x >> 6, gone: bit})
	}
}

// maskWindows clears b.mask for the nodes an advance reservation
// (maintenance window) holds at any time of [start, start+limit): exact
// times, not rounded to bf_resolution, as the controller checks them.
func (s *Policy) maskWindows(start, limit sim.Time) {
	b := &s.bf
	end := policies.EndAt(start, limit)
	for i := range s.pass.Windows {
		w := &s.pass.Windows[i]
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
func (s *Policy) windowClash(start, limit sim.Time) bool {
	end := policies.EndAt(start, limit)
	for i := range s.pass.Windows {
		w := &s.pass.Windows[i]
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
func (s *Policy) startNow(job *sim.PendingJob, cls int32) bool {
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
func (s *Policy) blockedNow(job *sim.PendingJob, cls int32) bool {
	b := &s.bf
	k := outcomeKey{cls: cls, limit: job.Limit}
	if b.noNow.has(k) {
		return true
	}
	now := s.pass.Now
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
func (s *Policy) tryNow(job *sim.PendingJob, cls int32) bool {
	p := &s.pass
	b := &s.bf
	now := p.Now
	s.windowMask(now, job.Limit)
	s.maskWindows(now, job.Limit)
	s.nowMask(now, job.Limit)
	if p.Exact {
		// FirstFit places the job exactly when the unmasked nodes hold
		// its units: count them from the job's profile first.
		s.profile(cls)
		if b.wr.base-s.maskedUnits() < b.need {
			return false
		}
	}
	b.wfree = append(b.wfree[:0], p.Free...)
	for w, o := range b.out {
		for ; o != 0; o &= o - 1 {
			b.wfree[w<<6|bits.TrailingZeros64(o)] = sim.NodeState{}
		}
	}
	base, ok := p.StageOn(b.wfree, job)
	if !ok {
		return false
	}
	p.Commit(job, base)
	k := len(p.Starts) - 1
	if b.relBuilt {
		run, _ := s.finRun(job.Ref)
		rel := bfRel{key: p.End(k), end: p.End(k), ref: job.Ref, alloc: p.Starts[k].Alloc, run: run}
		rel.words = allocWords(rel.alloc)
		i, _ := slices.BinarySearchFunc(b.rel, rel, relCmp)
		b.rel = slices.Insert(b.rel, i, rel)
		b.relEndOK = false
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
func (s *Policy) reserve(now sim.Time, job *sim.PendingJob, cls int32) bool {
	return s.reserveFrom(now, job, cls, now)
}

// cgMayPlace reports whether completing's test may find job placed on a
// completing node: not when no placement exists even with no reservation
// in the way (with an exact placer, one exists on less free room only if
// on more), which spares the deferred reservations of a busy cluster.
func (s *Policy) cgMayPlace(job *sim.PendingJob, cgFree []sim.NodeState, cg []bool) bool {
	if !s.pass.Exact || s.cfg.bfBusyNodes {
		return true
	}
	_, fits, _ := s.completingPlace(job, cgFree, cg, nil)
	return fits
}

// reserveOn reserves alloc's nodes for job from t, unless that lies
// beyond bf_window or meets another reservation or an advance
// reservation (refReserveOn).
func (s *Policy) reserveOn(job *sim.PendingJob, t sim.Time, alloc []sim.NodeAlloc) bool {
	b := &s.bf
	if t > policies.EndAt(s.pass.Now, s.cfg.bfWindow) {
		return false
	}
	b.alloc = append(b.alloc[:0], alloc...)
	if s.resvClash(t, job.Limit) || s.windowClash(t, job.Limit) {
		return false
	}
	s.addRes(job, t)
	return true
}

// reserveFrom is reserve with the TRY_LATER search starting at startRes
// (now + 1 for a record waiting for completing nodes).
func (s *Policy) reserveFrom(now sim.Time, job *sim.PendingJob, cls int32, startRes sim.Time) bool {
	b := &s.bf
	limit := job.Limit
	horizon := policies.EndAt(now, s.cfg.bfWindow)
	exact := s.pass.Exact || s.cfg.bfBusyNodes
	if exact {
		s.profile(cls)
		if !s.reachable(now, horizon) {
			return false
		}
	}
	// The facts of the cycle's earlier searches rule out retries without
	// their mask or bound (see bfFact). Without advance reservations, the
	// retry points are now, reservation boundaries and will-run starts,
	// fewer than the 10,000 tries unless a retry repeats its start, which
	// it then does to the end: skipping points leaves the outcome alone.
	useFacts := exact && !b.noFacts && len(s.pass.Windows) == 0 && 2*len(b.res)+len(b.rel)+2 <= 10000
	if useFacts {
		s.openFacts(limit)
	}
	for range 10000 {
		if startRes > horizon {
			b.until(startRes - s.cfg.bfWindow) // the horizon reaches it then
			return false
		}
		first := startRes == now // the window and next depend on now
		if useFacts {
			if f, ok := s.ruledOut(startRes, limit); ok {
				// Every retry point in [startRes, e) is TRY_LATER by the
				// bound; their only effects are the bounds on skipping.
				e := f.hi
				if factCheck != nil {
					factCheck(s, startRes, e, limit, horizon)
				}
				if first {
					s.nowMask(now, limit)
					b.until(s.nextBound(now))
				}
				s.addFact(f)
				if e < horizon {
					startRes = e // a boundary: the next point
					continue
				}
				// The point whose next boundary is the first at or after
				// the horizon is among them, and the last.
				if h := s.nextBound(horizon - 1); h != math.MaxInt64 {
					b.until(h - s.cfg.bfWindow + 1)
				}
				return false
			}
		}
		s.windowMask(startRes, limit)
		s.maskWindows(startRes, limit)
		if first {
			s.nowMask(now, limit)
		}
		next := s.nextBound(startRes) // next slot boundary after startRes
		if first {
			b.until(next) // every reservation start or end after now is a bound
		}
		nextRaw := next
		for _, w := range s.pass.Windows {
			if w.End > startRes {
				next = min(next, w.End) // the window's nodes come back
			}
		}
		if next != math.MaxInt64 && next >= horizon {
			// The map ends at the horizon: no slot ends there or later.
			b.until(next - s.cfg.bfWindow + 1) // the horizon passes it then
			next = math.MaxInt64
		}
		if useFacts {
			ub := s.unitsBound(next)
			s.addFact(bfFact{lo: startRes, hi: nextRaw, ub: ub, lim: s.maskReach(startRes)})
			if !first && ub < b.need {
				if next == math.MaxInt64 {
					return false
				}
				startRes = next
				continue
			}
		} else if exact && !first && s.unitsBound(next) < b.need {
			// The will-run test would find no start by next (see
			// unitsBound): TRY_LATER without it. Only the first try
			// sets bounds on skipping the cycle.
			if next == math.MaxInt64 {
				return false
			}
			startRes = next
			continue
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
		s.addRes(job, t)
		return true
	}
	return false
}

// addRes adds job's reservation of b.alloc's nodes from t.
func (s *Policy) addRes(job *sim.PendingJob, t sim.Time) {
	b := &s.bf
	off, woff := len(b.pool), len(b.wpool)
	for _, a := range b.alloc {
		b.pool = append(b.pool, a.Node)
	}
	ws := b.wtmp[:0]
	for _, a := range b.alloc {
		ws = addNode(ws, a.Node)
	}
	b.wtmp = ws
	b.wpool = append(b.wpool, ws...)
	lo, hi := s.resvSpan(t, job.Limit)
	b.res = append(b.res, bfRes{job: job.Ref, at: t, lo: lo, hi: hi, nodes: b.pool[off:len(b.pool):len(b.pool)],
		words: b.wpool[woff:len(b.wpool):len(b.wpool)]})
	b.forget()
}

// factCheck, when set (by the package's tests), is called with every span
// [lo, e) of retry points that reserve rules out by facts, for a search
// with limit and horizon, to compare each point's bound with a plain sum.
var factCheck func(s *Policy, lo, e, limit, horizon sim.Time)
