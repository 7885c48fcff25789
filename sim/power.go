package sim

import "fmt"

// Power saving (Slurm SuspendTime / ResumeTimeout; hwmodels.PowerModel;
// docs/hardware.md "Energy model"). When the cluster's power model has a
// SuspendTime, a node on which no job has held an allocation for more
// than SuspendTime seconds is powered down from then on. A start that
// allocates a powered-down node wakes it: the allocation is held from the
// pass that starts the job, and the job begins ResumeTimeout seconds
// later (JobRecord.Start and RunningJob.Start are the pass's time plus
// ResumeTimeout, and its time limit counts from then), as a MIG
// repartition delays a start. A job placed on a node still resuming for
// another begins when the node is up. A power-down takes SuspendTimeout:
// a job placed on a node powering down waits until it is down, then for
// its resume (slurmctld does not resume a node in POWERING_DOWN state
// before its SuspendTimeout has passed). Nodes of
// PowerModel.SuspendExempt (SuspendExcNodes, SuspendExcParts) never power
// down. Nodes are idle from the first submit of the trace. Policies are
// not told which nodes are down: Slurm schedules powered-down nodes like
// idle ones.
//
// Nothing is scheduled for a suspension: whether a node was down is
// decided when the next job is placed on it (or when the run ends), so the
// feature costs nothing when it is off and one comparison per allocated
// node when it is on.

// NodeSuspend is one interval a node spent powered down: from From (its
// last job ended SuspendTime seconds before, or the run began) to To,
// when a job's start woke it (Woken; it booted until ResumeTimeout after
// To, or after its power-down completed at From + SuspendTimeout when
// that is later) or the run ended (Woken false).
type NodeSuspend struct {
	Node     int32
	From, To Time
	Woken    bool
}

// powerState is the controller's power-saving state; nil when the
// cluster's power model has no SuspendTime.
type powerState struct {
	suspend, resume Time
	down            Time    // SuspendTimeout: how long a power-down takes
	exempt          []bool  // nodes that never power down, nil for none
	busy            []int32 // allocations held on each node
	idleSince       []Time  // when each idle node's last allocation ended
	ready           []Time  // when each node woken last is up
	log             []NodeSuspend
}

// setupPower builds the power-saving state when the cluster has one.
func (c *controller) setupPower() {
	pm := c.cluster.Power
	if pm.SuspendTime <= 0 {
		return
	}
	first := Time(0)
	for i := range c.js.n {
		if s := c.js.submit(JobRef(i)); i == 0 || s < first {
			first = s
		}
	}
	n := len(c.cluster.Nodes)
	p := &powerState{
		suspend:   Time(pm.SuspendTime),
		resume:    Time(max(pm.ResumeTimeout, 0)),
		down:      Time(max(pm.SuspendTimeout, 0)),
		busy:      make([]int32, n),
		idleSince: make([]Time, n),
		ready:     make([]Time, n),
	}
	for i := range p.idleSince {
		p.idleSince[i], p.ready[i] = first, first
	}
	if len(pm.SuspendExempt) > 0 {
		p.exempt = make([]bool, n)
		for _, i := range pm.SuspendExempt {
			if i >= 0 && int(i) < n {
				p.exempt[i] = true
			}
		}
	}
	c.pw = p
}

// suspends reports whether node n, idle since its idleSince, is powered
// down (or powering down) at now.
func (p *powerState) suspends(n int32, now Time) bool {
	return p.busy[n] == 0 && now-p.idleSince[n] > p.suspend && (p.exempt == nil || !p.exempt[n])
}

// take allocates node n at now and returns when the node is up for the
// job: now, or later when the node was powered down (it is woken and up
// ResumeTimeout later, or ResumeTimeout after its power-down completes)
// or is still resuming.
func (p *powerState) take(n int32, now Time) Time {
	ready := max(now, p.ready[n])
	if p.suspends(n, now) {
		p.log = append(p.log, NodeSuspend{Node: n, From: p.idleSince[n] + p.suspend, To: now, Woken: true})
		ready = max(now, p.idleSince[n]+p.suspend+p.down) + p.resume
		p.ready[n] = ready
	}
	p.busy[n]++
	return ready
}

// give releases one allocation on node n at now. A node released before
// it finished resuming is idle from when it is up.
func (p *powerState) give(n int32, now Time) {
	p.busy[n]--
	if p.busy[n] == 0 {
		p.idleSince[n] = max(now, p.ready[n])
	}
}

// finish closes the suspensions of nodes still down at end, by node.
func (p *powerState) finish(end Time) []NodeSuspend {
	for n := range p.busy {
		if p.suspends(int32(n), end) {
			p.log = append(p.log, NodeSuspend{Node: int32(n), From: p.idleSince[n] + p.suspend, To: end})
		}
	}
	return p.log
}

// checkPower verifies, for Config.Check, that the allocations counted on
// each node are those of the running jobs.
func (c *controller) checkPower() {
	if c.pw == nil {
		return
	}
	held := make([]int32, len(c.pw.busy))
	for _, rj := range c.running {
		for _, a := range rj.Alloc {
			held[a.Node]++
		}
	}
	for n, b := range c.pw.busy {
		if b != held[n] {
			panic(fmt.Sprintf("sim: node %s: power saving counts %d allocations at t=%d, running jobs hold %d", c.cluster.Nodes[n].Name, b, c.now, held[n]))
		}
	}
}
