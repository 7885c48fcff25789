// Package policytest helps test scheduling policies: a hand-built fake
// sim.View for unit tests of a single pass, small cluster builders, and
// Run, the conformance harness every policy passes: on generated workloads
// run through sim.Run with capacity checking, no node is oversubscribed, no
// job starts before it is submitted, every plan names pending jobs on
// eligible nodes with free room and satisfying their requests, and the same
// seed gives the same record twice.
//
// It imports sim, workload and hwmodels, never policies, so that the
// policies package's own tests can use it.
package policytest
