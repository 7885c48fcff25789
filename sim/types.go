package sim

import (
	"math/rand/v2"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

// Time is virtual time in whole seconds since the trace epoch.
type Time = workload.Time

// JobRef identifies a job of the run: its index in the workload's job slice.
type JobRef int32

// NodeAlloc is what a job holds (or is to be given) on one node.
type NodeAlloc struct {
	Node int32 // index into the cluster's Nodes
	GPUs int32 // whole GPUs (never MIG GPUs)
	CPUs int32
	// MIG is the MIG instances held on the node (see mig.go), zero for
	// none; a MIG job holds instances and no whole GPUs. It sits in what
	// was padding, so a NodeAlloc is no larger.
	MIG   MIGAlloc
	MemMB int64
	// MPS is an MPS job's share of one GPU on the node (see mps.go), zero
	// for none; an MPS job holds no whole GPUs. It makes a NodeAlloc 32
	// bytes (from 24).
	MPS MPSAlloc
}

// PendingJob is a queued, eligible job as a policy sees it.
type PendingJob struct {
	Ref      JobRef
	Submit   Time
	Eligible Time
	// Limit is the time limit the scheduler plans with (seconds, > 0): the
	// job's own, or its partition's MaxTime, or its runtime when neither is
	// known. Policies never see actual runtimes.
	Limit Time
	// Part indexes the cluster's Partitions: the first partition of the
	// job's list that the cluster has, can hold the job and whose limits
	// it meets.
	Part int32
	// Parts has bit i set for every partition the job may run in (sbatch
	// -p a,b) whose limits (MaxTime, MaxNodes) it meets; Part's bit is
	// always set. The controller takes the job's
	// partition for a start to be the first of these whose nodes hold the
	// whole allocation.
	Parts uint64
	// Req is the resolved request: GPUType is empty when the cluster has no
	// node of the type the trace asked for.
	Req workload.Request
}

// RunningJob is a job holding resources.
type RunningJob struct {
	Ref   JobRef
	Start Time
	// End is when the job will have ended at the latest: Start+Limit, or,
	// with Config.OverTimeLimit or Config.TimeLimitSweep, when the
	// time-limit check would kill it; earlier when a preemption's grace
	// time ends first. It is never before the view's Now. The actual end
	// may be earlier; policies are not told.
	End   Time
	Part  int32
	Alloc []NodeAlloc
}

// NodeState is a node's free resources at the view's time.
type NodeState struct {
	// FreeGPUs counts free whole GPUs; a node's GPUs in MIG mode are not
	// among them.
	FreeGPUs  int32
	FreeCPUs  int32
	FreeMemMB int64
	// MIG is the free MIG capacity (see MIGFree), zero for a node without
	// MIG GPUs.
	MIG MIGFree
	// MPS is the node's MPS state (see MPSFree), zero for a node without
	// MPS. A GPU with MPS clients is not among FreeGPUs.
	MPS MPSFree
}

// View is a read-only snapshot of the cluster and queue at Now. Slices are
// owned by the controller: a policy must not modify them or keep them after
// Schedule returns.
type View interface {
	Now() Time
	// Pending lists eligible queued jobs in submit order, ties by JobRef.
	Pending() []PendingJob
	// Running lists running jobs by JobRef.
	Running() []RunningJob
	// Nodes gives each node's free resources, indexed like Cluster().Nodes.
	Nodes() []NodeState
	Cluster() *hwmodels.Cluster
	// Job returns the workload job behind ref; read only.
	Job(ref JobRef) *workload.Job
	// Reservations lists the advance reservations (maintenance windows)
	// that have not ended, by Start then Name. A job may not run on a
	// reserved node at any time inside the window.
	Reservations() []AdvanceReservation
}

// NodeChanges is an optional View capability for a policy that keeps its
// own copy of Nodes between passes and updates it instead of copying the
// whole slice every pass.
type NodeChanges interface {
	// ChangedNodes lists, each once and in no set order, the nodes whose
	// free state may have changed since the previous call in this run:
	// every node at the first call. The slice is owned like Nodes.
	ChangedNodes() []int32
}

// RunInfo is what a policy is told when a run begins (Policy.Begin).
type RunInfo struct {
	// Cluster is the run's cluster, the one every View of the run
	// returns. Its Slurm field holds the cluster's slurm.conf settings
	// (kept by `schedsim cluster import`; nil for none), which a policy
	// may take its defaults from.
	Cluster *hwmodels.Cluster
	// Jobs is how many jobs the run has: JobRefs are 0 to Jobs−1, so
	// per-job state can be sized once.
	Jobs int
}

// Start is a policy's decision to start a job now on the given nodes.
type Start struct {
	Job   JobRef
	Alloc []NodeAlloc
}

// Plan is what one scheduling pass decided. The controller applies Starts in
// order, checking each against capacity and job state; a bad decision stops
// the run with an error naming the policy, job and node. The controller
// does not retain the Plan's slices, so a policy may reuse them.
type Plan struct {
	// Preempts are applied first, then Starts.
	Preempts []Preemption
	Starts   []Start
	// Reasons say why jobs left pending wait; the controller records each
	// change of a job's reason in Record.Reasons.
	Reasons []Reason
}

// Triggers says when a policy wants a scheduling pass: after any instant at
// which a job was submitted or ended (OnEvent), and/or every Interval
// seconds (0 = never). The controller turns these into events; policies
// hold no timers.
type Triggers struct {
	OnEvent  bool
	Interval Time
}

// Policy runs scheduling passes. Given the same View and rng state it must
// return the same Plan.
type Policy interface {
	Name() string
	// Begin starts a run: Run calls it once, before anything else of the
	// run (Triggers included) and before the first pass, and a policy
	// drops whatever it kept from an earlier run. A policy value may be
	// reused for any number of runs one after another, never two at once;
	// Begin may also be called before a run to check that the policy can
	// run on the cluster (the scenario build does). An error (a setting of
	// the cluster the policy cannot take) stops the run before it starts.
	Begin(info RunInfo) error
	Triggers() Triggers
	Schedule(v View, rng *rand.Rand) Plan
}

// State is a job's final state in the simulation (sacct's State). A run
// that ends on its own, after its recorded runtime, ends in the state the
// trace recorded (see outcome.go); the simulation overrides it when it
// kills the run first (TIMEOUT, PREEMPTED, NODE_FAIL).
type State uint8

// Final states. New states are added at the end, so the values of older
// ones never change.
const (
	Completed State = iota + 1
	// Timeout: killed at its time limit (the trace recorded TIMEOUT, or
	// the run needed longer than its limit).
	Timeout
	// Cancelled: cancelled before it started (the trace says so, or
	// kill_invalid_depend), or, with a start, cancelled while running
	// after its recorded runtime, as the trace recorded.
	Cancelled
	Rejected   // can never run on this cluster; Record.Reason says why
	Unfinished // still pending or running when the run stopped
	// Preempted: preempted and not requeued (PreemptMode=CANCEL), or, with
	// JobRecord.Recorded, preempted in the trace.
	Preempted
	// NodeFail: its node failed and it was not requeued, or, with
	// JobRecord.Recorded, its node failed in the trace.
	NodeFail
	Failed      // ended FAILED (a non-zero exit) after its runtime, as recorded
	OutOfMemory // ended OUT_OF_MEMORY after its runtime, as recorded
	BootFail    // ended BOOT_FAIL after its runtime, as recorded
	Deadline    // ended DEADLINE after its runtime, as recorded
	// NumStates is one more than the largest State: states are 1 to
	// NumStates−1.
	NumStates
)

var stateNames = [NumStates]string{
	"UNKNOWN", "COMPLETED", "TIMEOUT", "CANCELLED", "REJECTED", "UNFINISHED", "PREEMPTED", "NODE_FAIL",
	"FAILED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
}

func (s State) String() string {
	if s < NumStates {
		return stateNames[s]
	}
	return "UNKNOWN"
}

// JobRecord is what happened to one job. Start and End are
// workload.Unknown for jobs that never started.
type JobRecord struct {
	// The small fields come first, so a record is 88 bytes, not 104: a
	// run keeps one per job.
	Ref JobRef
	// Part indexes the cluster's Partitions; -1 for jobs rejected before a
	// partition was chosen.
	Part int32
	// Requeues counts how often the job was requeued (preemption, node
	// failure); its earlier runs are in Record.Runs. Submit stays the
	// trace's submit time; Slurm's new submit time for the rerun (the
	// requeue) is the End of the job's last run in Record.Runs, and the
	// rerun is queued (PendingJob.Submit) as of then. Eligible, Start and
	// End are the final run's.
	Requeues int32
	State    State
	// Recorded is true when the final run ended on its own, after its
	// recorded runtime, in the state the trace recorded
	// (workload.Job.TraceState; outcome.go), and false when the
	// simulation decided the state: TIMEOUT at the limit, a preemption
	// or node failure of the simulation, a job that never started. It
	// sits in padding, so a record is no larger.
	Recorded bool
	Submit   Time
	Eligible Time
	Start    Time
	End      Time
	// Reason explains Rejected, gives an Unfinished job's last pending
	// reason (PendingReason.String), and notes remappings (such as an
	// unknown partition); empty otherwise.
	Reason string
	Alloc  []NodeAlloc
}

// GPUs returns the total GPUs the job held.
func (r *JobRecord) GPUs() int64 {
	var n int64
	for _, a := range r.Alloc {
		n += int64(a.GPUs)
	}
	return n
}

// Record is the append-only account of a run that reports read.
type Record struct {
	Cluster *hwmodels.Cluster
	Trace   *workload.Trace
	Policy  string
	Seed    uint64
	// Jobs has one entry per workload job, indexed by JobRef.
	Jobs []JobRecord
	// End is the virtual time the run stopped at.
	End Time
	// Notes are remarks on the run (remapped partitions, ignored GPU types).
	Notes []string
	// Events counts the events the engine processed.
	Events int64
	// Reasons is every change of a pending job's reason, in event order,
	// packed (see ReasonLog).
	Reasons ReasonLog
	// Runs are the earlier runs of requeued jobs, in the order they ended.
	Runs []RunSegment
	// NodeEvents are the changes of node availability as they happened
	// (explicit node events and the failure model's failures and repairs),
	// in event order. An event that changed nothing (a node taken down
	// that was down already) is not listed.
	NodeEvents []NodeEvent
	// RuntimeChanges lists the runs whose length the runtime model
	// (Config.Runtime) changed, in start order; nil without it.
	RuntimeChanges []RuntimeChange
	// MIG lists every MIG instance a job held, in start order, and
	// MIGRepartitions every repartition of a dynamic MIG GPU; nil for a
	// cluster without MIG GPUs.
	MIG             []MIGHold
	MIGRepartitions []MIGRepartition
	// PowerSaving is true when the controller modeled power saving (the
	// cluster's power model has a SuspendTime; see power.go), and
	// Suspends then lists every interval a node spent powered down: those
	// a job's start ended, in event order, then those still down when the
	// run stopped, by node.
	PowerSaving bool
	Suspends    []NodeSuspend
}
