package policies

import "github.com/schedsim/schedsim/sim"

// Base gives a policy the parts of sim.Policy that many need to do nothing
// with: a Begin that keeps no state and accepts every cluster, and
// JobStarted and JobEnded that ignore the reports. Embed it and write
// Name, Triggers and Schedule (and Begin, when the policy keeps state
// between passes):
//
//	type Mine struct {
//		policies.Base
//		// ...
//	}
//
// A wrapper that forwards to another policy must forward every method
// instead, so that none of the inner policy's is lost.
type Base struct{}

// Begin implements sim.Policy: there is nothing to start over.
func (Base) Begin(sim.RunInfo) error { return nil }

// JobStarted implements sim.Policy: it ignores the report.
func (Base) JobStarted(sim.JobRef, sim.Time, []sim.NodeAlloc) {}

// JobEnded implements sim.Policy: it ignores the report.
func (Base) JobEnded(sim.JobRef, sim.Time, []sim.NodeAlloc, sim.State) {}
