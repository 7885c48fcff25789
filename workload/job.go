package workload

import (
	"cmp"
	"iter"
	"slices"
)

// Time is a count of seconds. It is used both for instants (seconds since a
// trace's epoch) and for durations; the simulator never uses floats or
// time.Time for time.
type Time int64

// Unknown marks an unknown or absent time or duration.
const Unknown Time = -1

// MaxCheckpointInterval is the longest Job.CheckpointInterval, in seconds.
const MaxCheckpointInterval = 1<<31 - 1

// Request is what a job asks of the cluster. Counts are totals over the
// whole job, as sacct's ReqTRES/AllocTRES report them.
type Request struct {
	// Nodes is the exact node count the job needs. Zero means "as many as
	// needed": the job's GPUs (or, without GPUs, its CPUs) are spread over
	// any nodes, like sbatch -n without -N.
	Nodes int32
	// GPUs is the total GPU count; zero for CPU-only jobs.
	GPUs int32
	// GPUType restricts the job to nodes with that GPU model ("h100",
	// "a100"); empty means any type.
	GPUType string
	// CPUs is the total CPU count.
	CPUs int32
	// MIGProfile, when not zero, asks for MIG instances of that profile
	// instead of whole GPUs (--gres=gpu:1g.10gb:2): GPUs then counts
	// instances, spread or per node like GPUs, and GPUType, when set,
	// restricts them to MIG GPUs of that type (gpu:h100_1g.20gb:2). It sits
	// in what was padding, so a Request is no larger.
	MIGProfile MIGProfile
	// MemMB is the total memory in MiB; zero means unspecified.
	MemMB int64
	// MPSShare, when not zero, asks for an MPS share of one GPU on each of
	// the job's nodes, in percent (Slurm's --gres=mps:N with 100 per GPU;
	// 1 to 100, on one GPU per node): the job holds no whole GPUs (GPUs is
	// 0) and runs only on nodes that share GPUs by MPS. A request with
	// Nodes 0 takes one node. It grows a Request from 40 to 48 bytes.
	MPSShare int32
	// Switches is sbatch --switches=N (Slurm's req_switch): under
	// topology/tree the job starts only on nodes under at most N leaf
	// switches until it has waited SwitchWait; 0 for none. It and
	// SwitchWait sit in what was padding, so a Request is no larger.
	Switches uint8
	// SwitchWait is --switches=N@T's T in seconds (Slurm's wait4switch
	// before the max_switch_wait cap), at most 65,535; 0 when @T is not
	// given: the wait is then max_switch_wait (_max_switch_wait).
	SwitchWait uint16
}

// DepType is the kind of a job dependency (sbatch --dependency).
type DepType uint8

// Dependency kinds, as Slurm names them.
const (
	DepAfter DepType = iota + 1
	DepAfterAny
	DepAfterOK
	DepAfterNotOK
	DepSingleton
)

func (d DepType) String() string {
	switch d {
	case DepAfter:
		return "after"
	case DepAfterAny:
		return "afterany"
	case DepAfterOK:
		return "afterok"
	case DepAfterNotOK:
		return "afternotok"
	case DepSingleton:
		return "singleton"
	}
	return "unknown"
}

// Dependency says this job may not start until JobID (the trace's job id)
// reaches the state Type asks for. Singleton has no JobID.
type Dependency struct {
	Type  DepType
	JobID string
}

// Field is one trace column the replay does not interpret, kept so that no
// recorded information is thrown away. Name strings are shared between jobs
// of one trace.
type Field struct {
	Name  string
	Value string
}

// Job is one job of a workload.
type Job struct {
	// ID is the job id as the trace writes it ("123", "123_4", "123+0").
	ID        string
	Name      string
	User      string
	Account   string
	Partition string // may be "a,b" for a multi-partition submission
	QOS       string

	// ArrayJobID is the array's job id for array tasks, else empty;
	// ArrayTaskID is the task index, or -1.
	ArrayJobID  string
	ArrayTaskID int32
	// ArrayThrottle is the array's %N task throttle (sbatch --array=0-9%4):
	// at most that many of the array's tasks run at once. Zero means no
	// throttle. Every task of an array carries the same value.
	ArrayThrottle int32

	Request Request
	// TimeLimit is the requested wall-time limit in seconds, or Unknown.
	TimeLimit Time
	// Runtime is how long the job actually ran in the trace, in seconds.
	Runtime Time
	// Submit is the submit time in seconds (absolute in the trace's clock
	// until Trace.Rebase makes it relative to the epoch).
	Submit Time
	// CancelAfter is, for a job the trace shows cancelled before it ever
	// started, how many seconds after Submit the user cancelled it; Unknown
	// for every other job.
	CancelAfter Time

	Deps []Dependency

	// CheckpointInterval is how often the job saves its work, in seconds of
	// run time (at most MaxCheckpointInterval, 68 years: an int32 with
	// Requeue beside it keeps a Job at 288 bytes instead of 296); a
	// requeued job restarts from its last checkpoint. Zero means it never
	// checkpoints and restarts from scratch.
	CheckpointInterval int32
	// Requeue is sbatch --requeue: the job returns to the queue when it is
	// preempted or its node fails, instead of ending PREEMPTED or
	// NODE_FAIL. (The simulator's JobRequeue option makes every job
	// requeueable.)
	Requeue bool
	// EndEarly says the run that ends on its own (after Runtime) ends
	// early in its last second, before that second's scheduling passes,
	// also where the policy's timing applies ends after them
	// (sim.Timing.EndsAfterPasses): a replay of a real run that ended
	// just after a second began.
	EndEarly bool
	// KillWait, when positive, is one more than the seconds a kill of
	// the job's run by preemption keeps its batch host, in place of the
	// simulation's KillWait (a replay of a real run whose kill took
	// that long; 0: the simulation's). An int16 beside the two bools
	// keeps a Job at 288 bytes.
	KillWait int16

	// TraceState is the final state the trace recorded (COMPLETED, FAILED,
	// TIMEOUT, CANCELLED, ...). A started job ends in it after its runtime
	// unless the simulation ends it otherwise (sim's outcome.go).
	TraceState string
	// TraceStart and TraceEnd are the recorded start and end, in the same
	// clock as Submit, or Unknown.
	TraceStart Time
	TraceEnd   Time

	// Extra holds the trace's other columns. The readers share one list
	// between the jobs whose lists are equal: replace it, never modify
	// its elements in place.
	Extra []Field
}

// NewJob returns a Job with every optional time set to Unknown and no array
// task index, so the zero values of those fields never pass for real data.
func NewJob(id string) Job {
	return Job{
		ID:          id,
		ArrayTaskID: -1,
		TimeLimit:   Unknown,
		Runtime:     0,
		Submit:      0,
		CancelAfter: Unknown,
		TraceStart:  Unknown,
		TraceEnd:    Unknown,
	}
}

// CancelledPending reports whether the trace shows the job cancelled before
// it started.
func (j *Job) CancelledPending() bool { return j.CancelAfter != Unknown }

// Trace is a whole workload: jobs sorted by submit time (ties in the
// trace's order) with times relative to Epoch.
type Trace struct {
	// Epoch is the Unix time (seconds) that Time zero stands for. For
	// sacct traces, whose timestamps carry no zone, it is the wall-clock
	// reading taken as UTC.
	Epoch int64
	// Jobs are the jobs, unless Packed holds them (then Jobs is nil):
	// code that may see either reads them with Len, At and All.
	Jobs []Job
	// Packed holds the jobs of a trace too long to keep as Jobs
	// (traces.Options.PackAbove); nil otherwise.
	Packed *Packed
	// Source says where the jobs came from, for run headers.
	Source string
	// TimeZone is the IANA name of the zone the trace was recorded in
	// ("US/Eastern"), or "" for UTC or unknown. Times stay absolute Unix
	// seconds either way; the zone only says which wall clock local-time
	// figures (arrivals by hour of day, the daily cycle) and wall-clock
	// writers (sacct) use.
	TimeZone string
	// Notes are human-readable remarks from the reader (skipped records,
	// mappings applied), in the order they arose.
	Notes []string
}

// Rebase sorts jobs stably by submit time and makes every time relative to
// the first submit, which becomes the epoch. base is the Unix time the jobs'
// current clock counts from (0 when they hold Unix seconds already).
func (t *Trace) Rebase(base int64) {
	if t.Packed != nil {
		t.Packed = t.Packed.sortedBySubmit()
		if t.Packed.Len() == 0 {
			t.Epoch = base
			return
		}
		first := t.Packed.Submit(0)
		t.Epoch = base + int64(first)
		t.Packed.shift(-first) // trace start and end are stored relative to the submit
		return
	}
	// A trace in submit order (most logs) is left as it is: a stable
	// sort would keep that order, after moving 288-byte jobs about.
	for i := 1; i < len(t.Jobs); i++ {
		if t.Jobs[i].Submit < t.Jobs[i-1].Submit {
			slices.SortStableFunc(t.Jobs, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) })
			break
		}
	}
	if len(t.Jobs) == 0 {
		t.Epoch = base
		return
	}
	first := t.Jobs[0].Submit
	t.Epoch = base + int64(first)
	for i := range t.Jobs {
		j := &t.Jobs[i]
		j.Submit -= first
		if j.TraceStart != Unknown {
			j.TraceStart -= first
		}
		if j.TraceEnd != Unknown {
			j.TraceEnd -= first
		}
	}
}

// Len returns the number of jobs.
func (t *Trace) Len() int {
	if t.Packed != nil {
		return t.Packed.Len()
	}
	return len(t.Jobs)
}

// At returns job i.
func (t *Trace) At(i int) Job {
	if t.Packed != nil {
		return t.Packed.At(i)
	}
	return t.Jobs[i]
}

// Submit returns job i's submit time.
func (t *Trace) Submit(i int) Time {
	if t.Packed != nil {
		return t.Packed.Submit(i)
	}
	return t.Jobs[i].Submit
}

// All yields the jobs in order with their index. A packed trace's job is
// decoded into one variable that each step overwrites: keep a copy (*j),
// not the pointer, past the step.
func (t *Trace) All() iter.Seq2[int, *Job] {
	return func(yield func(int, *Job) bool) {
		if t.Packed == nil {
			for i := range t.Jobs {
				if !yield(i, &t.Jobs[i]) {
					return
				}
			}
			return
		}
		var j Job
		for i := range t.Packed.Len() {
			t.Packed.Job(i, &j)
			if !yield(i, &j) {
				return
			}
		}
	}
}

// Edit calls f on every job in order, which may change it, and keeps the
// job when f returns true; the jobs dropped are gone, the order of the
// others unchanged. A packed trace is packed again.
func (t *Trace) Edit(f func(j *Job) bool) {
	if t.Packed != nil {
		t.Packed = t.Packed.edit(f)
		return
	}
	n := 0
	for i := range t.Jobs {
		if f(&t.Jobs[i]) {
			t.Jobs[n] = t.Jobs[i]
			n++
		}
	}
	clear(t.Jobs[n:])
	t.Jobs = t.Jobs[:n]
}
