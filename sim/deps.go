package sim

import (
	"slices"

	"github.com/schedsim/schedsim/workload"
)

// A submitted job passes gates before it becomes eligible (enters the
// View's pending list): its dependencies, then its singleton turn, then its
// array's %N throttle. A requeued job, whose dependencies were met before
// its first run, passes only the throttle when its begin-time hold ends.
// While it waits at a gate the job is stWaiting and its reason (Dependency,
// DependencyNeverSatisfied, JobArrayTaskLimit, BeginTime) is recorded.

// lifecycle is the gates' state. It is nil when the trace uses none of
// dependencies, singletons or throttled arrays, and each part is nil when
// the trace does not use it, so runs without them pay nothing.
type lifecycle struct {
	// Dependencies. A target is what one dependency names: the trace job
	// with that ID and, for an array's job id, every task of the array.
	names    map[string]int32 // target name → index
	targets  []depTarget
	waiters  [][]depEdge        // per target: children waiting on it
	memberOf map[JobRef][]int32 // the targets a job is part of
	need     []int32            // per job: dependencies not yet satisfied
	never    []bool             // per job: a dependency can never be satisfied
	unknown  int                // dependencies naming no job of the trace, or the job itself

	// Singleton: jobs of one (user, name) form a group.
	group      []int32 // per job: 1 + its group's index, 0 for none
	groups     []sgroup
	singleWait []bool // per job: waiting for its singleton turn

	// Array throttles.
	array  []int32 // per job: 1 + its throttled array's index, 0 for none
	arrays []arrayState
}

// depTarget counts how far a target's members have got.
type depTarget struct {
	n     int32 // members
	begun int32 // members that started, or ended without starting
	ended int32 // members that ended for good
	ok    int32 // members that ended COMPLETED
}

type depEdge struct {
	child JobRef
	typ   workload.DepType
}

// sgroup is one (user, name) pair that some job has a singleton
// dependency on.
type sgroup struct {
	live    []JobRef // submitted and not ended, ascending (submit order)
	running int32
}

// arrayState is one throttled array: active counts its tasks that are
// eligible or running.
type arrayState struct {
	limit, active int32
	waiting       []JobRef // ascending
}

type depResult uint8

const (
	depWait depResult = iota
	depMet
	depNever
)

// newLifecycle scans the trace for the features that need gates and
// returns nil when it uses none.
func newLifecycle(t *workload.Trace) *lifecycle {
	lc := &lifecycle{}
	singles := map[string]int32{}
	throttled := map[string]int32{}
	for _, j := range t.All() {
		for _, d := range j.Deps {
			if d.Type == workload.DepSingleton {
				k := singleKey(j)
				if _, ok := singles[k]; !ok {
					singles[k] = int32(len(singles))
				}
				continue
			}
			if lc.names == nil {
				lc.names = map[string]int32{}
			}
			if _, ok := lc.names[d.JobID]; !ok {
				lc.names[d.JobID] = int32(len(lc.names))
			}
		}
		if j.ArrayThrottle > 0 && j.ArrayJobID != "" {
			if _, ok := throttled[j.ArrayJobID]; !ok {
				throttled[j.ArrayJobID] = int32(len(throttled))
			}
		}
	}
	if lc.names == nil && len(singles) == 0 && len(throttled) == 0 {
		return nil
	}
	n := t.Len()
	if lc.names != nil {
		lc.targets = make([]depTarget, len(lc.names))
		lc.waiters = make([][]depEdge, len(lc.names))
		lc.memberOf = map[JobRef][]int32{}
		lc.need = make([]int32, n)
		lc.never = make([]bool, n)
		for i, j := range t.All() {
			if t, ok := lc.names[j.ID]; ok {
				lc.memberOf[JobRef(i)] = append(lc.memberOf[JobRef(i)], t)
				lc.targets[t].n++
			}
			if j.ArrayJobID != "" && j.ArrayJobID != j.ID {
				if t, ok := lc.names[j.ArrayJobID]; ok {
					lc.memberOf[JobRef(i)] = append(lc.memberOf[JobRef(i)], t)
					lc.targets[t].n++
				}
			}
		}
	}
	if len(singles) > 0 {
		lc.group = make([]int32, n)
		lc.groups = make([]sgroup, len(singles))
		lc.singleWait = make([]bool, n)
		for i, j := range t.All() {
			if g, ok := singles[singleKey(j)]; ok {
				lc.group[i] = g + 1
			}
		}
	}
	if len(throttled) > 0 {
		lc.array = make([]int32, n)
		lc.arrays = make([]arrayState, len(throttled))
		for i, j := range t.All() {
			if a, ok := throttled[j.ArrayJobID]; ok && j.ArrayJobID != "" {
				lc.array[i] = a + 1
				lc.arrays[a].limit = max(lc.arrays[a].limit, j.ArrayThrottle)
			}
		}
	}
	return lc
}

func singleKey(j *workload.Job) string { return j.User + "\x00" + j.Name }

func hasSingleton(j *workload.Job) bool {
	for _, d := range j.Deps {
		if d.Type == workload.DepSingleton {
			return true
		}
	}
	return false
}

func insertRef(s []JobRef, ref JobRef) []JobRef {
	i, _ := slices.BinarySearch(s, ref)
	return slices.Insert(s, i, ref)
}

func removeRef(s []JobRef, ref JobRef) []JobRef {
	if i, ok := slices.BinarySearch(s, ref); ok {
		return slices.Delete(s, i, i+1)
	}
	return s
}

// joinGroup makes a newly submitted job (eligible or held) a live member of
// its singleton group.
func (c *controller) joinGroup(ref JobRef) {
	if lc := c.lc; lc != nil && lc.group != nil && lc.group[ref] > 0 {
		g := &lc.groups[lc.group[ref]-1]
		g.live = insertRef(g.live, ref)
	}
}

// enter runs a newly submitted job through its gates.
func (c *controller) enter(ref JobRef) {
	lc := c.lc
	if lc == nil {
		c.makeEligible(ref)
		return
	}
	c.status[ref] = stWaiting
	j := c.js.at(ref)
	if lc.names != nil && len(j.Deps) > 0 {
		for _, d := range j.Deps {
			if d.Type == workload.DepSingleton {
				continue
			}
			t := lc.names[d.JobID]
			if lc.targets[t].n == 0 || slices.Contains(lc.memberOf[ref], t) {
				lc.unknown++ // names no job of the trace, or the job itself
				continue
			}
			switch c.depState(t, d.Type) {
			case depMet:
			case depNever:
				lc.never[ref] = true
			default:
				lc.need[ref]++
				lc.waiters[t] = append(lc.waiters[t], depEdge{ref, d.Type})
			}
		}
		if lc.never[ref] {
			c.neverSatisfied(ref)
			return
		}
		if lc.need[ref] > 0 {
			c.recordReason(ref, ReasonDependency)
			return
		}
	}
	c.afterDeps(ref)
}

// afterDeps passes a job whose dependencies are met through its singleton
// gate. As in Slurm (_find_singleton_job), a singleton job waits while any
// other job of its user and name runs, or any earlier-submitted one is
// still queued; once its turn comes it keeps it.
func (c *controller) afterDeps(ref JobRef) {
	lc := c.lc
	if lc.group != nil && lc.group[ref] > 0 && hasSingleton(c.js.at(ref)) {
		g := &lc.groups[lc.group[ref]-1]
		if g.running > 0 || g.live[0] != ref {
			lc.singleWait[ref] = true
			c.recordReason(ref, ReasonDependency)
			return
		}
	}
	c.admit(ref)
}

// admit passes a job through its array's throttle and makes it eligible,
// or queues it behind the throttle.
func (c *controller) admit(ref JobRef) {
	if lc := c.lc; lc != nil && lc.array != nil && lc.array[ref] > 0 {
		a := &lc.arrays[lc.array[ref]-1]
		if a.active >= a.limit {
			c.status[ref] = stWaiting
			a.waiting = insertRef(a.waiting, ref)
			c.recordReason(ref, ReasonJobArrayTaskLimit)
			return
		}
		a.active++
	}
	c.makeEligible(ref)
}

// depState evaluates one dependency of type typ on target t. A dependency
// on an array waits for every task: after = all started (or ended
// unstarted), afterany = all ended, afterok = all ended COMPLETED (never
// once one ended otherwise), afternotok = all ended and not all COMPLETED.
// COMPLETED is the only OK state: TIMEOUT, NODE_FAIL, PREEMPTED, CANCELLED
// and rejected jobs are not OK.
func (c *controller) depState(t int32, typ workload.DepType) depResult {
	tg := &c.lc.targets[t]
	switch typ {
	case workload.DepAfter:
		if tg.begun == tg.n {
			return depMet
		}
	case workload.DepAfterOK:
		if tg.ended > tg.ok {
			return depNever
		}
		if tg.ok == tg.n {
			return depMet
		}
	case workload.DepAfterNotOK:
		if tg.ended == tg.n {
			if tg.ok == tg.n {
				return depNever
			}
			return depMet
		}
	default: // afterany, Slurm's default type
		if tg.ended == tg.n {
			return depMet
		}
	}
	return depWait
}

// notify re-evaluates the children waiting on target t after its counts
// changed.
func (c *controller) notify(t int32) {
	lc := c.lc
	for {
		edges := lc.waiters[t]
		if len(edges) == 0 {
			return
		}
		lc.waiters[t] = nil
		before := lc.targets[t]
		keep := edges[:0]
		for _, e := range edges {
			if c.status[e.child] != stWaiting || lc.never[e.child] {
				continue
			}
			switch c.depState(t, e.typ) {
			case depWait:
				keep = append(keep, e)
			case depMet:
				if lc.need[e.child]--; lc.need[e.child] == 0 {
					c.afterDeps(e.child)
				}
			case depNever:
				lc.never[e.child] = true
				c.neverSatisfied(e.child)
			}
		}
		lc.waiters[t] = append(keep, lc.waiters[t]...)
		if lc.targets[t] == before {
			return
		}
		// A cascade (a job cancelled for an invalid dependency) changed
		// this target while its children were evaluated: go over them
		// again with the new counts.
	}
}

// neverSatisfied handles a job with a dependency that can no longer be
// met: it stays pending with reason DependencyNeverSatisfied, or is
// cancelled under KillInvalidDepend.
func (c *controller) neverSatisfied(ref JobRef) {
	if !c.cfg.KillInvalidDepend {
		c.recordReason(ref, ReasonDependencyNeverSatisfied)
		return
	}
	c.status[ref] = stDone
	c.js.release(ref)
	r := &c.rec[ref]
	r.State = Cancelled
	r.End = c.now
	r.Reason = "cancelled: dependency can never be satisfied (kill_invalid_depend)"
	c.doneUnstarted(ref)
}

// lcStarted tells the gates that job ref started a run.
func (c *controller) lcStarted(ref JobRef) {
	lc := c.lc
	if lc.memberOf != nil && c.rec[ref].Requeues == 0 {
		for _, t := range lc.memberOf[ref] {
			lc.targets[t].begun++
			c.notify(t)
		}
	}
	if lc.group != nil && lc.group[ref] > 0 {
		lc.groups[lc.group[ref]-1].running++
	}
}

// lcRunEnded tells the gates that job ref's run ended, for good (done) or
// to be requeued, with final state st.
func (c *controller) lcRunEnded(ref JobRef, done bool, st State) {
	lc := c.lc
	var g *sgroup
	if lc.group != nil && lc.group[ref] > 0 {
		g = &lc.groups[lc.group[ref]-1]
		g.running--
		if done {
			g.live = removeRef(g.live, ref)
		}
	}
	var a *arrayState
	if lc.array != nil && lc.array[ref] > 0 {
		a = &lc.arrays[lc.array[ref]-1]
		a.active--
	}
	if done && lc.memberOf != nil {
		for _, t := range lc.memberOf[ref] {
			tg := &lc.targets[t]
			tg.ended++
			if st == Completed {
				tg.ok++
			}
			c.notify(t)
		}
	}
	if g != nil {
		c.singletonTurn(g)
	}
	if a != nil {
		c.throttleTurn(a)
	}
}

// doneUnstarted tells the gates that job ref ended without ever running:
// rejected, cancelled in the queue, or cancelled for an invalid
// dependency.
func (c *controller) doneUnstarted(ref JobRef) {
	lc := c.lc
	if lc == nil {
		return
	}
	if lc.group != nil && lc.group[ref] > 0 {
		g := &lc.groups[lc.group[ref]-1]
		g.live = removeRef(g.live, ref)
		defer c.singletonTurn(g)
	}
	if lc.memberOf != nil {
		for _, t := range lc.memberOf[ref] {
			tg := &lc.targets[t]
			if c.rec[ref].Requeues == 0 {
				tg.begun++
			}
			tg.ended++
			c.notify(t)
		}
	}
}

// singletonTurn admits the group's earliest live job when it waits for
// its singleton turn and nothing of the group runs.
func (c *controller) singletonTurn(g *sgroup) {
	if g.running > 0 || len(g.live) == 0 {
		return
	}
	if j := g.live[0]; c.lc.singleWait[j] {
		c.lc.singleWait[j] = false
		c.admit(j)
	}
}

// throttleTurn makes the array's next waiting tasks eligible while it is
// under its throttle.
func (c *controller) throttleTurn(a *arrayState) {
	for a.active < a.limit && len(a.waiting) > 0 {
		ref := a.waiting[0]
		a.waiting = a.waiting[1:]
		a.active++
		c.makeEligible(ref)
	}
}
