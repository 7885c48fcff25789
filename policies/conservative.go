package policies

import (
	"math/rand/v2"
	"slices"

	"github.com/schedsim/schedsim/sim"
)

// Conservative is textbook conservative backfilling (Mu'alem and
// Feitelson, IEEE TPDS 12(6), 2001): every queued job gets a reservation,
// in queue (submit) order, at the earliest time it fits for its whole time
// limit without disturbing the reservations of the jobs before it; the jobs
// whose reservation is now start.
//
// The schedule is rebuilt at every pass from the running jobs (each holding
// its resources until its End = start + limit) and the queue, in the same
// order, so it stays consistent: when jobs end no later than their limits
// say, no job starts later than the reservation it was first given (a job
// ending early can only move reservations earlier). Advance reservations
// (maintenance windows, sim.View.Reservations) are intervals in which
// their nodes are unavailable: a job is placed at a candidate time only on
// nodes no window holds during [start, start+limit), and a window's end is
// a candidate time. Placement at each
// candidate time uses the policy's Placer on the least free state over the
// job's window, so a reservation holds specific resources of specific
// nodes, at the granularity of the placement (GPUs, CPUs, memory), not
// whole nodes as in Slurm's backfill.
//
// A Conservative keeps scratch buffers between passes; it must not be used
// by two runs at once.
type Conservative struct {
	pass pass

	times []sim.Time        // segment starts, ascending; times[0] = now
	free  [][]sim.NodeState // free state of each segment
	pool  [][]sim.NodeState // spare vectors
	win   []sim.NodeState
	wmask []sim.NodeState // win less the nodes of windows (pass.usable)
	alloc []sim.NodeAlloc
	rel   []release
	resv  []ConservativeReservation
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
	return &Conservative{pass: newPass(placer, false)}
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

// Triggers asks for a pass after every event.
func (*Conservative) Triggers() sim.Triggers { return sim.Triggers{OnEvent: true} }

// Reservations returns the start time the latest pass gave every queued
// job (started ones included, at now), in queue order; jobs that could
// never be placed are missing. The slice is reused by the next pass.
func (c *Conservative) Reservations() []ConservativeReservation { return c.resv }

func (c *Conservative) vec() []sim.NodeState {
	if n := len(c.pool); n > 0 {
		v := c.pool[n-1]
		c.pool = c.pool[:n-1]
		return v
	}
	return nil
}

// Schedule implements sim.Policy. The returned Plan's slices are reused by
// the next call.
func (c *Conservative) Schedule(v sim.View, _ *rand.Rand) sim.Plan {
	p := &c.pass
	p.reset(v)
	now := v.Now()
	c.resv = c.resv[:0]
	// Profile: one segment per distinct running-job end.
	c.pool = append(c.pool, c.free...)
	c.free, c.times = c.free[:0], c.times[:0]
	c.rel = c.rel[:0]
	running := v.Running()
	for i := range running {
		c.rel = append(c.rel, release{end: max(running[i].End, now), ref: running[i].Ref, idx: int32(i)})
	}
	slices.SortFunc(c.rel, func(a, b release) int {
		if a.less(&b) {
			return -1
		}
		if b.less(&a) {
			return 1
		}
		return 0
	})
	cur := append(c.vec()[:0], v.Nodes()...)
	c.times = append(c.times, now)
	c.free = append(c.free, cur)
	for i := 0; i < len(c.rel); {
		t := c.rel[i].end
		next := append(c.vec()[:0], c.free[len(c.free)-1]...)
		for ; i < len(c.rel) && c.rel[i].end == t; i++ {
			give(next, running[c.rel[i].idx].Alloc)
		}
		if t == now {
			c.pool = append(c.pool, c.free[0])
			c.free[0] = next
			continue
		}
		c.times = append(c.times, t)
		c.free = append(c.free, next)
	}
	// A job may start when an advance reservation (maintenance window)
	// ends and gives its nodes back: make window ends candidate times.
	for _, w := range p.windows {
		if w.End > now {
			c.split(w.End)
		}
	}
	pend := v.Pending()
	for i := range pend {
		c.place(&pend[i], now)
	}
	return p.plan()
}

// place gives job the earliest reservation and starts it if that is now.
func (c *Conservative) place(job *sim.PendingJob, now sim.Time) {
	p := &c.pass
	d := newDemand(job)
	for k := range c.times {
		start := c.times[k]
		end := endAt(start, job.Limit)
		// The least free state over the segments the window covers.
		c.win = append(c.win[:0], c.free[k]...)
		m := k + 1
		for ; m < len(c.times) && c.times[m] < end; m++ {
			for n, f := range c.free[m] {
				w := &c.win[n]
				if w.MPS.Enabled() {
					// Before FreeGPUs: it needs each side's own count.
					w.MPS = sim.MPSMeetFree(w.MPS, w.FreeGPUs, f.MPS, f.FreeGPUs)
				}
				w.FreeGPUs = min(w.FreeGPUs, f.FreeGPUs)
				w.FreeCPUs = min(w.FreeCPUs, f.FreeCPUs)
				w.FreeMemMB = min(w.FreeMemMB, f.FreeMemMB)
				if w.MIG != 0 {
					w.MIG = sim.MIGMeet(w.MIG, f.MIG)
				}
			}
		}
		// No node that a window holds at any time of [start, end).
		win := p.usable(&c.wmask, c.win, start, job.Limit)
		if d.capacity(p.nodes, win) < int64(d.count) {
			continue
		}
		var ok bool
		c.alloc, ok = p.placer.Place(p.nodes, win, job, c.alloc[:0])
		if !ok {
			continue
		}
		// Split the segment holding end, so the reservation ends there.
		c.split(end)
		for s := k; s < len(c.times) && c.times[s] < end; s++ {
			take(c.free[s], c.alloc)
		}
		c.resv = append(c.resv, ConservativeReservation{Job: job.Ref, Start: start})
		if start == now {
			base := len(p.allocs)
			p.allocs = append(p.allocs, c.alloc...)
			p.starts = append(p.starts, sim.Start{Job: job.Ref, Alloc: p.allocs[base:len(p.allocs):len(p.allocs)]})
			p.ends = append(p.ends, end)
		}
		return
	}
}

// split makes t a segment boundary if it falls inside the profile.
func (c *Conservative) split(t sim.Time) {
	i, found := slices.BinarySearch(c.times, t)
	if found || i == 0 {
		return
	}
	v := append(c.vec()[:0], c.free[i-1]...)
	c.times = slices.Insert(c.times, i, t)
	c.free = slices.Insert(c.free, i, v)
}

// give adds a to free, MIG instances included.
func give(free []sim.NodeState, a []sim.NodeAlloc) {
	for i := range a {
		free[a[i].Node].Add(&a[i])
	}
}
