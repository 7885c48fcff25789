package policies

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// EASY is textbook EASY backfilling (Mu'alem and Feitelson, IEEE TPDS
// 12(6), 2001), with multi-resource, per-node fit.
//
// Each pass:
//
//  1. Start queued jobs in queue order while they fit.
//  2. The first job that does not fit (the head) gets a reservation at its
//     shadow time: the earliest time enough resources free up for it. The
//     shadow time is found on a copy of the free state by releasing running
//     jobs (and jobs started in step 1) at their End = start + time limit,
//     never their actual runtime, in End order; after all jobs with one End
//     are released, placement is tried again. The nodes that placement
//     uses at the shadow time are the reserved nodes; what is left free
//     then is the extra.
//  3. Every later queued job starts now if it fits now and does not delay
//     the reservation: either it ends (now + its limit) by the shadow time,
//     or, with it held at the shadow time, the head can still be placed at
//     the shadow time. Jobs started this way count against what is free at
//     the shadow time for the jobs after them.
//
// Only the head gets a reservation, and it is computed only once some
// later job fits now (see AlwaysReserve). If the head could not be placed
// even with every running job released (a node it needs is down, which no
// release brings back) there is no reservation to protect, and every later
// job that fits now starts.
//
// Advance reservations (sim.View.Reservations, maintenance windows) are
// respected throughout: a job starts now only on nodes no window holds
// during [now, now+limit); the head's shadow time is the first release or
// window end at which it fits on nodes no window holds during [shadow,
// shadow+limit).
//
// A pass after only submissions (see quiet) leaves untried the jobs the
// last pass showed cannot start, and keeps the last pass's reservation;
// it decides as a full pass would.
//
// An EASY keeps scratch buffers between passes, and within a run what
// its last pass learned; it must not be used by two runs at once.
type EASY struct {
	Base

	// AlwaysReserve makes every pass compute the blocked head's
	// reservation, so that Reservation reports it, even when no later job
	// fits now and so none could delay it. By default the reservation is
	// computed only when some later job fits now. It changes no decision,
	// only the cost of a pass.
	AlwaysReserve bool

	pass Pass

	// Reservation state of the latest pass.
	tried   bool // the head's reservation was computed (has says whether there is one)
	has     bool
	head    *sim.PendingJob // valid during Schedule only
	headRef sim.JobRef
	hd      Demand
	shadow  workload.Time
	sfree   []sim.NodeState // free state at the shadow time
	res     []sim.NodeAlloc // reserved nodes
	// byCap is set when the head fits at the shadow time exactly when
	// its capacity there holds it (an in-order placer, one partition,
	// plain resources, no windows): the pass then places it only when
	// Reservation asks, on resNodes and sfree as the pass left them,
	// which give the nodes the last placement would have (a refused
	// backfill gives back exactly what it held). lazy says res is not
	// placed yet.
	byCap    bool
	lazy     bool
	headJob  sim.PendingJob
	resNodes []hwmodels.Node
	// contrib[i] is what node i contributes to the head's capacity at the
	// shadow time (see demand.capacity), or -1 when it is not eligible;
	// capSum is the sum over eligible nodes.
	contrib []int32
	capSum  int64
	heap    []release
	noDelay []failedReq // jobs that would delay the reservation (until the next commit)
	spare   []sim.NodeAlloc
	extra   []sim.NodeState
	wends   []workload.Time // ends of advance reservations, ascending
	wfree   []sim.NodeState // scratch: the shadow free state less reserved nodes
	elig    []int32         // see eligible
	// cpuUnits says hd is spread in units of CPUs alone (no GPUs, no
	// memory, no MIG or MPS): see fit.
	cpuUnits bool
	eligKey  eligKey

	// What the last pass left queued after its head, for the next pass
	// (see quiet): keptOK says kept and keptHead hold, next is this
	// pass's kept being built, and lastCommit is len(next) at this pass's
	// latest backfill start. keptRes says the last pass reserved the head
	// (tried and has), and reuse that this pass's reservation is that one,
	// kept in the fields above (quiet).
	keptOK     bool
	inRun      bool // Begin was called: passes are of one run, JobRefs name one job each
	keptRes    bool
	reuse      bool
	keptHead   sim.JobRef
	keptNow    workload.Time
	kept, next []keptJob
	keptRun    []runEnd // the last pass's running jobs
	lastCommit int
	skipped    int // jobs quiet passes did not try, for tests
}

// keptJob is a job a pass left queued after its head, and what a pass
// after only new submissions (quiet) knows of it without trying it.
type keptJob struct {
	ref  sim.JobRef
	kind uint8
}

// runEnd is a running job and its End, as a pass saw it.
type runEnd struct {
	ref sim.JobRef
	end workload.Time
}

// The kinds of a keptJob.
const (
	// keptTry: nothing is known; it is tried.
	keptTry uint8 = iota
	// keptNoFit: it did not fit now, and its request is plain (whole GPUs,
	// CPUs and memory, no --switches): on less free it fits no better.
	keptNoFit
	// keptDelay: it fit now but would have delayed the head, and no job
	// started after it in that pass: with the same free state and
	// reservation it would again.
	keptDelay
)

// release is a job's resources coming free at end: running[idx] of the
// view for idx >= 0, the pass's start -idx-1 otherwise. It holds no
// pointers, so building and sifting the heap is cheap.
type release struct {
	end workload.Time
	ref sim.JobRef
	idx int32
}

var _ sim.Policy = (*EASY)(nil)

// NewEASY returns an EASY policy placing jobs with placer (FirstFit when
// nil).
func NewEASY(placer Placer) *EASY {
	e := &EASY{pass: NewPass(placer, true)}
	e.pass.mirror, e.pass.prune = true, true
	return e
}

// Name returns "easy".
func (*EASY) Name() string { return "easy" }

// Begin implements sim.Policy: the run starts with no kept state, and
// has one pass after every event (OnEvents).
func (e *EASY) Begin(sim.RunInfo) (sim.Timing, error) {
	e.pass.begin()
	e.keptOK, e.inRun = false, true
	return OnEvents(), nil
}

// Reservation is the reservation an EASY pass made for the first job that
// could not start.
type Reservation struct {
	Job sim.JobRef
	// Shadow is when the job will start at the latest, provided no job is
	// queued ahead of it later (a dependency released, a higher priority).
	Shadow sim.Time
	// Alloc is where the job would start at Shadow (the reserved nodes),
	// after the pass's backfilled jobs are accounted for.
	Alloc []sim.NodeAlloc
	// Extra is every node's free resources at Shadow beyond Alloc and the
	// pass's backfilled jobs that are still running then, indexed like the
	// cluster's nodes.
	Extra []sim.NodeState
}

// Reservation returns the reservation the latest Schedule call made, and
// false if it made none: every queued job started, none was queued, or no
// later job fit now (unless AlwaysReserve is set).
// Its slices are reused by the next Schedule call.
func (e *EASY) Reservation() (Reservation, bool) {
	if !e.has {
		return Reservation{}, false
	}
	if e.lazy {
		e.res, _ = e.pass.placer.Place(e.resNodes, e.sfree, &e.headJob, e.res[:0])
		e.lazy = false
	}
	e.extra = append(e.extra[:0], e.sfree...)
	Take(e.extra, e.res)
	return Reservation{Job: e.headRef, Shadow: e.shadow, Alloc: e.res, Extra: e.extra}, true
}

// Schedule implements sim.Policy. The returned Plan's slices are reused by
// the next call.
func (e *EASY) Schedule(_ sim.PassSet, v sim.View, _ *rand.Rand) sim.Plan {
	p := &e.pass
	quiet := e.quiet(v) // before Reset, which syncs the free state
	p.Reset(v)
	e.has = false
	e.tried = false
	e.head = nil
	e.keptOK = false
	e.reuse = quiet && e.keptRes
	pend := v.Pending()
	i := 0
	// 1. In order while they fit; in a quiet pass the head does not fit
	// on less than it did not fit on before.
	for !quiet && i < len(pend) && p.TryStart(&pend[i]) {
		i++
	}
	if i == len(pend) {
		return e.finish()
	}
	// 2. The head's reservation is computed when first needed: when a
	// later job fits now (nothing else could delay the head).
	head, running := &pend[i], v.Running()
	if e.AlwaysReserve {
		e.reserveFor(running, head)
	}
	e.noDelay = e.noDelay[:0]
	var kept []keptJob // what is known of pend[1:] (quiet: the head is pend[0])
	if quiet {
		kept = e.kept
	}
	e.next, e.lastCommit = e.next[:0], 0
	for j := i + 1; j < len(pend); j++ { // 3. backfill
		job := &pend[j]
		kind := keptTry
		if k := j - 1; k < len(kept) {
			kind = kept[k].kind
		}
		if kind == keptDelay && len(p.Starts) == 0 && !e.tried {
			e.reserveFor(running, head) // where trying it would
		}
		switch {
		case kind == keptNoFit, kind == keptDelay && len(p.Starts) == 0 && e.has:
			e.skipped++
		default:
			kind = e.backfill(running, head, job)
		}
		if kind == keptStarted {
			e.lastCommit = len(e.next)
			continue
		}
		e.next = append(e.next, keptJob{ref: job.Ref, kind: kind})
	}
	// A job that would have delayed the head before a later start might
	// not now: it fits elsewhere, or the start moved what the head needs.
	for k := range e.next[:e.lastCommit] {
		if e.next[k].kind == keptDelay {
			e.next[k].kind = keptTry
		}
	}
	e.kept, e.next = e.next, e.kept
	e.keptHead, e.keptNow = head.Ref, p.Now
	e.keptOK = p.Exact && len(p.Windows) == 0 && plainReq(&head.Req)
	e.keptRes = e.tried && e.has
	if e.keptOK {
		e.keptRun = e.keptRun[:0]
		for i := range running {
			e.keptRun = append(e.keptRun, runEnd{ref: running[i].Ref, end: running[i].End})
		}
	}
	return e.finish()
}

// keptStarted is what backfill returns for a job it started.
const keptStarted uint8 = 255

// plainReq reports whether r asks for whole GPUs, CPUs and memory alone,
// with no --switches: a request whose fit an in-order placer decides by
// the free state's capacity, at any time.
func plainReq(r *workload.Request) bool {
	return r.MIGProfile == 0 && r.MPSShare == 0 && r.Switches == 0
}

// quiet reports whether, since the last pass, only jobs were added to the
// queue's end, so that what the last pass left in kept still holds: no
// job ended, the running jobs are the last pass's, with the ends it saw
// (Timing.EndAtLimit moves those that reached theirs), and its starts,
// with the ends it gave them, no node's free state differs from what the
// last pass left, there is no advance reservation, and the queue begins
// with the last pass's head and kept jobs, in order.
//
// Schedule calls outside a run (without Begin, on views made by hand)
// keep nothing from pass to pass: a JobRef names the same job, with the
// same request, only within one run.
//
// Then this pass's free state is the last pass's after its starts, the
// running jobs are the last pass's and its starts, and the head's
// reservation is the one the last pass left: the head fit at no release
// before the shadow time on the last pass's free states, and this pass's
// are those less the backfilled jobs still running then (an in-order
// placer and a plain head fit no better on less); at the shadow time the
// free state is the last pass's after its backfills (the short ones have
// ended). So a keptNoFit job does not fit (less is free), and a
// keptDelay job, tried before this pass starts anything, meets the free
// state and reservation it met when it failed: it fits on the same nodes
// and delays the head again (now is later, so it is no shorter). Neither
// needs trying; the reservation is computed where trying a keptDelay job
// would have, so Reservation reports what a full pass would.
func (e *EASY) quiet(v sim.View) bool {
	p := &e.pass
	if !e.inRun || !e.keptOK || !p.mirrored || len(v.Reservations()) > 0 || v.Now() < e.keptNow {
		return false
	}
	d := v.Delta()
	nodes := v.Nodes()
	if len(d.Ended) > 0 || len(d.Started) != len(p.Starts) || len(nodes) != len(p.own) {
		return false
	}
	for _, n := range d.Nodes {
		if nodes[n] != p.own[n] {
			return false
		}
	}
	// The running jobs are the last pass's, with the same ends (both
	// lists by JobRef), and its starts.
	running := v.Running()
	if len(running) != len(e.keptRun)+len(p.Starts) {
		return false
	}
	k := 0
	for i := range running {
		if k < len(e.keptRun) && e.keptRun[k].ref == running[i].Ref {
			if e.keptRun[k].end != running[i].End {
				return false
			}
			k++
		}
	}
	if k != len(e.keptRun) {
		return false
	}
	for k := range p.Starts {
		ref := p.Starts[k].Job
		if d.Started[k] != ref {
			return false
		}
		r, ok := slices.BinarySearchFunc(running, ref, func(r sim.RunningJob, ref sim.JobRef) int { return cmp.Compare(r.Ref, ref) })
		if !ok || running[r].End != p.ends[k] {
			return false
		}
	}
	pend := v.Pending()
	if len(pend) <= len(e.kept) || pend[0].Ref != e.keptHead {
		return false
	}
	for k := range e.kept {
		if pend[1+k].Ref != e.kept[k].ref {
			return false
		}
	}
	return true
}

// finish ends a pass: it drops references to the view and returns the plan.
func (e *EASY) finish() sim.Plan {
	e.head = nil
	return e.pass.Plan()
}

// reserveFor sets the head's reservation: the last pass's, left in e,
// when that is this pass's (reuse), else computed. It is called before
// the pass's first backfill start, so that with reuse nothing has started
// in this pass (a quiet pass starts no job before the head).
func (e *EASY) reserveFor(running []sim.RunningJob, head *sim.PendingJob) {
	if e.reuse {
		e.tried, e.has, e.head = true, true, head
		return
	}
	e.reserve(running, head)
}

// reserve computes the head's shadow time and reserved nodes.
func (e *EASY) reserve(running []sim.RunningJob, head *sim.PendingJob) bool {
	p := &e.pass
	e.tried = true
	e.head = head
	e.headRef = head.Ref
	e.hd = NewDemand(head)
	e.cpuUnits = e.hd.spread && e.hd.plain() && e.hd.GPUs == 0 && e.hd.MemMB == 0 && e.hd.CPUs > 0
	e.byCap = p.Exact && e.hd.parts == e.hd.part && e.hd.MIG == 0 && e.hd.MPS == 0 && len(p.Windows) == 0
	e.lazy = false
	e.sfree = append(e.sfree[:0], p.Free...)
	e.countCapacity()

	h := e.heap[:0]
	for i := range running {
		h = append(h, release{end: running[i].End, ref: running[i].Ref, idx: int32(i)})
	}
	for k, s := range p.Starts {
		h = append(h, release{end: p.ends[k], ref: s.Job, idx: -int32(k) - 1})
	}
	heapify(h)
	defer func() { e.heap = h[:0] }()
	// The head may start at a release or at the end of an advance
	// reservation, when the window's nodes come back.
	e.wends = e.wends[:0]
	for _, w := range p.Windows {
		if w.End > p.Now {
			e.wends = append(e.wends, w.End)
		}
	}
	slices.Sort(e.wends)
	wi := 0
	for len(h) > 0 || wi < len(e.wends) {
		t := workload.Time(math.MaxInt64)
		if len(h) > 0 {
			t = h[0].end
		}
		if wi < len(e.wends) {
			t = min(t, e.wends[wi])
		}
		for len(h) > 0 && h[0].end == t {
			var r release
			r, h = pop(h)
			if r.idx >= 0 {
				e.give(running[r.idx].Alloc)
			} else {
				e.give(p.Starts[-r.idx-1].Alloc)
			}
		}
		for wi < len(e.wends) && e.wends[wi] <= t {
			wi++
		}
		if e.capSum < int64(e.hd.Count) {
			continue // not enough capacity yet: no placer could succeed
		}
		if e.byCap {
			e.placeLater(head)
			e.shadow = t
			e.has = true
			return true
		}
		var ok bool
		free := p.Usable(&e.wfree, e.sfree, t, head.Limit)
		e.res, ok = p.placer.Place(p.Nodes, free, head, e.res[:0])
		if ok {
			e.shadow = t
			e.has = true
			return true
		}
	}
	return false
}

// countCapacity sets contrib and capSum from sfree (the pass's free
// state) for the head's demand hd. With the pass's free index in step
// with its free state (mirrored and synced), only the nodes the index
// lists as having a unit's GPUs (CPUs) can contribute: every other
// eligible node is short of them and contributes 0, and which nodes are
// eligible is kept per demand's partitions and GPU type (elig).
func (e *EASY) countCapacity() {
	p := &e.pass
	e.capSum = 0
	if per := p.idx.per(&e.hd); p.mirror && p.synced && per > 0 {
		e.contrib = append(e.contrib[:0], e.eligible()...)
		for w, m := range p.idx.candidates(per) {
			for ; m != 0; m &= m - 1 {
				i := w<<6 | bits.TrailingZeros64(m)
				if e.contrib[i] < 0 || e.hd.Short(&e.sfree[i]) {
					continue
				}
				c := e.fit(&e.sfree[i])
				e.contrib[i] = c
				e.capSum += int64(c)
			}
		}
		return
	}
	e.contrib = e.contrib[:0]
	for i := range p.Nodes {
		c := int32(-1)
		if e.hd.eligibleAny(&p.Nodes[i]) {
			c = 0
			if !e.hd.Short(&e.sfree[i]) { // inlined: most nodes, on a busy cluster
				c = e.hd.fitAt(&e.sfree[i])
			}
			e.capSum += int64(c)
		}
		e.contrib = append(e.contrib, c)
	}
}

// fit is hd.fitAt(f) for an f that is not short of a unit: for a demand
// of CPUs alone in units (cpuUnits), the units its free CPUs hold, which
// is what fitUnits computes then, without its other checks.
func (e *EASY) fit(f *sim.NodeState) int32 {
	if e.cpuUnits {
		if e.hd.CPUs == 1 {
			return f.FreeCPUs
		}
		return f.FreeCPUs / e.hd.CPUs
	}
	return e.hd.fitAt(f)
}

// eligible returns, per node of the pass, 0 when the head's demand hd may
// run there in any of its partitions and -1 when not, as countCapacity's
// starting contrib; it is kept while the nodes, partitions and GPU type
// stay the same (a blocked head is reserved for pass after pass).
func (e *EASY) eligible() []int32 {
	p := &e.pass
	k := &e.eligKey
	if len(p.Nodes) > 0 && k.ok && k.nodes == &p.Nodes[0] && k.n == len(p.Nodes) && k.parts == e.hd.parts && k.gpuType == e.hd.gpuType {
		return e.elig
	}
	e.elig = e.elig[:0]
	for i := range p.Nodes {
		c := int32(-1)
		if e.hd.eligibleAny(&p.Nodes[i]) {
			c = 0
		}
		e.elig = append(e.elig, c)
	}
	*k = eligKey{}
	if len(p.Nodes) > 0 {
		*k = eligKey{ok: true, nodes: &p.Nodes[0], n: len(p.Nodes), parts: e.hd.parts, gpuType: e.hd.gpuType}
	}
	return e.elig
}

// eligKey is what EASY.elig was made for.
type eligKey struct {
	ok      bool
	nodes   *hwmodels.Node // the first of the cluster's nodes
	n       int
	parts   uint64
	gpuType string
}

// placeLater marks the reserved nodes as due from head's placement on
// the shadow free state, made when Reservation asks (byCap).
func (e *EASY) placeLater(head *sim.PendingJob) {
	e.lazy = true
	e.headJob = *head
	e.resNodes = e.pass.Nodes
}

// give adds a to the shadow free state.
func (e *EASY) give(a []sim.NodeAlloc) {
	for i := range a {
		e.sfree[a[i].Node].Add(&a[i])
		e.recount(a[i].Node)
	}
}

// hold subtracts a from the shadow free state.
func (e *EASY) hold(a []sim.NodeAlloc) {
	for i := range a {
		e.sfree[a[i].Node].Sub(&a[i])
		e.recount(a[i].Node)
	}
}

func (e *EASY) recount(n int32) {
	if old := e.contrib[n]; old >= 0 {
		var c int32
		if !e.hd.Short(&e.sfree[n]) {
			c = e.fit(&e.sfree[n])
		}
		e.contrib[n] = c
		e.capSum += int64(c) - int64(old)
	}
}

// backfill starts job now if it fits and does not delay the head's
// reservation, computing the reservation first if this is the first job
// that fits. When the head cannot be reserved at all, every job that fits
// starts. It returns keptStarted, or what a quiet next pass may take the
// job to be (keptJob).
func (e *EASY) backfill(running []sim.RunningJob, head, job *sim.PendingJob) uint8 {
	p := &e.pass
	short := e.has && EndAt(p.Now, job.Limit) <= e.shadow
	win := len(p.Windows) > 0
	if e.has && !short {
		for i := range e.noDelay {
			if e.noDelay[i].same(job, win) {
				return e.delayed(job) // an identical job would delay the head, and nothing changed since
			}
		}
	}
	base, ok := p.Stage(job)
	if !ok { // does not fit now
		if plainReq(&job.Req) {
			return keptNoFit
		}
		return keptTry
	}
	if !e.tried {
		e.reserveFor(running, head)
		short = e.has && EndAt(p.Now, job.Limit) <= e.shadow
	}
	if !e.has || short {
		p.Commit(job, base) // nothing to protect, or gone by the shadow time
		e.noDelay = e.noDelay[:0]
		return keptStarted
	}
	a := p.staged(base)
	e.hold(a)
	if e.capSum >= int64(e.hd.Count) && e.byCap {
		e.placeLater(e.head)
		p.Commit(job, base)
		e.noDelay = e.noDelay[:0]
		return keptStarted
	}
	if e.capSum >= int64(e.hd.Count) {
		var res []sim.NodeAlloc
		free := p.Usable(&e.wfree, e.sfree, e.shadow, e.head.Limit)
		if res, ok = p.placer.Place(p.Nodes, free, e.head, e.spare[:0]); ok {
			e.res, e.spare = res, e.res // the reserved nodes may have moved
			p.Commit(job, base)
			e.noDelay = e.noDelay[:0]
			return keptStarted
		}
	}
	e.give(a) // would delay the head: undo
	p.Discard(base)
	if len(e.noDelay) < maxFailed {
		e.noDelay = append(e.noDelay, failed(job))
	}
	return e.delayed(job)
}

// delayed is the keptJob kind of a job that would delay the head: its
// placement must not depend on the pass's time (--switches).
func (e *EASY) delayed(job *sim.PendingJob) uint8 {
	if job.Req.Switches == 0 {
		return keptDelay
	}
	return keptTry
}

// heapify orders h as a binary min-heap by (end, ref).
func heapify(h []release) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(h, i)
	}
}

func pop(h []release) (release, []release) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	down(h, 0)
	return top, h
}

func (r *release) less(s *release) bool {
	return r.end < s.end || r.end == s.end && r.ref < s.ref
}

func down(h []release, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].less(&h[l]) {
			m = r
		}
		if !h[m].less(&h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
