package slurm_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

var referenceRuns = flag.Int("reference-runs", 1000, "random workloads TestSlurmBackfillReference replays")

// TestSlurmBackfillReference is the quick check of the fast backfill
// cycle (backfill.go: memo, skipped cycles, deferred reservations,
// incremental masks, will-run profiles) against the plain reference
// (backfill_reference.go), in the manner of etcd-io/raft's
// quorum/quick_test.go: on random small workloads (randomBackfillCase)
// both must make the same decisions — every job's start, end, state,
// partition and nodes, every earlier run, every pending-reason change —
// and, on every fourth workload, with AlwaysReserve, the same
// reservations after every pass. -reference-runs=N replays N workloads
// instead of 1,000 (seeds 1 to N).
func TestSlurmBackfillReference(t *testing.T) {
	n := *referenceRuns
	reserved := 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		reserved += checkReference(t, seed)
	}
	if reserved == 0 {
		t.Fatal("no reservation was made: the workloads test nothing")
	}
	t.Logf("%d workloads, %d reservations compared", n, reserved)
}

// checkReference replays the workload of seed with the fast and the
// reference cycle (TestSlurmBackfillReference) and returns how many
// reservations it compared.
func checkReference(t *testing.T, seed uint64) int {
	t.Helper()
	c := randomBackfillCase(seed)
	withResv := seed%4 == 0
	fast := c.run(t, false, func(s *slurm.Policy) {})
	ref := c.run(t, withResv, func(s *slurm.Policy) { s.Reference = true })
	if msg := policytest.DiffDecisions(fast.rec, ref.rec); msg != "" {
		t.Fatalf("seed %d (%s): fast and reference backfill differ: %s", seed, c, msg)
	}
	if !withResv {
		return 0
	}
	all := c.run(t, true, func(s *slurm.Policy) { s.AlwaysReserve = true })
	if msg := policytest.DiffDecisions(all.rec, ref.rec); msg != "" {
		t.Fatalf("seed %d (%s): with AlwaysReserve: %s", seed, c, msg)
	}
	if !reflect.DeepEqual(all.resv, ref.resv) {
		for i := range min(len(all.resv), len(ref.resv)) {
			if !reflect.DeepEqual(all.resv[i], ref.resv[i]) {
				t.Fatalf("seed %d (%s): pass %d at t=%d: reservations\nfast      %+v\nreference %+v", seed, c, i, ref.resv[i].at, all.resv[i], ref.resv[i])
			}
		}
		t.Fatalf("seed %d (%s): %d passes with the fast cycle, %d with the reference", seed, c, len(all.resv), len(ref.resv))
	}
	reserved := 0
	for _, r := range ref.resv {
		reserved += len(r.res)
	}
	return reserved
}

// TestSlurmReasonsCandidates checks emitReasons' candidates: on the
// random workloads of TestSlurmBackfillReference, a policy that visits
// only the candidates for its pending reasons must make the same
// decisions and the same pending-reason changes as one that visits every
// pending job at every pass.
func TestSlurmReasonsCandidates(t *testing.T) {
	for seed := uint64(1); seed <= uint64(*referenceRuns); seed++ {
		c := randomBackfillCase(seed)
		all := c.run(t, false, slurm.WalkAll)
		cand := c.run(t, false, slurm.WalkCandidates)
		if msg := policytest.DiffDecisions(all.rec, cand.rec); msg != "" {
			t.Fatalf("seed %d (%s): reasons of the candidates and of the whole queue differ: %s", seed, c, msg)
		}
	}
}

// TestSlurmPendingScan replays random workloads with the pending scan
// visiting only the queue's changes (sim.Delta.Queued, Started) and
// visiting every pending job: the decisions and reasons must be the same.
// The workloads requeue jobs (back from their hold in the middle of the
// queue: jobs submitted during the hold are behind), and a third of the
// jobs of every other workload wait for an earlier one (afterany, after),
// entering the queue behind jobs submitted later: the changes are not
// just the queue's tail.
func TestSlurmPendingScan(t *testing.T) {
	for seed := uint64(1); seed <= uint64(*referenceRuns); seed++ {
		c := randomBackfillCase(seed)
		if seed%2 == 0 {
			jobs := slices.Clone(c.cfg.Trace.Jobs)
			for i := 1; i < len(jobs); i++ {
				if (int(seed)+i)%3 == 0 {
					typ := workload.DepAfterAny
					if i%2 == 0 {
						typ = workload.DepAfter
					}
					jobs[i].Deps = []workload.Dependency{{Type: typ, JobID: jobs[(i*7+int(seed))%i].ID}}
				}
			}
			c.cfg.Trace = &workload.Trace{Jobs: jobs}
		}
		whole := c.run(t, false, slurm.ScanWhole)
		delta := c.run(t, false, func(*slurm.Policy) {})
		if msg := policytest.DiffDecisions(whole.rec, delta.rec); msg != "" {
			t.Fatalf("seed %d (%s): the pending scan of the queue's changes and of the whole queue differ: %s", seed, c, msg)
		}
		// A view whose Delta lists only some of the jobs queued: the
		// count of slots disagrees and the pass scans the whole queue.
		s, err := slurm.New(c.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg := c.cfg
		cfg.Policy = halfQueued{s}
		cfg.Trace = &workload.Trace{Jobs: slices.Clone(c.cfg.Trace.Jobs)}
		rec, err := sim.Run(cfg)
		if err != nil {
			t.Fatalf("seed %d (%s): %v", seed, c, err)
		}
		if msg := policytest.DiffDecisions(whole.rec, rec); msg != "" {
			t.Fatalf("seed %d (%s): with half the queued jobs listed, the pending scan differs from the whole queue's: %s", seed, c, msg)
		}
	}
}

// halfQueued is a slurm policy whose views list only the first half of
// the jobs queued since the last pass (sim.Delta.Queued).
type halfQueued struct{ *slurm.Policy }

func (p halfQueued) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	return p.Policy.Schedule(due, halfQueuedView{v}, rng)
}

type halfQueuedView struct{ sim.View }

func (v halfQueuedView) Delta() sim.Delta {
	d := v.View.Delta()
	d.Queued = d.Queued[:len(d.Queued)/2]
	return d
}

// TestSlurmMirroredFree replays random workloads with the free state
// mirrored from the view's Delta (the main pass blocking a partition's
// nodes through the pass, given back for the backfill cycle) and copied
// every pass: the decisions and reasons must be the same.
func TestSlurmMirroredFree(t *testing.T) {
	for seed := uint64(1); seed <= uint64(*referenceRuns); seed++ {
		c := randomBackfillCase(seed)
		copied := c.run(t, false, slurm.CopyFree)
		mirrored := c.run(t, false, func(*slurm.Policy) {})
		if msg := policytest.DiffDecisions(copied.rec, mirrored.rec); msg != "" {
			t.Fatalf("seed %d (%s): the mirrored and the copied free state differ: %s", seed, c, msg)
		}
	}
}

// TestSlurmBackfillReferenceSeeds replays the workloads beyond the
// default 1,000 that once told the fast and the reference cycle apart:
// 2984, where a job in two partitions preempted in the backfill cycle for
// one record and the fast cycle reserved for it again for the other
// (bfPreempting); 29108, 35060 and 63064, where a job killed at its time
// limit kept only its batch host for KillWait and the fast cycle kept the
// node words of its whole allocation, so its will-run test took the job
// as one on the test's nodes and released it in the first group
// (buildRel).
func TestSlurmBackfillReferenceSeeds(t *testing.T) {
	for _, seed := range []uint64{2984, 29108, 35060, 63064} {
		checkReference(t, seed)
	}
}

// backfillCase is one random workload of TestSlurmBackfillReference.
type backfillCase struct {
	seed uint64
	cfg  sim.Config
	args slurm.Args
}

func (c backfillCase) String() string {
	multi := 0
	for _, j := range c.cfg.Trace.Jobs {
		if strings.Contains(j.Partition, ",") {
			multi++
		}
	}
	return fmt.Sprintf("%d nodes, %d jobs (%d in two partitions), %d windows, bf_interval %d, bf_resolution %d, bf_window %d, placement %q, preempt %q %q, KillWait %d, %d accounts",
		len(c.cfg.Cluster.Nodes), len(c.cfg.Trace.Jobs), multi, len(c.cfg.Reservations), c.args.BfInterval, c.args.BfResolution, c.args.BfWindow, c.args.Placement,
		c.args.PreemptType, c.args.PreemptMode, c.cfg.KillWait, len(c.args.Accounts))
}

// passReservations is what Slurm.Reservations said after one pass.
type passReservations struct {
	at  sim.Time
	res []slurm.Reservation
}

type caseResult struct {
	rec  *sim.Record
	resv []passReservations
}

// run replays the case under a slurm policy that edit adjusts, logging
// its reservations after every pass when log is set.
func (c backfillCase) run(t *testing.T, log bool, edit func(*slurm.Policy)) caseResult {
	t.Helper()
	s, err := slurm.New(c.args, nil)
	if err != nil {
		t.Fatalf("seed %d: %v", c.seed, err)
	}
	edit(s)
	probe := &reservationProbe{Policy: s}
	cfg := c.cfg
	cfg.Policy = s
	if log {
		cfg.Policy = probe
	}
	cfg.Trace = &workload.Trace{Jobs: slices.Clone(c.cfg.Trace.Jobs)}
	rec, err := sim.Run(cfg)
	if err != nil {
		t.Fatalf("seed %d (%s): %v", c.seed, c, err)
	}
	return caseResult{rec: rec, resv: probe.log}
}

// reservationProbe records the policy's reservations after every pass.
type reservationProbe struct {
	*slurm.Policy
	log []passReservations
}

func (p *reservationProbe) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	plan := p.Policy.Schedule(due, v, rng)
	var res []slurm.Reservation
	for _, r := range p.Policy.Reservations() {
		r.Nodes = slices.Clone(r.Nodes)
		res = append(res, r)
	}
	p.log = append(p.log, passReservations{at: v.Now(), res: res})
	return plan
}

// randomBackfillCase generates a small workload that exercises backfill:
// 2 to 5 nodes (4 or 8 GPUs, two GPU types), one or two partitions (the
// second a subset of a higher PriorityTier), 4 to 18 jobs of whole nodes
// or spread GPUs (some naming a GPU type, some CPU-only), limits off the
// minute, runtimes under, at and over the limit; sometimes an advance
// reservation, a node going down and back, the time-limit sweep, and
// Slurm's end_time planning; random backfill parameters (bf_interval,
// bf_resolution, bf_window, bf_max_job_test, bf_max_job_user,
// bf_min_age_reserve, bf_busy_nodes, bf_window_linear), placement,
// priority weights and DefCpuPerGPU.
func randomBackfillCase(seed uint64) backfillCase {
	rng := rand.New(rand.NewPCG(seed, 0x5eedbf))
	pick := func(xs ...int64) int64 { return xs[rng.IntN(len(xs))] }
	nn := 2 + rng.IntN(4)
	types := []string{"h100", "a100"}
	nodes := make([]hwmodels.Node, nn)
	twoParts := rng.IntN(2) == 0
	for i := range nodes {
		parts := uint64(1)
		if twoParts && i%2 == 0 {
			parts |= 2
		}
		gpus := int32(pick(4, 8, 8))
		nodes[i] = policytest.Node(fmt.Sprintf("n%d", i), gpus, types[rng.IntN(4)/3], 32, 256000, parts)
	}
	var c *hwmodels.Cluster
	if twoParts {
		c = policytest.Cluster(nodes, "lo", "hi")
		c.Partitions[1].PriorityTier = int32(1 + rng.IntN(2))
	} else {
		c = policytest.Cluster(nodes)
	}
	var jobs []workload.Job
	var at sim.Time
	for i := range 4 + rng.IntN(15) {
		j := workload.NewJob(fmt.Sprint(i + 1))
		if rng.IntN(3) > 0 {
			at += sim.Time(rng.IntN(60))
		}
		j.Submit = at
		j.User = fmt.Sprintf("u%d", rng.IntN(3))
		var r workload.Request
		switch k := rng.IntN(10); {
		case k < 4:
			r.Nodes = int32(1 + rng.IntN(min(nn, 3)))
			r.GPUs = r.Nodes * int32(pick(4, 4, 8))
		case k < 9:
			r.GPUs = int32(1 + rng.IntN(8))
			r.CPUs = r.GPUs * int32(pick(1, 2, 4))
		default:
			r.CPUs = int32(1 + rng.IntN(16))
		}
		if r.GPUs > 0 && rng.IntN(6) == 0 {
			r.GPUType = types[rng.IntN(2)]
		}
		j.Request = r
		if twoParts && rng.IntN(3) == 0 {
			j.Partition = "hi"
		}
		j.TimeLimit = sim.Time(pick(20, 60, 120, 300, 600) + pick(0, 0, 1, 17, 59))
		switch rng.IntN(5) {
		case 0:
			j.Runtime = j.TimeLimit
		case 1:
			j.Runtime = j.TimeLimit + sim.Time(rng.IntN(60))
		default:
			j.Runtime = 1 + sim.Time(rng.Int64N(int64(j.TimeLimit)))
		}
		jobs = append(jobs, j)
	}
	cfg := sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Seed: seed}
	if rng.IntN(4) == 0 {
		start := sim.Time(rng.IntN(600))
		cfg.Reservations = []sim.AdvanceReservation{{Name: "maint", Start: start, End: start + sim.Time(60+rng.IntN(600)), Nodes: []int32{int32(rng.IntN(nn))}}}
	}
	if rng.IntN(6) == 0 {
		n := int32(rng.IntN(nn))
		down := sim.Time(rng.IntN(400))
		cfg.NodeEvents = []sim.NodeEvent{{At: down, Node: n, Down: true}, {At: down + sim.Time(30+rng.IntN(300)), Node: n}}
		cfg.JobRequeue = rng.IntN(2) == 0
	}
	if rng.IntN(2) == 0 {
		cfg.TimeLimitSweep = 30
		cfg.TimeLimitSweepPhase = sim.Time(rng.IntN(30))
	}
	endAtLimit := rng.IntN(2) == 0
	endsAfterPass := rng.IntN(3) == 0

	a := slurm.DefaultArgs()
	a.EndAtLimit, a.EndsAfterPass = endAtLimit, endsAfterPass
	a.BfInterval = pick(1, 3, 10, 30)
	a.SchedInterval = pick(2, 5, 10, 60)
	a.BfResolution = pick(1, 1, 7, 30, 60)
	a.BfWindow = pick(2, 5, 10, 1440)
	a.BfMaxJobTest = int(pick(2, 3, 500, 500))
	a.BfMaxJobUser = int(pick(0, 0, 0, 1, 2))
	a.BfMinAgeReserve = pick(0, 0, 0, 20)
	a.BfBusyNodes = rng.IntN(4) == 0
	a.BfWindowLinear = pick(0, 0, 0, 20)
	if rng.IntN(4) == 0 {
		a.Placement = "best-fit"
	}
	if rng.IntN(2) == 0 {
		a.PriorityWeightAge = float64(pick(0, 100, 1000))
		a.PriorityWeightJobSize = float64(pick(0, 100, 1000))
		a.DefCpuPerGPU = pick(0, 4)
		a.PriorityMaxAge = "0-0:10"
		a.PriorityCalcPeriod = "1"
	}
	moreOptions(seed, &cfg, &a, twoParts)
	return backfillCase{seed: seed, cfg: cfg, args: a}
}

// moreOptions adds, from a random stream of its own (so the cases above
// stay as they were), what the cases above lack and real clusters have:
// partition preemption with KillWait, submissions to both partitions
// (-p lo,hi), and Fair Tree over two accounts. A fast path that diverged
// on a preemption was missed before these.
func moreOptions(seed uint64, cfg *sim.Config, a *slurm.Args, twoParts bool) {
	rng := rand.New(rand.NewPCG(seed, 0x9ee3))
	if twoParts && rng.IntN(3) == 0 {
		a.PreemptType = "preempt/partition_prio"
		a.PreemptMode = []string{"REQUEUE", "CANCEL"}[rng.IntN(2)]
		cfg.KillWait = sim.Time([]int{0, 3, 30}[rng.IntN(3)])
	}
	jobs := cfg.Trace.Jobs
	if twoParts && rng.IntN(3) == 0 {
		for i := range jobs {
			if rng.IntN(4) == 0 {
				jobs[i].Partition = "lo,hi"
			}
		}
	}
	if rng.IntN(3) == 0 {
		a.Accounts = []slurm.AccountArgs{{Name: "a1", Fairshare: float64(1 + rng.IntN(3))}, {Name: "a2", Fairshare: float64(1 + rng.IntN(3))}}
		for u := range 3 {
			acct := []string{"a1", "a2"}[min(u, 1)]
			a.Users = append(a.Users, slurm.UserArgs{Name: fmt.Sprintf("u%d", u), Account: acct, Fairshare: float64(1 + rng.IntN(2))})
		}
		for i := range jobs {
			jobs[i].Account = []string{"a1", "a2", "a2"}[jobs[i].User[1]-'0']
		}
		a.PriorityWeightFairshare = float64([]int{100, 1000, 5000}[rng.IntN(3)])
		a.PriorityCalcPeriod = "1"
	}
}

// TestSlurmPolicyReused replays a random workload on a cluster whose GPU
// types are the other way round, with the policy that replayed it on the
// first and with a fresh one: the decisions must be the same (Begin
// starts every per-run state and cache over; the profiles' units kept
// per demand shape hold which nodes a typed request may use).
func TestSlurmPolicyReused(t *testing.T) {
	typed := 0
	for seed := uint64(1); seed <= 200; seed++ {
		a := randomBackfillCase(seed)
		b := a
		cl := *a.cfg.Cluster
		cl.Nodes = slices.Clone(cl.Nodes)
		for i := range cl.Nodes {
			n := &cl.Nodes[i]
			if n.GPUType == "h100" {
				n.GPUType, n.GPUModel = "a100", "a100"
			} else {
				n.GPUType, n.GPUModel = "h100", "h100"
			}
		}
		b.cfg.Cluster = &cl
		for _, j := range a.cfg.Trace.Jobs {
			if j.Request.GPUType != "" {
				typed++
				break
			}
		}
		run := func(s *slurm.Policy, c backfillCase) *sim.Record {
			cfg := c.cfg
			cfg.Policy = s
			cfg.Trace = &workload.Trace{Jobs: slices.Clone(c.cfg.Trace.Jobs)}
			rec, err := sim.Run(cfg)
			if err != nil {
				t.Fatalf("seed %d (%s): %v", c.seed, c, err)
			}
			return rec
		}
		used, err := slurm.New(a.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := slurm.New(a.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		run(used, a)
		if msg := policytest.DiffDecisions(run(used, b), run(fresh, b)); msg != "" {
			t.Fatalf("seed %d: a reused policy and a fresh one differ: %s", seed, msg)
		}
	}
	if typed == 0 {
		t.Fatal("no workload asked for a GPU type: the test tests nothing")
	}
}
