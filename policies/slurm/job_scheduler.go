package slurm

import (
	"cmp"
	"math"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// The queue and the main scheduler, as slurmctld's job_scheduler.c has
// them: the queue records in sort_job_queue2's order (build_job_queue)
// and the main pass (_schedule).

// qrec is one queue record: a job in one of its partitions.
type qrec struct {
	ref    sim.JobRef
	part   int32
	prank  int32 // preemptRank
	tier   int32
	prio   uint32
	cls    int32 // backfill's request class, -1: not known yet (fills padding: 32 bytes)
	submit sim.Time
}

// buildOrder keeps s.order: one record per pending job and partition, in
// queue order. Records of jobs no longer pending are dropped; new jobs are
// added; the whole is sorted again when priorities changed, and new
// records are sorted and merged in when only jobs came.
// It reports whether the queue changed (records dropped or added, or
// priorities recomputed).
func (s *Policy) buildOrder(pend []sim.PendingJob, recalc bool) bool {
	// The jobs with records are those pending at the last pass, and those
	// pending now that were are len(pend)-len(s.fresh) of them: with none
	// new and as many pending, none left, and the order stands as it is.
	if !recalc && len(s.fresh) == 0 && len(pend) == s.orderJobs {
		if orderCheck != nil {
			orderCheck(s, pend)
		}
		return false
	}
	// Jobs with records that are no longer pending: without any (every
	// job of the last pass still pending) the records all stand.
	gone := s.orderJobs - (len(pend) - len(s.fresh))
	s.orderJobs = len(pend)
	o := s.order
	if gone > 0 || recalc {
		o = o[:0]
		for _, r := range s.order {
			js := &s.st[r.ref]
			if js.pi == 0 {
				continue // no longer pending
			}
			if recalc {
				r.prio = s.prio(js, r.part)
			}
			o = append(o, r)
		}
	}
	// Jobs without records: those not pending at the previous pass
	// (s.fresh, from the pending scan).
	kept := len(o)
	for _, k := range s.fresh {
		pj := s.pendAt(k)
		js := &s.st[pj.Ref]
		parts := pj.Parts | 1<<uint(pj.Part)
		for p := int32(0); parts != 0 && p < hwmodels.MaxPartitions; p++ {
			if parts&(1<<uint(p)) == 0 {
				continue
			}
			parts &^= 1 << uint(p)
			o = append(o, qrec{ref: pj.Ref, part: p, prank: s.preemptRank(js), tier: s.cluster.Partitions[p].PriorityTier,
				prio: s.prio(js, p), submit: pj.Submit, cls: -1})
		}
	}
	added := len(o) > kept
	switch {
	case recalc:
		slices.SortFunc(o, qrecCmp)
	case added:
		// The kept records are in order (their keys change only with
		// recalc): sort the new ones and merge, each new one after the
		// kept ones before it (found by binary search, the few new
		// records against the long queue), the kept ones copied in runs.
		slices.SortFunc(o[kept:], qrecCmp)
		m := s.orderBuf[:0]
		a := o[:kept]
		for _, r := range o[kept:] {
			i, _ := slices.BinarySearchFunc(a, r, qrecCmp)
			m = append(append(m, a[:i]...), r)
			a = a[i:]
		}
		m = append(m, a...)
		s.orderBuf = o[:0]
		o = m
	}
	changed := added || recalc || len(o) != len(s.order)
	s.order = o
	if orderCheck != nil {
		orderCheck(s, pend)
	}
	return changed
}

// orderCheck, when set (by the package's tests), is called with the
// order buildOrder kept, to compare it with one made from pend.
var orderCheck func(s *Policy, pend []sim.PendingJob)

// qrecCmp is the queue order: preemption rank, partition PriorityTier,
// priority (each higher first), submit time, job, partition.
func qrecCmp(a, b qrec) int {
	if c := cmp.Compare(b.prank, a.prank); c != 0 {
		return c
	}
	if c := cmp.Compare(b.tier, a.tier); c != 0 {
		return c
	}
	if c := cmp.Compare(b.prio, a.prio); c != 0 {
		return c
	}
	if c := cmp.Compare(a.submit, b.submit); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ref, b.ref); c != 0 {
		return c
	}
	return cmp.Compare(a.part, b.part)
}

// holdReason returns why the record may not start at all now, for reasons
// other than resources: partition limits, then QOS limits.
func (s *Policy) holdReason(v sim.View, job *sim.PendingJob, js *slurmJob) sim.PendingReason {
	part := &s.cluster.Partitions[job.Part]
	if part.MaxTime > 0 {
		var tl workload.Time
		if t := js.tlim; t != [3]byte{} && js.known {
			tl = workload.Time(uint32(t[0])|uint32(t[1])<<8|uint32(t[2])<<16) - 1
		} else {
			tl = v.Job(job.Ref).TimeLimit
		}
		if tl > 0 && int64(tl) > part.MaxTime {
			return sim.ReasonPartitionTimeLimit
		}
	}
	if part.MaxNodes > 0 && job.Req.Nodes > part.MaxNodes {
		return sim.ReasonPartitionNodeLimit
	}
	if s.limits {
		return s.qosReason(job, js)
	}
	return sim.ReasonNone
}

// started records that the pass started job.
func (s *Policy) markStarted(job *sim.PendingJob) {
	js := &s.st[job.Ref]
	js.started = s.epoch
	delete(s.pre.waits, job.Ref) // a preemption it waited for is over
	js.limit = int32(min(job.Limit, math.MaxInt32))
	js.sized = true
	js.reason = sim.ReasonNone
	if s.limits {
		s.addUse(js, reqUse(&job.Req))
	}
}

// mainPass is Slurm's main scheduler (job_scheduler.c _schedule).
func (s *Policy) mainPass(v sim.View, pend []sim.PendingJob, full bool) {
	p := &s.pass
	var failed uint64
	depth := 0
	if s.cfg.preempt != preemptNone {
		n := len(s.cluster.Nodes)
		s.pre.blocked = append(s.pre.blocked[:0], make([]bool, n)...)
		s.pre.checked = 0
	}
	for k := range s.order {
		r := &s.order[k]
		if !full && depth >= s.cfg.queueDepth {
			break
		}
		depth++
		js := &s.st[r.ref]
		if js.started == s.epoch {
			continue
		}
		if failed&(1<<uint(r.part)) != 0 {
			js.reason = sim.ReasonPriority
			continue
		}
		job := s.pendingJob(r)
		if why := s.holdReason(v, &job, js); why != sim.ReasonNone {
			js.reason = why
			continue
		}
		if job.Req.Nodes > 1 && s.upNodes(v, r.part) < int(job.Req.Nodes) {
			// More nodes than its partition has up: select_nodes fails
			// with ESLURM_NODE_NOT_AVAIL (the job could not run were every
			// node up idle), which, unlike ESLURM_NODES_BUSY, neither
			// blocks the partition (_schedule sets fail_by_part for the
			// latter only) nor preempts. On Slurm 22.05
			// (conformance/records/gen-41/run1) G15 (4 nodes) waited with
			// gn1 down while G11, after it in the queue, preempted G08 at
			// 06:35:24.
			js.reason = sim.ReasonReqNodeNotAvail
			continue
		}
		if s.preemptWait(v, r.ref) != nil {
			// Its preemption is in progress: it starts wherever it
			// fits, and preempts no more.
			if p.TryStart(&job) {
				s.markStarted(&job)
				continue
			}
			js.reason = sim.ReasonResources
		} else if p.TryStart(&job) {
			s.markStarted(&job)
			continue
		} else {
			js.reason = sim.ReasonResources
			if s.cfg.preempt != preemptNone {
				// Preempting for it does not start it now: it starts in a
				// later pass, once nodes are free (preemptWait), and
				// meanwhile blocks its partition like a job waiting for
				// resources.
				s.tryPreempt(v, &job, js, r)
			}
		}
		if s.cfg.bfMinAgeReserve > 0 && v.Now()-job.Eligible < s.cfg.bfMinAgeReserve {
			continue // too young to reserve: does not block its partition
		}
		failed |= 1 << uint(r.part)
		if s.pre.blocked != nil {
			for _, n := range s.cluster.Partitions[r.part].Nodes {
				p.Block(n)
				s.pre.blocked[n] = true
			}
			continue
		}
		// Only records of other partitions are placed from here on, each
		// on its own partition's nodes (a record has one partition) and
		// remembering failures per partition: of the blocked nodes only
		// those they share can matter.
		for _, n := range s.shared[r.part] {
			p.Block(n)
		}
	}
	s.mainSeen = depth
	// Give the blocked nodes back for the backfill pass: the free state is
	// the view's less the starts.
	if failed != 0 {
		p.Rebase(v.Nodes())
	}
}

// sharedNodes returns, per partition of c, its nodes that some other
// partition has too: those the main pass takes from the free state when
// the partition blocks.
func sharedNodes(c *hwmodels.Cluster, out [][]int32) [][]int32 {
	out = slices.Grow(out[:0], len(c.Partitions))[:len(c.Partitions)]
	for i := range c.Partitions {
		sh := out[i][:0]
		for _, n := range c.Partitions[i].Nodes {
			if c.Nodes[n].Partitions&^(1<<uint(i)) != 0 {
				sh = append(sh, n)
			}
		}
		out[i] = sh
	}
	return out
}
