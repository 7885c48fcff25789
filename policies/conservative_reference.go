package policies

import (
	"math/rand/v2"
	"slices"

	"github.com/schedsim/schedsim/sim"
)

// conservativeReference is the plain conservative backfilling pass that
// Conservative's kept schedule must agree with (STYLE.md: every optimized
// algorithm keeps its plain version beside it): every pass rebuilds the
// whole schedule from the view, placing every queued job in queue order
// at the first segment boundary where the placer succeeds on the least
// free state over the job's window, at O(queue · segments² · nodes).
// Conservative uses it as is for a placer other than FirstFit, and
// TestConservativeMatchesReference compares the two on random workloads.
//
// The algorithm and its Slurm-free semantics are Conservative's (see its
// doc comment); this is the implementation the project ran before the
// kept schedule, unchanged but for its name.
type conservativeReference struct {
	Base
	pass Pass

	times []sim.Time        // segment starts, ascending; times[0] = now
	free  [][]sim.NodeState // free state of each segment
	pool  [][]sim.NodeState // spare vectors
	win   []sim.NodeState
	wmask []sim.NodeState // win less the nodes of windows (pass.usable)
	alloc []sim.NodeAlloc
	rel   []release
	resv  []ConservativeReservation
}

var _ sim.Policy = (*conservativeReference)(nil)

// newConservativeReference returns the plain pass placing jobs with placer
// (FirstFit when nil).
func newConservativeReference(placer Placer) *conservativeReference {
	return &conservativeReference{pass: NewPass(placer, false)}
}

// Name returns "conservative".
func (*conservativeReference) Name() string { return "conservative" }

// Begin implements sim.Policy: the run starts with no kept state, and
// has one pass after every event (OnEvents).
func (c *conservativeReference) Begin(sim.RunInfo) (sim.Timing, error) {
	c.pass.begin()
	return OnEvents(), nil
}

// Reservations is Conservative.Reservations.
func (c *conservativeReference) Reservations() []ConservativeReservation { return c.resv }

func (c *conservativeReference) vec() []sim.NodeState {
	if n := len(c.pool); n > 0 {
		v := c.pool[n-1]
		c.pool = c.pool[:n-1]
		return v
	}
	return nil
}

// Schedule implements sim.Policy. The returned Plan's slices are reused by
// the next call.
func (c *conservativeReference) Schedule(_ sim.PassSet, v sim.View, _ *rand.Rand) sim.Plan {
	p := &c.pass
	p.Reset(v)
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
	for _, w := range p.Windows {
		if w.End > now {
			c.split(w.End)
		}
	}
	pend := v.Pending()
	for i := range pend {
		c.place(&pend[i], now)
	}
	return p.Plan()
}

// place gives job the earliest reservation and starts it if that is now.
func (c *conservativeReference) place(job *sim.PendingJob, now sim.Time) {
	p := &c.pass
	d := NewDemand(job)
	for k := range c.times {
		start := c.times[k]
		end := EndAt(start, job.Limit)
		// The least free state over the segments the window covers.
		c.win = append(c.win[:0], c.free[k]...)
		m := k + 1
		for ; m < len(c.times) && c.times[m] < end; m++ {
			for n := range c.free[m] {
				meetNode(&c.win[n], &c.free[m][n])
			}
		}
		// No node that a window holds at any time of [start, end).
		win := p.Usable(&c.wmask, c.win, start, job.Limit)
		if d.capacity(p.Nodes, win) < int64(d.Count) {
			continue
		}
		var ok bool
		c.alloc, ok = p.placer.Place(p.Nodes, win, job, c.alloc[:0])
		if !ok {
			continue
		}
		// Split the segment holding end, so the reservation ends there.
		c.split(end)
		for s := k; s < len(c.times) && c.times[s] < end; s++ {
			Take(c.free[s], c.alloc)
		}
		c.resv = append(c.resv, ConservativeReservation{Job: job.Ref, Start: start})
		if start == now {
			base := len(p.allocs)
			p.allocs = append(p.allocs, c.alloc...)
			p.Starts = append(p.Starts, sim.Start{Job: job.Ref, Alloc: p.allocs[base:len(p.allocs):len(p.allocs)]})
			p.ends = append(p.ends, end)
		}
		return
	}
}

// split makes t a segment boundary if it falls inside the profile.
func (c *conservativeReference) split(t sim.Time) {
	i, found := slices.BinarySearch(c.times, t)
	if found || i == 0 {
		return
	}
	v := append(c.vec()[:0], c.free[i-1]...)
	c.times = slices.Insert(c.times, i, t)
	c.free = slices.Insert(c.free, i, v)
}

// meetNode makes w the least free state of w and f: what is free in both,
// for a job that needs it throughout an interval (sim.MIGMeet,
// sim.MPSMeetFree). Both conservative passes take a window's meet with it.
func meetNode(w, f *sim.NodeState) {
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

// give adds a to free, MIG instances included.
func give(free []sim.NodeState, a []sim.NodeAlloc) {
	for i := range a {
		free[a[i].Node].Add(&a[i])
	}
}
