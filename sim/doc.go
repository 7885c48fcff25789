// Package sim owns virtual time and job lifecycle: it replays a workload
// on a cluster under a scheduling policy and records what happened.
//
// Run(cfg) is the whole of it. The controller submits the trace's jobs at
// their submit times, holds them at their gates (dependencies, begin
// times, array throttles, partition limits), and asks the policy for
// decisions:
//
//  1. Policy.Begin(RunInfo) starts the run: the cluster and the number of
//     jobs. A policy value serves one run at a time and starts over here.
//  2. Policy.Triggers says when passes run (after events, every Interval
//     seconds) and how long passes that start nothing must go on before
//     the run may end (Settle; the termination guard, quiesce.go).
//  3. At each pass, while jobs are queued, Policy.Schedule reads a View,
//     a read-only snapshot (queue in submit order with time limits, never
//     runtimes; running jobs with their latest ends; free resources per
//     node; maintenance windows; the Delta since the previous pass), and
//     returns a Plan: preemptions, starts and pending reasons.
//  4. The controller checks every decision of the plan (job state,
//     capacity, eligibility, reservations) and applies it; a bad one stops
//     the run with an error naming the policy, job and node.
//  5. Policy.JobStarted and JobEnded report each run of a job as it
//     starts and ends, for policies that keep usage.
//
// Runs end on their own: after their runtime (in the state the trace
// recorded, outcome.go), at their time limit (TIMEOUT, with the
// time-limit sweep and KillWait of Config), by preemption (requeue.go),
// or with their node (failures and drains, nodes.go). The Record lists
// every job's final run, earlier runs of requeued jobs, pending reasons,
// node events, MIG, power and runtime-model changes; package reports reads
// it, never the live controller.
//
// A run is a pure function of (Config, trace, seed): events are ordered by
// (time, class, sequence), per-stream random sources derive from the seed
// (StreamSeed), and no map order reaches a decision. The bare event queue
// lives in sim/event. sim never imports the policies: the policy arrives
// as a Policy value. docs/policy.md shows how to write one.
package sim
