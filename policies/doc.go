// Package policies holds the scheduling policies schedsim can replay a trace
// under, behind sim.Policy, and the pieces they are built from.
//
// A policy sees only a read-only sim.View (time, queue in submit order,
// running jobs with their time-limit ends, per-node free resources) and
// returns a sim.Plan: the jobs to start now and the nodes to start them on.
// The controller in package sim checks and applies the plan; policies never
// mutate cluster state and never see actual runtimes.
//
// Policies:
//
//   - fifo (FIFO): strict priority order, no backfill. Jobs start in queue
//     order while they fit; the first job that does not fit blocks the rest.
//   - easy (EASY): textbook EASY backfilling (Mu'alem and Feitelson, "Utilization,
//     predictability, workloads, and user runtime estimates in scheduling
//     the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001). The first
//     job that cannot start gets a reservation at its shadow time; later
//     jobs may start now only if they do not delay it.
//   - conservative (Conservative): textbook conservative backfilling: every
//     queued job gets a reservation in queue order, as a rebuild at each
//     pass would give; the schedule is kept between passes and only what
//     a change may move is placed again.
//   - slurm (package policies/slurm, slurm.Policy): slurmctld's behaviour: multifactor priority (package
//     priority), PriorityTier ordering, the event-driven main scheduler with
//     partition blocking, the periodic backfill pass with whole-node
//     reservations, partition and QOS limits, preemption
//     (docs/slurm-policy.md).
//
// Node choice is delegated to a Placer: FirstFit (Slurm's lowest-numbered
// node first), best-fit, topology-tree and mig-packing. Placement is
// all-or-nothing: a Placer stages a whole allocation and the policy
// commits it or discards it.
//
// Policies are built by name from a Registry of Factory functions;
// Standard returns this package's set, and policies/catalog.Builtin adds
// slurm to it: slurm builds on Pass, Demand and the placers here, so it
// lives in a package of its own above this one. Nothing registers itself
// in init.
//
// A new policy implements sim.Policy: Begin starts a run and declares the
// policy's passes (fifo, easy and conservative one after every event,
// OnEvents; slurm its main pass, full main pass, backfill cycle and
// slurmctld's timing within the second, taking its defaults from the
// cluster's slurm.conf settings), Schedule runs the passes due, reading
// the view and returning the plan, and JobStarted and JobEnded report
// each run of a job. Base gives the methods a policy that keeps nothing
// needs to do nothing with; policytest.Run is the conformance test every
// policy passes.
// docs/policy.md is the contract with a worked example
// (policydoc_test.go).
//
// See README.md for the pipeline of one scheduling pass.
package policies
