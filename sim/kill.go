package sim

// A killed job keeps only its batch host for KillWait. slurmctld sends
// every node of a job it kills (time limit, preemption) the terminate
// request at once; the job's processes run on the batch host (the first
// node of its allocation: a batch script without job steps) and its other
// nodes finish at once, so they take new jobs in the next scheduling
// cycle while the batch host waits for KillWait and the epilog. Observed
// on Slurm 22.05 (KillWait=2): a 3-node job on gn[2-4] preempted at
// 12:53.745 had gn3 and gn4 running three other jobs at 12:53.760, while
// its preemptor got gn2 at 12:57.766 (conformance/records/gen-23/run1;
// gen-23/run2 and gen-29 likewise, one cycle later). A node failure frees
// every node at once (failJobsOn).

// killLater queues the kill of job ref at instant at, when KillWait holds
// its run past the kill.
func (c *controller) killLater(ref JobRef, at Time) {
	if c.cfg.KillWait <= 0 {
		return
	}
	c.q.Push(int64(at), classKill, int32(ref), c.genOf(ref))
}

// shed frees what running job ref holds outside its batch host: the job
// has been killed and waits KillWait for its batch host only. Its record
// keeps the whole allocation. A run the time-limit check killed is marked
// (RunningJob.Killed; a preempted one is its policy's to know); one on one
// node keeps its node and asks for no pass: nothing came free.
func (c *controller) shed(ref JobRef) {
	if c.status[ref] != stRunning {
		return
	}
	rj := &c.running[c.runningIndex(ref)]
	if _, preempted := c.grace[ref]; !preempted {
		rj.Killed = true
	}
	host := BatchHost(rj.Alloc)
	if host < 0 {
		return
	}
	var keep []NodeAlloc
	for k := range rj.Alloc {
		a := &rj.Alloc[k]
		if a.Node == host {
			keep = append(keep, *a)
			continue
		}
		c.freeOf(a.Node).Add(a)
		c.touch(a.Node)
		if a.MIG != (MIGInstances{}) {
			c.migRelease(ref, a)
		}
		if c.pw != nil {
			c.pw.give(a.Node, c.now)
		}
	}
	rj.Alloc = keep
	c.shedRuns++
	c.changed()
	c.trigger()
}

// batchHost returns the batch host of a run on alloc, the lowest node
// index, or -1 when the run is on one node (nothing to shed).
func BatchHost(alloc []NodeAlloc) int32 {
	if len(alloc) < 2 {
		return -1
	}
	host, multi := alloc[0].Node, false
	for _, a := range alloc[1:] {
		if a.Node != host {
			multi = true
			host = min(host, a.Node)
		}
	}
	if !multi {
		return -1
	}
	return host
}
