package sim

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim/event"
	"github.com/schedsim/schedsim/workload"
)

// Event classes: at one instant, job ends (completions, time-limit kills,
// ends of preemption grace) are applied first, then the kills of jobs
// that keep their batch host for KillWait (kill.go), then node changes (node
// events, failures and repairs, ends of advance reservations), then
// submissions, then releases of requeued jobs from their begin-time hold,
// then cancellations of pending jobs, and the scheduling pass last, so a
// pass sees every resource freed and every job queued at its instant.
// With Timing.EndsAfterPasses, job ends come after the pass instead
// (classEndLate), and the passes with AfterEnds follow them
// (classPassLate); the ends of jobs an AfterEnds pass started come after
// those passes (classEndLast): a job ends just after the phase of the
// pass that started it.
const (
	classEnd event.Class = iota
	classKill
	classNode
	classSubmit
	classRelease
	classCancel
	classPass
	classEndLate
	classPassLate
	classEndLast
)

// Config is everything one run needs.
type Config struct {
	Cluster *hwmodels.Cluster
	Trace   *workload.Trace
	Policy  Policy
	// Seed is the root of every random stream of the run.
	Seed uint64
	// Check verifies after every event that no node has more allocated
	// than it holds (for tests; it costs O(nodes + running) per event).
	Check bool
	// Reservations are advance reservations (maintenance windows): no job
	// may start on a reserved node if its time limit would reach into the
	// window. Running jobs are not killed when a window starts (only
	// OverTimeLimit or TimeLimitSweep can let one overrun into it).
	Reservations []AdvanceReservation
	// NodeEvents take nodes down, drain them, and bring them back, at given
	// times (any order; applied in time order, ties in list order).
	NodeEvents []NodeEvent
	// Failures, when set, makes nodes fail and return at random (see
	// FailureModel).
	Failures *FailureModel

	// TimeLimitSweep is the period in seconds of the time-limit check. Zero
	// kills a job exactly when it has run its limit (plus OverTimeLimit),
	// the textbook model. Slurm's slurmctld checks every 30 s (a
	// compiled-in constant): with 30, a job that is still running at its
	// limit plus OverTimeLimit is killed at the next multiple of 30 s of
	// the simulation clock (counted from the trace epoch, as slurmctld
	// counts from its own start), so TIMEOUT jobs run 0 to 29 s past their
	// limit, and a job that ends on its own in that slack completes.
	TimeLimitSweep Time
	// TimeLimitSweepPhase moves the sweep's checks off the multiples of
	// TimeLimitSweep: they fall at TimeLimitSweepPhase + k·TimeLimitSweep
	// (seconds, in [0, TimeLimitSweep)). slurmctld times its checks from
	// its own start, so a replay that knows when slurmctld started can
	// put them where they were. The sweep and its phase are the
	// controller's, not a policy's: the sweep kills jobs under every
	// policy, and its clock is that of the replayed controller.
	TimeLimitSweepPhase Time
	// KillWait is how long a job the time-limit check kills keeps its
	// resources after the kill: slurmd sends SIGTERM, waits Slurm's
	// KillWait, sends SIGKILL and runs the epilog before slurmctld frees
	// the nodes (on 22.05 with KillWait=2 they were free 3 s after the
	// kill). The job's record keeps the kill as its End (sacct's End), but
	// its resources, and its dependents (afterany, afternotok), wait until
	// the release. A running job's End in the View includes it. Only the
	// batch host is held: a job's other nodes run no processes of it and
	// are free at the kill (kill.go). Zero (the default) frees them all at
	// the kill.
	KillWait Time
	// OverTimeLimit is how many seconds a job may run past its time limit
	// before it is killed (Slurm's OverTimeLimit, which slurm.conf gives in
	// minutes). A running job's End in the View includes it (and the
	// sweep); a pending job's Limit does not.
	OverTimeLimit Time
	// RequeueDelay is how long a requeued job is held (pending reason
	// BeginTime) before it may start again: 0 selects DefaultRequeueDelay,
	// a negative value means no hold.
	RequeueDelay Time
	// PreemptGraceTime is Slurm's GraceTime in seconds: a preempted job
	// keeps running, and holding its resources, for this long before it
	// ends (or is requeued). Zero ends it at once.
	PreemptGraceTime Time
	// MaxRequeue is the most times one job is requeued (a preemption in
	// REQUEUE mode, a node failure): the requeue that brings its count to
	// MaxRequeue leaves it held, pending with reason JobHoldMaxRequeue and
	// never eligible again (UNFINISHED at the end), as slurmctld holds a
	// batch job whose requeues pass MAX_BATCH_REQUEUE (requeue.go). Zero
	// selects DefaultMaxRequeue; a negative value means no limit (a
	// failure model that kills a job before it can complete then requeues
	// it until the run's horizon). It also bounds Record.Runs: at most
	// MaxRequeue runs per job.
	MaxRequeue int32
	// MaxNodeEvents bounds Record.NodeEvents, the log of node availability
	// changes, which a failure model with short mean times makes grow
	// with simulated time: a failure model expected to log more over the
	// trace's submit span is refused when the run starts, and a run whose
	// log passes it stops with an error (ErrLimit) naming the setting.
	// Zero selects DefaultMaxNodeEvents; negative, no limit.
	MaxNodeEvents int
	// JobRequeue makes every job requeueable (Slurm's JobRequeue=1), as if
	// each had workload.Job.Requeue set. A requeueable job that is
	// preempted in PreemptRequeue mode or whose node fails returns to the
	// queue; others end PREEMPTED or NODE_FAIL.
	JobRequeue bool
	// KillInvalidDepend cancels a job whose dependency can never be
	// satisfied (Slurm's DependencyParameters=kill_invalid_depend) instead
	// of leaving it pending with reason DependencyNeverSatisfied.
	KillInvalidDepend bool
	// EnforcePartLimits is Slurm's EnforcePartLimits: with PartLimitsAny
	// or PartLimitsAll a job over its partitions' MaxTime or MaxNodes is
	// REJECTED at submit with the reason; with PartLimitsNo (the zero
	// value, Slurm's default) it is queued. Either way the controller
	// runs a job only in partitions whose limits it meets, for every
	// policy, and keeps one that meets none out of the View, pending with
	// reason PartitionTimeLimit or PartitionNodeLimit (partlimits.go).
	EnforcePartLimits PartLimits
	// Runtime, when set, applies the hardware runtime model when a job
	// starts: speed ratio between GPU models and communication stretch
	// across leaf switches (see RuntimeScaling). Nil replays runtimes as
	// recorded.
	Runtime *RuntimeScaling
	// Oracle gives policies every job's runtime from the trace
	// (JobInfo.Runtime), for studies of schedulers that know how long
	// jobs run. Off, the default, policies see time limits only.
	Oracle bool
	// NoSettle turns off the termination guard (quiesce.go), for tests
	// that compare records with and without it. A run then ends only when
	// no event is left, which never happens while a policy with periodic
	// passes keeps a job queued that can never start, or while a failure
	// model runs with such a job queued.
	NoSettle bool
	// Horizon is the latest time the run simulates: it stops before any
	// event after it, and jobs still queued or running then end
	// UNFINISHED with a run note. It keeps a run from going on for ever
	// where nothing settles: a failure model that kills a long job on
	// many nodes before it can complete, with the job requeued every
	// time (MaxRequeue negative; the requeue limit holds it otherwise).
	// Zero means the default, DefaultHorizon; negative, none.
	Horizon Time
	// Progress, when set, is told how far the run has got: at most once
	// every ProgressEvery events and once when the run ends (see
	// progress.go). It must not retain or change anything of the run.
	Progress func(now Time, done, total int)
}

// jobStatus is a job's lifecycle state inside the controller.
type jobStatus uint8

const (
	stFuture  jobStatus = iota
	stHeld              // queued, never eligible: cancelled before start in the trace
	stWaiting           // queued, not yet eligible: at a gate (dependency, singleton, throttle, begin time)
	stPending
	stRunning
	stDone
)

type controller struct {
	cfg     Config
	cluster *hwmodels.Cluster
	js      jobStore
	policy  Policy
	timing  Timing
	// earlyEv and lateEv are the OnEvent passes without and with
	// AfterEnds; periodic lists the others, and lastRun has, per pass,
	// the last instant Schedule ran it (-1 before).
	earlyEv, lateEv PassSet
	periodic        []int
	lastRun         []Time
	rng             *rand.Rand

	now     Time
	q       event.Queue
	nextSub int // next job to submit (jobs are sorted by submit time)

	status  []jobStatus
	req     requests        // resolved requests (intake.go)
	reason  []PendingReason // last recorded pending reason
	reasons ReasonLog
	limit   []Time
	part    []int32

	pending []PendingJob
	// running lists running jobs by Ref, and the entries of ended runs
	// (Alloc nil) until Running or runDead > len/2 compacts it: deleting
	// each end at once moved half the list (memmove) per end.
	running []RunningJob
	runDead int
	nodes   []NodeState
	// dirty lists the nodes whose free state changed since the last
	// pass (isDirty marks them), and startedRun, endedRun the jobs whose
	// runs started and ended; delta is what the pass's Delta returns,
	// built from them as the pass begins (takeDelta), and its slices are
	// reused as the next lists.
	dirty                []int32
	isDirty              []bool
	startedRun, endedRun []JobRef
	// queued lists the jobs made eligible since the last pass, by their
	// place in pending (Delta.Queued); queuedIdx is the Delta's list.
	queued    []queuedJob
	queuedIdx []int32
	delta     Delta
	rec       []JobRecord
	allocPool allocPool
	runAllocs runAllocs

	passAt     Time // instant of the pending event-triggered pass, or -1
	passLateAt Time // instant of the pending pass after late ends (classPassLate), or -1
	// evWant lists the instants (at most two: now and now+1) at which an
	// event asked for the earlyEv passes, and lateWant the instant at
	// which a late end asked for the lateEv ones, or -1.
	evWant      []Time
	lateWant    Time
	periodicAt  Time // instant of the pending periodic pass, or -1
	removed     int  // jobs that left the pending list since the last compact
	events      int64
	fitCache    map[fitKey]bool
	fitMemo     *[64]fitMemo // in front of fitCache
	partRemap   map[string]int
	remapNote   struct{ part, note string } // resolvePartitions's latest note
	typeDropped map[string]int

	lateEnd bool // applying an end under Timing.EndsAfterPasses: passes it triggers go to now+1
	lastEnd bool // applying an end after the instant's AfterEnds passes (classEndLast)
	// inLate is set while a pass after late ends (classPassLate) applies
	// its starts; lateStarted marks, per job, a run such a pass started,
	// whose end comes after the AfterEnds passes of its instant. nil until
	// one does.
	inLate      bool
	lateStarted []bool
	lc          *lifecycle          // dependency, singleton and throttle gates; nil when unused
	partsOf     []uint64            // per job: allowed partitions; nil until a job lists several
	gen         []uint32            // per job: generation of its end event; nil until a run is cut short
	grace       map[JobRef]graceEnd // jobs in preemption grace (or KillWait) → how they end
	remain      []Time              // per job: work left; nil until a requeue
	// requeuedAt is each job's last requeue time, its submit time for the
	// queue order after a requeue; nil until a requeue.
	requeuedAt []Time
	runs       []RunSegment  // earlier runs of requeued jobs
	sweep      Time          // TimeLimitSweep
	rt         *runtimeState // Config.Runtime state (runtime.go); nil without
	mig        *migState     // MIG instances (mig.go); nil without MIG GPUs
	pw         *powerState   // power saving (power.go); nil without SuspendTime
	shedRuns   int           // runs shed (kill.go) so far; until one is, every run holds its whole allocation
	everyNode  uint64        // the partitions every node of the cluster is in

	// Nodes out of service (node events, failure model).
	off        []uint8     // per node: offDown|offDrain|offFail bits; nil until a node goes out
	offFree    []NodeState // real free state of out-of-service nodes
	nodeEvs    []NodeEvent // Config.NodeEvents in time order
	nodeLog    []NodeEvent
	nodeQueued int // classNode events in the queue
	failRng    *rand.Rand

	// Advance reservations.
	resv     []AdvanceReservation // by Start, Name
	resvOf   [][]int32            // per node: indices into resv; nil without reservations
	resvView []AdvanceReservation // those not ended
	resvNext Time                 // earliest End in resvView

	prog progress // Config.Progress state (progress.go)

	// Termination guard (quiesce.go).
	settle      Time // Timing.Settle, or the longest Period
	quietSince  Time // when the state last changed
	otherQueued int  // queued events the guard waits for (otherEvent)
	quiesced    bool // the guard ended the run
	horizon     Time // Config.Horizon resolved; stopped says it ended the run
	stopped     bool

	maxRequeue    int32 // Config.MaxRequeue resolved; < 0 no limit
	maxNodeEvents int   // Config.MaxNodeEvents resolved; < 0 no limit
	limitErr      error // a limit the run passed (ErrLimit): stops the loop
	heldMax       int   // jobs held at MaxRequeue
}

type fitKey struct {
	part int32
	req  workload.Request
}

// fitMemo is a slot of a direct-mapped cache of fitsEmpty, indexed by the
// request's numbers alone: hashing the key (GPU type string included) for
// fitCache on every submit was 4-8 % of a FIFO replay.
type fitMemo struct {
	k     fitKey
	fits  bool
	valid bool
}

// Run replays cfg.Trace on cfg.Cluster under cfg.Policy and returns the
// record. It returns an error when the policy makes an invalid decision
// (naming the policy, job and node) or the inputs are unusable.
func Run(cfg Config) (*Record, error) {
	if cfg.Cluster == nil || len(cfg.Cluster.Nodes) == 0 {
		return nil, errors.New("sim: cluster has no nodes")
	}
	if len(cfg.Cluster.Partitions) == 0 {
		return nil, errors.New("sim: cluster has no partitions")
	}
	if cfg.Trace == nil {
		return nil, errors.New("sim: no trace")
	}
	if cfg.Policy == nil {
		return nil, errors.New("sim: no policy")
	}
	if cfg.TimeLimitSweepPhase < 0 || cfg.TimeLimitSweepPhase > 0 && cfg.TimeLimitSweepPhase >= cfg.TimeLimitSweep {
		return nil, fmt.Errorf("sim: TimeLimitSweepPhase must be in [0, TimeLimitSweep), got %d (sweep %d)", cfg.TimeLimitSweepPhase, cfg.TimeLimitSweep)
	}
	if cfg.KillWait < 0 {
		return nil, fmt.Errorf("sim: KillWait must be >= 0, got %d", cfg.KillWait)
	}
	if cfg.TimeLimitSweep < 0 || cfg.OverTimeLimit < 0 || cfg.PreemptGraceTime < 0 {
		return nil, fmt.Errorf("sim: TimeLimitSweep, OverTimeLimit and PreemptGraceTime must be >= 0, got %d, %d, %d",
			cfg.TimeLimitSweep, cfg.OverTimeLimit, cfg.PreemptGraceTime)
	}
	tm, err := cfg.Policy.Begin(RunInfo{Cluster: cfg.Cluster, Jobs: cfg.Trace.Len(),
		KillWait: cfg.KillWait, PreemptGraceTime: cfg.PreemptGraceTime})
	if err == nil {
		err = tm.check()
	}
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", cfg.Policy.Name(), err)
	}
	tm.Passes = slices.Clone(tm.Passes) // the policy may reuse its slice
	c := newController(cfg, tm)
	if err := c.setupNodes(); err != nil {
		return nil, err
	}
	c.setupPower()
	if cfg.Runtime != nil {
		rt, err := newRuntimeState(cfg.Runtime, cfg.Cluster, cfg.Trace.Len())
		if err != nil {
			return nil, err
		}
		c.rt = rt
	}
	if err := c.loop(); err != nil {
		return nil, err
	}
	if cfg.Progress != nil {
		c.reportProgress()
	}
	return c.finish(), nil
}

// StreamSeed derives the seed of a named random stream from the root seed,
// so adding a stream shifts no other.
func StreamSeed(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

func newController(cfg Config, tm Timing) *controller {
	n := cfg.Trace.Len()
	c := &controller{
		cfg:         cfg,
		cluster:     cfg.Cluster,
		js:          newJobStore(cfg.Trace),
		policy:      cfg.Policy,
		timing:      tm,
		lastRun:     make([]Time, len(tm.Passes)),
		lateWant:    -1,
		rng:         rand.New(rand.NewPCG(cfg.Seed, StreamSeed("policy"))),
		status:      make([]jobStatus, n),
		req:         newRequests(n),
		reason:      make([]PendingReason, n),
		limit:       make([]Time, n),
		part:        make([]int32, n),
		nodes:       make([]NodeState, len(cfg.Cluster.Nodes)),
		rec:         make([]JobRecord, n),
		passAt:      -1,
		passLateAt:  -1,
		periodicAt:  -1,
		fitCache:    map[fitKey]bool{},
		fitMemo:     new([64]fitMemo),
		partRemap:   map[string]int{},
		typeDropped: map[string]int{},
		lc:          newLifecycle(cfg.Trace),
		sweep:       cfg.TimeLimitSweep,
	}
	for i := range tm.Passes {
		p := &tm.Passes[i]
		c.lastRun[i] = -1
		switch {
		case p.OnEvent && p.AfterEnds:
			c.lateEv |= 1 << uint(i)
		case p.OnEvent:
			c.earlyEv |= 1 << uint(i)
		default:
			c.periodic = append(c.periodic, i)
		}
		c.settle = max(c.settle, p.Period)
	}
	if tm.Settle > 0 {
		c.settle = tm.Settle
	}
	c.isDirty = make([]bool, len(c.nodes))
	c.everyNode = ^uint64(0)
	for i := range c.nodes {
		c.nodes[i] = Capacity(&cfg.Cluster.Nodes[i])
		c.touch(int32(i))
		c.everyNode &= cfg.Cluster.Nodes[i].Partitions
	}
	for i := range c.rec {
		c.rec[i] = JobRecord{Ref: JobRef(i), Submit: c.js.submit(JobRef(i)), Eligible: workload.Unknown,
			Start: workload.Unknown, End: workload.Unknown, Part: -1}
	}
	if c.js.n > 0 {
		c.now = min(0, c.js.submit(0))
	}
	c.horizon = cfg.Horizon
	if c.horizon == 0 {
		c.horizon = DefaultHorizon(cfg.Trace)
	}
	c.maxRequeue = cfg.MaxRequeue
	if c.maxRequeue == 0 {
		c.maxRequeue = DefaultMaxRequeue
	}
	c.maxNodeEvents = cfg.MaxNodeEvents
	if c.maxNodeEvents == 0 {
		c.maxNodeEvents = DefaultMaxNodeEvents
	}
	return c
}

// DefaultHorizon is the horizon of a run of jobs (sorted by submit time)
// when Config.Horizon is zero: the last submit plus four times the span
// of the submits, and at least a year after it, which no run that can
// end reaches.
func DefaultHorizon(t *workload.Trace) Time {
	n := t.Len()
	if n == 0 {
		return -1
	}
	first, last := t.Submit(0), t.Submit(n-1)
	return last + max(4*(last-first), 365*86400)
}

func (c *controller) loop() error {
	for {
		c.js.recycle()
		if c.cfg.Progress != nil && c.events >= c.prog.next {
			c.reportProgress()
		}
		top, ok := c.q.Peek()
		if c.nextSub < c.js.n {
			at := c.js.at(JobRef(c.nextSub)).Submit
			if !ok || event.Before(int64(at), classSubmit, &top) {
				if at < c.now {
					return fmt.Errorf("sim: trace is not sorted by submit time: job %q at %d after %d",
						c.js.at(JobRef(c.nextSub)).ID, at, c.now)
				}
				c.now = at
				c.changed()
				c.submit(c.nextSub)
				c.nextSub++
				c.events++
				c.check()
				continue
			}
		}
		if !ok {
			return nil
		}
		if c.horizon >= 0 && Time(top.At) > c.horizon {
			c.now, c.stopped = max(c.now, c.horizon), true
			return nil
		}
		e := c.q.Pop()
		if otherEvent(e.Class, e.Gen) {
			c.otherQueued--
		}
		switch e.Class {
		case classEnd, classEndLate, classEndLast, classKill:
			if e.Gen != c.genOf(JobRef(e.Arg)) {
				continue // superseded: the run was cut short or its end moved
			}
		case classNode:
			if c.nodeQueued--; c.idle() {
				continue // nothing left that a node change could affect
			}
		}
		if Time(e.At) < c.now {
			panic(fmt.Sprintf("sim: event in the past: t=%d now=%d seq=%d class=%d arg=%d", e.At, c.now, e.Seq(), e.Class, e.Arg))
		}
		c.now = Time(e.At)
		c.events++
		if otherEvent(e.Class, e.Gen) || e.Class == classEnd || e.Class == classEndLate || e.Class == classEndLast || e.Class == classKill {
			c.changed()
		}
		switch e.Class {
		case classEnd:
			c.end(JobRef(e.Arg))
		case classKill:
			c.shed(JobRef(e.Arg))
		case classEndLate:
			c.lateEnd = true
			c.end(JobRef(e.Arg))
			c.lateEnd = false
		case classEndLast:
			c.lateEnd, c.lastEnd = true, true
			c.end(JobRef(e.Arg))
			c.lateEnd, c.lastEnd = false, false
		case classNode:
			c.nodeEvent(e.Arg, e.Gen)
		case classRelease:
			c.release(JobRef(e.Arg))
		case classCancel:
			c.cancel(JobRef(e.Arg))
		case classPass, classPassLate:
			if e.Class == classPassLate {
				c.passLateAt = -1
			}
			if err := c.pass(e.Arg); err != nil {
				return err
			}
			if len(c.pending) > 0 && !c.cfg.NoSettle && c.settled() {
				return nil // nothing can change any more (quiesce.go)
			}
		}
		if c.limitErr != nil {
			return c.limitErr
		}
		c.check()
	}
}

// trigger asks for the OnEvent passes after an event at the current
// instant: at this instant, or, while a late end is applied
// (Timing.EndsAfterPasses), for the AfterEnds passes on whose grid it
// lies after the instant's late ends, and where there is none, for the
// others at the next instant.
func (c *controller) trigger() {
	at := c.now
	if c.lateEnd {
		if !c.lastEnd && c.onGrid(c.lateEv, at) != 0 {
			c.lateWant = at
			if c.passLateAt != at {
				c.passLateAt = at
				c.q.Push(int64(at), classPassLate, 2, 0)
			}
			c.armPeriodic()
			return
		}
		at++
	}
	if c.onGrid(c.earlyEv, at) != 0 {
		if !slices.Contains(c.evWant, at) {
			c.evWant = append(c.evWant, at)
		}
		if c.passAt != at {
			c.passAt = at
			c.q.Push(int64(at), classPass, 0, 0)
		}
	}
	c.armPeriodic()
}

// onGrid returns the passes of set on whose grid instant t lies.
func (c *controller) onGrid(set PassSet, t Time) PassSet {
	var out PassSet
	for m := set; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(uint64(m))
		if c.timing.Passes[i].onGrid(t) {
			out |= 1 << uint(i)
		}
	}
	return out
}

// endClass is the event class of job ends.
func (c *controller) endClass(at Time) event.Class {
	if !c.timing.EndsAfterPasses {
		return classEnd
	}
	return classEndLate
}

// runEndClass is the event class of the end of job ref's run at end, in
// state st: an early end (workload.Job.EndEarly) of a run that ends on
// its own comes before the passes of its instant.
func (c *controller) runEndClass(ref JobRef, end Time, st State) event.Class {
	if st != Timeout && c.js.at(ref).EndEarly {
		return classEnd
	}
	if c.lateStarted != nil && c.lateStarted[ref] && c.timing.EndsAfterPasses {
		return classEndLast
	}
	return c.endClass(end)
}

// armPeriodic keeps one pass scheduled at the next instant of a periodic
// pass while there is work. Passes with an empty queue cannot start
// anything, so none is scheduled then; the next submit arms it again.
func (c *controller) armPeriodic() {
	if len(c.periodic) == 0 || c.periodicAt >= c.now || len(c.pending) == 0 {
		return
	}
	next := Time(-1)
	for _, i := range c.periodic {
		p := &c.timing.Passes[i]
		// The first instant Phase + k·Period after now.
		t := c.now + 1 + ((p.Phase-c.now-1)%p.Period+p.Period)%p.Period
		if next < 0 || t < next {
			next = t
		}
	}
	c.periodicAt = next
	c.q.Push(int64(next), classPass, 1, 0)
}

// due returns the passes due in the pass of the given kind (0: asked for
// by events, 1: periodic, 2: after late ends) now, and takes the events'
// asks it answers.
func (c *controller) due(kind int32) PassSet {
	var d PassSet
	if k := slices.Index(c.evWant, c.now); k >= 0 {
		c.evWant = slices.Delete(c.evWant, k, k+1)
		d |= c.onGrid(c.earlyEv, c.now)
	}
	if kind == 2 && c.lateWant == c.now {
		c.lateWant = -1
		d |= c.onGrid(c.lateEv, c.now)
	}
	for _, i := range c.periodic {
		if c.lastRun[i] != c.now && c.timing.Passes[i].onGrid(c.now) {
			d |= 1 << uint(i)
		}
	}
	return d
}

func (c *controller) submit(i int) {
	ref := JobRef(i)
	j := c.js.at(ref)
	r := &c.rec[i]
	parts, reason := c.resolvePartitions(j)
	if parts == 0 {
		c.reject(ref, reason)
		return
	}
	req := j.Request
	if req.Nodes < 0 || req.GPUs < 0 || req.CPUs < 0 || req.MemMB < 0 {
		c.reject(ref, fmt.Sprintf("negative request (nodes=%d gpus=%d cpus=%d mem=%dM)", req.Nodes, req.GPUs, req.CPUs, req.MemMB))
		return
	}
	if req.MPSShare != 0 {
		// gres/mps and gres/gpu (or a MIG type) are exclusive in a job, and
		// a share lies on one GPU of each node (slurm-gpu-facts §5.3).
		if req.MPSShare < 0 || req.MPSShare > 100 || req.GPUs != 0 || req.MIGProfile != 0 {
			c.reject(ref, fmt.Sprintf("MPS request mps:%d (gpus=%d) cannot be given: a share is 1 to 100 %% of one GPU per node and excludes whole GPUs and MIG instances", req.MPSShare, req.GPUs))
			return
		}
		req.Nodes = max(req.Nodes, 1)
	}
	if req.Nodes == 0 && req.GPUs == 0 && req.CPUs == 0 {
		req.Nodes = 1
	}
	if req.GPUs == 0 && req.CPUs == 0 {
		// Slurm allocates at least one CPU on every node of a job; a job
		// holding nothing would also fit a node that is down or full.
		req.CPUs = req.Nodes
	}
	if req.GPUType != "" && !c.partsHaveType(parts, req.GPUType) {
		c.typeDropped[req.GPUType]++
		req.GPUType = ""
	}
	// Keep the partitions that can ever hold the job.
	fit := parts
	for m := parts; m != 0; m &= m - 1 {
		if p := int32(bits.TrailingZeros64(m)); !c.fitsEmpty(p, &req) {
			fit &^= 1 << uint(p)
		}
	}
	part := c.firstPart(j, parts)
	c.req.set(ref, req)
	r.Part = part
	r.Reason = reason
	if fit == 0 {
		c.reject(ref, fmt.Sprintf("request (nodes=%d gpus=%d cpus=%d mem=%dM) exceeds every node set of partition %s",
			req.Nodes, req.GPUs, req.CPUs, req.MemMB, c.partNames(parts)))
		return
	}
	if why := c.enforcePartLimits(j, &req, fit); why != "" {
		c.reject(ref, why)
		return
	}
	// The job runs only in partitions whose limits it meets (partlimits.go);
	// over the limits of all of them it waits, never offered to the policy.
	overAll := false
	if ok := c.withinLimits(j, &req, fit); ok != 0 {
		fit = ok
	} else {
		overAll = true
	}
	part = c.firstPart(j, fit)
	c.part[i] = part
	r.Part = part
	if fit != 1<<uint(part) {
		if c.partsOf == nil {
			c.partsOf = make([]uint64, c.js.n)
		}
		c.partsOf[i] = fit
	}
	c.limit[i] = c.planLimit(j, part)
	c.joinGroup(ref)
	if j.CancelledPending() {
		// The trace shows the user cancelling it before it ever ran, and
		// nothing about how long it would have run: it waits held (queued
		// but never eligible, as Slurm shows a held job) until its cancel
		// time, so it invents no usage and blocks no one.
		c.status[i] = stHeld
		c.recordReason(ref, ReasonHeld)
		c.push(j.Submit+max(j.CancelAfter, 0), classCancel, int32(i), 0)
		return
	}
	if overAll {
		c.status[i] = stWaiting
		why, _ := c.partLimit(j, &req, part)
		c.recordReason(ref, why)
		return
	}
	c.enter(ref)
}

// makeEligible puts a job that passed its gates in the pending list, in
// (Submit, Ref) order, and asks for a pass.
func (c *controller) makeEligible(ref JobRef) {
	r := &c.rec[ref]
	c.status[ref] = stPending
	r.Eligible = c.now
	if c.reason[ref] != ReasonNone {
		c.recordReason(ref, ReasonNone)
	}
	sub := r.Submit
	if r.Requeues > 0 {
		sub = c.requeuedAt[ref] // Slurm gives a requeued job a new submit time
	}
	pj := PendingJob{Ref: ref, Submit: sub, Eligible: c.now, Limit: c.limit[ref],
		Part: c.part[ref], Parts: c.partsMask(ref), Req: *c.req.get(ref)}
	c.queued = append(c.queued, queuedJob{sub: sub, ref: ref})
	n := len(c.pending)
	if n == 0 || !queuedBefore(sub, ref, &c.pending[n-1]) {
		c.pending = append(c.pending, pj) // the usual case: submits come in order
	} else {
		k := sort.Search(n, func(i int) bool { return queuedBefore(sub, ref, &c.pending[i]) })
		c.pending = slices.Insert(c.pending, k, pj)
	}
	c.trigger()
}

// queuedJob is a job's place in the pending list: its (Submit, Ref).
type queuedJob struct {
	sub Time
	ref JobRef
}

// queuedBefore reports whether a job submitted at sub with ref ref goes
// before p in the pending list's (Submit, Ref) order.
func queuedBefore(sub Time, ref JobRef, p *PendingJob) bool {
	return sub < p.Submit || sub == p.Submit && ref < p.Ref
}

// partsMask returns the partitions job ref may run in.
func (c *controller) partsMask(ref JobRef) uint64 {
	if c.partsOf != nil && c.partsOf[ref] != 0 {
		return c.partsOf[ref]
	}
	return 1 << uint(c.part[ref])
}

// planLimit is the time limit the scheduler plans with: the job's own, else
// the partition's DefaultTime, else its MaxTime (Slurm's order: job_mgr.c
// gives a job without --time the partition's default_time, which
// read_config.c sets to max_time when DefaultTime is unset), else the
// job's runtime (at least one second).
func (c *controller) planLimit(j *workload.Job, part int32) Time {
	if j.TimeLimit > 0 {
		return j.TimeLimit
	}
	if dt := c.cluster.Partitions[part].DefaultTime; dt > 0 {
		return Time(dt)
	}
	if mt := c.cluster.Partitions[part].MaxTime; mt > 0 {
		return Time(mt)
	}
	return max(j.Runtime, 1)
}

// resolvePartitions returns the set of the cluster's partitions that the
// job's list (sbatch -p a,b) names, or the default partition when it names
// none or none the cluster has.
func (c *controller) resolvePartitions(j *workload.Job) (uint64, string) {
	if j.Partition == "" {
		return 1 << uint(c.cluster.DefaultPartition), ""
	}
	var parts uint64
	for name := range strings.SplitSeq(j.Partition, ",") {
		if p := c.cluster.PartitionIndex(strings.TrimSpace(name)); p >= 0 && p < hwmodels.MaxPartitions {
			parts |= 1 << uint(p)
		}
	}
	if parts != 0 {
		return parts, ""
	}
	c.partRemap[j.Partition]++
	d := c.cluster.DefaultPartition
	if m := &c.remapNote; m.part != j.Partition || m.note == "" {
		// One string for the jobs of one missing partition (all 20,000 of
		// an SWF log whose partition the header cluster lacks).
		m.part, m.note = j.Partition, "partition "+j.Partition+" not in cluster; ran in "+c.cluster.Partitions[d].Name
	}
	return 1 << uint(d), c.remapNote.note
}

// firstPart returns the first partition of the job's list that is in
// parts (the lowest-numbered one when the list names none of them).
func (c *controller) firstPart(j *workload.Job, parts uint64) int32 {
	if parts&(parts-1) == 0 {
		return int32(bits.TrailingZeros64(parts))
	}
	for name := range strings.SplitSeq(j.Partition, ",") {
		if p := c.cluster.PartitionIndex(strings.TrimSpace(name)); p >= 0 && p < hwmodels.MaxPartitions && parts&(1<<uint(p)) != 0 {
			return int32(p)
		}
	}
	return int32(bits.TrailingZeros64(parts))
}

// partOrder calls yield with the partitions of parts, first (the job's
// Part) first and the others ascending, until yield returns false.
func partOrder(first int32, parts uint64, yield func(int32) bool) {
	if !yield(first) {
		return
	}
	for m := parts &^ (1 << uint(first)); m != 0; m &= m - 1 {
		if !yield(int32(bits.TrailingZeros64(m))) {
			return
		}
	}
}

func (c *controller) partNames(parts uint64) string {
	var names []string
	for m := parts; m != 0; m &= m - 1 {
		names = append(names, c.cluster.Partitions[bits.TrailingZeros64(m)].Name)
	}
	return strings.Join(names, ",")
}

func (c *controller) partsHaveType(parts uint64, t string) bool {
	for m := parts; m != 0; m &= m - 1 {
		for _, n := range c.cluster.Partitions[bits.TrailingZeros64(m)].Nodes {
			if c.cluster.Nodes[n].GPUType == t {
				return true
			}
		}
	}
	return false
}

// fitsEmpty reports whether the request fits the partition with every node
// empty; a job that does not can never run.
func (c *controller) fitsEmpty(part int32, req *workload.Request) bool {
	k := fitKey{part, *req}
	h := uint64(part)<<48 ^ uint64(req.Nodes)<<32 ^ uint64(req.GPUs)<<16 ^ uint64(req.CPUs) ^
		uint64(req.MemMB)<<8 ^ uint64(req.MIGProfile)<<40 ^ uint64(req.MPSShare)<<24
	m := &c.fitMemo[(h*0x9e3779b97f4a7c15)>>58]
	if m.valid && m.k == k {
		return m.fits
	}
	v, ok := c.fitCache[k]
	if !ok {
		v = c.fitsEmptyScan(part, req)
		c.fitCache[k] = v
	}
	*m = fitMemo{k: k, fits: v, valid: true}
	return v
}

// fitsEmptyScan is fitsEmpty without the caches.
func (c *controller) fitsEmptyScan(part int32, req *workload.Request) bool {
	need := Needed(req)
	var got int32
	for _, n := range c.cluster.Partitions[part].Nodes {
		node := &c.cluster.Nodes[n]
		if !Eligible(node, part, req.GPUType) {
			continue
		}
		got += UnitsOn(req, Capacity(node))
		if got >= need {
			break
		}
	}
	return got >= need
}

func (c *controller) reject(ref JobRef, reason string) {
	c.status[ref] = stDone
	c.js.release(ref)
	r := &c.rec[ref]
	r.State = Rejected
	r.Reason = reason
	c.doneUnstarted(ref)
}

func (c *controller) cancel(ref JobRef) {
	if c.status[ref] != stHeld {
		return
	}
	c.status[ref] = stDone
	c.js.release(ref)
	r := &c.rec[ref]
	r.State = Cancelled
	r.End = c.now
	c.doneUnstarted(ref)
}

// end is a run's scheduled end: completion, time-limit kill, or the end of
// a preemption grace time.
func (c *controller) end(ref JobRef) {
	if c.status[ref] != stRunning {
		panic(fmt.Sprintf("sim: end of job %q that is not running: t=%d", c.js.at(ref).ID, c.now))
	}
	if ge, ok := c.grace[ref]; ok {
		// Preempted during its grace time: PREEMPTED, even if it would
		// have ended on its own by now (Slurm's job_mgr.c). Killed at the
		// grace's end; the resources are freed KillWait later, now.
		c.interruptAt(ref, Preempted, ge.requeue, min(ge.kill, c.now))
		return
	}
	c.finishRun(ref)
}

// finishRun ends job ref's run for good, in the state its record holds.
func (c *controller) finishRun(ref JobRef) {
	c.status[ref] = stDone
	c.js.release(ref)
	r := &c.rec[ref]
	r.End = c.now
	if r.State == Timeout {
		r.End -= c.cfg.KillWait // the kill; the resources are freed now
	}
	c.releaseRun(ref, r.State)
	if c.lc != nil {
		c.lcRunEnded(ref, true, r.State)
	}
}

func (c *controller) pass(kind int32) error {
	switch kind {
	case 1:
		c.periodicAt = -1
	case 2: // after late ends (classPassLate): passLateAt is reset by the loop
	default:
		// A job that this pass starts with no runtime ends at this same
		// instant, and the resources it frees need another pass.
		c.passAt = -1
	}
	due := c.due(kind)
	if len(c.pending) > 0 && due != 0 {
		for m := due; m != 0; m &= m - 1 {
			c.lastRun[bits.TrailingZeros64(uint64(m))] = c.now
		}
		if c.timing.EndAtLimit {
			for i := range c.Running() {
				if rj := &c.running[i]; rj.End <= c.now {
					rj.End = c.now + 1
				}
			}
		}
		c.takeDelta()
		plan := c.policy.Schedule(due, c, c.rng)
		for _, p := range plan.Preempts {
			if err := c.preempt(p); err != nil {
				return err
			}
		}
		for _, r := range plan.Reasons {
			c.setReason(r.Job, r.Reason)
		}
		c.inLate = kind == 2
		for k := range plan.Starts {
			if err := c.start(&plan.Starts[k]); err != nil {
				c.inLate = false
				return err
			}
		}
		c.inLate = false
		c.migHide()
		if len(plan.Starts) > 0 || len(plan.Preempts) > 0 {
			c.changed()
		}
		c.compact()
	}
	if kind == 1 {
		c.armPeriodic()
	}
	return nil
}

// setReason records a pending job's reason when it changes.
func (c *controller) setReason(ref JobRef, r PendingReason) {
	if ref < 0 || int(ref) >= c.js.n || c.status[ref] != stPending {
		return
	}
	c.recordReason(ref, r)
}

// recordReason records job ref's pending reason when it changes.
func (c *controller) recordReason(ref JobRef, r PendingReason) {
	if c.reason[ref] == r {
		return
	}
	c.reason[ref] = r
	c.reasons.Add(ReasonChange{At: c.now, Job: ref, Reason: r})
}

func (c *controller) start(s *Start) error {
	ref := s.Job
	if ref < 0 || int(ref) >= c.js.n {
		return fmt.Errorf("policy %s: start of unknown job ref %d at t=%d", c.policy.Name(), ref, c.now)
	}
	j := c.js.at(ref)
	if c.status[ref] != stPending {
		return fmt.Errorf("policy %s: job %s: started at t=%d but it is not pending", c.policy.Name(), j.ID, c.now)
	}
	part, plain, err := c.checkAlloc(ref, s.Alloc)
	if err != nil {
		return fmt.Errorf("policy %s: job %s at t=%d: %w", c.policy.Name(), j.ID, c.now, err)
	}
	alloc := c.runAllocs.get(s.Alloc) // the running job's; the record keeps it packed
	begin := c.now                    // later when a MIG GPU is repartitioned (mig.go) or a node resumes (power.go)
	for k := range alloc {
		a := &alloc[k]
		n := &c.nodes[a.Node]
		c.touch(a.Node)
		n.FreeGPUs -= a.GPUs
		n.FreeCPUs -= a.CPUs
		n.FreeMemMB -= a.MemMB
		if !plain { // plain: checkAlloc found no MIG instances and no MPS share
			if a.MIG != (MIGInstances{}) {
				delay, err := c.migTake(ref, a)
				if err != nil {
					return fmt.Errorf("policy %s: job %s at t=%d: %w", c.policy.Name(), j.ID, c.now, err)
				}
				begin = max(begin, c.now+delay)
			}
			if a.MPS != (MPSShare{}) {
				var ok bool
				if a.MPS, ok = n.takeMPS(a.MPS); !ok {
					return fmt.Errorf("policy %s: job %s at t=%d: node %s: MPS share %d%% does not fit", c.policy.Name(), j.ID, c.now, c.cluster.Nodes[a.Node].Name, a.MPS.Share)
				}
			}
		}
		if c.pw != nil {
			begin = max(begin, c.pw.take(a.Node, c.now))
		}
	}
	c.status[ref] = stRunning
	c.removed++
	r := &c.rec[ref]
	r.Start = begin
	r.Alloc = c.keepAlloc(alloc)
	if c.inLate && c.lateStarted == nil {
		c.lateStarted = make([]bool, c.js.n)
	}
	if c.lateStarted != nil {
		c.lateStarted[ref] = c.inLate
	}
	r.Part = part
	if c.rt != nil {
		c.scaleRun(ref, alloc, c.workOf(ref))
	}
	end, st, recorded := c.runEnd(ref, begin)
	r.State, r.Recorded = st, recorded
	rj := RunningJob{Ref: ref, Start: begin, End: c.killAt(ref, begin) + c.cfg.KillWait, Part: part, Alloc: alloc}
	if c.timing.EndAtLimit {
		rj.End = begin + c.limit[ref] // Slurm's end_time; pass() moves it on once past
	}
	c.addRunning(rj)
	c.q.Push(int64(end), c.runEndClass(ref, end, st), int32(ref), c.genOf(ref))
	if st == Timeout {
		c.killLater(ref, end-c.cfg.KillWait)
	}
	if c.lc != nil {
		c.lcStarted(ref)
	}
	c.startedRun = append(c.startedRun, ref)
	c.policy.JobStarted(ref, begin, alloc)
	return nil
}

// runEnd returns when a run of job ref that starts at start ends on its
// own, how, and whether that is the trace's recorded state: after the work
// it has left, in the state its trace recorded (outcome.go), or TIMEOUT
// when the time-limit check finds it still running past its limit plus
// OverTimeLimit (see Config.TimeLimitSweep), as it always does a job the
// trace recorded TIMEOUT. A TIMEOUT run's end is when its resources are
// freed, KillWait after the kill.
func (c *controller) runEnd(ref JobRef, start Time) (Time, State, bool) {
	st, recorded, toLimit := traceOutcome(c.js.at(ref).TraceState)
	kill := c.killAt(ref, start)
	if run := max(c.runLength(ref), 0); !toLimit && start+run <= kill {
		return start + run, st, recorded
	}
	return kill + c.cfg.KillWait, Timeout, false
}

// killAt returns when the time-limit check kills a run of job ref that
// starts at start and is still running: at start + limit + OverTimeLimit,
// or the first sweep (TimeLimitSweepPhase + k·TimeLimitSweep) at or after
// it.
func (c *controller) killAt(ref JobRef, start Time) Time {
	kill := start + c.limit[ref] + c.cfg.OverTimeLimit
	if s := c.sweep; s > 0 {
		// The first check at or after kill: ph + k·s.
		ph := c.cfg.TimeLimitSweepPhase
		k := (kill - ph) / s
		if ph+k*s < kill {
			k++
		}
		kill = ph + k*s
	}
	return kill
}

// plannedEnd returns when job ref's current run, started at start, ends on
// its own.
func (c *controller) plannedEnd(ref JobRef, start Time) Time {
	end, _, _ := c.runEnd(ref, start)
	return end
}

// keepAlloc packs a into the record's allocation store.
func (c *controller) keepAlloc(a []NodeAlloc) Allocs { return c.allocPool.keep(a) }

// checkAlloc verifies that alloc is a valid placement of job ref now and
// returns the partition it runs in: the first of the job's partitions (its
// Part, then the others by index) whose nodes hold the whole allocation.
// plain reports that no node of alloc has MIG instances or an MPS share.
func (c *controller) checkAlloc(ref JobRef, alloc []NodeAlloc) (part int32, plain bool, err error) {
	if part, ok := c.plainFits(ref, alloc); ok {
		return part, true, nil
	}
	if part, err = c.allocPart(ref, alloc); err != nil {
		return -1, false, err
	}
	return part, false, c.checkShares(ref, alloc)
}

// plainFits is checkAlloc's one-loop path for the usual plan: a plain
// request (no MIG, no MPS) on nodes in increasing order, none out of
// service or reserved, all in the job's Part, each with the same plain
// share as the first. It accepts only plans that allocPart and
// checkShares accept, with the partition allocPart returns; ok false
// says nothing (the full checks decide, and name what is wrong). On
// one-CPU nodes a job of n CPUs is n NodeAllocs, so the checks per node
// are most of a start's cost.
func (c *controller) plainFits(ref JobRef, alloc []NodeAlloc) (int32, bool) {
	req := c.req.get(ref)
	part := c.part[ref]
	if len(alloc) == 0 || req.MIGProfile != 0 || req.MPSShare != 0 || c.resvOf != nil ||
		req.Nodes > 0 && int32(len(alloc)) != req.Nodes || part < 0 || part >= hwmodels.MaxPartitions {
		return -1, false
	}
	first := &alloc[0]
	if first.Node < 0 || int(first.Node) >= len(c.nodes) || !plainAlloc(first) {
		return -1, false
	}
	// The first share is checked in full, as checkShares checks it;
	// the others are the same share, so the same units, where they fit.
	_, g, cp, m := Units(req)
	var u int32
	if c.checkShare(req, first, &c.nodes[first.Node], g, cp, m, &u) != nil {
		return -1, false
	}
	bit := uint64(1) << uint(part)
	anyNode := c.everyNode&bit != 0 && req.GPUType == "" // every node is Eligible
	var units int32
	prev := int32(-1)
	for k := range alloc {
		a := &alloc[k]
		if a.Node <= prev || int(a.Node) >= len(c.nodes) {
			return -1, false // out of range, or out of order (perhaps listed twice)
		}
		prev = a.Node
		if c.off != nil && c.off[a.Node] != 0 {
			return -1, false
		}
		if !anyNode {
			if node := &c.cluster.Nodes[a.Node]; node.Partitions&bit == 0 || req.GPUType != "" && node.GPUType != req.GPUType {
				return -1, false // not Eligible in Part
			}
		}
		if k > 0 {
			free := &c.nodes[a.Node]
			if a.GPUs != first.GPUs || a.CPUs != first.CPUs || a.MemMB != first.MemMB || !plainAlloc(a) ||
				a.GPUs > free.FreeGPUs || a.CPUs > free.FreeCPUs || a.MemMB > free.FreeMemMB {
				return -1, false
			}
		}
		units += u // 0 for a node-count request
	}
	if req.Nodes == 0 && units != Needed(req) {
		return -1, false
	}
	return part, true
}

func (c *controller) allocPart(ref JobRef, alloc []NodeAlloc) (int32, error) {
	req := c.req.get(ref)
	if len(alloc) == 0 {
		return -1, errors.New("empty allocation")
	}
	if req.Nodes > 0 && int32(len(alloc)) != req.Nodes {
		return -1, fmt.Errorf("allocation has %d nodes, job needs %d", len(alloc), req.Nodes)
	}
	rising := true // nodes in increasing order (as placers give them) cannot repeat
	for k, a := range alloc {
		if a.Node < 0 || int(a.Node) >= len(c.nodes) {
			return -1, fmt.Errorf("node index %d out of range", a.Node)
		}
		if rising = rising && (k == 0 || alloc[k-1].Node < a.Node); !rising {
			for _, b := range alloc[:k] {
				if b.Node == a.Node {
					return -1, fmt.Errorf("node %s listed twice", c.cluster.Nodes[a.Node].Name)
				}
			}
		}
		if c.off != nil && c.off[a.Node] != 0 {
			return -1, fmt.Errorf("node %s is out of service (down or drained)", c.cluster.Nodes[a.Node].Name)
		}
		if err := c.checkReserved(a.Node, c.limit[ref]); err != nil {
			return -1, err
		}
	}
	parts := c.partsMask(ref)
	part := int32(-1)
	partOrder(c.part[ref], parts, func(p int32) bool {
		for _, a := range alloc {
			if !Eligible(&c.cluster.Nodes[a.Node], p, req.GPUType) {
				return true // try the next partition
			}
		}
		part = p
		return false
	})
	if part < 0 {
		for _, a := range alloc {
			if node := &c.cluster.Nodes[a.Node]; !Eligible(node, c.part[ref], req.GPUType) {
				return -1, fmt.Errorf("node %s is not eligible (partition %s, gpu type %q)", node.Name, c.partNames(parts), req.GPUType)
			}
		}
		return -1, fmt.Errorf("no partition of %s holds every node of the allocation", c.partNames(parts))
	}
	return part, nil
}

// checkShares verifies that every node's share fits its free resources and
// that the shares make up the request.
func (c *controller) checkShares(ref JobRef, alloc []NodeAlloc) error {
	req := c.req.get(ref)
	var units int32
	_, g, cp, m := Units(req)
	// What Take would give depends on the shares alone, not on the node:
	// a node with the same GPUs, CPUs and memory as the previous one
	// checked (both plain) is the same whole number of units, u.
	plain := req.MIGProfile == 0 && req.MPSShare == 0
	var last *NodeAlloc
	var u int32
	for k := range alloc {
		a := &alloc[k]
		free := &c.nodes[a.Node]
		if plain && last != nil && a.GPUs == last.GPUs && a.CPUs == last.CPUs && a.MemMB == last.MemMB &&
			a.MIG == (MIGInstances{}) && a.MPS == (MPSShare{}) &&
			a.GPUs <= free.FreeGPUs && a.CPUs <= free.FreeCPUs && a.MemMB <= free.FreeMemMB {
			units += u // 0 for a node-count request, as below
			continue
		}
		if err := c.checkShare(req, a, free, g, cp, m, &u); err != nil {
			return err
		}
		if req.Nodes == 0 {
			units += u
		}
		last = a
	}
	if req.Nodes == 0 && units != Needed(req) {
		return fmt.Errorf("allocation holds %d units, job needs %d", units, Needed(req))
	}
	return nil
}

// checkShare is checkShares for one node's share a, whose free state is
// free; for a Nodes == 0 request it sets *u to the units a holds, for
// one with Nodes > 0 to 0.
func (c *controller) checkShare(req *workload.Request, a *NodeAlloc, free *NodeState, g, cp int32, m int64, u *int32) error {
	*u = 0
	node := &c.cluster.Nodes[a.Node]
	if req.MIGProfile != 0 || a.MIG != (MIGInstances{}) {
		if err := c.checkMIGShare(req, a, *free); err != nil {
			return err
		}
	}
	if req.MPSShare != 0 || a.MPS != (MPSShare{}) {
		if err := c.checkMPSShare(req.MPSShare, a, *free); err != nil {
			return err
		}
	}
	if a.GPUs < 0 || a.CPUs < 0 || a.MemMB < 0 || a.GPUs > free.FreeGPUs || a.CPUs > free.FreeCPUs || a.MemMB > free.FreeMemMB {
		return fmt.Errorf("node %s: allocation gpus=%d cpus=%d mem=%dM exceeds free gpus=%d cpus=%d mem=%dM",
			node.Name, a.GPUs, a.CPUs, a.MemMB, free.FreeGPUs, free.FreeCPUs, free.FreeMemMB)
	}
	if req.Nodes > 0 {
		if want := Take(req, a.Node, 0); !sameShare(*a, want) {
			return fmt.Errorf("node %s: allocation gpus=%d cpus=%d mem=%dM, job needs gpus=%d cpus=%d mem=%dM per node",
				node.Name, a.GPUs, a.CPUs, a.MemMB, want.GPUs, want.CPUs, want.MemMB)
		}
		return nil
	}
	var n int32
	switch {
	case req.MIGProfile != 0:
		n = a.MIG.Count / g
	case g > 0:
		n = a.GPUs / g
	default:
		n = a.CPUs / cp
	}
	if n <= 0 || !sameShare(Take(req, a.Node, n), *a) {
		return fmt.Errorf("node %s: allocation gpus=%d cpus=%d mem=%dM is not a whole number of units (gpus=%d cpus=%d mem=%dM each)",
			node.Name, a.GPUs, a.CPUs, a.MemMB, g, cp, m)
	}
	*u = n
	return nil
}

// compact drops jobs that left the queue from the pending list, keeping
// its order. Jobs usually leave from the front (the head starts), so a
// removed prefix is sliced off without moving the rest; only removals
// further in shift what follows them.
func (c *controller) compact() {
	if c.removed == 0 {
		return
	}
	k := 0
	for k < len(c.pending) && k < c.removed && c.status[c.pending[k].Ref] != stPending {
		k++
	}
	if rest := len(c.pending) - k; rest <= k {
		// Moving the few that stay is cheap and keeps the backing array's
		// front in use, so appends do not keep reallocating.
		copy(c.pending, c.pending[k:])
		c.pending = c.pending[:rest]
	} else {
		c.pending = c.pending[k:]
	}
	if c.removed > k {
		c.pending = slices.DeleteFunc(c.pending, func(p PendingJob) bool { return c.status[p.Ref] != stPending })
	}
	c.removed = 0
}

func (c *controller) check() {
	if !c.cfg.Check {
		return
	}
	used := make([]NodeState, len(c.nodes))
	var mpsGPUs []uint8 // per node: the MPS GPUs with clients
	for _, rj := range c.running {
		for _, a := range rj.Alloc {
			u := &used[a.Node]
			u.FreeGPUs += a.GPUs
			if g := a.MPS.GPU; a.MPS != (MPSShare{}) && g >= 0 {
				// A GPU with MPS clients is held once, by them all.
				if mpsGPUs == nil {
					mpsGPUs = make([]uint8, len(c.nodes))
				}
				mpsGPUs[a.Node] |= 1 << uint(g)
			}
			u.FreeCPUs += a.CPUs
			u.FreeMemMB += a.MemMB
		}
	}
	for i := range c.nodes {
		node := &c.cluster.Nodes[i]
		u := used[i]
		if mpsGPUs != nil {
			u.FreeGPUs += int32(bits.OnesCount8(mpsGPUs[i]))
		}
		if u.FreeGPUs > node.GPUs || u.FreeCPUs > node.CPUs || u.FreeMemMB > node.MemMB {
			panic(fmt.Sprintf("sim: node %s oversubscribed at t=%d: gpus %d/%d cpus %d/%d mem %d/%d",
				node.Name, c.now, u.FreeGPUs, node.GPUs, u.FreeCPUs, node.CPUs, u.FreeMemMB, node.MemMB))
		}
		capy := Capacity(node)
		want := NodeState{FreeGPUs: capy.FreeGPUs - u.FreeGPUs, FreeCPUs: node.CPUs - u.FreeCPUs, FreeMemMB: node.MemMB - u.FreeMemMB}
		have := c.nodes[i]
		if m := c.offMask(int32(i)); m != 0 {
			if have != (NodeState{}) {
				panic(fmt.Sprintf("sim: node %s is out of service at t=%d but shows %+v free", node.Name, c.now, have))
			}
			if m&offFailed != 0 && u != (NodeState{}) {
				panic(fmt.Sprintf("sim: node %s is down at t=%d but jobs hold %+v of it", node.Name, c.now, u))
			}
			have = c.offFree[i]
		}
		want.MIG = have.MIG // checkMIG checks it
		want.MPS = have.MPS // checkMPS checks it
		if have != want {
			panic(fmt.Sprintf("sim: node %s free-state drift at t=%d: have %+v, want %+v", node.Name, c.now, have, want))
		}
	}
	for _, rj := range c.Running() {
		if c.status[rj.Ref] != stRunning {
			panic(fmt.Sprintf("sim: job %q in the running list is not running at t=%d", c.js.at(rj.Ref).ID, c.now))
		}
	}
	c.checkMIG()
	c.checkMPS()
	c.checkPower()
}

func (c *controller) finish() *Record {
	for i := range c.rec {
		switch c.status[i] {
		case stPending, stFuture, stHeld, stWaiting:
			c.rec[i].State = Unfinished
			c.rec[i].Reason = c.reason[i].String() // its last pending reason
		case stRunning:
			c.rec[i].State, c.rec[i].Recorded = Unfinished, false
		}
	}
	rec := &Record{
		Cluster: c.cluster,
		Trace:   c.cfg.Trace,
		Policy:  c.policy.Name(),
		Seed:    c.cfg.Seed,
		Jobs:    c.rec,
		End:     c.now,
		Events:  c.events,
		Reasons: c.reasons,
		Runs:    c.runs,

		NodeEvents: c.nodeLog,
		Passes:     slices.Clone(c.timing.Passes),
	}
	if c.rt != nil {
		rec.RuntimeChanges = c.rt.changes
	}
	if c.mig != nil {
		rec.MIG, rec.MIGRepartitions = c.mig.holds, c.mig.reparts
	}
	if c.pw != nil {
		rec.PowerSaving = true
		rec.Suspends = c.pw.finish(c.now)
	}
	rec.Notes = append(rec.Notes, countNotes(c.partRemap, "jobs of partition %q, which the cluster lacks, ran in the default partition "+c.cluster.Partitions[c.cluster.DefaultPartition].Name)...)
	rec.Notes = append(rec.Notes, countNotes(c.typeDropped, "jobs asked for GPU type %q, which their partition lacks; the type was ignored")...)
	if c.lc != nil && c.lc.unknown > 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("%d dependencies name no other job of the trace; they were taken as satisfied", c.lc.unknown))
	}
	if c.heldMax > 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("%d jobs were requeued %d times and held (JobHoldMaxRequeue), as slurmctld holds a job past MAX_BATCH_REQUEUE; sim.Config.MaxRequeue sets the limit",
			c.heldMax, c.maxRequeue))
	}
	if note := c.unfinishedNote(); note != "" {
		rec.Notes = append(rec.Notes, note)
	}
	return rec
}

// countNotes renders "N <format>" lines for a count map, in sorted key order.
func countNotes(m map[string]int, format string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%d "+format, m[k], k))
	}
	return out
}

// View implementation: the controller is its own read-only view.

func (c *controller) Now() Time                  { return c.now }
func (c *controller) Pending() []PendingJob      { return c.pending }
func (c *controller) Nodes() []NodeState         { return c.nodes }
func (c *controller) Cluster() *hwmodels.Cluster { return c.cluster }

// Job implements View.
func (c *controller) Job(ref JobRef) JobInfo {
	j := c.js.at(ref)
	info := JobInfo{ID: j.ID, Name: j.Name, User: j.User, Account: j.Account, QOS: j.QOS, Partition: j.Partition,
		ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID, TimeLimit: j.TimeLimit, Submit: j.Submit, Runtime: workload.Unknown}
	if c.cfg.Oracle {
		info.Runtime = j.Runtime
	}
	return info
}
