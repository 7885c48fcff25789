package policies

import "github.com/schedsim/schedsim/sim"

// Base gives a policy the parts of sim.Policy that many need to do nothing
// with: a Begin that keeps no state, accepts every cluster and declares
// one pass after every event (OnEvents), and JobStarted and JobEnded that
// ignore the reports. Embed it and write Name and Schedule (and Begin,
// when the policy keeps state between passes or runs other passes):
//
//	type Mine struct {
//		policies.Base
//		// ...
//	}
//
// A wrapper that forwards to another policy must forward every method
// instead, so that none of the inner policy's is lost.
type Base struct{}

// Begin implements sim.Policy: there is nothing to start over, and the
// policy has one pass after every event.
func (Base) Begin(sim.RunInfo) (sim.Timing, error) { return OnEvents(), nil }

// OnEvents returns the Timing of a policy with one pass, "main", after
// every event that can let a job start (FIFO, EASY, conservative): ends
// are applied before it, and the run settles at once when nothing can
// start.
func OnEvents() sim.Timing {
	return sim.Timing{Passes: []sim.Pass{{Name: "main", OnEvent: true}}}
}

// JobStarted implements sim.Policy: it ignores the report.
func (Base) JobStarted(sim.JobRef, sim.Time, []sim.NodeAlloc) {}

// JobEnded implements sim.Policy: it ignores the report.
func (Base) JobEnded(sim.JobRef, sim.Time, []sim.NodeAlloc, sim.State) {}
