package sim

// How a run that nothing cuts short ends. A started job's run lasts its
// recorded runtime (what a requeue left of it, scaled by the runtime
// model) and ends in the final state the trace recorded
// (workload.Job.TraceState), so that dependencies see what happened:
// afterok children of a FAILED job never run, afternotok recovery jobs
// do. The simulation overrides that state when it ends the run itself:
// the time-limit check (TIMEOUT), a preemption (PREEMPTED, or requeued), a
// node failure (NODE_FAIL, or requeued), the horizon (UNFINISHED).
//
//	trace state                  run ends after its runtime as
//	COMPLETED, none, other       COMPLETED
//	FAILED, SPECIAL_EXIT         FAILED
//	OUT_OF_MEMORY                OUT_OF_MEMORY
//	CANCELLED (after a start)    CANCELLED
//	NODE_FAIL                    NODE_FAIL (not requeued: it was not)
//	PREEMPTED                    PREEMPTED (likewise)
//	BOOT_FAIL                    BOOT_FAIL
//	DEADLINE                     DEADLINE
//	TIMEOUT                      never on its own: it runs until the
//	                             time-limit check kills it (TIMEOUT)
//
// A TIMEOUT job's recorded runtime is where Slurm killed it, not the work
// it had: the simulation lets it run to its own limit. States the trace
// records for jobs that had not ended (RUNNING, PENDING, SUSPENDED,
// REQUEUED, RESIZING) and other words end COMPLETED: their runtime is all
// that is known. A job the trace shows cancelled before it started
// (workload.Job.CancelledPending) never starts; see the controller's
// submit.

// traceOutcome maps a trace state to the state a run that ends on its own
// ends in, and reports whether the trace recorded that state (false for
// states of jobs that had not ended, and unknown words). toLimit is true
// for TIMEOUT: the run ends only at its time limit.
func traceOutcome(traceState string) (st State, recorded, toLimit bool) {
	switch traceState {
	case "COMPLETED":
		return Completed, true, false
	case "FAILED", "SPECIAL_EXIT":
		return Failed, true, false
	case "OUT_OF_MEMORY":
		return OutOfMemory, true, false
	case "CANCELLED":
		return Cancelled, true, false
	case "NODE_FAIL":
		return NodeFail, true, false
	case "PREEMPTED":
		return Preempted, true, false
	case "BOOT_FAIL":
		return BootFail, true, false
	case "DEADLINE":
		return Deadline, true, false
	case "TIMEOUT":
		return Timeout, false, true
	}
	return Completed, false, false
}
