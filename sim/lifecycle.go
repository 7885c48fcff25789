package sim

// Types for Slurm's job lifecycle beyond submit → run → end: pending
// reasons, preemption, node failures, advance reservations and the
// observer capability. The controller implements their behaviour; these
// are the contract between it and the policies.

// PendingReason says why a job waits, as the REASON column of Slurm's
// squeue names it.
type PendingReason uint8

// Pending reasons.
const (
	ReasonNone                     PendingReason = iota
	ReasonPriority                               // higher-priority jobs go first
	ReasonResources                              // not enough free resources
	ReasonDependency                             // a dependency is not yet satisfied
	ReasonDependencyNeverSatisfied               // a dependency can no longer be satisfied
	ReasonJobArrayTaskLimit                      // the array's %N throttle is reached
	ReasonQOSMaxJobsPerUserLimit
	ReasonQOSMaxTRESPerUserLimit
	ReasonQOSGrpTRESLimit
	ReasonPartitionTimeLimit // limit above the partition's MaxTime (EnforcePartLimits=NO)
	ReasonPartitionNodeLimit // more nodes than the partition's MaxNodes
	ReasonReqNodeNotAvail    // nodes down or reserved (maintenance)
	ReasonBeginTime          // held after a requeue until its begin time
	ReasonHeld               // held (the trace shows it cancelled before it started)
	// ReasonJobHoldMaxRequeue: held for good after Config.MaxRequeue
	// requeues (Slurm's WAIT_MAX_REQUEUE).
	ReasonJobHoldMaxRequeue
	numReasons
)

var reasonNames = [numReasons]string{
	"None", "Priority", "Resources", "Dependency", "DependencyNeverSatisfied",
	"JobArrayTaskLimit", "QOSMaxJobsPerUserLimit", "QOSMaxTRESPerUserLimit",
	"QOSGrpTRESLimit", "PartitionTimeLimit", "PartitionNodeLimit",
	"ReqNodeNotAvail", "BeginTime", "JobHeldUser", "JobHoldMaxRequeue",
}

func (r PendingReason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "Unknown"
}

// Reason is a policy's statement of why a pending job did not start in a
// pass.
type Reason struct {
	Job    JobRef
	Reason PendingReason
}

// PreemptMode is what happens to a preempted job (Slurm PreemptMode).
type PreemptMode uint8

// Preemption modes.
const (
	PreemptCancel  PreemptMode = iota + 1 // the job ends PREEMPTED
	PreemptRequeue                        // the job returns to the queue, restarting from its last checkpoint
)

// Preemption is a policy's decision to preempt a running job.
type Preemption struct {
	Job  JobRef
	Mode PreemptMode
}

// AdvanceReservation holds nodes for [Start, End) (a maintenance window):
// no job may run on them during it.
type AdvanceReservation struct {
	Name       string
	Start, End Time
	// Nodes are indices into the cluster's Nodes, ascending.
	Nodes []int32
}

// NodeEvent takes a node down (failure, drain) or brings it back up.
//
// A node that goes down (Down set, Drain clear) fails: its running jobs end
// NODE_FAIL, or are requeued when they may be (workload.Job.Requeue or
// Config.JobRequeue), and their other nodes are freed at once. A drained
// node (Down and Drain set) keeps its running jobs but takes no new ones.
// Either way the View shows the node with nothing free until an event with
// Down clear brings it back. In Record.NodeEvents, Down says the node went
// out of service and Drain that it only drained.
type NodeEvent struct {
	At    Time
	Node  int32
	Down  bool
	Drain bool
}

// FailureModel draws node failures: every node fails after an
// exponentially distributed time with mean MTBF seconds of being up, and
// returns after an exponentially distributed repair time with mean MTTR
// seconds (each at least one second). Draws come from the run's "failures"
// random stream, so the same seed gives the same failures.
type FailureModel struct {
	MTBF, MTTR Time
}

// DefaultRequeueDelay is how long a requeued job is held before it may
// start again (Slurm's requeue_delay, the AuthInfo cred_expire default of
// 120 s).
const DefaultRequeueDelay Time = 120

// ReasonChange records that a job's pending reason became Reason at At.
type ReasonChange struct {
	At     Time
	Job    JobRef
	Reason PendingReason
}

// RunSegment is one run of a job that did not end its life: it was
// preempted and requeued, or its node failed and it was requeued. The
// job's final run is its JobRecord; earlier runs are segments (what
// sacct -D lists).
type RunSegment struct {
	Job JobRef
	// Eligible is when the job became eligible for this run: for its
	// first run as JobRecord.Eligible would have been, for a rerun when
	// its requeue hold ended (and it passed its array's throttle).
	// Start and End bound the run (End is the kill).
	Eligible   Time
	Start, End Time
	State      State // Preempted or NodeFail
	Alloc      Allocs
}
