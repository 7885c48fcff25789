package slurm

import (
	"cmp"
	"math"
	"slices"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
)

// This file is the plain reference of the backfill cycle (backfill.c
// _attempt_backfill with cons_tres's _will_run_test): the straightforward
// algorithm, with no memo of outcomes, no skipped cycles, no deferred
// reservations, no incremental mask and no will-run profiles. Every
// record the cycle tests that does not start gets its reservation at
// once, in queue order; every will-run test rebuilds the free state and
// releases the running jobs one by one. Slurm.Reference selects it in
// place of the fast cycle (backfill.go), and the quick-check test
// (TestSlurmBackfillReference) requires both to make the same decisions.

// refRel is a running job (or a start of this pass) as the reference's
// will-run test releases it: ordered and grouped by key (Slurm's
// end_time), expected gone at end (bfRel).
type refRel struct {
	key   sim.Time
	end   sim.Time
	ref   sim.JobRef
	alloc []sim.NodeAlloc
}

// referenceBackfill is one backfill cycle computed plainly; it makes the
// same starts, reasons and reservations as backfill.
func (s *Policy) referenceBackfill(v sim.View, pend []sim.PendingJob) {
	b := &s.bf
	cfg := s.cfg
	p := &s.pass
	now := v.Now()
	var scratch []sim.NodeState // for Usable
	b.res = b.res[:0]
	b.pool = b.pool[:0]
	b.why = b.why[:0]
	var users []int32
	if cfg.bfMaxJobUser > 0 {
		users = make([]int32, len(s.users))
	}
	var parts [64]int
	cgFree, cg := s.completing(v)
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
		if cfg.bfMaxJobUser > 0 && int(users[js.user]) >= cfg.bfMaxJobUser ||
			cfg.bfMaxJobPart > 0 && parts[r.part] >= cfg.bfMaxJobPart {
			continue
		}
		tested++
		if cfg.bfMaxJobUser > 0 {
			users[js.user]++
		}
		parts[r.part]++
		job := s.pendingJob(r)
		if why := s.holdReason(v, &job, js); why != sim.ReasonNone {
			s.bfReason(js, r.ref, why)
			continue
		}
		if w := s.bfPreemptWait(v, r.ref); w != nil {
			// Its preemption is in progress: the main pass starts it,
			// and it holds the nodes it preempted for.
			s.bfReason(js, r.ref, sim.ReasonResources)
			if now-job.Eligible >= cfg.bfMinAgeReserve { // a reservation like any other
				js.sized = true // tested as any job old enough to reserve
				s.preemptRes(&job, w)
			}
			continue
		}
		if cg != nil {
			if alloc, ok := s.refCompleting(&job, cgFree, cg); ok {
				// It would start now on nodes still completing a
				// killed job: it waits for them (see completing).
				s.bfReason(js, r.ref, sim.ReasonResources)
				if now-job.Eligible >= cfg.bfMinAgeReserve {
					s.size(v, &job, js)
					if !s.refReserveOn(&job, now+1, alloc) {
						s.refReserveFrom(v, &job, now+1)
					}
				}
				continue
			}
		}
		// Does it fit now, reservations aside (the windows of advance
		// reservations count)?
		free := p.Usable(&scratch, p.Free, now, job.Limit)
		if _, ok := p.Placer().Place(p.Nodes, free, &job, nil); ok {
			if s.refStartNow(&job) {
				s.markStarted(&job)
				continue
			}
			s.bfReason(js, r.ref, sim.ReasonPriority) // the free nodes are reserved for higher-priority jobs
		} else {
			s.bfReason(js, r.ref, sim.ReasonResources)
		}
		if s.cfg.preempt != preemptNone {
			mask := s.refMask(now, policies.EndAt(now, job.Limit))
			if s.bfTryPreempt(v, &job, js, r, func(x int) bool { return mask[x] }, nil) {
				if now-job.Eligible >= cfg.bfMinAgeReserve {
					s.size(v, &job, js)
					s.preemptRes(&job, s.pre.waits[r.ref])
				}
				continue
			}
		}
		if now-job.Eligible >= cfg.bfMinAgeReserve {
			s.size(v, &job, js)
			if s.cfg.preempt == preemptNone || !s.preemptorReserve(v, &job, js, r) {
				s.refReserve(v, &job)
			}
		}
	}
}

// refMask returns, per node, whether the job may use it over the window
// [lo, last]: no reservation of this cycle meeting the window (hi > lo,
// lo <= last) holds it.
func (s *Policy) refMask(lo, last sim.Time) []bool {
	mask := make([]bool, len(s.cluster.Nodes))
	for i := range mask {
		mask[i] = true
	}
	for _, r := range s.bf.res {
		if r.hi > lo && r.lo <= last {
			for _, n := range r.nodes {
				mask[n] = false
			}
		}
	}
	return mask
}

// refWindows clears mask for the nodes an advance reservation holds at
// any time of [start, start+limit) (exact times).
func (s *Policy) refWindows(mask []bool, start, limit sim.Time) {
	end := policies.EndAt(start, limit)
	for _, w := range s.pass.Windows {
		if w.Start < end && w.End > start {
			for _, n := range w.Nodes {
				mask[n] = false
			}
		}
	}
}

// refStartNow starts job now if it fits on the nodes no reservation holds
// over its window [now, now+limit) and no advance reservation holds during
// it.
func (s *Policy) refStartNow(job *sim.PendingJob) bool {
	p := &s.pass
	now := p.Now
	mask := s.refMask(now, policies.EndAt(now, job.Limit))
	s.refWindows(mask, now, job.Limit)
	free := slices.Clone(p.Free)
	for i := range free {
		if !mask[i] {
			free[i] = sim.NodeState{}
		}
	}
	base, ok := p.StageOn(free, job)
	if !ok {
		return false
	}
	p.Commit(job, base)
	return true
}

// refRels lists the running jobs and the pass's starts by end, then job.
func (s *Policy) refRels(v sim.View) []refRel {
	p := &s.pass
	var rel []refRel
	for _, r := range s.bfRunning(v) {
		if len(s.pre.gone) > 0 && s.gonePreemptable(r.Ref) {
			continue // removed by preemptorReserve
		}
		key := r.End
		if l := s.st[r.Ref].limit; l > 0 {
			key = min(r.End, r.Start+sim.Time(l))
		}
		rel = append(rel, refRel{key: key, end: r.End, ref: r.Ref, alloc: r.Alloc})
	}
	for k, st := range p.Starts {
		rel = append(rel, refRel{key: p.End(k), end: p.End(k), ref: st.Job, alloc: st.Alloc})
	}
	slices.SortFunc(rel, func(x, y refRel) int {
		return cmp.Or(cmp.Compare(x.key, y.key), cmp.Compare(x.ref, y.ref))
	})
	return rel
}

// refReserve finds job's earliest start within bf_window and reserves its
// nodes whole (backfill.c: the TRY_LATER loop and _add_reservation).
func (s *Policy) refReserve(v sim.View, job *sim.PendingJob) {
	s.refReserveFrom(v, job, v.Now())
}

// refReserveFrom is refReserve with the search starting at startRes.
func (s *Policy) refReserveFrom(v sim.View, job *sim.PendingJob, startRes sim.Time) {
	b := &s.bf
	now := v.Now()
	limit := job.Limit
	horizon := policies.EndAt(now, s.cfg.bfWindow)
	rel := s.refRels(v)
	for range 10000 {
		if startRes > horizon {
			return
		}
		mask := s.refMask(startRes, policies.EndAt(startRes, limit))
		s.refWindows(mask, startRes, limit)
		next := s.refNextBound(startRes)
		for _, w := range s.pass.Windows {
			if w.End > startRes {
				next = min(next, w.End) // the window's nodes come back
			}
		}
		if next >= horizon {
			next = math.MaxInt64 // the map ends at the horizon
		}
		t, alloc, ok := s.refWillRun(job, startRes, mask, rel)
		switch {
		case !ok && next == math.MaxInt64:
			return // never, whatever ends
		case !ok || t > next:
			startRes = next // TRY_LATER: some reserved nodes free up then
			continue
		case t > horizon:
			return // beyond bf_window: no reservation
		}
		if s.refClash(t, limit, alloc) {
			startRes = t // the window at t meets another reservation: retry from t
			continue
		}
		off := len(b.pool)
		for _, a := range alloc {
			b.pool = append(b.pool, a.Node)
		}
		lo := s.floorRes(t)
		hi := max(s.floorRes(policies.EndAt(t, limit)), lo+s.cfg.bfResolution)
		b.res = append(b.res, bfRes{job: job.Ref, at: t, lo: lo, hi: hi, nodes: b.pool[off:len(b.pool):len(b.pool)]})
		return
	}
}

// refClash reports whether alloc, a placement at t with limit, uses a
// node an advance reservation holds during [t, t+limit), or one that a
// record of the backfill map holds in the slots [floor(t),
// floor(t+limit)) would meet, as _test_resv_overlap finds it on the map
// itself: the map's records are the intervals between consecutive
// reservation boundaries (and the cycle's start), each holding the nodes
// of the reservations that cover it.
func (s *Policy) refClash(t, limit sim.Time, alloc []sim.NodeAlloc) bool {
	mask := make([]bool, len(s.cluster.Nodes))
	for i := range mask {
		mask[i] = true
	}
	s.refWindows(mask, t, limit)
	for _, a := range alloc {
		if !mask[a.Node] {
			return true
		}
	}
	flo, fhi := s.floorRes(t), s.floorRes(policies.EndAt(t, limit))
	bounds := []sim.Time{s.floorRes(s.pass.Now)}
	for _, r := range s.bf.res {
		bounds = append(bounds, r.lo, r.hi)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	for k := 0; k+1 < len(bounds); k++ {
		begin, end := bounds[k], bounds[k+1]
		if !(end > flo && begin < fhi || fhi <= flo && begin < flo && end > flo) {
			continue
		}
		for _, r := range s.bf.res {
			if r.lo <= begin && r.hi >= end {
				for _, a := range alloc {
					if slices.Contains(r.nodes, a.Node) {
						return true
					}
				}
			}
		}
	}
	return false
}

// refNextBound returns the first start or end of a reservation after t
// (math.MaxInt64: none).
func (s *Policy) refNextBound(t sim.Time) sim.Time {
	next := sim.Time(math.MaxInt64)
	for _, r := range s.bf.res {
		if r.lo > t {
			next = min(next, r.lo)
		}
		if r.hi > t {
			next = min(next, r.hi)
		}
	}
	return next
}

// refWillRun is cons_tres's will-run test on the nodes of mask
// (cons_common job_test.c _will_run_test): the earliest time >= startRes
// at which job fits, now or as the running jobs (and the pass's starts)
// are released in end_time order, in groups: the first job on the
// test's nodes sets the grid end, its end_time rounded up to the next
// 30 s boundary (will_run_phase + k·30, a boundary moving a full 30 s);
// a job on none of the nodes is skipped; after each job released the
// group ends when the job after it in the list ends after the grid end
// plus the window (30 s, then doubled, or grown by bf_window_linear,
// until it reaches that job); a job fitting after a group starts at the
// latest end of the jobs released. It returns the placement too.
func (s *Policy) refWillRun(job *sim.PendingJob, startRes sim.Time, mask []bool, rel []refRel) (sim.Time, []sim.NodeAlloc, bool) {
	p := &s.pass
	d := policies.NewDemand(job)
	use := make([]bool, len(p.Nodes))
	free := make([]sim.NodeState, len(p.Nodes))
	for i := range p.Nodes {
		if mask[i] && d.Eligible(&p.Nodes[i]) {
			use[i] = true
			free[i] = p.Free[i]
		}
	}
	if alloc, ok := s.placeOn(job, free); ok {
		return startRes, alloc, true
	}
	usable := func(r *refRel) bool {
		for _, a := range r.alloc {
			if use[a.Node] {
				return true
			}
		}
		return false
	}
	var grid, start sim.Time
	haveGrid := false
	window := sim.Time(30)
	for i := 0; i < len(rel); {
		released := false
		for i < len(rel) {
			r := &rel[i]
			i++
			if !usable(r) {
				continue // the job has no usable nodes
			}
			if !haveGrid {
				delta := ((r.key-s.cfg.willRunPhase)%30 + 30) % 30
				grid, haveGrid = r.key+30-delta, true
			}
			for _, a := range r.alloc {
				if use[a.Node] {
					free[a.Node].Add(&a)
				}
			}
			start = max(start, r.end)
			released = true
			if i < len(rel) && rel[i].key > grid+window {
				break
			}
		}
		if !released {
			break
		}
		if alloc, ok := s.placeOn(job, free); ok {
			return max(startRes, start), alloc, true
		}
		for i < len(rel) {
			if s.cfg.bfWindowLinear > 0 {
				window += s.cfg.bfWindowLinear
			} else {
				window *= 2
			}
			if rel[i].key <= grid+window {
				break
			}
		}
	}
	return 0, nil, false
}

// placeOn places job on free as a reservation is placed: with the pass's
// placer, or with bf_busy_nodes on the nodes busy now first (then the idle
// ones), each in cluster order.
func (s *Policy) placeOn(job *sim.PendingJob, free []sim.NodeState) ([]sim.NodeAlloc, bool) {
	p := &s.pass
	if !s.cfg.bfBusyNodes {
		return p.Placer().Place(p.Nodes, free, job, nil)
	}
	var order []int32
	for pass := range 2 {
		for i := range p.Nodes {
			busy := p.Free[i] != sim.Capacity(&p.Nodes[i])
			if busy == (pass == 0) {
				order = append(order, int32(i))
			}
		}
	}
	d := policies.NewDemand(job)
	need := d.Count
	var alloc []sim.NodeAlloc
	for _, i := range order {
		if !d.Eligible(&p.Nodes[i]) {
			continue
		}
		k := min(d.Fit(free[i]), need)
		if k == 0 {
			continue
		}
		alloc = append(alloc, d.Alloc(i, k))
		if need -= k; need == 0 {
			return alloc, true
		}
	}
	return nil, false
}

// completing returns, when some running job has been killed at its time
// limit (sim.RunningJob.Killed), the free state with what those jobs still
// hold added, and which nodes they hold; nil, nil when none has.
//
// Slurm frees a killed job's resources in the select plugin at the kill
// (deallocate_nodes → select_g_job_fini) and has its nodes completing
// (cg_node_bitmap) until their epilog is done, which schedsim models as
// the batch host held for KillWait (sim/kill.go). So the backfill cycle's
// will-run test (_try_sched) sees those nodes free, and when the
// placement it finds for now uses one, _attempt_backfill plans the job at
// now + 1 ("Need to wait for in-progress completion/epilog") and reserves
// the nodes instead of starting it; select_nodes never starts a job on a
// completing node. On Slurm 22.05 (conformance/records/gen-95/run1) the
// sweep killed G02 (gn1) and G03 (gn[2-4]) at 118.016; the cycle at
// 118.612 planned G05 (8 GPUs) on gn1, the lowest free node, started five
// small jobs on gn3 and gn4 in front of the 4-node G06 reserved behind
// it, and the main scheduler started G05 on gn1 at 121.844. The fast
// cycle (backfill) tests each record the same way, after the
// reservations of the records before it, and skips no cycle while a
// killed job runs (skipBackfill).
func (s *Policy) completing(v sim.View) ([]sim.NodeState, []bool) {
	if s.pre.killWait <= 0 {
		return nil, nil // a killed job frees everything at once
	}
	var free []sim.NodeState
	var cg []bool
	for _, r := range s.bfRunning(v) {
		if !r.Killed {
			continue
		}
		if free == nil {
			free = slices.Clone(s.pass.Free)
			cg = make([]bool, len(free))
		}
		for _, a := range r.Alloc {
			free[a.Node].Add(&a)
			cg[a.Node] = true
		}
	}
	return free, cg
}

// refCompleting is completing's test: job's will-run placement now on
// cgFree (the free state with the killed jobs' resources free) on the
// nodes no reservation holds over [now, now+limit] and no advance
// reservation holds during it; ok when it uses a node of cg.
func (s *Policy) refCompleting(job *sim.PendingJob, cgFree []sim.NodeState, cg []bool) ([]sim.NodeAlloc, bool) {
	p := &s.pass
	mask := s.refMask(p.Now, policies.EndAt(p.Now, job.Limit))
	s.refWindows(mask, p.Now, job.Limit)
	alloc, _, uses := s.completingPlace(job, cgFree, cg, func(i int) bool { return mask[i] })
	return alloc, uses
}

// completingPlace is completing's test on the nodes in reports in the
// mask of [now, now+limit] (all, with in nil): job's placement on cgFree
// there, and whether it uses a node of cg (for the reference and the
// fast cycle).
func (s *Policy) completingPlace(job *sim.PendingJob, cgFree []sim.NodeState, cg []bool, in func(int) bool) (alloc []sim.NodeAlloc, fits, uses bool) {
	p := &s.pass
	b := &s.bf
	d := policies.NewDemand(job)
	free := append(b.cgWork[:0], make([]sim.NodeState, len(p.Nodes))...)
	b.cgWork = free
	for i := range p.Nodes {
		if (in == nil || in(i)) && d.Eligible(&p.Nodes[i]) {
			free[i] = cgFree[i]
		}
	}
	alloc, ok := s.placeOn(job, free)
	if !ok {
		return nil, false, false
	}
	for _, a := range alloc {
		if cg[a.Node] {
			return alloc, true, true
		}
	}
	return alloc, true, false
}

// refReserveOn reserves alloc's nodes for job from t, unless that meets
// another reservation (refClash) or lies beyond bf_window.
func (s *Policy) refReserveOn(job *sim.PendingJob, t sim.Time, alloc []sim.NodeAlloc) bool {
	b := &s.bf
	if t > policies.EndAt(s.pass.Now, s.cfg.bfWindow) || s.refClash(t, job.Limit, alloc) {
		return false
	}
	off := len(b.pool)
	for _, a := range alloc {
		b.pool = append(b.pool, a.Node)
	}
	lo, hi := s.resvSpan(t, job.Limit)
	b.res = append(b.res, bfRes{job: job.Ref, at: t, lo: lo, hi: hi, nodes: b.pool[off:len(b.pool):len(b.pool)]})
	return true
}
