package slurm

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/priority"
	"github.com/schedsim/schedsim/sim"
)

// Policy is Slurm's scheduling as slurmctld does it with sched/backfill and
// priority/multifactor (slurm-gpu-facts.md §2–§4, real-slurm-notes.md):
//
//   - Queue order: partition PriorityTier (higher first), then job priority
//     (higher first), then submit time, then job (sort_job_queue2). A job
//     submitted to several partitions has one queue record per partition.
//   - Priority: multifactor (age, fair share – Fair Tree or classic –, job
//     size, partition, QOS, TRES), computed at submit and recomputed for
//     every pending job at every multiple of PriorityCalcPeriod (the job
//     size from the CPUs asked for, then, once the job was tested, those
//     it would be allocated); usage decays per period with
//     PriorityDecayHalfLife.
//   - Main scheduler: after any instant with a submit or a job end, over at
//     most default_queue_depth records, and over the whole queue at every
//     multiple of sched_interval. Records in priority order start if they
//     fit now; the first that does not fit marks its partition failed:
//     later records of that partition are skipped (reason Priority) and the
//     partition's nodes are taken out of the available set for the rest of
//     the pass, so overlapping partitions cannot take them either. No
//     reservations.
//   - Backfill: at every multiple of bf_interval, after the main pass of the
//     same instant. Records in priority order, up to bf_max_job_test (and
//     bf_max_job_user, bf_max_job_part); each starts now if it fits on
//     nodes not reserved for a higher-priority record over its
//     [now, now+limit] window (closed at its end); otherwise it gets a
//     reservation of whole nodes at its earliest start within bf_window,
//     found as Slurm's will-run test does (running jobs released at their
//     end_time = start + limit, in groups on a 30 s grid whose window
//     doubles: willrun.go), both ends rounded down to bf_resolution.
//     Reservations live for one cycle.
//   - Limits: partition MaxTime and MaxNodes hold a job (PartitionTimeLimit,
//     PartitionNodeLimit); QOS MaxJobsPerUser, MaxTRESPerUser and GrpTRES
//     hold a job without blocking its partition or reserving.
//
// Begin declares the passes (see Begin): the event-triggered main pass,
// the full main pass every sched_interval, the backfill cycle every
// bf_interval and, with main_pass_every, the main pass after the job ends
// of its second; Schedule runs those due, in that order.
//
// A Policy keeps per-job state and fair-share usage between passes; Begin
// starts them over. It must not be used by two runs at once.
type Policy struct {
	// AlwaysReserve makes every backfill cycle compute the reservation of
	// every record it tests that cannot start, so that Reservations
	// reports them all. By default a reservation is computed only when a
	// later record fits now and so could be affected by it. It changes no
	// decision, only the cost of a cycle.
	AlwaysReserve bool

	// NoBackfillSkip makes every due backfill cycle run. By default a
	// cycle is skipped when it provably repeats the last one that ran:
	// that cycle started nothing, and since then the queue, priorities,
	// running jobs, free state and QOS usage are unchanged, no advance
	// reservation exists, and now has not reached a time at which one of
	// that cycle's time-dependent tests (bf_min_age_reserve, the
	// reservation windows of now, bf_window's horizon, a start at now)
	// could turn out otherwise. A skipped cycle sets the pending reasons
	// that cycle set. It changes no decision, only the cost.
	NoBackfillSkip bool

	// Reference makes every backfill cycle run the plain reference
	// algorithm (backfill_reference.go) instead of the fast one:
	// no memo, no skipped cycles, no deferred reservations. It changes no
	// decision, only the cost; tests compare the two.
	Reference bool

	cfg *slurmConfig
	// baseCfg is the configuration of the arguments alone, which configure
	// puts back for a cluster without slurm.conf settings.
	baseCfg *slurmConfig
	placer  policies.Placer
	pass    policies.Pass
	// basePlacer is the placer the policy was built with; configure puts
	// it back unless the cluster's TopologyPlugin asks for the tree.
	basePlacer policies.Placer
	// switchTree is placer when it is a TopologyTree (clockPlacer), else nil:
	// backfill revisits a --switches job when its wait ends.
	switchTree *policies.TopologyTree

	// Arguments: as given, which keys were given (nil: those that differ
	// from the defaults), and in effect (see configure).
	args        Args
	explicit    map[string]bool
	effective   Args
	confCluster *hwmodels.Cluster
	partModes   []preemptMode // per partition of confCluster: its PreemptMode

	cluster   *hwmodels.Cluster
	epoch     uint32
	st        []slurmJob
	order     []qrec
	orderBuf  []qrec  // buildOrder's merge buffer
	orderJobs int     // the jobs order has records of: those pending at the last pass
	fresh     []int32 // slots (pq) of the jobs without queue records this pass
	// pq holds each pending job's place in the view's Pending, in the
	// slot its slurmJob's pi names: the pending scan then visits only the
	// jobs that entered or left the queue (sim.Delta.Queued, Started),
	// not every pending job every pass. pend is this pass's Pending.
	// pqFree lists the free slots, pqUsed counts the others; scanAll, set
	// by tests, makes every pass scan the whole queue.
	pq      []pqEntry
	pend    []sim.PendingJob
	pqFree  []int32
	pqUsed  int
	scanAll bool
	// copyFree, set by tests, copies the free state every pass in place
	// of the mirrored one (policies.Pass.Mirror).
	copyFree bool
	lastCalc sim.Time
	// passFull and passBF are the indices of the full main pass and the
	// backfill cycle among the passes Begin declared, or -1.
	passFull, passBF int
	expRun           int // running jobs expected at the next pass if nothing ends

	tree    *priority.Tree
	derived bool
	usage   []float64 // association usage at lastCalc
	fs      []float64 // fair-share factor per association
	users   map[string]int32
	qosIdx  map[string]int32
	normal  int32
	limits  bool // some QOS has a limit
	maxQOS  float64
	maxPart float64
	nodesN  float64
	cpusN   float64
	partTot []priority.TRES
	defCPG  []int64      // per partition: DefCpuPerGPU in effect
	tracked []sim.JobRef // jobs charging usage

	qosUse  []tresUse          // per QOS, running
	userUse map[uint64]tresUse // per QOS<<32 | user, running

	bf      backfillState
	pre     preemptState
	reasons []sim.Reason
	passNew bool
	// mainSeen is how many records of order the main pass looked at this
	// pass (0 when it did not run); lastStarts are the jobs the last pass
	// started; cand is emitReasons' scratch; reasonsWalk, set by tests,
	// makes emitReasons always walk the whole queue (walkAll) or visit
	// the candidates only (walkCandidates). See emitReasons.
	mainSeen    int
	lastStarts  []sim.JobRef
	emit        []int32 // emitReasons' scratch: slots of the jobs whose reason changed
	reasonsWalk int8

	// kills holds the allocation of every running multi-node job while
	// KillWait is on, for the main pass at its kill (holdKilled).
	kills map[sim.JobRef]*killRun
	held  []sim.NodeAlloc // what holdKilled took from the free state this pass

	// shared holds per partition its nodes that other partitions have
	// too (sharedNodes): the main pass blocks only these.
	shared [][]int32
	// endsHeard is set by the run's first JobEnded: its caller reports
	// ends, and reconcile has nothing to do.
	endsHeard bool
}

// pqEntry is a pending job's place in the view's Pending, which lists
// jobs by (Submit, Ref): its key, and its index there when last looked
// up (an index moves as jobs before it start or are queued before it).
type pqEntry struct {
	sub sim.Time
	ref sim.JobRef
	at  int32
}

// killRun is a multi-node run's whole allocation and the instant the
// policy first saw it killed (-1: not yet).
type killRun struct {
	alloc []sim.NodeAlloc
	seen  sim.Time
}

// slurmJob is what the policy keeps per job, indexed by JobRef: one per
// job of the run, so its fields are ordered to leave no padding (80
// bytes, TestSlurmJobSize). The fields the walks of every pending job
// read each pass come first: at 80 bytes a job, a job's first 16 bytes
// always lie in one cache line.
type slurmJob struct {
	epoch    uint32 // stamp of the last pending scan that saw it (0: none)
	pi       int32  // 1 + its slot in pq while pending, else 0
	started  uint32 // epoch of the pass that started it
	known    bool
	reason   sim.PendingReason // this pass
	emitted  sim.PendingReason
	sized    bool    // tested against the nodes: the job size factor counts the CPUs it would be allocated
	base     float64 // weighted priority sum without the partition term
	billable float64
	assoc    int32 // association, -1 = none
	qos      int32
	user     int32
	victim   uint32 // epoch of the pass that preempted it
	limit    int32  // time limit of its current run, seconds (saturated); 0 before it starts
	// tlim is the job's own time limit (the view's JobInfo.TimeLimit, 0
	// for unknown) + 1 where it fits 24 bits (194 days), 0 where not:
	// holdReason reads it every pass, and the view's JobInfo is a large
	// copy.
	tlim      [3]byte
	charging  bool
	preempted sim.Time // 1 + when it last preempted, 0 for never
	killed    sim.Time // start + 1 of its run that a preemption killed at once (no grace), 0 for none
	charged   sim.Time // when its current charge began (its run's start)
}

var _ sim.Policy = (*Policy)(nil)

func newSlurm(cfg *slurmConfig, args Args, explicit map[string]bool, placer policies.Placer) *Policy {
	return &Policy{cfg: cfg, baseCfg: cfg, placer: placer, basePlacer: placer, pass: policies.NewPass(placer, true), args: args, effective: args, explicit: explicit}
}

// Name returns "slurm".
func (*Policy) Name() string { return "slurm" }

// Begin implements sim.Policy: the arguments in effect become the
// scenario's over the cluster's slurm.conf settings (see configure), and
// the per-job state, fair-share usage and pass records start over, sized
// for info.Jobs jobs. The passes are slurmctld's, in the order Schedule
// runs them at one instant:
//
//   - "main", after every event: the main scheduler triggered by job
//     submits and ends (a pass of default_queue_depth records, run only
//     when jobs were queued or ended since the last pass);
//   - "main-full", every sched_interval: a main pass over the whole queue;
//   - "backfill", every bf_interval;
//   - with ends_after_pass and main_pass_every, "main-after-ends": the
//     main scheduler right after the job ends of the seconds of its
//     sched_min_interval grid (AfterEnds).
//
// Settle is the longest of sched_interval, bf_interval and
// PriorityCalcPeriod: passes starting nothing for that long after the
// last change have run every kind of pass at least once (a full main
// pass, a backfill cycle, a priority recalculation), so later ones would
// start nothing either.
func (s *Policy) Begin(info sim.RunInfo) (sim.Timing, error) {
	if err := s.configure(info.Cluster); err != nil {
		return sim.Timing{}, err
	}
	s.reset(info.Cluster)
	s.pre.killWait, s.pre.grace = info.KillWait, info.PreemptGraceTime
	quiet, err := preemptQuiet(info.Cluster)
	if err != nil {
		return sim.Timing{}, err
	}
	s.pre.quiet = quiet
	// The free state follows the view's Delta, not copied each pass,
	// where the policy changes it only by blocking nodes (mainPass):
	// preemption and KillWait's held nodes change it otherwise.
	s.pass.Mirror(s.cfg.preempt == preemptNone && info.KillWait == 0)
	if cap(s.st) < info.Jobs {
		s.st = make([]slurmJob, 0, info.Jobs)
	}
	cfg := s.cfg
	tm := sim.Timing{Passes: []sim.Pass{{Name: "main", OnEvent: true}},
		Settle:          max(cfg.schedInterval, cfg.bfInterval, cfg.calcPeriod),
		EndsAfterPasses: cfg.endsAfterPass, EndAtLimit: cfg.endAtLimit}
	s.passFull, s.passBF = -1, -1
	if cfg.schedInterval > 0 {
		s.passFull = len(tm.Passes)
		tm.Passes = append(tm.Passes, sim.Pass{Name: "main-full", Period: cfg.schedInterval})
	}
	if cfg.bfInterval > 0 {
		s.passBF = len(tm.Passes)
		tm.Passes = append(tm.Passes, sim.Pass{Name: "backfill", Period: cfg.bfInterval})
	}
	if cfg.mainEvery > 0 {
		tm.Passes = append(tm.Passes, sim.Pass{Name: "main-after-ends", Period: cfg.mainEvery, Phase: cfg.mainPhase, OnEvent: true, AfterEnds: true})
	}
	return tm, nil
}

// reset starts the state of a new run on cluster c.
func (s *Policy) reset(c *hwmodels.Cluster) {
	cfg := s.cfg
	s.cluster = c
	s.epoch = 0
	s.st = s.st[:cap(s.st)]
	clear(s.st) // job grows into this capacity and expects zeros
	s.st = s.st[:0]
	s.order = s.order[:0]
	s.orderJobs = 0
	s.pq, s.pqFree, s.pqUsed = s.pq[:0], s.pqFree[:0], 0
	s.lastStarts = s.lastStarts[:0]
	s.shared = sharedNodes(c, s.shared)
	s.lastCalc = -1
	s.expRun = 0
	s.bf.skipOK = false
	// The caches kept across passes hold the last run's cluster.
	s.bf.baseShapes = shapeSlots[baseShape]{}
	s.bf.finShapes = shapeSlots[finShape]{}
	s.bf.fin.ok = false
	s.tracked = s.tracked[:0]
	s.endsHeard = false
	s.users = map[string]int32{}
	s.pre.out = s.pre.out[:0]
	s.pre.waits = nil
	s.pre.rcEpoch, s.pre.oosEpoch, s.pre.runEpoch = 0, 0, 0 // pass epochs start over
	clear(s.kills)
	s.tree, _ = priority.NewTree(cfg.calcPeriod, cfg.halfLife, cfg.reset)
	s.tree.SetPhase(cfg.calcPhase)
	s.derived = len(cfg.accounts) == 0 && len(cfg.users) == 0
	if s.derived {
		s.tree.AddUser("root", "root", 1)
	}
	for _, a := range cfg.accounts {
		s.tree.AddAccount(a.Name, a.Parent, a.Fairshare)
	}
	for _, u := range cfg.users {
		s.tree.AddUser(u.Name, u.Account, u.Fairshare)
	}
	s.usage = append(s.usage[:0], make([]float64, s.tree.Len())...)
	s.refreshFS()
	s.qosIdx = map[string]int32{}
	s.maxQOS, s.limits = 0, false
	for i, q := range cfg.qos {
		s.qosIdx[q.name] = int32(i)
		s.maxQOS = max(s.maxQOS, float64(q.priority))
		if q.maxJobs > 0 || q.maxUser.set || q.grp.set {
			s.limits = true
		}
	}
	s.normal = s.qosIdx["normal"]
	s.setupPreempt()
	s.qosUse = make([]tresUse, len(cfg.qos))
	s.userUse = map[uint64]tresUse{}
	s.maxPart, s.nodesN, s.cpusN = 0, float64(len(c.Nodes)), 0
	for i := range c.Nodes {
		s.cpusN += float64(c.Nodes[i].CPUs)
	}
	s.partTot = s.partTot[:0]
	s.defCPG = s.defCPG[:0]
	for i := range c.Partitions {
		p := &c.Partitions[i]
		cpg := cfg.defCpuPerGPU
		if p.DefCPUPerGPU > 0 {
			cpg = int64(p.DefCPUPerGPU)
		}
		s.defCPG = append(s.defCPG, cpg)
		s.maxPart = max(s.maxPart, float64(p.PriorityJobFactor))
		var t priority.TRES
		for _, n := range p.Nodes {
			node := &c.Nodes[n]
			t.CPU += float64(node.CPUs)
			t.MemMB += float64(node.MemMB)
			t.GPUs += float64(node.GPUs)
			t.Nodes++
		}
		s.partTot = append(s.partTot, t)
	}
}

func (s *Policy) job(ref sim.JobRef) *slurmJob {
	if int(ref) >= len(s.st) {
		n := max(int(ref)+1, 2*len(s.st))
		if int(ref) < cap(s.st) {
			n = min(n, cap(s.st)) // sized for the run (Begin)
		}
		s.st = slices.Grow(s.st, n-len(s.st))[:n]
	}
	return &s.st[ref]
}

// Schedule implements sim.Policy. The returned Plan's slices are reused by
// the next call.
func (s *Policy) Schedule(due sim.PassSet, v sim.View, _ *rand.Rand) sim.Plan {
	now := v.Now()
	s.epoch++
	s.reconcile(v)
	s.epoch++ // fresh stamp for the pending scan
	pend := v.Pending()
	p := &s.pass
	p.Reset(v)
	if !p.Mirrored() {
		p.OwnFree()
	}
	s.pre.out = s.pre.out[:0]

	// 1. Pending jobs: identify, priorities.
	newJobs := s.scanPending(v, pend)
	recalc := false
	if k := s.calcInstant(now); k > s.lastCalc {
		recalc = true
		s.recalc(pend, k)
	}
	if newJobs {
		// Priority at submit, from the fair share of the last
		// calculation, kept until the next one (real-slurm-notes.md). A
		// job first pending now after a dependency or begin time held it
		// has the priority of its submit or of the last calculation since,
		// whose age factor was 0: it accrues age only once eligible
		// (accrue_time), and nothing recomputes it when it becomes so.
		for _, k := range s.fresh {
			pj := s.pendAt(k)
			if js := &s.st[pj.Ref]; js.started == 1 {
				js.started = 0
				if !recalc {
					s.computeBase(pj, js, max(pj.Submit, s.lastCalc))
				}
			}
		}
	}
	queued := s.buildOrder(pend, recalc)

	// 2. Which passes are due.
	changed := newJobs || len(v.Running()) != s.expRun
	full, bf := due.Has(s.passFull), due.Has(s.passBF)
	if s.limits {
		s.loadLimits(v)
	}
	s.holdKilled(v, bf && (changed || full))
	s.mainSeen = 0
	if changed || full {
		s.mainPass(v, pend, full)
	}
	if len(s.held) > 0 {
		p.Rebase(v.Nodes()) // the held nodes are back for the backfill cycle
	}
	s.bf.dirty = s.bf.dirty || changed || queued || len(p.Starts) > 0 || len(s.pre.out) > 0 || len(p.Windows) > 0
	if bf {
		s.applyKills(v)
		if s.Reference {
			s.referenceBackfill(v, pend)
			s.bf.skipOK = false
		} else if !s.skipBackfill(v) {
			s.backfill(v, pend)
			s.noteBackfill(v)
		}
	}
	s.expRun = len(v.Running()) + len(p.Starts)

	// 3. Usage of the jobs started, reasons of those left.
	for _, st := range p.Starts {
		s.charge(st.Job, now, st.Alloc)
	}
	s.emitReasons(pend, bf)
	s.lastStarts = s.lastStarts[:0]
	for _, st := range p.Starts {
		s.lastStarts = append(s.lastStarts, st.Job)
	}
	plan := p.Plan()
	s.pend = nil // the view's, valid during the pass only
	plan.Reasons = s.reasons
	plan.Preempts = s.pre.out
	return plan
}

// scanPending brings the pending jobs' state up to this pass's queue:
// every job pending now has a slot in pq holding its PendingJob and a
// stamp, those no longer pending have none, and s.fresh lists the slots
// of the jobs not pending at the last pass (no queue record yet). It
// reports whether some job is pending for the first time; such a job has
// started set to 1 (its priority is not computed yet).
//
// With the view's queue changes (sim.Delta.Queued) only the jobs that
// entered and those started since the last pass are visited; a job both
// started and queued since then was requeued, so is pending. Without them,
// or when the count of slots disagrees with the queue, every pending job
// is.
func (s *Policy) scanPending(v sim.View, pend []sim.PendingJob) bool {
	s.fresh = s.fresh[:0]
	s.pend = pend
	d := v.Delta()
	if !d.QueueKnown || s.scanAll || s.epoch <= 2 {
		return s.scanWhole(v, pend)
	}
	newJobs := false
	for _, i := range d.Queued {
		if int(i) >= len(pend) {
			return s.scanWhole(v, pend) || newJobs
		}
		newJobs = s.see(v, pend, int(i)) || newJobs
	}
	// The started jobs' slots go unless they were queued again. Counted
	// first: where the slots left would not match the queue, the whole
	// scan starts from the slots of the last pass's queue (the jobs
	// without one are those not pending then, whatever the view said).
	gone := 0
	for _, ref := range d.Started {
		if js := &s.st[ref]; js.pi != 0 && js.epoch != s.epoch {
			gone++
		}
	}
	if s.pqUsed-gone != len(pend) {
		return s.scanWhole(v, pend) || newJobs
	}
	for _, ref := range d.Started {
		if js := &s.st[ref]; js.pi != 0 && js.epoch != s.epoch {
			s.dropSlot(js)
		}
	}
	return newJobs
}

// scanWhole is scanPending visiting every pending job. Called after part
// of the queue's changes were taken, it keeps what they did: the jobs
// given a slot then are in fresh already.
func (s *Policy) scanWhole(v sim.View, pend []sim.PendingJob) bool {
	newJobs := false
	for i := range pend {
		newJobs = s.see(v, pend, i) || newJobs
	}
	for k := range s.pq {
		if ref := s.pq[k].ref; ref >= 0 {
			if js := &s.st[ref]; js.pi == int32(k)+1 && js.epoch != s.epoch {
				s.dropSlot(js)
			}
		}
	}
	return newJobs
}

// see notes pend[i] pending this pass: stamped, with a slot holding its
// place (a new slot makes it fresh). It reports whether the job is pending
// for the first time (started set to 1: priority not computed yet).
func (s *Policy) see(v sim.View, pend []sim.PendingJob, i int) bool {
	pj := &pend[i]
	js := s.ident(v, pj.Ref)
	first := js.epoch == 0
	if first {
		js.started = 1
	}
	js.epoch = s.epoch
	if js.pi == 0 {
		s.fresh = append(s.fresh, s.takeSlot(js))
	}
	s.pq[js.pi-1] = pqEntry{sub: pj.Submit, ref: pj.Ref, at: int32(i)}
	return first
}

// takeSlot gives pending job js a slot in pq and returns it.
func (s *Policy) takeSlot(js *slurmJob) int32 {
	var k int32
	if n := len(s.pqFree); n > 0 {
		k = s.pqFree[n-1]
		s.pqFree = s.pqFree[:n-1]
	} else {
		k = int32(len(s.pq))
		s.pq = append(s.pq, pqEntry{})
	}
	js.pi = k + 1
	s.pqUsed++
	return k
}

// dropSlot frees the slot of js, no longer pending.
func (s *Policy) dropSlot(js *slurmJob) {
	k := js.pi - 1
	s.pq[k].ref = -1
	s.pqFree = append(s.pqFree, k)
	js.pi = 0
	s.pqUsed--
}

// pendOf returns pending job ref's entry in this pass's Pending: at its
// last index if still there, else found by its key.
func (s *Policy) pendOf(ref sim.JobRef) *sim.PendingJob {
	return s.pendAt(s.st[ref].pi - 1)
}

// pendAt is pendOf of the job in slot k.
func (s *Policy) pendAt(k int32) *sim.PendingJob {
	e := &s.pq[k]
	if i := int(e.at); i < len(s.pend) && s.pend[i].Ref == e.ref {
		return &s.pend[i]
	}
	// Jobs before it that started move it back by as many places: the
	// few starts of a pass or two are looked for first.
	for i := min(int(e.at), len(s.pend)) - 1; i >= 0 && i >= int(e.at)-4; i-- {
		if s.pend[i].Ref == e.ref {
			e.at = int32(i)
			return &s.pend[i]
		}
	}
	i, _ := slices.BinarySearchFunc(s.pend, *e, func(p sim.PendingJob, e pqEntry) int {
		if c := cmp.Compare(p.Submit, e.sub); c != 0 {
			return c
		}
		return cmp.Compare(p.Ref, e.ref)
	})
	e.at = int32(i)
	return &s.pend[i]
}

// emitReasons sets s.reasons to the pending reasons that changed this
// pass, in the view's pending order: a job not started this pass whose
// reason this pass differs from the one last emitted, or, for one that
// no pass looked at yet, Priority (behind the records the pass looked
// at). A job that this pass did not look at keeps its reason.
//
// Only these jobs can emit: those whose reason a pass set (the first
// mainSeen records of order, and, when the backfill cycle was due, the
// records its why log names: bfReason and skipBackfill set reasons from
// it), and those never emitted. A job pending at the last pass and not
// started by it left that pass emitted (emitting makes emitted a reason),
// so the never-emitted are among fresh (not pending at the last pass) and
// lastStarts (started by the last pass, pending again). Where those
// candidates are under half the queue, only they are visited, each once,
// and those whose reason changed are put in pending order ((Submit, Ref),
// sim.View) by sorting them alone; otherwise, where visiting every
// pending job costs less, every one is, in order. Both emit the same
// reasons (TestSlurmReasonsCandidates). Every job visited has its reason
// of this pass cleared: the jobs with one set are all visited, so each
// pass starts with none set.
func (s *Policy) emitReasons(pend []sim.PendingJob, bf bool) {
	s.reasons = s.reasons[:0]
	n := s.mainSeen + len(s.fresh) + len(s.lastStarts)
	if bf {
		n += len(s.bf.why)
	}
	if s.reasonsWalk == walkAll || s.reasonsWalk != walkCandidates && n > len(pend)/2 {
		for i := range pend {
			if js := &s.st[pend[i].Ref]; s.reasonOf(js) != sim.ReasonNone {
				s.reasons = append(s.reasons, sim.Reason{Job: pend[i].Ref, Reason: js.emitted})
			}
		}
		return
	}
	e := s.emit[:0]
	add := func(js *slurmJob) {
		if js.pi != 0 && s.reasonOf(js) != sim.ReasonNone { // pending now, and changed
			e = append(e, js.pi-1)
		}
	}
	for _, k := range s.fresh {
		add(&s.st[s.pq[k].ref])
	}
	for k := range s.order[:s.mainSeen] {
		add(&s.st[s.order[k].ref])
	}
	if bf {
		for _, w := range s.bf.why {
			add(&s.st[w.ref])
		}
	}
	for _, ref := range s.lastStarts {
		add(&s.st[ref])
	}
	if len(e) > 1 {
		slices.SortFunc(e, func(a, b int32) int {
			x, y := &s.pq[a], &s.pq[b]
			if c := cmp.Compare(x.sub, y.sub); c != 0 {
				return c
			}
			return cmp.Compare(x.ref, y.ref)
		})
	}
	for _, k := range e {
		ref := s.pq[k].ref
		s.reasons = append(s.reasons, sim.Reason{Job: ref, Reason: s.st[ref].emitted})
	}
	s.emit = e
}

// The reasonsWalk settings (see emitReasons).
const (
	walkAuto int8 = iota
	walkAll
	walkCandidates
)

// reasonOf returns a pending job's reason if it changed this pass (see
// emitReasons), making it the one emitted, and ReasonNone if not; it
// clears the reason of this pass. A second call in the pass returns
// ReasonNone.
func (s *Policy) reasonOf(js *slurmJob) sim.PendingReason {
	r := js.reason
	js.reason = sim.ReasonNone
	if js.started == s.epoch {
		return sim.ReasonNone
	}
	if r == sim.ReasonNone {
		if js.emitted != sim.ReasonNone {
			return sim.ReasonNone // not looked at this pass: keeps its reason
		}
		r = sim.ReasonPriority // behind the records this pass looked at
	}
	if r == js.emitted {
		return sim.ReasonNone
	}
	js.emitted = r
	return r
}

// pendingJob returns the record's job as placement sees it: in the
// record's partition only, so that a record of a multi-partition job is
// placed, limited and reserved in its own partition (the job's other
// partitions have their own records).
func (s *Policy) pendingJob(r *qrec) sim.PendingJob {
	j := *s.pendOf(r.ref)
	j.Part = r.part
	j.Parts = 1 << uint(r.part)
	return j
}

// BackfillSkipped returns how many due backfill cycles were skipped as
// repeats of the last one that ran (see NoBackfillSkip) since the policy
// was made.
func (s *Policy) BackfillSkipped() int { return s.bf.skipped }

// Reservation is a pending job's reservation in the latest backfill
// cycle: nodes held whole over [Start, End), rounded to bf_resolution, and
// the job's predicted start.
type Reservation struct {
	Job        sim.JobRef
	Predicted  sim.Time
	Start, End sim.Time
	Nodes      []int32
}

// Reservations returns the reservations the latest backfill cycle made, in
// queue order (see AlwaysReserve). The slice and its node lists are reused
// by the next cycle.
func (s *Policy) Reservations() []Reservation {
	out := make([]Reservation, 0, len(s.bf.res))
	for _, r := range s.bf.res {
		out = append(out, Reservation{Job: r.job, Predicted: r.at, Start: r.lo, End: r.hi, Nodes: r.nodes})
	}
	return out
}

// holdKilled takes from the pass's free state, for the main pass, the
// nodes that a multi-node job killed at its time limit at this instant
// freed at once (all but its batch host, sim/kill.go). Slurm has them
// completing until their epilog is done, and select_nodes skips
// completing nodes (_pick_best_nodes); the sweep kills at its phase, and
// the main scheduler runs on its sched_min_interval grid just after the
// backfill cycle's phase, so the first to see them done is the backfill
// cycle of the kill's second, which schedsim runs after the main pass of
// that instant (conformance/records/gen-95/run1: G03 on gn[2-4] killed at
// 118.016, five small jobs on gn3 and gn4 from the cycle at 118.612, no
// main scheduler between). Only the first pass to see the kill holds
// them, and only when it runs a backfill cycle (hold): the kill's instant
// but for a policy that had no pass then (no job pending).
func (s *Policy) holdKilled(v sim.View, hold bool) {
	s.held = s.held[:0]
	if len(s.kills) == 0 {
		return
	}
	now := v.Now()
	run := v.Running()
	for ref, k := range s.kills {
		if k.seen >= 0 {
			continue
		}
		i, ok := slices.BinarySearchFunc(run, ref, func(r sim.RunningJob, t sim.JobRef) int { return cmp.Compare(r.Ref, t) })
		if !ok || !run[i].Killed {
			continue
		}
		k.seen = now
		if !hold {
			continue
		}
		for _, a := range k.alloc {
			if !slices.ContainsFunc(run[i].Alloc, func(b sim.NodeAlloc) bool { return b.Node == a.Node }) {
				s.held = append(s.held, a)
			}
		}
	}
	slices.SortFunc(s.held, func(a, b sim.NodeAlloc) int { return cmp.Compare(a.Node, b.Node) })
	for i := range s.held {
		s.pass.Free[s.held[i].Node].Sub(&s.held[i])
	}
}
