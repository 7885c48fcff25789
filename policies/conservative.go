package policies

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// Conservative is textbook conservative backfilling (Mu'alem and
// Feitelson, IEEE TPDS 12(6), 2001): every queued job gets a reservation,
// in queue (submit) order, at the earliest time it fits for its whole time
// limit without disturbing the reservations of the jobs before it; the jobs
// whose reservation is now start.
//
// Every pass's schedule is the one a rebuild from the running jobs (each
// holding its resources until its End = start + limit) and the queue, in
// the same order, gives, so it stays consistent: when jobs end no later
// than their limits say, no job starts later than the reservation it was
// first given (a job ending early can only move reservations earlier).
// Advance reservations (maintenance windows, sim.View.Reservations) are
// intervals in which their nodes are unavailable: a job is placed at a
// candidate time only on nodes no window holds during [start,
// start+limit), and a window's end is a candidate time. Placement at each
// candidate time uses the policy's Placer on the least free state over the
// job's window, so a reservation holds specific resources of specific
// nodes, at the granularity of the placement (GPUs, CPUs, memory), not
// whole nodes as in Slurm's backfill.
//
// With FirstFit (the "conservative" policy's placer) the schedule is kept
// between passes instead of rebuilt (conservative_profile.go): a pass
// reconciles it with the view, and only the jobs whose placement may have
// changed are placed again, each at the first start that a free-resource
// profile (per-segment free totals) and then a node-level check admit;
// once the totals show that no job left in the queue can start now, the
// pass leaves those jobs stale, to be placed by a later pass or when
// Reservations asks.
// Another placer replans from scratch every pass (conservativeReference),
// since the kept schedule relies on FirstFit succeeding exactly when the
// capacity is there. Both give the same schedule; the test
// TestConservativeMatchesReference holds this.
//
// A Conservative keeps its schedule and scratch buffers between passes; it
// must not be used by two runs at once. Begin drops the schedule, so the
// first pass of a run builds it afresh.
type Conservative struct {
	Base
	plain *conservativeReference // set when the placer is not FirstFit
	st    consState
}

// ConservativeReservation is a queued job's place in the schedule of the
// latest pass.
type ConservativeReservation struct {
	Job   sim.JobRef
	Start sim.Time
}

var _ sim.Policy = (*Conservative)(nil)

// NewConservative returns a conservative backfilling policy placing jobs
// with placer (FirstFit when nil).
func NewConservative(placer Placer) *Conservative {
	if placer == nil {
		placer = FirstFit{}
	}
	if !placer.InOrder() {
		return &Conservative{plain: newConservativeReference(placer)}
	}
	return &Conservative{}
}

// ConservativeFactory is the Factory of "conservative": no arguments,
// FirstFit placement.
func ConservativeFactory(decode func(into any) error) (sim.Policy, error) {
	if err := noArgs(decode); err != nil {
		return nil, err
	}
	return NewConservative(FirstFit{}), nil
}

// Name returns "conservative".
func (*Conservative) Name() string { return "conservative" }

// Begin implements sim.Policy: the run starts with no kept schedule, and
// has one pass after every event (OnEvents).
func (c *Conservative) Begin(info sim.RunInfo) (sim.Timing, error) {
	if c.plain != nil {
		return c.plain.Begin(info)
	}
	c.st.built, c.st.inRun = false, true
	return OnEvents(), nil
}

// Reservations returns the start time the latest pass gave every queued
// job (started ones included, at now), in queue order; jobs that could
// never be placed are missing. With FirstFit a pass leaves the jobs
// from the first one past which none can start without reservations
// (stale), and the first call after the pass places them. The slice is
// reused by the next call.
func (c *Conservative) Reservations() []ConservativeReservation {
	if c.plain != nil {
		return c.plain.Reservations()
	}
	return c.st.reservations()
}

// Schedule implements sim.Policy. The returned Plan's slices are reused by
// the next call.
func (c *Conservative) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	if c.plain != nil {
		return c.plain.Schedule(due, v, rng)
	}
	s := &c.st
	s.passes++
	if !s.built || !s.reconcile(v) { // built by an earlier pass of the run (Begin clears it)
		s.reset(v)
	}
	s.walk()
	return s.plan()
}

// consState is the kept schedule of a Conservative with FirstFit: the
// base (free state now and the running jobs' releases), the queue with
// each job's reservation, the profile over both, and the scratch of a
// pass. reset builds it from a view; reconcile brings it up to the next
// view; walk places what changed; plan returns the starts.
//
// The view is read in reset and reconcile only: Now, Nodes (at the nodes
// its Delta lists), Running, Pending, Reservations and Cluster.
type consState struct {
	built bool
	// inRun: Begin was called, so the passes are of one run, in which a
	// JobRef names one job with one request (a hand-made view may reuse
	// a JobRef for another request: appended then compares requests).
	inRun   bool
	cluster *hwmodels.Cluster
	nodes   []hwmodels.Node
	now     sim.Time

	node     []consNode
	classN   []int32 // nodes per class
	windows  []sim.AdvanceReservation
	nodeSeen []uint32
	touched  []int32

	recs    []consJob
	spare   []int32      // free record ids
	queue   []int32      // queued jobs' records, in queue order
	qref    []sim.JobRef // their JobRefs
	run     []int32      // running jobs' records, by JobRef
	started []int32      // the records the last pass started
	// staleAt is the queue position from which the latest pass left the
	// jobs stale (len(queue): none); Reservations places them.
	staleAt int
	clsMemo consClassMemo
	gmin    []int64 // noneStarts' scratch
	unable  int     // noneStarts: the jobs up to it cannot start now
	// witness is the job noneStarts last found able to start now, over
	// [now, witEnd); witDirty: a reservation meeting that window has
	// entered the profile since.
	witness  int
	witEnd   sim.Time
	witDirty bool
	// tail is the first queue position from which no job holds a
	// reservation as the walk starts (lookahead).
	tail    int
	waitBuf []int32 // lookahead's scratch
	// Per JobRef scratch of the queue merge.
	seen   []uint32
	posNew []int32
	stamp  uint32
	keptAt []int32

	consProfile

	// blocks are the changes of this pass to the profile the kept
	// reservations were found on (see certified); sums add them up per
	// node, up to folded, for the nodes in sumList.
	blocks  []consBlock
	sums    []consSum
	sumList []int32
	folded  int

	// Scratch and the plan.
	runBuf  []int32
	queBuf  []int32
	qrefBuf []sim.JobRef
	oldBuf  []sim.NodeAlloc
	starts  []sim.Start
	allocs  []sim.NodeAlloc
	resv    []ConservativeReservation
	passes  uint64 // Schedule calls
	resvFor uint64 // the pass resv was built for
}

// consJob is a queued or running job of the kept schedule.
type consJob struct {
	job     sim.PendingJob // as first seen in the queue (see sameJob)
	d       Demand
	classes uint64 // the node classes the job may use (demand.eligibleAny)
	complex bool   // a MIG or MPS request
	pos     int32  // index in this pass's queue
	oldIdx  int32  // index in the last pass's queue, -1 when new
	fresh   bool   // new in the queue: needs a search
	// stale: left without a reservation by a pass that proved it could
	// not start (consState.leaveStale): it needs a search.
	stale bool
	// ahead: placed at now by the walk's lookahead, ahead of stale jobs
	// queued before it (consState.lookahead); cleared when it starts.
	ahead   bool
	placed  bool // has a reservation
	running bool
	started bool     // started by the last pass
	start   sim.Time // reservation: [start, end), end = endAt(start, limit)
	end     sim.Time
	runEnd  sim.Time // running: the view's End
	alloc   []sim.NodeAlloc
	last    int32 // the highest node of alloc
	// slack is how much capacity the job's earlier candidate starts lack
	// at the least (see certified); math.MaxInt64 when there were none.
	slack int64
	// startDef is the least capacity deficit of the partitions FirstFit
	// tried before the one it placed the job in at its start
	// (math.MaxInt64: none).
	startDef int64
	// same, hints and early are certified's findings for this pass: the
	// changes leave FirstFit's pick at the job's start as it is (same),
	// which a search may then take without a node check (hints); no
	// earlier start became feasible (early), so a search may begin at the
	// job's start.
	same, hints, early bool
	before             consBefore // the segment start before the job's
	rowS, rowE         int32      // hints of resRows
	// onDelta: reconcile's stamp when the job runs on a node of the view's
	// Delta, so that its allocation may have changed.
	onDelta uint32
}

// consBlock is a change of this pass to the free resources of one node
// over [from, to), as seen by the kept reservations (positive: more free).
type consBlock struct {
	node     int32
	from, to sim.Time
	dg, dc   int32
	dm       int64
	wild     bool // MIG or MPS state changed besides
	// coexist marks a started job's resources, which a job queued before
	// it never saw but whose reservation they were placed beside; it
	// applies only to kept jobs whose last index was below before.
	coexist bool
	before  int32
}

// reset builds the state from v alone: every queued job is new.
func (s *consState) reset(v sim.View) {
	now := v.Now()
	s.built, s.cluster, s.nodes, s.now = true, v.Cluster(), v.Cluster().Nodes, now
	s.spare = s.spare[:0]
	for id := range s.recs {
		s.spare = append(s.spare, int32(id))
	}
	s.queue, s.qref, s.run, s.started, s.blocks = s.queue[:0], s.qref[:0], s.run[:0], s.started[:0], s.blocks[:0]
	s.resetSums()
	s.resetNodes(v.Nodes())
	s.setWindows(v.Reservations())
	s.resetProfile(now)
	s.timeline()
	for _, w := range s.windows {
		s.mark(w.End)
	}
	running := v.Running()
	for i := range running {
		rj := &running[i]
		id := s.alloc()
		r := &s.recs[id]
		r.job = sim.PendingJob{Ref: rj.Ref}
		r.running, r.runEnd = true, rj.End
		r.alloc = append(r.alloc[:0], rj.Alloc...)
		s.run = append(s.run, id)
		s.addRelease(id)
	}
	pend := v.Pending()
	for i := range pend {
		id := s.newJob(&pend[i])
		s.recs[id].pos = int32(i)
		s.queue = append(s.queue, id)
		s.qref = append(s.qref, pend[i].Ref)
	}
}

// newJob returns a new record for the queued job p, needing a search.
func (s *consState) newJob(p *sim.PendingJob) int32 {
	id := s.alloc()
	r := &s.recs[id]
	r.job = *p
	r.d = NewDemand(p)
	r.classes = s.classesOf(&r.d)
	r.complex = r.d.MIG != 0 || r.d.MPS != 0
	r.fresh, r.oldIdx = true, -1
	return id
}

func (s *consState) alloc() int32 {
	var id int32
	if n := len(s.spare); n > 0 {
		id = s.spare[n-1]
		s.spare = s.spare[:n-1]
	} else {
		s.recs = append(s.recs, consJob{})
		id = int32(len(s.recs) - 1)
	}
	r := &s.recs[id]
	*r = consJob{alloc: r.alloc[:0], slack: math.MaxInt64}
	return id
}

func (s *consState) free(id int32) { s.spare = append(s.spare, id) }

// reconcile brings the kept schedule from the last pass to v and records
// in blocks what changed under the kept reservations. It returns false
// when v is not a continuation it can follow (a window added, a running
// job this policy did not start, an allocation the controller changed):
// the caller then resets.
func (s *consState) reconcile(v sim.View) bool {
	now := v.Now()
	if !s.sameWindows(v.Reservations(), now) {
		return false
	}
	s.resetSums()
	s.advance(now)
	s.touched = s.touched[:0]

	// The jobs the last pass started hold their reservations' resources
	// now: each reservation becomes a release at its end, and the free
	// state now loses it. The profile is unchanged.
	for _, id := range s.started {
		r := &s.recs[id]
		s.mark(r.end) // the release's, before the reservation's goes
		s.dropReservation(id, false)
		r.running, r.runEnd, r.placed = true, r.end, false
		s.addReleaseEntries(id)
		for k := range r.alloc {
			a := r.alloc[k]
			s.node[a.Node].base.Sub(&a)
			s.touch(a.Node)
		}
		i, _ := slices.BinarySearchFunc(s.run, r.job.Ref, func(id int32, ref sim.JobRef) int {
			return int(s.recs[id].job.Ref - ref)
		})
		s.run = slices.Insert(s.run, i, id)
	}

	// The nodes the view's Delta lists, and the running jobs on them:
	// only those can have an allocation other than the kept one (the
	// controller changes an allocation only by freeing or taking some of
	// its resources, which changes their nodes' free state).
	s.stamp++
	delta := v.Delta().Nodes
	for _, n := range delta {
		s.nodeSeen[n] = s.stamp
		for _, e := range s.node[n].rels {
			s.recs[e.id].onDelta = s.stamp
		}
	}

	// Running jobs: ended, or their End moved.
	running := v.Running()
	out := s.runBuf[:0]
	k := 0
	for i := 0; i < len(running) || k < len(s.run); {
		if k < len(s.run) && (i == len(running) || s.recs[s.run[k]].job.Ref < running[i].Ref) {
			s.ended(s.run[k])
			k++
			continue
		}
		if k == len(s.run) || running[i].Ref < s.recs[s.run[k]].job.Ref {
			return false // a run this policy did not start
		}
		id := s.run[k]
		r := &s.recs[id]
		if (r.onDelta == s.stamp || len(r.alloc) != len(running[i].Alloc)) && !sameAllocs(r.alloc, running[i].Alloc) {
			return false
		}
		if e := running[i].End; e != r.runEnd {
			s.moveRelease(id, e)
		}
		out = append(out, id)
		i++
		k++
	}
	s.runBuf, s.run = s.run[:0], out

	// A started job's resources, for the jobs queued before it.
	for _, id := range s.started {
		r := &s.recs[id]
		if !r.running {
			continue
		}
		n := len(s.blocks)
		s.blocks = appendBlocks(s.blocks, r.alloc, now, min(r.end, max(r.runEnd, now)), -1)
		for i := n; i < len(s.blocks); i++ {
			s.blocks[i].coexist, s.blocks[i].before = true, r.pos
		}
	}

	// Free state now: what the view shows beyond the starts and ends above
	// (failures, drains, repairs) changes the profile from now on.
	view := v.Nodes()
	check := func(n int32) {
		nd := &s.node[n]
		if nd.base == view[n] {
			return
		}
		b := consBlock{node: n, from: now, to: math.MaxInt64,
			dg: view[n].FreeGPUs - nd.base.FreeGPUs, dc: view[n].FreeCPUs - nd.base.FreeCPUs,
			dm:   view[n].FreeMemMB - nd.base.FreeMemMB,
			wild: view[n].MIG != nd.base.MIG || view[n].MPS != nd.base.MPS}
		s.addAgg(now, math.MaxInt64, n, b.dg, b.dc, b.dm)
		s.blocks = append(s.blocks, b)
		nd.base = view[n]
	}
	for _, n := range delta {
		check(n)
	}
	for _, n := range s.touched {
		if s.nodeSeen[n] != s.stamp {
			check(n)
		}
	}

	// The queue: kept jobs in their order; the others' reservations go.
	pend := v.Pending()
	if s.appended(pend) {
		return true
	}
	s.grow(pend)
	for i := range pend {
		s.seen[pend[i].Ref] = s.stamp
		s.posNew[pend[i].Ref] = int32(i)
	}
	s.keptAt = slices.Grow(s.keptAt[:0], len(pend))[:len(pend)]
	for i := range s.keptAt {
		s.keptAt[i] = -1
	}
	last := int32(-1)
	for idx, id := range s.queue {
		r := &s.recs[id]
		r.oldIdx = int32(idx)
		if r.started {
			continue // running now (or ended already)
		}
		ref := r.job.Ref
		if s.seen[ref] == s.stamp {
			if p := s.posNew[ref]; p > last && sameJob(&pend[p], &r.job) {
				last = p // r.job differs at most in fields the state never reads
				s.keptAt[p] = id
				continue
			}
		}
		if r.placed {
			s.blocks = appendBlocks(s.blocks, r.alloc, max(r.start, now), r.end, 1)
			s.dropReservation(id, true)
		}
		s.free(id)
	}
	q, qr := s.queBuf[:0], s.qrefBuf[:0]
	for i := range pend {
		id := s.keptAt[i]
		if id < 0 {
			id = s.newJob(&pend[i])
		} else {
			s.recs[id].fresh = false
		}
		s.recs[id].pos = int32(i)
		q = append(q, id)
		qr = append(qr, pend[i].Ref)
	}
	s.queBuf, s.queue = s.queue[:0], q
	s.qrefBuf, s.qref = s.qref[:0], qr
	return true
}

// appended takes the view's queue pend when it is the kept one less the
// jobs the last pass started, with new jobs after it, the common case,
// and reports whether it was; else it leaves the queue for reconcile's
// merge. In a run it compares JobRefs alone (qref): the started jobs
// are those of s.started, in queue order at their positions pos, so the
// kept queue is compared and taken a stretch between two of them at a
// time.
func (s *consState) appended(pend []sim.PendingJob) bool {
	if !s.inRun {
		return s.appendedReq(pend)
	}
	i, j := 0, 0
	for _, id := range s.started {
		p := int(s.recs[id].pos)
		if p < j || p >= len(s.queue) || s.queue[p] != id || !refsAt(pend, i, s.qref[j:p]) {
			return false
		}
		i += p - j
		j = p + 1
	}
	if !refsAt(pend, i, s.qref[j:]) {
		return false
	}
	q, qr := s.queBuf[:0], s.qrefBuf[:0]
	i, j = 0, 0
	for k := 0; k <= len(s.started); k++ {
		p := len(s.queue)
		if k < len(s.started) {
			st := &s.recs[s.started[k]]
			p = int(st.pos)
			st.oldIdx = int32(p)
		}
		from := j
		for ; j < p; j++ {
			r := &s.recs[s.queue[j]]
			r.oldIdx, r.fresh, r.pos = int32(j), false, int32(i)
			i++
		}
		q = append(q, s.queue[from:p]...)
		qr = append(qr, s.qref[from:p]...)
		j = p + 1
	}
	s.setQueue(q, qr, pend, i)
	return true
}

// setQueue makes q (records) and qr (their JobRefs), the kept jobs in
// queue order, with pend's jobs from i on appended as new ones, the queue;
// the old slices become the buffers of the next pass.
func (s *consState) setQueue(q []int32, qr []sim.JobRef, pend []sim.PendingJob, i int) {
	for ; i < len(pend); i++ {
		id := s.newJob(&pend[i])
		s.recs[id].pos = int32(i)
		q = append(q, id)
		qr = append(qr, pend[i].Ref)
	}
	s.queBuf, s.queue = s.queue[:0], q
	s.qrefBuf, s.qref = s.qref[:0], qr
}

// refsAt reports whether pend from i on starts with the jobs refs.
func refsAt(pend []sim.PendingJob, i int, refs []sim.JobRef) bool {
	if len(pend)-i < len(refs) {
		return false
	}
	p := pend[i : i+len(refs)]
	for k := range refs {
		if p[k].Ref != refs[k] {
			return false
		}
	}
	return true
}

// appendedReq is appended for passes outside a run, where a JobRef may
// name another request from one view to the next: it compares requests.
func (s *consState) appendedReq(pend []sim.PendingJob) bool {
	i := 0
	for _, id := range s.queue {
		r := &s.recs[id]
		if r.started {
			continue
		}
		if i == len(pend) || !sameJob(&pend[i], &r.job) {
			return false
		}
		i++
	}
	q, qr := s.queBuf[:0], s.qrefBuf[:0]
	i = 0
	for idx, id := range s.queue {
		r := &s.recs[id]
		r.oldIdx = int32(idx)
		if !r.started {
			r.fresh, r.pos = false, int32(i)
			q = append(q, id)
			qr = append(qr, r.job.Ref)
			i++
		}
	}
	s.setQueue(q, qr, pend, i)
	return true
}

// sameJob reports whether p is the queued job r was placed as: the same
// request, partitions and limit. (The request's fields one by one: its
// generated equality, a call, costs more.)
func sameJob(p, r *sim.PendingJob) bool {
	a, b := &p.Req, &r.Req
	return p.Ref == r.Ref && p.Limit == r.Limit && p.Part == r.Part && p.Parts == r.Parts &&
		a.Nodes == b.Nodes && a.GPUs == b.GPUs && a.CPUs == b.CPUs && a.MemMB == b.MemMB &&
		a.MIGProfile == b.MIGProfile && a.MPSShare == b.MPSShare && a.Switches == b.Switches &&
		a.SwitchWait == b.SwitchWait && a.GPUType == b.GPUType
}

// sameAllocs reports whether a and b are the same allocation, entry by
// entry (slices.Equal compares each entry by a call).
func sameAllocs(a, b []sim.NodeAlloc) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Node != y.Node || x.GPUs != y.GPUs || x.CPUs != y.CPUs || x.MemMB != y.MemMB || x.MPS != y.MPS || x.MIG != y.MIG {
			return false
		}
	}
	return true
}

// grow sizes the per-JobRef scratch for the refs of pend.
func (s *consState) grow(pend []sim.PendingJob) {
	n := len(s.seen)
	for i := range pend {
		n = max(n, int(pend[i].Ref)+1)
	}
	if n > len(s.seen) {
		s.seen = append(s.seen, make([]uint32, n-len(s.seen))...)
		s.posNew = append(s.posNew, make([]int32, n-len(s.posNew))...)
	}
}

func (s *consState) touch(n int32) { s.touched = append(s.touched, n) }

// ended drops the running job id, which the view no longer lists.
// Its release leaves the profile, and its resources are free from now
// on: one change over [now, the release) per node, as dropRelease's
// change from the release on and a change from now on would sum to.
func (s *consState) ended(id int32) {
	r := &s.recs[id]
	from := max(r.runEnd, s.now)
	for k := range r.alloc {
		a := r.alloc[k]
		nd := &s.node[a.Node]
		nd.base.Add(&a) // what the view should show now
		if from > s.now {
			s.addAgg(s.now, from, a.Node, a.GPUs, a.CPUs, a.MemMB)
		}
		nd.rels = dropEntry(nd.rels, id)
		s.touch(a.Node)
	}
	s.unmark(r.runEnd)
	if r.runEnd > s.now {
		s.blocks = appendBlocks(s.blocks, r.alloc, s.now, r.runEnd, 1)
	}
	r.running = false
	s.free(id)
}

// moveRelease moves running job id's release to end.
func (s *consState) moveRelease(id int32, end sim.Time) {
	r := &s.recs[id]
	e1, e2 := max(r.runEnd, s.now), max(end, s.now)
	s.dropRelease(id)
	r.runEnd = end
	s.addRelease(id)
	if e1 == e2 {
		return
	}
	sign, from, to := int32(1), e2, e1 // an earlier release frees [e2, e1)
	if e2 > e1 {
		sign, from, to = -1, e1, e2
	}
	s.blocks = appendBlocks(s.blocks, r.alloc, from, to, sign)
}

// appendBlocks appends alloc held over [from, to) as blocks: more free
// (sign 1) or less (sign -1).
func appendBlocks(out []consBlock, alloc []sim.NodeAlloc, from, to sim.Time, sign int32) []consBlock {
	for k := range alloc {
		a := &alloc[k]
		out = append(out, consBlock{node: a.Node, from: from, to: to,
			dg: sign * a.GPUs, dc: sign * a.CPUs, dm: int64(sign) * a.MemMB, wild: a.MIG != (sim.MIGInstances{}) || a.MPS != (sim.MPSShare{})})
	}
	return out
}

// walk places the queue in order: a new job, a job whose reservation is
// past, and a job that certified cannot show unchanged are searched for
// again; the others keep their reservations. Until the first search the
// profile's totals hold every kept reservation; from it on, only those of
// the jobs before the one being placed, as the search needs.
func (s *consState) walk() {
	prefix := true
	s.staleAt, s.unable = len(s.queue), 0
	s.witness, s.witEnd = -1, math.MinInt64
	tail, q, recs := len(s.queue), s.queue, s.recs // locals: the loop kept s.tail in memory
	for tail > 0 && !recs[q[tail-1]].placed {
		tail--
	}
	s.tail = tail
	look := true // lookahead may be tried
	// force: every job left is searched (after a lookahead that placed
	// some ahead: their reservations, not in the pass's blocks, would be
	// missed by a certificate).
	force := false
	for i, id := range s.queue {
		r := &s.recs[id]
		if r.ahead {
			continue
		}
		s.cur = int32(i)
		search := force || r.fresh || r.stale || r.placed && r.start < s.now
		// No change to fold or check: certified holds, the slack stays
		// (and its findings for the search are not needed).
		quiet := !search && !r.complex && len(s.sumList) == 0 && s.folded == len(s.blocks)
		// From the walk's first search on, a job with work to do first
		// asks whether the rest of the queue can be left stale.
		checked := !quiet && !prefix
		if checked && s.noneStarts(i) {
			s.leaveStale(i)
			break
		}
		keep := false
		switch {
		case search:
			r.hints, r.early = false, false
		case quiet:
			keep = true
		default:
			keep = s.certified(r)
		}
		if keep {
			if !prefix && r.placed {
				s.placed(r)
			}
			continue
		}
		if prefix {
			prefix = false
			s.lazyFrom(i)
			s.timed = true
		}
		if !checked && s.noneStarts(i) {
			s.leaveStale(i)
			break
		}
		if look && i >= s.tail {
			if look = false; s.lookahead(i) { // once a pass: no job from i on is ahead yet
				s.leaveStale(i)
				break
			}
			force = true
			if r.ahead {
				continue
			}
		}
		s.replace(id, int32(i))
	}
	s.timed = false
}

// lookahead settles what of the jobs from queue position i on, none of
// which holds a reservation (i >= tail), starts now, without searching
// the ones that cannot: in queue order, a job FirstFit cannot place at
// now on the profile (the jobs before i and those placed here) cannot
// start now (noneStarts: those up to s.unable are known, most others
// fail on the totals) and waits; a job FirstFit places at now starts
// there with that allocation when every waiting job's start has a lower
// bound at or after its window's end (startBound, taken before the job
// is placed): the reservations of the jobs before it that were not
// searched cannot meet the window, so the least free state FirstFit
// reads is the one they would leave. It reports whether it settled
// every job (the caller leaves the others stale); else, at a job it
// could not settle, the jobs it placed stay placed (ahead) and the walk
// searches the others in order, whose results the ahead jobs cannot
// change: every start such a search could take lies at or after the
// bound that let them start, past their windows.
func (s *consState) lookahead(i int) bool {
	bound := sim.Time(math.MaxInt64) // the least start bound so far
	wait := s.waitBuf[:0]            // unable jobs not yet bounded
	defer func() { s.waitBuf = wait[:0] }()
	for k := i; k < len(s.queue); k++ {
		id := s.queue[k]
		r := &s.recs[id]
		d := &r.d
		if r.complex || d.GPUs <= 0 {
			return false
		}
		if k < s.unable || int64(d.Count)*int64(d.GPUs) > s.dif[3*s.nclass] {
			wait = append(wait, id) // noneStarts found it unable, or segment 0 is short
			continue
		}
		end := EndAt(s.now, r.job.Limit)
		m, _ := s.find(end)
		if ok, _ := s.firstFit(r, s.now, end, math.MaxInt32, 0, m); !ok {
			wait = append(wait, id)
			continue
		}
		for _, w := range wait {
			bound = min(bound, s.startBound(&s.recs[w]))
		}
		wait = wait[:0]
		if bound < end {
			return false
		}
		r.start, r.end, r.placed, r.ahead = s.now, end, true, true
		r.stale, r.fresh = false, false
		r.alloc = append(r.alloc[:0], s.out...)
		r.last = 0
		for k := range r.alloc {
			r.last = max(r.last, r.alloc[k].Node)
		}
		s.addReservation(id)
	}
	return true
}

// startBound returns a lower bound of GPU job r's start on the profile:
// the first segment start from which every segment its window covers
// holds its GPUs in the all-nodes totals (math.MaxInt64: none).
func (s *consState) startBound(r *consJob) sim.Time {
	need := int64(r.d.Count) * int64(r.d.GPUs)
	times, c := s.times, 3*s.nclass
	k, m, short := 0, 0, -1
	var acc, shortB int64
	for k < len(times) {
		m, acc, short, shortB = scanGPUs(times, s.dif[c:], s.stride, m, EndAt(times[k], r.job.Limit), acc, need, short, shortB)
		if short < k {
			return times[k]
		}
		k = short + 1
	}
	return math.MaxInt64
}

// noneStarts reports whether no queued job from position i on can start
// now, so that the walk, past its first search, may leave them stale
// (leaveStale): for each, FirstFit at now fails on the profile of the
// jobs before i, which holds at least what the jobs before it leave (a
// GPU demand's FirstFit succeeds exactly when the least free state over
// the window holds it, and that only grows with fewer reservations).
// Most fail sooner, asking for more GPUs than the least over the window
// of the all-nodes free-GPU totals. A job that asks for no GPUs, or MIG
// or MPS, is taken as able to start. As the walk goes on the profile
// only loses, so a job found unable stays so for the pass: the jobs from
// i to s.unable are not looked at again.
func (s *consState) noneStarts(i int) bool {
	k := max(i, s.unable)
	if k == len(s.queue) {
		return true
	}
	// a[m]: the least total from now to the end of segment m, filled as
	// far as a window needs (most jobs are short at now already).
	n := len(s.times)
	a := slices.Grow(s.gmin[:0], n)[:n]
	s.gmin = a
	c, stride := 3*s.nclass, s.stride
	tot := s.dif[c]
	a[0] = tot
	filled := 1
	for ; k < len(s.queue); k++ {
		q := &s.recs[s.queue[k]]
		d := &q.d
		if q.ahead {
			continue // starts now already (lookahead)
		}
		if q.complex || d.GPUs <= 0 {
			break
		}
		if k == s.witness && !s.witDirty {
			break // its window is as it was: still able
		}
		need := int64(d.Count) * int64(d.GPUs)
		if a[0] < need {
			continue
		}
		end := EndAt(s.now, q.job.Limit)
		m, _ := s.find(end)
		for ; filled < m; filled++ {
			tot += s.dif[filled*stride+c]
			a[filled] = min(a[filled-1], tot)
		}
		if a[max(m-1, 0)] < need {
			continue
		}
		// The totals allow it: FirstFit at now on the nodes' least free
		// state over the window, holding the jobs before i, unless too few
		// nodes of its partitions have a free GPU throughout it.
		if s.fewNodes(d, m, need) {
			continue
		}
		if ok, _ := s.firstFit(q, s.now, end, int32(i), 0, m); ok {
			s.witness, s.witEnd, s.witDirty = k, end, false
			break
		}
	}
	s.unable = k
	return k == len(s.queue)
}

// fewNodes reports whether the nodes of d's partitions with a free GPU
// in every segment before m (and the lazy ones, whose bits may show
// less), each holding the most GPUs of a node, hold fewer than need:
// FirstFit at now over that window then fails.
func (s *consState) fewNodes(d *Demand, m int, need int64) bool {
	var c int
	for w := range s.nw {
		var pm uint64
		for p := d.parts; p != 0; p &= p - 1 {
			pm |= s.partNodes[bits.TrailingZeros64(p)][w]
		}
		c += bits.OnesCount64(andRows(s.fb, pm, 0, m, s.nw, w) | s.lazy[w]&pm)
	}
	return int64(c)*s.maxGPUs < need
}

// leaveStale takes the reservations of the jobs from queue position i
// on, none of which can start now (noneStarts), out of the profile (the
// walk is past its first search: out of the lazy timelines) and marks
// the jobs stale: a later pass searches each when its walk comes to it
// without leaving it stale again, and Reservations places them first
// (finish).
func (s *consState) leaveStale(i int) {
	for _, id := range s.queue[i:] {
		r := &s.recs[id]
		if r.ahead {
			continue
		}
		if r.placed {
			s.unplaced(r)
			s.dropReservation(id, false)
			r.placed = false
		}
		r.alloc = r.alloc[:0]
		r.stale = true
	}
	s.staleAt = i
}

// finish places the jobs the latest pass left stale, in queue order, as
// the walk would have: each is searched on the profile of the jobs before
// it.
func (s *consState) finish() {
	if s.staleAt >= len(s.queue) {
		return
	}
	s.lazy = slices.Grow(s.lazy[:0], s.nw)[:s.nw]
	clear(s.lazy) // every timeline is exact: the stale jobs are out
	s.timed = true
	for i := s.staleAt; i < len(s.queue); i++ {
		s.cur = int32(i)
		id := s.queue[i]
		r := &s.recs[id]
		if !r.stale {
			continue // placed ahead (lookahead)
		}
		r.hints, r.early = false, false
		s.replace(id, int32(i))
	}
	s.timed = false
	s.staleAt = len(s.queue)
}

// lazyFrom takes the reservations of the jobs from queue position i on
// out of the totals, as the walk's first search (at i) needs; the nodes'
// timelines keep them until a check of the node needs it (exact). lazy
// marks the nodes whose timelines hold a job at or after the walk's
// position, later counts those jobs' reservations on each.
func (s *consState) lazyFrom(i int) {
	s.lazy = slices.Grow(s.lazy[:0], s.nw)[:s.nw]
	clear(s.lazy)
	for n := range s.node {
		s.node[n].later = 0
	}
	for _, id := range s.queue[i:] {
		q := &s.recs[id]
		if !q.placed {
			continue
		}
		s.aggTotals(q, 1)
		for k := range q.alloc {
			n := q.alloc[k].Node
			if nd := &s.node[n]; !nd.complex {
				nd.later++
				s.lazy[n>>6] |= 1 << uint(n&63)
			}
		}
	}
}

// isLazy reports whether node n's timeline holds a job at or after the
// walk's position.
func (s *consState) isLazy(n int32) bool { return s.lazy[n>>6]>>uint(n&63)&1 != 0 }

// passed counts a reservation of a job the walk is done with, on lazy
// node n: once none is left, the timeline is exact.
func (s *consState) passed(n int32) {
	nd := &s.node[n]
	if nd.later--; nd.later == 0 {
		s.lazy[n>>6] &^= 1 << uint(n&63)
	}
}

// placed puts r's reservation back in the totals, and in the timelines
// of the nodes that are not lazy (still holding it), as the walk passes r
// after its first search.
func (s *consState) placed(r *consJob) {
	s.aggTotals(r, -1)
	for k := range r.alloc {
		a := &r.alloc[k]
		switch {
		case s.node[a.Node].complex:
		case s.isLazy(a.Node):
			s.passed(a.Node)
		default:
			s.tlAdd(a.Node, r.start, r.end, -1, -a.GPUs, -a.CPUs, -a.MemMB)
		}
	}
}

// unplaced takes r's reservation, which the walk has just searched for
// again, out of the lazy nodes' timelines (the totals and the others'
// timelines do not hold it).
func (s *consState) unplaced(r *consJob) {
	for k := range r.alloc {
		a := &r.alloc[k]
		if s.node[a.Node].complex || !s.isLazy(a.Node) {
			continue
		}
		s.tlAdd(a.Node, r.start, r.end, -1, a.GPUs, a.CPUs, a.MemMB)
		s.passed(a.Node)
	}
}

// exact makes lazy node n's timeline that of the jobs before the walk's
// position, built afresh without the later jobs' reservations; from then on
// the walk puts each job's reservation back on it as it passes the job.
func (s *consState) exact(n int32) {
	if !s.isLazy(n) {
		return
	}
	s.lazy[n>>6] &^= 1 << uint(n&63)
	s.build(n, s.cur) // its bits are the lazy timeline's, which holds more
}

// certified reports whether job r, kept from the last pass, is sure to be
// placed where it is: the pass's changes (blocks, summed per node) can
// neither make an earlier start feasible nor change what FirstFit picks
// at its start. The proof carries over from pass to pass in r.slack, the
// least capacity deficit of the job's earlier candidate starts (and of
// the partitions tried before its own at its start):
//
//   - Less free resources never make an infeasible start feasible:
//     FirstFit succeeds exactly when the capacity is there, and the least
//     free state over a window only shrinks. A time that was no candidate
//     before lies inside a segment of the old profile, where its window
//     covers at least the segments of the candidate before it.
//   - More free resources on a node the job may use raise any window's
//     capacity by at most their units (per block and resource,
//     ceil(change / per-unit need); 1 for whole-node jobs); and by at most
//     what the node's least free state holds over a part that every
//     window meeting the change covers: the job stays where it is while
//     the sum stays below slack.
//   - At its start, FirstFit takes min(fit, need) of each node in turn:
//     it picks the same unless the fit over the window changes at a node
//     before its last, or falls below its share at the last (startSame).
//   - A started job's resources (coexist blocks) were placed beside the
//     reservations of the jobs queued before it, so those jobs take the
//     same share of each node; MIG instances and MPS shares, whose
//     placement depends on which GPUs are in use, are not trusted to this
//     (certifiedWhole).
//
// It also records what it found for the search (consJob.same, hints,
// early).
func (s *consState) certified(r *consJob) bool {
	if r.complex {
		return s.certifiedWhole(r)
	}
	if s.folded < len(s.blocks) {
		s.fold() // (most certificates find nothing new to fold)
	}
	hi, sj := sim.Time(math.MaxInt64), sim.Time(math.MaxInt64)
	if r.placed {
		hi, sj = r.end, r.start
	}
	lim := EndAt(s.now, r.job.Limit)
	r.same, r.hints = true, true
	srow := s.startRow(r) // the walk's checks leave the boundaries
	var gain int64
	fail := false
	for _, n := range s.sumList {
		ds := &s.sums[n]
		if ds.to <= s.now || ds.from >= hi || r.classes&ds.cls == 0 {
			continue
		}
		if ds.wild {
			r.same, r.hints, r.early = false, false, false // MPS shares: see above
			return false
		}
		plain := !ds.complex
		if r.same && r.placed && n <= r.last && ds.meets(r, n) && !s.startSame(r, n, ds, srow) {
			r.same = false
			if fail {
				break
			}
		}
		if fail && !r.hints {
			continue // only startSame is left to check
		}
		var g int64
		if d := &r.d; d.GPUs > 0 && d.CPUs == 0 && d.MemMB == 0 {
			g = ds.gainGPUs(d) // gain, inlined
		} else {
			g = ds.gain(d)
		}
		if g == 0 {
			continue
		}
		if ds.npos > 0 && r.startDef < math.MaxInt64 && ds.from < r.end && ds.posTo > r.start {
			r.hints = false // the partitions tried first at the start
		}
		if fail {
			// The search may still take the shortcut at the job's start
			// (same and hints): every node's gain must have been looked
			// at for hints (TestConservativeHintsAfterFail).
			continue
		}
		if gain+g >= r.slack && plain {
			// The starts whose windows meet the changes lie before u (at
			// u too when partitions were tried before the job's own
			// there); every window of a start from now to the last such
			// one, x, holds [x, lim), where the node's least free state
			// bounds its gain.
			u := min(ds.posTo, sj)
			x, row := u, -1
			if u < sj || r.startDef == math.MaxInt64 {
				c := &ds.before // u is the blocks' end, or the job's start
				if u == sj {
					c = &r.before
				}
				ok := c.ok
				if c.ver == s.tver && c.u == u { // before's cache, inline
					x = c.x
				} else {
					x, ok = s.before(c, u)
				}
				if !ok {
					continue // no start before u
				}
				row = c.row
			} else {
				row = srow
			}
			switch {
			case x >= lim:
			case s.fullAt(r, n, row):
				g = 0
			default:
				g = min(g, s.fitOver(r, n, x, lim, row))
			}
		}
		if gain += g; gain >= r.slack {
			fail = true
			if !r.same {
				break
			}
		}
	}
	r.early = !fail
	if fail {
		r.slack = 0
		return false
	}
	r.slack -= gain
	return r.same
}

// fullAt reports whether a GPU demand r fits nothing of node n over a
// window whose first segment is row (-1: not known, false) because the
// node has no free GPU there, from its free-GPU bit: during a timed walk
// an exact node's bits are its timeline's (most of the certificates'
// window minima end here, without a call).
func (s *consState) fullAt(r *consJob, n int32, row int) bool {
	return row >= 0 && s.timed && r.d.GPUs > 0 && !s.isLazy(n) && s.fb[row*s.nw+int(n>>6)]>>uint(n&63)&1 == 0
}

// startRow returns the segment of r's start from its hint (resRows), or
// -1 when the hint is out of date.
func (s *consState) startRow(r *consJob) int {
	if h := int(r.rowS); h < len(s.times) && s.times[h] == r.start {
		return h
	}
	return -1
}

// meets reports whether the pass's changes ds on node n (at most r.last)
// may change FirstFit's share of it at r's start: they meet the job's
// window and change a resource it needs, and take some on the last node
// (more free there changes nothing). startSame settles it; this test,
// inlined, spares most nodes the call.
func (ds *consSum) meets(r *consJob, n int32) bool {
	return ds.from < r.end && ds.to > r.start && ds.touches(&r.d) && (n != r.last || ds.neg)
}

// startSame reports whether FirstFit still takes the same share of node
// n (at most r.last) at r's start, given the pass's changes ds there,
// which meet it (meets); srow is the segment of r's start (startRow).
// FirstFit takes min(fit, need) of each node in turn: the same share of a
// node before the last one needs the same fit over the window, of the
// last one at least its share.
func (s *consState) startSame(r *consJob, n int32, ds *consSum, srow int) bool {
	if ds.complex {
		return false
	}
	var f int64
	if !s.fullAt(r, n, srow) {
		f = s.fitOver(r, n, r.start, r.end, srow)
	}
	a := r.unitsOn(n)
	return n < r.last && f == a || n == r.last && f >= a
}

// certifiedWhole is certified for a MIG or MPS request, whose placement
// any change on a node it may use can alter: it holds when there is none.
func (s *consState) certifiedWhole(r *consJob) bool {
	hi := sim.Time(math.MaxInt64)
	if r.placed {
		hi = r.end
	}
	r.same, r.hints, r.early = false, false, false
	for k := range s.blocks {
		b := &s.blocks[k]
		if b.coexist && !(r.oldIdx >= 0 && r.oldIdx < b.before) {
			continue
		}
		if b.to > s.now && b.from < hi && r.classes&(1<<s.node[b.node].cls) != 0 {
			return false
		}
	}
	return true
}

// consSum sums up the blocks of a pass on one node that are not coexist
// ones: what certified needs of them.
type consSum struct {
	pass     uint64
	g, c, m  int64 // more free GPUs, CPUs, MiB (positive parts)
	npos     int64 // blocks with a positive part
	neg      bool  // some block takes resources
	wild     bool  // some block changes MIG or MPS state
	dg, dc   bool  // some block changes GPUs, CPUs, memory
	dm       bool
	from, to sim.Time // the span of the blocks
	posTo    sim.Time // the end of the last block with a positive part
	cls      uint64   // the node's class bit
	complex  bool     // a MIG or MPS node
	before   consBefore
}

// resetSums empties the pass's blocks and their sums.
func (s *consState) resetSums() {
	s.blocks, s.folded, s.sumList = s.blocks[:0], 0, s.sumList[:0]
}

// fold adds the blocks appended since the last call to the per-node sums.
func (s *consState) fold() {
	if len(s.sums) < len(s.node) {
		s.sums = make([]consSum, len(s.node))
	}
	for ; s.folded < len(s.blocks); s.folded++ {
		b := &s.blocks[s.folded]
		if b.coexist {
			continue
		}
		ds := &s.sums[b.node]
		if ds.pass != s.passes {
			nd := &s.node[b.node]
			*ds = consSum{pass: s.passes, from: b.from, to: b.to, posTo: math.MinInt64, cls: 1 << nd.cls, complex: nd.complex}
			s.sumList = append(s.sumList, b.node)
		}
		ds.from, ds.to = min(ds.from, b.from), max(ds.to, b.to)
		ds.wild = ds.wild || b.wild && s.node[b.node].mps
		ds.dg, ds.dc, ds.dm = ds.dg || b.dg != 0, ds.dc || b.dc != 0, ds.dm || b.dm != 0
		ds.neg = ds.neg || b.dg < 0 || b.dc < 0 || b.dm < 0
		if b.dg > 0 || b.dc > 0 || b.dm > 0 {
			ds.g += int64(max(b.dg, 0))
			ds.c += int64(max(b.dc, 0))
			ds.m += max(b.dm, 0)
			ds.npos++
			ds.posTo = max(ds.posTo, b.to)
		}
	}
}

// touches reports whether the blocks change a resource d needs.
func (ds *consSum) touches(d *Demand) bool {
	return d.GPUs > 0 && ds.dg || d.CPUs > 0 && ds.dc || d.MemMB > 0 && ds.dm
}

// gain bounds how many more units (nodes, for a node-count demand) of d
// the node's window can hold with the blocks: per block, per resource,
// ceil(change / per-unit need) (consBlock.gain), summed.
func (ds *consSum) gain(d *Demand) int64 {
	if ds.npos == 0 {
		return 0
	}
	var g int64
	up := func(sum, per int64) {
		if per > 0 && sum > 0 {
			g += (sum + ds.npos*(per-1)) / per
		}
	}
	up(ds.g, int64(d.GPUs))
	up(ds.c, int64(d.CPUs))
	up(ds.m, d.MemMB)
	if !d.spread {
		g = min(g, 1)
	}
	return g
}

// gainGPUs is gain for a demand of GPUs alone.
func (ds *consSum) gainGPUs(d *Demand) int64 {
	if ds.npos == 0 || ds.g <= 0 {
		return 0
	}
	per := int64(d.GPUs)
	g := (ds.g + ds.npos*(per-1)) / per
	if !d.spread {
		g = min(g, 1)
	}
	return g
}

// fitOver returns what of r's demand node n's least free state over
// [from, to) holds (units, or 1 for a node-count demand), on the profile
// of the jobs before r; n is not a MIG or MPS node. row is from's
// segment when known (-1: not).
func (s *consState) fitOver(r *consJob, n int32, from, to sim.Time, row int) int64 {
	nd := &s.node[n]
	switch {
	case !s.timed && s.laterIn(nd, from, to, r.pos):
		g, c, m := s.minFree(nd, from, to, r.pos)
		return int64(r.d.Fit(sim.NodeState{FreeGPUs: g, FreeCPUs: c, FreeMemMB: m}))
	case !s.timed:
		// Before the walk's first search the timeline holds every
		// reservation: over [from, to) only those of the jobs before r.
	case s.isLazy(n):
		s.exact(n)
		if s.fullAt(r, n, row) {
			return 0
		}
	}
	if d := &r.d; d.GPUs > 0 && d.CPUs == 0 && d.MemMB == 0 {
		// demand.fit of GPUs alone (r is no MIG or MPS request): a
		// window's point short of one unit settles it.
		g := nd.tlMinGPUsTo(from, to, d.GPUs)
		switch {
		case g < d.GPUs:
			return 0
		case !d.spread:
			return 1
		}
		return int64(g / d.GPUs)
	}
	g, c, m := nd.tlMin(from, to)
	return int64(r.d.Fit(sim.NodeState{FreeGPUs: g, FreeCPUs: c, FreeMemMB: m}))
}

// laterIn reports whether a reservation of a job at or after queue
// position before holds some of nd over [from, to).
func (s *consState) laterIn(nd *consNode, from, to sim.Time, before int32) bool {
	for k := range nd.res {
		if e := &nd.res[k]; e.start < to && e.end > from && s.recs[e.id].pos >= before {
			return true
		}
	}
	return false
}

// unitsOn returns the units (1 for a node-count demand) r's reservation
// holds on node n.
func (r *consJob) unitsOn(n int32) int64 {
	for k := range r.alloc {
		a := &r.alloc[k]
		if a.Node != n {
			continue
		}
		switch {
		case !r.d.spread:
			return 1
		case r.d.GPUs > 0:
			return int64(a.GPUs / r.d.GPUs)
		case r.d.CPUs > 0:
			return int64(a.CPUs / r.d.CPUs)
		case r.d.MemMB > 0:
			return a.MemMB / r.d.MemMB
		}
	}
	return 0
}

// replace searches job id, at queue position pos, again and keeps what it
// finds, recording a move in blocks for the jobs after it.
func (s *consState) replace(id, pos int32) {
	r := &s.recs[id]
	wasPlaced, oldStart := r.placed, r.start
	s.oldBuf = append(s.oldBuf[:0], r.alloc...)
	start, alloc, ok := s.search(r, pos)
	r.fresh, r.stale = false, false
	if ok && wasPlaced && start == oldStart && sameAllocs(alloc, s.oldBuf) {
		s.placed(r)
		return
	}
	oldEnd := r.end
	if wasPlaced {
		s.unplaced(r)
		s.dropReservation(id, false) // not in the totals (walk)
	}
	r.placed = ok
	if !ok {
		s.blocks = appendBlocks(s.blocks, s.oldBuf, max(oldStart, s.now), oldEnd, 1)
		return
	}
	r.start, r.end = start, EndAt(start, r.job.Limit)
	r.alloc = append(r.alloc[:0], alloc...)
	r.last = 0
	for k := range r.alloc {
		r.last = max(r.last, r.alloc[k].Node)
	}
	s.addReservation(id) // totals and timelines too
	if !wasPlaced {
		s.blocks = appendBlocks(s.blocks, r.alloc, r.start, r.end, -1)
		return
	}
	s.moveBlocks(s.oldBuf, max(oldStart, s.now), oldEnd, r.alloc, r.start, r.end)
}

// moveBlocks appends a reservation's move from old over [os, oe) to now
// over [ns, ne) as blocks, netted per node: the later jobs see the
// difference only.
func (s *consState) moveBlocks(old []sim.NodeAlloc, os, oe sim.Time, now []sim.NodeAlloc, ns, ne sim.Time) {
	var zero sim.NodeAlloc
	mv := consMove{cuts: [4]sim.Time{os, oe, ns, ne}, os: os, oe: oe, ns: ns, ne: ne, n0: len(s.blocks)}
	sort4(&mv.cuts) // the same for every node
	for k := range old {
		o := &old[k]
		n := &zero
		if i := allocIndex(now, o.Node); i >= 0 {
			n = &now[i]
		}
		s.moveNode(&mv, o, n, o.Node)
	}
	for k := range now {
		if n := &now[k]; allocIndex(old, n.Node) < 0 {
			s.moveNode(&mv, &zero, n, n.Node)
		}
	}
}

// consMove is a reservation's move for moveBlocks: from [os, oe) to [ns,
// ne), the four sorted (cuts), and the first block of the move (n0).
type consMove struct {
	cuts           [4]sim.Time
	os, oe, ns, ne sim.Time
	n0             int
}

// moveNode appends the move's blocks on node, where the reservation held
// o and now holds n (a method rather than moveBlocks' closure, whose
// captured values each cost a load more).
func (s *consState) moveNode(mv *consMove, o, n *sim.NodeAlloc, node int32) {
	wild := o.MIG != (sim.MIGInstances{}) || o.MPS != (sim.MPSShare{}) || n.MIG != (sim.MIGInstances{}) || n.MPS != (sim.MPSShare{})
	cuts := mv.cuts
	for i := 0; i+1 < len(cuts); i++ {
		from, to := cuts[i], cuts[i+1]
		if from >= to {
			continue
		}
		var dg, dc int32
		var dm int64
		if from >= mv.os && to <= mv.oe {
			dg, dc, dm = o.GPUs, o.CPUs, o.MemMB
		}
		if from >= mv.ns && to <= mv.ne {
			dg, dc, dm = dg-n.GPUs, dc-n.CPUs, dm-n.MemMB
		}
		if dg == 0 && dc == 0 && dm == 0 && !wild {
			continue
		}
		if k := len(s.blocks) - 1; k >= mv.n0 {
			if b := &s.blocks[k]; b.node == node && b.to == from && b.dg == dg && b.dc == dc && b.dm == dm && b.wild == wild {
				b.to = to
				continue
			}
		}
		s.blocks = append(s.blocks, consBlock{node: node, from: from, to: to, dg: dg, dc: dc, dm: dm, wild: wild})
	}
}

// allocIndex returns the index of node's entry in as, or -1 (a loop:
// slices.IndexFunc copies each sim.NodeAlloc into its closure's
// argument).
func allocIndex(as []sim.NodeAlloc, node int32) int {
	for i := range as {
		if as[i].Node == node {
			return i
		}
	}
	return -1
}

// sort4 sorts c ascending (a sorting network: slices.Sort's insertion
// sort costs more for four).
func sort4(c *[4]sim.Time) {
	cas := func(i, j int) {
		if c[i] > c[j] {
			c[i], c[j] = c[j], c[i]
		}
	}
	cas(0, 1)
	cas(2, 3)
	cas(0, 2)
	cas(1, 3)
	cas(1, 2)
}

// plan returns the starts: the queued jobs reserved at now.
func (s *consState) plan() sim.Plan {
	s.starts, s.allocs, s.started = s.starts[:0], s.allocs[:0], s.started[:0]
	recs, now := s.recs, s.now // locals: the loop reloaded the fields at every job
	for _, id := range s.queue {
		r := &recs[id]
		if !r.placed || r.start != now {
			continue
		}
		base := len(s.allocs)
		s.allocs = append(s.allocs, r.alloc...)
		s.starts = append(s.starts, sim.Start{Job: r.job.Ref, Alloc: s.allocs[base:len(s.allocs):len(s.allocs)]})
		s.started = append(s.started, id)
		r.started, r.ahead = true, false
	}
	return sim.Plan{Starts: s.starts}
}

// reservations lists the latest pass's reservations in queue order.
func (s *consState) reservations() []ConservativeReservation {
	if s.resvFor == s.passes {
		return s.resv
	}
	s.finish()
	s.resv = s.resv[:0]
	for _, id := range s.queue {
		if r := &s.recs[id]; r.placed {
			s.resv = append(s.resv, ConservativeReservation{Job: r.job.Ref, Start: r.start})
		}
	}
	s.resvFor = s.passes
	return s.resv
}
