package sim

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/schedsim/schedsim/sim/event"
	"github.com/schedsim/schedsim/workload"
)

// The termination guard (see settled) ends a run when nothing can change
// any more, even though jobs are still queued and the policy keeps asking
// for periodic passes. It needs, all at once:
//
//   - no job left to submit and no job running;
//   - no queued event that can change the state: node events of the
//     list, ends of advance reservations, ends of requeue holds and
//     cancellations (the failure model's events are handled below);
//   - passes for Timing.Settle seconds since the last change (submit, end,
//     eligibility, node change, ...), none of which started or preempted
//     anything (a start makes a job run, a preemption without grace
//     queues a release);
//   - with a failure model: no queued job that fits the nodes in service
//     only once a failed node is repaired. Failures cannot make a job
//     startable when nothing runs, and repairs of nodes no queued job
//     needs change nothing, so neither resets the settle time; a repair
//     that some queued job waited for does.
//
// The jobs left end UNFINISHED with their last pending reason, and a run
// note says how many and why.

// changed records that the run's state changed now.
func (c *controller) changed() { c.quietSince = c.now }

// otherEvent reports whether an event of class cl with generation gen is
// one the guard must wait for: explicit node events, reservation ends,
// ends of MIG repartitions, requeue releases and cancellations.
func otherEvent(cl event.Class, gen uint32) bool {
	switch cl {
	case classRelease, classCancel:
		return true
	case classNode:
		return gen == nodeExplicit || gen == resvEnd || gen == migReady
	}
	return false
}

// push queues an event, counting those the guard waits for.
func (c *controller) push(at Time, cl event.Class, arg int32, gen uint32) {
	if otherEvent(cl, gen) {
		c.otherQueued++
	}
	c.q.Push(int64(at), cl, arg, gen)
}

// settled reports whether the run may end now although jobs are queued
// (see above). It is called after every pass.
func (c *controller) settled() bool {
	if c.nextSub < c.js.n || c.runningCount() > 0 || c.otherQueued > 0 {
		return false
	}
	if c.now < c.quietSince+c.settle {
		return false
	}
	if c.awaitRepair() {
		return false
	}
	c.quiesced = true
	return true
}

// awaitRepair reports whether some queued job fits the cluster only once a
// node the failure model holds down is repaired.
func (c *controller) awaitRepair() bool {
	if c.cfg.Failures == nil || c.off == nil {
		return false
	}
	failed := false
	for _, m := range c.off {
		if m&offFail != 0 && m&^offFail == 0 {
			failed = true
			break
		}
	}
	if !failed {
		return false
	}
	type key struct {
		part  int32
		parts uint64
		req   workload.Request
	}
	seen := map[key]bool{}
	for i := range c.pending {
		pj := &c.pending[i]
		k := key{pj.Part, pj.Parts, pj.Req}
		if _, ok := seen[k]; ok {
			continue
		}
		seen[k] = true
		if !c.fitsNodes(pj, false) && c.fitsNodes(pj, true) {
			return true
		}
	}
	return false
}

// fitsNodes reports whether the pending job fits one of its partitions
// with every node in service empty, and, with repaired, also the nodes
// the failure model alone holds down.
func (c *controller) fitsNodes(pj *PendingJob, repaired bool) bool {
	need := Needed(&pj.Req)
	for m := pj.Parts | 1<<uint(pj.Part); m != 0; m &= m - 1 {
		p := int32(bits.TrailingZeros64(m))
		var got int32
		for _, n := range c.cluster.Partitions[p].Nodes {
			off := c.off[n]
			if repaired {
				off &^= offFail
			}
			node := &c.cluster.Nodes[n]
			if off != 0 || !Eligible(node, p, pj.Req.GPUType) {
				continue
			}
			if got += UnitsOn(&pj.Req, Capacity(node)); got >= need {
				return true
			}
		}
	}
	return false
}

// repairMatters reports, before a failed node is repaired, whether the
// repair may let a queued job start that could not before.
func (c *controller) repairMatters() bool {
	if c.nextSub < c.js.n || c.runningCount() > 0 {
		return true // not quiet anyway: any answer will do
	}
	return c.awaitRepair()
}

// unfinishedNote describes the jobs left unfinished, by their last
// reason, or returns "" when there are none.
func (c *controller) unfinishedNote() string {
	counts := map[string]int{}
	total := 0
	for i := range c.rec {
		r := &c.rec[i]
		if r.State != Unfinished {
			continue
		}
		total++
		counts[r.Reason]++
	}
	if total == 0 {
		return ""
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		if k == "" {
			k = "running"
		}
		parts[i] = fmt.Sprintf("%d %s", counts[keys[i]], k)
	}
	why := strings.Join(parts, ", ")
	if c.stopped {
		return fmt.Sprintf("%d jobs never finished: the run stopped at its horizon, t=%d, with events still to come (%s); without a requeue limit (Config.MaxRequeue), jobs that a failure model kills before they can complete are requeued until it (see Config.Horizon)",
			total, c.now, why)
	}
	if c.quiesced {
		return fmt.Sprintf("%d jobs never finished: the run stopped at t=%d, when no job was running or due and %d s of passes had started nothing (%s)",
			total, c.now, c.now-c.quietSince, why)
	}
	return fmt.Sprintf("%d jobs never finished: they were left pending with nothing left to happen (%s)", total, why)
}
