package sim

import (
	"fmt"

	"github.com/schedsim/schedsim/workload"
)

// preempt applies one of a plan's preemptions.
func (c *controller) preempt(p Preemption) error {
	ref := p.Job
	if ref < 0 || int(ref) >= c.js.n {
		return fmt.Errorf("policy %s: preemption of unknown job ref %d at t=%d", c.policy.Name(), ref, c.now)
	}
	if c.status[ref] != stRunning {
		return fmt.Errorf("policy %s: job %s: preempted at t=%d but it is not running", c.policy.Name(), c.js.at(ref).ID, c.now)
	}
	if p.Mode != PreemptCancel && p.Mode != PreemptRequeue {
		return fmt.Errorf("policy %s: job %s: preemption at t=%d has unknown mode %d", c.policy.Name(), c.js.at(ref).ID, c.now, p.Mode)
	}
	if _, ok := c.grace[ref]; ok {
		return nil // already on its way out
	}
	// PreemptMode=REQUEUE requeues only jobs that may be requeued; others
	// are cancelled (slurm.conf PreemptMode).
	requeue := p.Mode == PreemptRequeue && c.requeueable(ref)
	g := max(c.cfg.PreemptGraceTime, 0)
	// A job's own kill wait (workload.Job.KillWait), even of 0 s, ends
	// it after the passes of the kill's instant, never in the plan that
	// preempts it: the kill and the epilog take some milliseconds, and
	// Slurm's cycle that preempts waits for the completion (backfill.c:
	// "Need to wait for in-progress completion/epilog"). Of 0 s, its end
	// comes before the next second's passes (the next cycle's, gen-92/run2:
	// killed at 57.73, done 5 ms later, its preemptor started by the cycle
	// of 58.38), not after the kill's (a main pass there did not see it).
	kw, own := c.cfg.KillWait, c.js.at(ref).KillWait > 0
	if own {
		kw = Time(c.js.at(ref).KillWait - 1)
	}
	if g+kw <= 0 && !own {
		c.interrupt(ref, Preempted, requeue)
		return nil
	}
	// GraceTime: the job keeps its resources until now+grace (or its own
	// earlier end) and then ends PREEMPTED, or is requeued; KillWait
	// keeps them that much longer, the kill still being at now+grace.
	if c.grace == nil {
		c.grace = map[JobRef]graceEnd{}
	}
	c.grace[ref] = graceEnd{requeue: requeue, kill: c.now + g}
	i := c.runningIndex(ref)
	rj := &c.running[i]
	if at := c.now + g + kw; at < c.plannedEnd(ref, rj.Start) {
		c.bumpGen(ref)
		class := c.endClass(at)
		if own && g+kw == 0 {
			at, class = at+1, classEnd
		}
		c.q.Push(int64(at), class, int32(ref), c.gen[ref])
		rj.End = min(rj.End, at)
	}
	// The kill frees the nodes but the batch host at once, also when the
	// job would have ended on its own before KillWait was over: a policy
	// may start jobs on them in the plan that preempts (RunInfo).
	if g == 0 {
		c.shed(ref)
	} else if BatchHost(rj.Alloc) >= 0 {
		c.killLater(ref, c.now+g)
	}
	return nil
}

// requeueable reports whether job ref returns to the queue when it is
// preempted in REQUEUE mode or its node fails.
func (c *controller) requeueable(ref JobRef) bool {
	return c.cfg.JobRequeue || c.js.at(ref).Requeue
}

func (c *controller) bumpGen(ref JobRef) {
	if c.gen == nil {
		c.gen = make([]uint32, c.js.n)
	}
	c.gen[ref]++
}

func (c *controller) genOf(ref JobRef) uint32 {
	if c.gen == nil {
		return 0
	}
	return c.gen[ref]
}

// graceEnd is how a job in its preemption grace time (or KillWait) ends:
// requeued or not, and the instant it is killed.
type graceEnd struct {
	requeue bool
	kill    Time
}

// interrupt cuts job ref's run short now: it ends in state st, or, with
// requeue, its run is closed as a RunSegment in state st and the job
// returns to the queue.
func (c *controller) interrupt(ref JobRef, st State, requeue bool) {
	c.interruptAt(ref, st, requeue, c.now)
}

// interruptAt is interrupt for a run killed at kill (<= now): its
// resources are freed now, its record (or run segment) ends at kill, and
// a requeue counts from kill (Config.KillWait).
func (c *controller) interruptAt(ref JobRef, st State, requeue bool, kill Time) {
	c.changed()
	c.bumpGen(ref) // its scheduled end no longer applies
	delete(c.grace, ref)
	if requeue {
		c.requeue(ref, st, kill)
		return
	}
	c.rec[ref].State, c.rec[ref].Recorded = st, false
	c.finishRun(ref)
	c.rec[ref].End = kill
}

// DefaultMaxRequeue is Config.MaxRequeue's default: slurmctld's
// MAX_BATCH_REQUEUE (slurm-22.05 src/slurmctld/slurmctld.h), a compiled-in
// constant that no slurm.conf setting changes in 22.05. _job_complete
// (job_mgr.c) counts a batch job's requeues in batch_flag, which starts at
// 1, and once a requeue takes it past MAX_BATCH_REQUEUE holds the job
// (JOB_REQUEUE_HOLD, reason WAIT_MAX_REQUEUE, "JobHoldMaxRequeue", priority
// 0): the fifth requeue leaves it held. slurmctld applies it to requeues
// through _job_complete (a batch launch that failed, a batch job missing
// from its node after a reboot); a running job requeued because its node
// went DOWN (kill_running_job_by_node_name) or for a preemption
// (_job_requeue_op) only counts restart_cnt. The simulation applies the
// bound to every requeue, so that no failure model can requeue a job for
// ever: a job on nodes that keep failing is held after five runs, as a
// batch job whose launches keep failing is.
const DefaultMaxRequeue int32 = 5

// requeue closes job ref's run (state st: Preempted or NodeFail), killed
// at kill (<= now), and puts it back in the queue, as Slurm does: a new
// submit time (kill), held with reason BeginTime for the requeue delay
// from now, when its termination completed (batch_requeue_fini,
// job_mgr.c, runs once the job's steps and epilog are done: "Requeuing"
// 0.02 s after the preemption in preempt-requeue/run1, whose script ended
// on SIGTERM, and 3.7 s after it in run2, after KillWait's SIGKILL), and,
// when it runs again, its full time limit and the work
// left since its last checkpoint. The requeue that brings the job's count
// to Config.MaxRequeue holds it for good instead (JobHoldMaxRequeue).
func (c *controller) requeue(ref JobRef, st State, kill Time) {
	r := &c.rec[ref]
	c.runs = append(c.runs, RunSegment{Job: ref, Eligible: r.Eligible, Start: r.Start, End: kill, State: st, Alloc: r.Alloc})
	c.releaseRun(ref, st)
	if c.lc != nil {
		c.lcRunEnded(ref, false, st)
	}

	j := c.js.at(ref)
	if c.remain == nil {
		c.remain = make([]Time, c.js.n)
		for i := range c.js.n {
			c.remain[i] = c.js.peek(JobRef(i)).Runtime
		}
		c.requeuedAt = make([]Time, c.js.n)
	}
	c.requeuedAt[ref] = kill
	if ci := Time(j.CheckpointInterval); ci > 0 {
		saved := max(kill-r.Start, 0) / ci * ci // r.Start > now while a MIG GPU is repartitioned
		c.remain[ref] = max(c.remain[ref]-c.savedWork(ref, saved), 0)
	} else {
		c.remain[ref] = j.Runtime // no checkpoint: from scratch
	}

	r.Requeues++
	r.Eligible = workload.Unknown
	r.Start = workload.Unknown
	r.End = workload.Unknown
	r.Alloc = Allocs{}
	r.State, r.Recorded = 0, false
	c.status[ref] = stWaiting
	if c.maxRequeue > 0 && r.Requeues >= c.maxRequeue {
		// Held with priority 0 until an administrator releases it, which
		// the simulation never does.
		c.recordReason(ref, ReasonJobHoldMaxRequeue)
		c.heldMax++
		return
	}
	c.recordReason(ref, ReasonBeginTime)
	d := c.cfg.RequeueDelay
	switch {
	case d == 0:
		d = DefaultRequeueDelay
	case d < 0:
		d = 0
	}
	c.push(c.now+d, classRelease, int32(ref), 0)
}

// release ends a requeued job's begin-time hold.
func (c *controller) release(ref JobRef) {
	if c.status[ref] != stWaiting || c.reason[ref] != ReasonBeginTime {
		return
	}
	c.admit(ref)
}

// releaseRun frees a run's resources, drops it from the running list and
// tells the policy.
func (c *controller) releaseRun(ref JobRef, st State) {
	held := c.running[c.runningIndex(ref)].Alloc
	alloc := held
	if r := c.rec[ref].Alloc; c.shedRuns > 0 && r.Len() != len(held) {
		alloc = r.Append(nil) // held is less once shed (kill.go); the policy hears of the whole
	}
	for k := range held {
		a := &held[k]
		c.freeOf(a.Node).Add(a)
		c.touch(a.Node)
		if a.MIG != (MIGInstances{}) {
			c.migRelease(ref, a)
		}
		if c.pw != nil {
			c.pw.give(a.Node, c.now)
		}
	}
	c.dropRunning(ref)
	c.commEnd(ref)
	c.endedRun = append(c.endedRun, ref)
	c.policy.JobEnded(ref, c.now, alloc, st)
	c.runAllocs.put(held) // the policy keeps no allocation it is shown (Policy, View)
	c.trigger()
}
