// Package sim owns virtual time and job lifecycle: it replays a workload
// on a cluster under a scheduling policy and records what happened.
//
// Run(cfg) is the whole of it. The controller submits the trace's jobs at
// their submit times, holds them at their gates (dependencies, begin
// times, array throttles, partition limits), and asks the policy for
// decisions. The contract (types.go) is, in the order a run uses it:
//
//  1. Policy.Begin(RunInfo) starts the run (the cluster, the number of
//     jobs) and answers with the policy's Timing: the passes it runs, each
//     a Pass with a name, a grid (Period, Phase) and whether events
//     trigger it (OnEvent: a submit, a job end, a job becoming eligible, a
//     node back in service); how long passes that start nothing must go on
//     before a run with jobs still queued may end (Settle; quiesce.go);
//     and two Slurm timings, whether job ends come after the passes of
//     their second (EndsAfterPasses, with AfterEnds passes after them) and
//     whether the View gives running jobs Slurm's end_time (EndAtLimit).
//     A policy value serves one run at a time and starts over here.
//  2. The controller turns the passes into events; policies hold no
//     timers. At an instant where passes are due, while jobs are queued,
//     it calls Policy.Schedule once with the set of them (PassSet), which
//     the policy runs in its declared order. Schedule reads a View, a
//     read-only snapshot (queue in submit order with time limits, never
//     runtimes; running jobs with their latest ends; free resources per
//     node; maintenance windows; the Delta since the previous call), and
//     returns a Plan: preemptions, starts and pending reasons. A start
//     gives the job a NodeAlloc per node, plain values a policy writes as
//     literals: whole GPUs, CPUs and memory, MIG instances
//     (MIGInstances{Profile, Count}, PerGPU to choose a dynamic node's
//     GPUs) and an MPS share (MPSShare{GPU, Share}). The free state in
//     NodeState is read through methods (MIGFree, MPSFree), since the
//     view hands a copy of it per node to every pass.
//  3. The controller checks every decision of the plan (job state,
//     capacity, eligibility, reservations) and applies it; a bad one stops
//     the run with an error naming the policy, job and node.
//  4. Policy.JobStarted and JobEnded report each run of a job as it
//     starts and ends, for policies that keep usage.
//
// Events at one instant are ordered job ends, node changes, submits,
// releases, cancellations, passes (controller.go's classes), so a pass
// sees what its instant freed; with Timing.EndsAfterPasses, job ends move
// after the passes, AfterEnds passes come after them, and the ends of the
// jobs an AfterEnds pass started come last (a job ends just after the
// phase of the pass that started it).
//
// Runs end on their own: after their runtime (in the state the trace
// recorded, outcome.go), at their time limit (TIMEOUT, with the
// time-limit sweep and KillWait of Config), by preemption (requeue.go),
// or with their node (failures and drains, nodes.go). The time-limit
// sweep is the controller's, not a policy's: it kills jobs under every
// policy, on the replayed controller's clock (Config.TimeLimitSweep and
// TimeLimitSweepPhase), while what a policy's passes see of it is the
// policy's choice (EndAtLimit). The Record lists every job's final run,
// earlier runs of requeued jobs, pending reasons, node events, MIG, power
// and runtime-model changes; package reports reads it, never the live
// controller.
//
// A run is a pure function of (Config, trace, seed): events are ordered by
// (time, class, sequence), per-stream random sources derive from the seed
// (StreamSeed), and no map order reaches a decision. The bare event queue
// lives in sim/event. sim never imports the policies: the policy arrives
// as a Policy value. docs/policy.md shows how to write one.
package sim
