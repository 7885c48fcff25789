package policies

import (
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// maxFailed bounds the per-pass memory of failed demands, so a queue of
// many distinct shapes does not make every lookup slow.
const maxFailed = 64

// pass is the scratch state of one scheduling pass, kept in the policy
// between passes so that a pass allocates nothing once buffers have grown.
type pass struct {
	placer Placer
	// exact is set when the placer succeeds exactly when the capacity is
	// there (FirstFit), so a refusal needs no capacity count to be known
	// as one.
	exact bool
	// remember enables the memory of failures; a policy that stops at the
	// first failure has no use for it.
	remember bool
	nodes    []hwmodels.Node
	now      workload.Time

	// free is the free state after the starts staged so far. Until the
	// first start it aliases the view's slice (read only); the first
	// commit copies it into own.
	free []sim.NodeState
	own  []sim.NodeState

	starts []sim.Start
	ends   []workload.Time // now + limit of each start
	allocs []sim.NodeAlloc // backing store of starts' Alloc

	// noCap holds demands that failed for lack of capacity in free this
	// pass. free only shrinks during a pass, so any harder demand fails
	// too. noPlace holds exact requests the placer refused although the
	// capacity was there; they are valid only until the next commit.
	noCap   []demand
	noPlace []failedReq
}

type failedReq struct {
	part int32
	req  workload.Request
}

func (p *pass) reset(v sim.View) {
	p.nodes = v.Cluster().Nodes
	p.now = v.Now()
	p.free = v.Nodes()
	p.starts = p.starts[:0]
	p.ends = p.ends[:0]
	p.allocs = p.allocs[:0]
	p.noCap = p.noCap[:0]
	p.noPlace = p.noPlace[:0]
}

// known reports whether job is already known not to fit free.
func (p *pass) known(job *sim.PendingJob, d *demand) bool {
	for i := range p.noCap {
		if d.harder(&p.noCap[i]) {
			return true
		}
	}
	for i := range p.noPlace {
		if f := &p.noPlace[i]; f.part == job.Part && f.req == job.Req {
			return true
		}
	}
	return false
}

// stage asks the placer for job's allocation on free and appends it to
// p.allocs, returning where it begins; ok is false (and nothing staged)
// when it does not fit.
func (p *pass) stage(job *sim.PendingJob) (base int, ok bool) {
	d := newDemand(job)
	if p.known(job, &d) {
		return 0, false
	}
	base = len(p.allocs)
	p.allocs, ok = p.placer.Place(p.nodes, p.free, job, p.allocs)
	if ok {
		return base, true
	}
	p.allocs = p.allocs[:base]
	if !p.remember {
		return 0, false
	}
	if p.exact || d.capacity(p.nodes, p.free) < int64(d.count) {
		if len(p.noCap) < maxFailed {
			p.noCap = append(p.noCap, d)
		}
	} else if len(p.noPlace) < maxFailed {
		p.noPlace = append(p.noPlace, failedReq{job.Part, job.Req})
	}
	return 0, false
}

// staged returns the allocation staged at base.
func (p *pass) staged(base int) []sim.NodeAlloc {
	return p.allocs[base:len(p.allocs):len(p.allocs)]
}

// discard drops the allocation staged at base.
func (p *pass) discard(base int) { p.allocs = p.allocs[:base] }

// commit turns the allocation staged at base into a start of job.
func (p *pass) commit(job *sim.PendingJob, base int) {
	if len(p.starts) == 0 {
		p.own = append(p.own[:0], p.free...)
		p.free = p.own
	}
	a := p.staged(base)
	take(p.free, a)
	p.starts = append(p.starts, sim.Start{Job: job.Ref, Alloc: a})
	p.ends = append(p.ends, endAt(p.now, job.Limit))
	p.noPlace = p.noPlace[:0]
}

// tryStart starts job now if it fits.
func (p *pass) tryStart(job *sim.PendingJob) bool {
	base, ok := p.stage(job)
	if ok {
		p.commit(job, base)
	}
	return ok
}

// plan returns the pass's plan and drops the references to the view.
func (p *pass) plan() sim.Plan {
	p.free = nil
	p.nodes = nil
	return sim.Plan{Starts: p.starts}
}

// newPass returns the scratch state of a policy placing with placer
// (FirstFit when nil).
func newPass(placer Placer, remember bool) pass {
	if placer == nil {
		placer = FirstFit{}
	}
	_, exact := placer.(FirstFit)
	return pass{placer: placer, exact: exact, remember: remember}
}
