package sim

import (
	"fmt"
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
	// MPS is an MPS job's share of one GPU on the node (see mps.go), zero
	// for none; an MPS job holds no whole GPUs. It sits in what was
	// padding.
	MPS   MPSShare
	MemMB int64
	// MIG is the MIG instances held on the node (see mig.go), zero for
	// none; a MIG job holds instances and no whole GPUs. It makes a
	// NodeAlloc 40 bytes (from 32, when it was a packed word).
	MIG MIGInstances
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
	// time ends first (with Timing.EndAtLimit, Slurm's end_time instead).
	// It is never before the view's Now. The actual end may be earlier;
	// policies are not told.
	End  Time
	Part int32
	// Killed says the time-limit check has killed the run: it holds what
	// it keeps (its batch host, or its one node) only for KillWait, until
	// End. Slurm has the job completing then, its resources free in the
	// select plugin and its nodes in cg_node_bitmap.
	Killed bool
	Alloc  []NodeAlloc
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
	// Job returns what the trace says of job ref (its submitter,
	// partitions and limit as submitted), without its runtime.
	Job(ref JobRef) JobInfo
	// Reservations lists the advance reservations (maintenance windows)
	// that have not ended, by Start then Name. A job may not run on a
	// reserved node at any time inside the window.
	Reservations() []AdvanceReservation
	// Delta says what changed since the previous pass (Schedule call) of
	// the run, so a policy that keeps its own copy of Nodes (or of the
	// running jobs) can update it instead of rebuilding it every pass.
	// It is the same for every call within one pass.
	Delta() Delta
}

// Delta is what changed between two passes of a run. Its slices are owned
// like those of the View.
type Delta struct {
	// Nodes lists, each once and in no set order, the nodes whose free
	// state may have changed since the previous pass: every node at the
	// first pass of a run. A node not listed has the free state it had
	// then.
	Nodes []int32
	// Started lists the jobs that started running since the previous
	// pass (those its plan started among them), in start order, and
	// Ended those whose run ended (completed, killed at the time limit,
	// preempted, failed with their node, requeued), in end order. A job
	// may be in both, and a requeued job may be in Started again.
	Started, Ended []JobRef
	// QueueKnown says Queued is kept: a hand-made view leaves it false,
	// and a policy then takes any pending job to be possibly new.
	QueueKnown bool
	// Queued lists, in ascending order, the indices into Pending of the
	// jobs that entered the pending list since the previous pass
	// (submitted, released by a dependency, a begin time or an array
	// throttle, back from a requeue hold). A job leaves the pending list
	// only by starting (Started), and its entry does not change while it
	// stays there, so the list a pass sees is the last pass's, less the
	// jobs started since, with these inserted.
	Queued []int32
}

// JobInfo is what a policy may know of a job beyond its PendingJob: who
// submitted it, to which partitions and QOS, and the limit it asked for.
// Schedulers never see how long a job will run, unless the run is an
// oracle study (Config.Oracle).
type JobInfo struct {
	ID, Name           string
	User, Account, QOS string
	// Partition is the partition list as submitted ("a,b"); the
	// PendingJob's Part and Parts are the ones the job may run in.
	Partition string
	// ArrayJobID is the array's job id for array tasks, else empty;
	// ArrayTaskID is the task index, or -1.
	ArrayJobID  string
	ArrayTaskID int32
	// TimeLimit is the limit as submitted (seconds), or workload.Unknown;
	// PendingJob.Limit is the one to plan with.
	TimeLimit Time
	Submit    Time
	// Runtime is the job's runtime in the trace with Config.Oracle, and
	// workload.Unknown otherwise.
	Runtime Time
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
	// KillWait and PreemptGraceTime are the controller's (Config): what a
	// plan's Preempts free before its Starts are applied. With no grace
	// time a preempted job's nodes other than its batch host (BatchHost)
	// are free at once, and all of them with no KillWait either; the
	// job's End in later views is at most the preemption + KillWait.
	KillWait, PreemptGraceTime Time
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

// Pass declares one kind of scheduling pass (Timing.Passes). Schedule is
// told which of them are due (a PassSet of their indices); how a pass
// becomes due:
//
//   - With OnEvent, after every event that can let a job start: a submit,
//     a job becoming eligible, a job end, a node back in service, the end
//     of a maintenance window. With a Period too, only events at the
//     instants of its grid count.
//   - Without OnEvent, with a Period: at each instant of its grid, in the
//     first Schedule call of the instant. While jobs are queued the
//     controller makes a call at every instant of the grid after the one
//     at which the queue last became non-empty (a policy with periodic
//     passes only does not run at the instant of a submit).
//
// When several passes are due at one instant, the controller calls
// Schedule once with all of them, and the policy runs them in the order
// it declared them; each call sees every job end, node change, submit and
// cancellation of its instant (but see Timing.EndsAfterPasses).
type Pass struct {
	// Name names the pass in errors and documentation ("main",
	// "backfill").
	Name string
	// Period > 0 gives the pass a grid: the instants Phase + k·Period
	// (seconds, Phase in [0, Period)); 0, none (Phase 0).
	Period, Phase Time
	OnEvent       bool
	// AfterEnds (with OnEvent, and Timing.EndsAfterPasses) runs the pass
	// after the job ends of its instant, for those ends only: see
	// Timing.EndsAfterPasses. A job such a pass started ends just after
	// that pass's phase: its end comes after the AfterEnds passes of its
	// own instant, and the passes it asks for run at the next.
	AfterEnds bool
}

// PassSet is a set of passes, by index into Timing.Passes.
type PassSet uint64

// Has reports whether pass i is in the set.
func (s PassSet) Has(i int) bool { return i >= 0 && i < 64 && s&(1<<uint(i)) != 0 }

// MaxPasses is how many passes a policy may declare.
const MaxPasses = 64

// Timing is a policy's answer to Begin: the passes it runs and what the
// run's timing around them is.
type Timing struct {
	// Passes are the policy's kinds of pass, at least one and at most
	// MaxPasses.
	Passes []Pass
	// Settle is how many seconds of passes that start nothing, after the
	// last change of the run's state, show that no later pass would start
	// anything either: long enough for every kind of pass the policy runs
	// (a backfill cycle, a full main pass, a priority recalculation) to
	// have run at least once. The run then ends (the termination guard,
	// quiesce.go). Zero means the longest Period: none for a policy that
	// runs on events only.
	Settle Time
	// EndsAfterPasses applies a job's end at instant t after t's passes,
	// so the resources it frees are first used by a later pass: slurmctld's
	// cycles run at a phase within the second, and a job a cycle started
	// ends just after that phase (its whole seconds of work later), so on
	// 22.05 the next job starts at the next cycle, about a second after
	// the end. A job end (and what it makes eligible) then asks for the
	// OnEvent passes with AfterEnds on whose grid t lies, run at t after
	// the instant's ends (Slurm's main scheduler, triggered by the end,
	// in the seconds of its sched_min_interval grid), or, where there is
	// none, for the other OnEvent passes at t+1. Off, the default, ends
	// come first and the same instant's passes use them.
	EndsAfterPasses bool
	// EndAtLimit gives running jobs in the View the End Slurm's backfill
	// plans with, its end_time: start + time limit, and once that has
	// passed (a job in the time-limit sweep's slack, or in KillWait), the
	// next second (cons_tres's will-run test starts a job at now+1 behind
	// a running job whose end_time is past). Without it a running job's
	// End is its latest end: the sweep's kill instant plus KillWait, up to
	// 29 s + KillWait later than Slurm plans.
	EndAtLimit bool
}

// Policy decides. Given the same View, passes and rng state, Schedule
// must return the same Plan.
type Policy interface {
	Name() string
	// Begin starts a run: Run calls it once, before anything else of the
	// run and before the first pass, and the policy answers with its
	// passes and timing; a policy drops whatever it kept from an earlier
	// run. A policy value may be reused for any number of runs one after
	// another, never two at once; Begin may also be called before a run to
	// check that the policy can run on the cluster (the scenario build
	// does). An error (a setting of the cluster the policy cannot take, a
	// bad Timing) stops the run before it starts.
	Begin(info RunInfo) (Timing, error)
	// Schedule runs the passes due now (at least one) and returns what
	// they decided. It is called only while jobs are queued.
	Schedule(due PassSet, v View, rng *rand.Rand) Plan
	// JobStarted and JobEnded report every start and end of a job's run
	// as it happens, in event order, with the time and allocation (which
	// must not be retained), so a policy can keep usage (fair share)
	// without polling. A start is reported as the pass's plan is applied,
	// with at the instant the job begins to run (later than the pass when
	// a MIG GPU is repartitioned or a node resumes first); an end at the
	// instant its resources are freed, with the state the run ended in.
	// A policy that needs neither embeds policies.Base or writes empty
	// methods.
	JobStarted(ref JobRef, at Time, alloc []NodeAlloc)
	JobEnded(ref JobRef, at Time, alloc []NodeAlloc, state State)
}

// onGrid reports whether instant t lies on pass p's grid (every instant
// when it has no Period).
func (p *Pass) onGrid(t Time) bool {
	return p.Period <= 0 || ((t-p.Phase)%p.Period+p.Period)%p.Period == 0
}

// check validates a policy's Timing.
func (tm *Timing) check() error {
	if len(tm.Passes) == 0 || len(tm.Passes) > MaxPasses {
		return fmt.Errorf("declares %d passes, want 1 to %d", len(tm.Passes), MaxPasses)
	}
	if tm.Settle < 0 {
		return fmt.Errorf("Settle must be >= 0, got %d", tm.Settle)
	}
	for i := range tm.Passes {
		p := &tm.Passes[i]
		switch {
		case p.Name == "":
			return fmt.Errorf("pass %d has no name", i)
		case p.Period < 0 || p.Phase < 0 || p.Phase > 0 && p.Phase >= p.Period:
			return fmt.Errorf("pass %s: want Period >= 0 and Phase in [0, Period), got %d and %d", p.Name, p.Period, p.Phase)
		case !p.OnEvent && p.Period == 0:
			return fmt.Errorf("pass %s: neither OnEvent nor a Period: it would never run", p.Name)
		case p.AfterEnds && (!p.OnEvent || !tm.EndsAfterPasses):
			return fmt.Errorf("pass %s: AfterEnds needs OnEvent and Timing.EndsAfterPasses", p.Name)
		}
	}
	return nil
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
	// The small fields come first, so a record is 80 bytes, not 104: a
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
	// Alloc is the final run's allocation (see Allocs), none for a job
	// that never started.
	Alloc Allocs
}

// GPUs returns the total GPUs the job held.
func (r *JobRecord) GPUs() int64 {
	var n int64
	for _, a := range r.Alloc.All() {
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
	// Passes are the passes the policy declared at Begin (Timing.Passes),
	// so that a report can read a policy's cadence (the backfill cycle's
	// period) without knowing its type.
	Passes []Pass
}
