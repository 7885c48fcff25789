package policies

import (
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// maxFailed bounds the per-pass memory of failed demands, so a queue of
// many distinct shapes does not make every lookup slow.
const maxFailed = 64

// Pass is the scratch state of one scheduling Pass, kept in the policy
// between passes so that a Pass allocates nothing once buffers have grown.
type Pass struct {
	placer Placer
	// Exact is set when the placer succeeds exactly when the capacity is
	// there (Placer.InOrder), so a refusal needs no capacity count to be known
	// as one.
	Exact bool
	// remember enables the memory of failures; a policy that stops at the
	// first failure has no use for it.
	remember bool
	Nodes    []hwmodels.Node
	Now      workload.Time
	// Windows are the advance reservations (maintenance Windows) that have
	// not ended, from the view; no job may use a window's nodes over an
	// interval that overlaps it. Valid during a pass only.
	Windows []sim.AdvanceReservation
	mfree   []sim.NodeState // scratch for usable

	// Free is the Free state after the starts staged so far. Until the
	// first start it aliases the view's slice (read only); the first
	// commit copies it into own. With mirror set, own is instead kept
	// equal to the view between passes (synced) from the nodes the view's
	// Delta lists, with idx over it, and Free is own: a pass then costs
	// the nodes that changed, not a copy of every node.
	Free     []sim.NodeState
	own      []sim.NodeState
	mirror   bool
	synced   bool
	mirrored bool // own and idx mirror the view as of the last pass; begin clears it
	idx      freeIndex
	// blocked lists the nodes Block emptied this pass (isBlocked marks
	// them), for Rebase to give back.
	blocked   []int32
	isBlocked []bool
	// clog lists the nodes of the mirrored Free each change touched, in
	// order (FreeChanged); marks below clogBase are no longer kept.
	clog     []int32
	clogBase FreeMark

	// lastD is newDemand(&lastJob), which depends on its Part, Parts and
	// Req alone (demandOf).
	lastJob sim.PendingJob
	lastD   Demand
	lastOK  bool

	Starts []sim.Start
	ends   []workload.Time // now + limit of each start
	allocs []sim.NodeAlloc // backing store of starts' Alloc

	// noCap holds demands that failed for lack of capacity in free this
	// pass. free only shrinks during a pass, so any harder demand fails
	// too. noPlace holds exact requests the placer refused although the
	// capacity was there; they are valid only until the next commit.
	noCap    []Demand
	noCapLim []workload.Time // the limit of each noCap entry's job
	noPlace  []failedReq
	// prune keeps noCap free of entries that a later failure covers
	// (dropCovered); EASY sets it.
	prune bool
}

// failedReq is a request that could not be placed. limit matters only
// while advance reservations exist (a shorter job may fit before a
// window where a longer one does not).
type failedReq struct {
	part  int32
	req   workload.Request
	parts uint64
	limit workload.Time
	elig  workload.Time // switchKey
}

// same reports whether job is the request f, for a pass with windows or
// without.
func (f *failedReq) same(job *sim.PendingJob, windows bool) bool {
	return f.part == job.Part && f.req == job.Req && f.parts == job.Parts && (!windows || f.limit == job.Limit) && f.elig == SwitchKey(job)
}

func failed(job *sim.PendingJob) failedReq {
	return failedReq{part: job.Part, req: job.Req, parts: job.Parts, limit: job.Limit, elig: SwitchKey(job)}
}

// SwitchKey is what a placement depends on besides the request, the
// partitions and the pass: for a --switches job its eligible time (at one
// pass time, whether its leaf limit still holds: TopologyTree), else 0.
func SwitchKey(job *sim.PendingJob) workload.Time {
	if job.Req.Switches == 0 {
		return 0
	}
	return job.Eligible
}

// begin starts a run: own and idx are rebuilt at the first pass, since
// the index's bounds come from the cluster.
func (p *Pass) begin() { p.mirrored = false }

func (p *Pass) Reset(v sim.View) {
	p.Nodes = v.Cluster().Nodes
	p.Now = v.Now()
	p.Windows = v.Reservations()
	p.Free = v.Nodes()
	p.synced = false
	if p.mirror {
		p.sync(p.Free, v.Delta().Nodes)
		// Nodes the last pass blocked and never gave back are the view's
		// again.
		if len(p.blocked) > 0 {
			p.sync(p.Free, p.blocked)
			for _, n := range p.blocked {
				p.isBlocked[n] = false
			}
		}
		p.Free, p.synced = p.own, true
	}
	p.mirrored = p.synced
	p.Starts = p.Starts[:0]
	p.ends = p.ends[:0]
	p.allocs = p.allocs[:0]
	p.noCap = p.noCap[:0]
	p.noCapLim = p.noCapLim[:0]
	p.noPlace = p.noPlace[:0]
	p.blocked = p.blocked[:0]
}

// sync brings own and idx up to view, which differs from the last view
// synced only at the nodes listed in changed.
func (p *Pass) sync(view []sim.NodeState, changed []int32) {
	if !p.mirrored || len(p.own) != len(view) {
		p.own = append(p.own[:0], view...)
		p.idx.reset(p.Nodes, p.own)
		p.forgetChanges()
		return
	}
	p.logChanges(changed...)
	for _, n := range changed {
		// A node the pass's own starts changed is as Commit left it: its
		// key is the same, and update would do nothing.
		if old, now := p.idx.key(&p.own[n]), p.idx.key(&view[n]); old != now {
			p.idx.update(n, old, now)
		}
		p.own[n] = view[n]
	}
}

// Usable returns free with the nodes zeroed that an advance reservation
// holds at any time of [start, start+limit), so that a placement on it
// uses no node a job starting at start with that limit may not run on
// (sim.AdvanceReservation). Without such a window it returns free itself;
// otherwise a copy in *scratch, valid until the next call with it.
func (p *Pass) Usable(scratch *[]sim.NodeState, free []sim.NodeState, start, limit workload.Time) []sim.NodeState {
	end := EndAt(start, limit)
	var out []sim.NodeState
	for i := range p.Windows {
		w := &p.Windows[i]
		if w.Start >= end || w.End <= start {
			continue
		}
		if out == nil {
			out = append((*scratch)[:0], free...)
			*scratch = out
		}
		for _, n := range w.Nodes {
			out[n] = sim.NodeState{}
		}
	}
	if out == nil {
		return free
	}
	return out
}

// known reports whether job is already known not to fit free.
func (p *Pass) known(job *sim.PendingJob, d *Demand) bool {
	// With windows, a longer job is blocked by at least the windows that
	// blocked a shorter one, so failures carry over only to longer jobs.
	win := len(p.Windows) > 0
	for i := range p.noCap {
		if d.harder(&p.noCap[i]) && (!win || job.Limit >= p.noCapLim[i]) {
			return true
		}
	}
	for i := range p.noPlace {
		if p.noPlace[i].same(job, win) {
			return true
		}
	}
	return false
}

// Stage asks the placer for job's allocation on free and appends it to
// p.allocs, returning where it begins; ok is false (and nothing staged)
// when it does not fit.
func (p *Pass) Stage(job *sim.PendingJob) (base int, ok bool) {
	d := p.demandOf(job)
	if p.known(job, &d) {
		return 0, false
	}
	base = len(p.allocs)
	free := p.Usable(&p.mfree, p.Free, p.Now, job.Limit)
	if p.synced && p.Exact && p.idx.per(&d) > 0 {
		// FirstFit on the nodes idx says have the GPUs (CPUs): free is
		// own, or a copy with nodes zeroed, so idx over own lists a
		// superset.
		p.allocs, ok = p.firstFitIndexed(free, d, p.allocs)
	} else {
		p.allocs, ok = p.placer.Place(p.Nodes, free, job, p.allocs)
	}
	if ok {
		return base, true
	}
	p.allocs = p.allocs[:base]
	if !p.remember {
		return 0, false
	}
	if p.Exact || d.capacity(p.Nodes, free) < int64(d.Count) {
		if p.prune {
			p.dropCovered(&d, job.Limit)
		}
		if len(p.noCap) < maxFailed {
			p.noCap = append(p.noCap, d)
			p.noCapLim = append(p.noCapLim, job.Limit)
		}
	} else if len(p.noPlace) < maxFailed {
		p.noPlace = append(p.noPlace, failed(job))
	}
	return 0, false
}

// dropCovered removes the noCap entries that a failure of d (of a job
// with limit lim) makes redundant: every job known to fail by such an
// entry is harder than d, and no shorter (with windows), so known finds
// it by d's entry (harder is transitive). known answers as before, with
// fewer entries to scan; and as an entry only spares trying a job that
// would fail, no choice of entries could change a decision.
func (p *Pass) dropCovered(d *Demand, lim workload.Time) {
	win := len(p.Windows) > 0
	k := 0
	for i := range p.noCap {
		if p.noCap[i].harder(d) && (!win || p.noCapLim[i] >= lim) {
			continue
		}
		p.noCap[k], p.noCapLim[k] = p.noCap[i], p.noCapLim[i]
		k++
	}
	p.noCap, p.noCapLim = p.noCap[:k], p.noCapLim[:k]
}

// firstFitIndexed is FirstFit.Place of d on free, visiting only the nodes
// idx lists.
func (p *Pass) firstFitIndexed(free []sim.NodeState, d Demand, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	cand := p.idx.candidates(p.idx.per(&d))
	if p.idx.lacks(&d, cand) {
		return out, false
	}
	out, ok := firstFitOn(p.Nodes, free, cand, &d, out)
	for m := d.parts &^ d.part; !ok && m != 0; m &= m - 1 {
		d.part = m & -m // the next partition, lowest index first
		out, ok = firstFitOn(p.Nodes, free, cand, &d, out)
	}
	return out, ok
}

// demandOf returns newDemand(job), remembering the last one: a blocked
// head is retried every pass.
func (p *Pass) demandOf(job *sim.PendingJob) Demand {
	if m := &p.lastJob; !p.lastOK || m.Part != job.Part || m.Parts != job.Parts || m.Req != job.Req {
		p.lastJob, p.lastD, p.lastOK = *job, NewDemand(job), true
	}
	return p.lastD
}

// staged returns the allocation staged at base.
func (p *Pass) staged(base int) []sim.NodeAlloc {
	return p.allocs[base:len(p.allocs):len(p.allocs)]
}

// StageOn asks the placer for job's allocation on free as given (no
// windows applied, no memory of failures), like Stage otherwise.
func (p *Pass) StageOn(free []sim.NodeState, job *sim.PendingJob) (base int, ok bool) {
	base = len(p.allocs)
	p.allocs, ok = p.placer.Place(p.Nodes, free, job, p.allocs)
	if !ok {
		p.allocs = p.allocs[:base]
	}
	return base, ok
}

// Placer returns the placer the pass places with.
func (p *Pass) Placer() Placer { return p.placer }

// End returns when start k of the pass ends at its limit.
func (p *Pass) End(k int) workload.Time { return p.ends[k] }

// OwnFree makes Free a private copy, so that a policy may change it.
func (p *Pass) OwnFree() {
	p.own = append(p.own[:0], p.Free...)
	p.Free = p.own
}

// Rebase makes Free a private copy of nodes less the pass's starts and
// forgets the failures, which nodes may no longer explain. A mirrored
// Free (Mirror), which differs from nodes less the starts only at the
// nodes Block emptied, gets those back.
func (p *Pass) Rebase(nodes []sim.NodeState) {
	if p.synced {
		p.unblock(nodes)
	} else {
		p.own = append(p.own[:0], nodes...)
		p.Free = p.own
		for _, st := range p.Starts {
			Take(p.Free, st.Alloc)
		}
	}
	p.noCap = p.noCap[:0]
	p.noCapLim = p.noCapLim[:0]
	p.noPlace = p.noPlace[:0]
}

// Discard drops the allocation staged at base.
func (p *Pass) Discard(base int) { p.allocs = p.allocs[:base] }

// Commit turns the allocation staged at base into a start of job.
func (p *Pass) Commit(job *sim.PendingJob, base int) {
	a := p.staged(base)
	if p.synced {
		for i := range a {
			f := &p.Free[a[i].Node]
			old := p.idx.key(f)
			f.Sub(&a[i])
			p.idx.update(a[i].Node, old, p.idx.key(f))
			p.logChanges(a[i].Node)
		}
	} else {
		if len(p.Starts) == 0 {
			p.own = append(p.own[:0], p.Free...)
			p.Free = p.own
		}
		Take(p.Free, a)
	}
	p.Starts = append(p.Starts, sim.Start{Job: job.Ref, Alloc: a})
	p.ends = append(p.ends, EndAt(p.Now, job.Limit))
	p.noPlace = p.noPlace[:0]
}

// TryStart starts job now if it fits.
func (p *Pass) TryStart(job *sim.PendingJob) bool {
	base, ok := p.Stage(job)
	if ok {
		p.Commit(job, base)
	}
	return ok
}

// Plan returns the pass's Plan and drops the references to the view.
func (p *Pass) Plan() sim.Plan {
	p.Free = nil
	p.Nodes = nil
	p.Windows = nil
	return sim.Plan{Starts: p.Starts}
}

// NewPass returns the scratch state of a policy placing with placer
// (FirstFit when nil).
func NewPass(placer Placer, remember bool) Pass {
	if placer == nil {
		placer = FirstFit{}
	}
	return Pass{placer: placer, Exact: placer.InOrder(), remember: remember}
}

// Mirror makes the passes of a run keep Free as a copy of the view that
// follows its Delta, with an index over it, instead of copying every node
// each pass (see Free). A policy that empties a node's free state itself
// then does it by Block; it takes effect from the run's next pass.
func (p *Pass) Mirror(on bool) {
	p.mirror = on
	p.mirrored = false
}

// Mirrored reports whether Free is the mirrored copy this pass (Mirror),
// already private: OwnFree is then not needed.
func (p *Pass) Mirrored() bool { return p.synced }

// Block empties node n's free state for the rest of the pass, or until
// Rebase gives it back.
func (p *Pass) Block(n int32) {
	f := &p.Free[n]
	if !p.synced {
		*f = sim.NodeState{}
		return
	}
	if len(p.isBlocked) != len(p.Free) {
		p.isBlocked = make([]bool, len(p.Free))
	}
	old := p.idx.key(f)
	*f = sim.NodeState{}
	p.idx.update(n, old, p.idx.key(f))
	p.logChanges(n)
	if !p.isBlocked[n] {
		p.isBlocked[n] = true
		p.blocked = append(p.blocked, n)
	}
}

// unblock gives the nodes Block emptied back to the mirrored Free: each
// as nodes has it, less the pass's starts on it.
func (p *Pass) unblock(nodes []sim.NodeState) {
	if len(p.blocked) == 0 {
		return
	}
	p.logChanges(p.blocked...)
	for _, n := range p.blocked {
		p.Free[n] = nodes[n]
	}
	for _, st := range p.Starts {
		for i := range st.Alloc {
			if a := &st.Alloc[i]; p.isBlocked[a.Node] {
				p.Free[a.Node].Sub(a)
			}
		}
	}
	empty := p.idx.key(&sim.NodeState{})
	for _, n := range p.blocked {
		p.isBlocked[n] = false
		if k := p.idx.key(&p.Free[n]); k != empty {
			p.idx.update(n, empty, k)
		}
	}
	p.blocked = p.blocked[:0]
}

// FreeMark is a point in the changes of a mirrored Free (FreeChanged).
type FreeMark uint64

// maxChangeLog bounds the changes kept, in nodes per node of the cluster
// (and at least 1,024): a mark older than that is answered "not known".
const maxChangeLog = 8

// FreeMark returns the point Free's changes have reached.
func (p *Pass) FreeMark() FreeMark { return p.clogBase + FreeMark(len(p.clog)) }

// FreeChanged returns the nodes whose Free may have changed since mark m,
// each once or more, with true; false when that is not known: Free is
// not mirrored (Mirror), or the changes since m are no longer kept. Free
// at the other nodes is as it was at m. The zero mark is never known.
func (p *Pass) FreeChanged(m FreeMark) ([]int32, bool) {
	if !p.synced || m < p.clogBase || m > p.FreeMark() {
		return nil, false
	}
	return p.clog[m-p.clogBase:], true
}

// logChanges notes that Free may have changed at nodes.
func (p *Pass) logChanges(nodes ...int32) {
	if len(p.clog)+len(nodes) > max(maxChangeLog*len(p.own), 1024) {
		p.forgetChanges()
	}
	p.clog = append(p.clog, nodes...)
}

// forgetChanges drops the changes kept: every mark taken before is no
// longer known.
func (p *Pass) forgetChanges() {
	p.clogBase += FreeMark(len(p.clog)) + 1
	p.clog = p.clog[:0]
}
