package slurm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Shorthands of policytest's helpers for the many scenarios.
var (
	job            = policytest.Job
	migJob         = policytest.MIGJob
	starts         = policytest.Starts
	inPart         = policytest.InPart
	catalogCluster = policytest.ParseCluster
)

// fast returns Slurm's defaults with passes every 10 s and a one-second
// reservation map, so hand-worked schedules are not blurred by rounding.
func fast() slurm.Args {
	a := slurm.DefaultArgs()
	a.BfInterval, a.SchedInterval, a.BfResolution = 10, 10, 1
	return a
}

// runSlurm replays jobs on c under slurm with args and returns the record.
func runSlurm(t *testing.T, c *hwmodels.Cluster, jobs []workload.Job, args slurm.Args) *sim.Record {
	t.Helper()
	p, err := slurm.New(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// withUser sets a job's user (and account) and returns it.
func withUser(j workload.Job, user, account string) workload.Job {
	j.User, j.Account = user, account
	return j
}

// TestSlurmScenarios replays hand-worked traces under slurm and compares
// every job's start with the schedule worked out in the comments. Nodes
// have 8 h100 GPUs, 64 CPUs, 512 GiB; "n=1" jobs ask for whole nodes
// (8 GPUs on 1 node), others spread GPUs. [a,b) is a run. Unless said
// otherwise: bf_interval = sched_interval = 10, bf_resolution = 1,
// runtimes equal limits.
func TestSlurmScenarios(t *testing.T) {
	g := func(n int32) workload.Request { return workload.Request{GPUs: n} }
	nodes := func(n int32) workload.Request { return workload.Request{Nodes: n, GPUs: 8 * n} }
	one, three := policytest.GPUNodes(1, 8), policytest.GPUNodes(3, 8)
	tests := []struct {
		name string
		c    *hwmodels.Cluster
		args func(*slurm.Args)
		jobs []workload.Job
		want map[string]sim.Time
	}{
		{
			// Reservations for every blocked job, not only the first.
			// A n0 [0,100), B n1 [0,200), X 4 GPUs of n2 [0,300), Y the
			// other 4 [0,50). C (1 node) and D (3 nodes) are blocked.
			// At 50 Y ends and 4 GPUs of n2 are free. Main pass: C does
			// not fit (partition blocked). Backfill at 50: C reserves n0
			// [100,200) (A ends at 100). D: with n0 reserved it cannot
			// get 3 nodes before 200 (next slot boundary), and from 200
			// its will-run test releases A (100), then B (200), then X
			// (300): D reserves all nodes [300,400). E (4 GPUs, limit
			// 300) fits n2 now, but [50,350) meets D's reservation: it
			// waits. (EASY, reserving only for C, starts E at 50 and D
			// slips to 350.) At 100 C starts on n0; at 300 X ends and D
			// starts; E starts when D ends, at 400.
			name: "reservations for several blocked jobs",
			c:    three,
			jobs: []workload.Job{
				job("A", 0, 100, 100, nodes(1)),
				job("B", 0, 200, 200, nodes(1)),
				job("X", 0, 300, 300, g(4)),
				job("Y", 0, 50, 50, g(4)),
				job("C", 1, 100, 100, nodes(1)),
				job("D", 2, 100, 100, nodes(3)),
				job("E", 3, 300, 300, g(4)),
			},
			want: map[string]sim.Time{"A": 0, "B": 0, "X": 0, "Y": 0, "C": 100, "D": 300, "E": 400},
		},
		{
			// Main scheduler vs backfill timing. A 6 GPUs [0,100); B (8
			// GPUs) is blocked at 1 and blocks the partition in every
			// main pass. C (2 GPUs, limit 50) submitted at 2 could run
			// now without delaying B (ends by 52 < 100), but only the
			// backfill pass may start it: at the next multiple of
			// bf_interval = 30, so C runs [30,80). B starts at 100.
			name: "a backfill-only job waits for the next bf_interval",
			c:    one,
			args: func(a *slurm.Args) { a.BfInterval, a.SchedInterval = 30, 60 },
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(6)),
				job("B", 1, 100, 100, g(8)),
				job("C", 2, 50, 50, g(2)),
			},
			want: map[string]sim.Time{"A": 0, "B": 100, "C": 30},
		},
		{
			// bf_max_job_test = 1: the backfill cycle tests only B (the
			// first record) and stops, so C, which would fit before
			// B's reservation, is never backfilled. The main pass
			// starts B at 100 and C after B, at 200.
			name: "bf_max_job_test cuts the cycle",
			c:    one,
			args: func(a *slurm.Args) { a.BfMaxJobTest = 1 },
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(6)),
				job("B", 1, 100, 100, g(8)),
				job("C", 2, 50, 50, g(2)),
			},
			want: map[string]sim.Time{"A": 0, "B": 100, "C": 200},
		},
		{
			// Same trace with the default bf_max_job_test (500): C is
			// backfilled at the first cycle after its submit, 10.
			name: "same trace, C backfilled",
			c:    one,
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(6)),
				job("B", 1, 100, 100, g(8)),
				job("C", 2, 50, 50, g(2)),
			},
			want: map[string]sim.Time{"A": 0, "B": 100, "C": 10},
		},
		{
			// Whole-node reservations: A holds 7 GPUs [0,100); B (2
			// GPUs) is blocked and, at the cycle at 10, reserves all of
			// n0 for [100,200) although it needs 2 of its 8 GPUs. C (1
			// GPU, limit 150) fits the free GPU now, and would fit beside
			// B at 100 too (conservative backfilling, reserving GPUs,
			// starts it at 2), but its window [10,160) meets the
			// reserved node: it waits until the main pass at 100 starts
			// B and then C beside it.
			name: "reservations hold whole nodes",
			c:    one,
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(7)),
				job("B", 1, 100, 100, g(2)),
				job("C", 2, 150, 150, g(1)),
			},
			want: map[string]sim.Time{"A": 0, "B": 100, "C": 100},
		},
		{
			// QOS MaxJobsPerUser = 1 holds u1's second job (reason
			// QOSMaxJobsPerUserLimit) without blocking the partition:
			// u2's J3 starts at once. J2 starts when J1 ends, at 100.
			name: "QOS MaxJobsPerUser",
			c:    one,
			args: func(a *slurm.Args) {
				a.QOS = []slurm.QOSArgs{{Name: "normal", MaxJobsPerUser: 1}}
			},
			jobs: []workload.Job{
				withUser(job("J1", 0, 100, 100, g(2)), "u1", "a"),
				withUser(job("J2", 0, 100, 100, g(2)), "u1", "a"),
				withUser(job("J3", 5, 100, 100, g(2)), "u2", "a"),
			},
			want: map[string]sim.Time{"J1": 0, "J2": 100, "J3": 5},
		},
		{
			// QOS MaxTRESPerUser gres/gpu=4: u1's J1 (4 GPUs) runs, J2 (2
			// GPUs) would make 6: held until J1 ends at 100.
			name: "QOS MaxTRESPerUser",
			c:    one,
			args: func(a *slurm.Args) {
				a.QOS = []slurm.QOSArgs{{Name: "normal", MaxTRESPerUser: "gres/gpu=4"}}
			},
			jobs: []workload.Job{
				withUser(job("J1", 0, 100, 100, g(4)), "u1", "a"),
				withUser(job("J2", 0, 100, 100, g(2)), "u1", "a"),
			},
			want: map[string]sim.Time{"J1": 0, "J2": 100},
		},
		{
			// PriorityTier: partitions lo (tier 1) and hi (tier 2) over
			// the same node. A (lo) holds it [0,100). B (lo, submitted
			// at 1) and C (hi, at 2) wait; at 100 C goes first, being
			// in the higher tier, though B is older: C [100,200), B
			// [200,300).
			name: "PriorityTier orders before priority and age",
			c:    tiered(),
			jobs: []workload.Job{
				inPart(job("A", 0, 100, 100, g(8)), "lo"),
				inPart(job("B", 1, 100, 100, g(8)), "lo"),
				inPart(job("C", 2, 100, 100, g(8)), "hi"),
			},
			want: map[string]sim.Time{"A": 0, "B": 200, "C": 100},
		},
		{
			// Partition blocking across overlapping partitions: p0 =
			// {n0}, p1 = {n0, n1}. W (p0) holds 4 GPUs of n0 [0,100), X
			// (p1) all of n1 [0,300). A (p0, 8 GPUs) cannot start at 1:
			// p0 is blocked and n0 leaves the available set. B (p1, 4
			// GPUs, limit 50, at 3) would fit the 4 free GPUs of n0, but
			// not in the main pass; the backfill cycle at 10 starts it
			// ([10,60) ends before A's reservation of n0 at 100). A
			// starts at 100.
			name: "a blocked partition's nodes are unavailable to overlapping partitions",
			c:    overlapping(),
			jobs: []workload.Job{
				inPart(job("W", 0, 100, 100, g(4)), "p0"),
				inPart(job("X", 0, 300, 300, nodes(1)), "p1"),
				inPart(job("A", 1, 100, 100, g(8)), "p0"),
				inPart(job("B", 3, 50, 50, g(4)), "p1"),
			},
			want: map[string]sim.Time{"W": 0, "X": 0, "A": 100, "B": 10},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := fast()
			if tc.args != nil {
				tc.args(&a)
			}
			got := starts(runSlurm(t, tc.c, tc.jobs, a))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("starts (-want +got):\n%s", d)
			}
		})
	}
}

// tiered is one node in partitions lo (PriorityTier 1, default) and hi
// (PriorityTier 2).
func tiered() *hwmodels.Cluster {
	c := policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3)}, "lo", "hi")
	c.Partitions[0].PriorityTier, c.Partitions[1].PriorityTier = 1, 2
	return c
}

// overlapping is n0 in p0 and p1, n1 in p1 only.
func overlapping() *hwmodels.Cluster {
	c := policytest.Cluster([]hwmodels.Node{
		policytest.Node("n0", 8, "h100", 64, 524288, 3),
		policytest.Node("n1", 8, "h100", 64, 524288, 2),
	}, "p0", "p1")
	c.Partitions[0].PriorityTier, c.Partitions[1].PriorityTier = 1, 1
	return c
}

// TestSlurmPriority replays traces where multifactor priority decides the
// order: one node of 8 GPUs held by a blocker, two jobs waiting for it, the
// order in which they start is the priority order. Runtimes equal limits.
func TestSlurmPriority(t *testing.T) {
	g := func(n int32) workload.Request { return workload.Request{GPUs: n} }
	one := policytest.GPUNodes(1, 8)
	tests := []struct {
		name string
		args func(*slurm.Args)
		jobs []workload.Job
		want map[string]sim.Time
	}{
		{
			// A dependency's wait accrues no age, and the job keeps its
			// submit priority when the dependency clears (accrue_time is
			// set then; nothing recomputes the priority until the next
			// calculation, at 300). PriorityWeightAge 1000, PriorityMaxAge
			// 1 minute, ends after the passes of their second. A holds
			// the node [0,120); X (no dependency) comes at 10, D (afterany
			// A) at 20, both priority 1 (age 0 at submit). A's end at 120
			// follows the pass of 120, and D is first pending at 121;
			// tied with X, the older X goes first [121, 221), D when X is
			// gone [222, 322). (Aged from 120 at 121, 1000·1/60: D 16
			// would go first.)
			name: "a dependency's wait accrues no age",
			args: func(a *slurm.Args) { a.PriorityWeightAge, a.PriorityMaxAge, a.EndsAfterPass = 1000, "1", true },
			jobs: []workload.Job{
				job("A", 0, 120, 120, g(8)),
				job("X", 10, 100, 100, g(8)),
				withDeps(job("D", 20, 100, 100, g(8)), workload.Dependency{Type: workload.DepAfterAny, JobID: "A"}),
			},
			want: map[string]sim.Time{"A": 0, "X": 121, "D": 222},
		},
		{
			// All weights 0 (Slurm's default): every priority is 1, the
			// older B goes first at 120, C at 220.
			name: "default weights: submit order",
			jobs: []workload.Job{
				withUser(job("A", 0, 120, 120, g(8)), "u1", "lab"),
				withUser(job("B", 10, 100, 100, g(8)), "u1", "lab"),
				withUser(job("C", 20, 100, 100, g(8)), "u2", "lab"),
			},
			want: map[string]sim.Time{"A": 0, "B": 120, "C": 220},
		},
		{
			// Fair Tree, PriorityWeightFairshare 1000, usage in GPU
			// seconds, no decay, PriorityCalcPeriod 1 min. The derived
			// tree: root's user "root" and account lab with u1 and u2 (N
			// = 3). Until the calculation at 60 nobody has usage: B and
			// C both get 1000. At 60 u1 has 8·60 = 480: at the root,
			// root (LF +Inf) ranks 3 (1.0), lab (S 1/2, U 1: LF 0.5)
			// comes next; in lab u2 (no usage, LF +Inf) ranks 2 (0.667),
			// u1 ranks 1 (0.333). B = 333, C = 666: C overtakes B at 120.
			name: "Fair Tree: usage changes the order",
			args: func(a *slurm.Args) {
				a.PriorityWeightFairshare = 1000
				a.TRESBillingWeights = "GRES/gpu=1"
				a.PriorityDecayHalfLife, a.PriorityCalcPeriod = "0", "1"
			},
			jobs: []workload.Job{
				withUser(job("A", 0, 120, 120, g(8)), "u1", "lab"),
				withUser(job("B", 10, 100, 100, g(8)), "u1", "lab"),
				withUser(job("C", 20, 100, 100, g(8)), "u2", "lab"),
			},
			want: map[string]sim.Time{"A": 0, "B": 220, "C": 120},
		},
		{
			// A job that ends between two recalculations is never
			// charged (Slurm's decay thread charges running jobs only:
			// decay_apply_new_usage). Fair Tree as above, calculations
			// at 0, 60, 120. A (u1, 8 GPUs) runs [0,50) and is never
			// charged. B (u2, 4 GPUs, submitted first) starts at 50;
			// D (u2) and C (u1), 8 GPUs each, wait for B's end at 150.
			// At 120 u1 has 0, u2 4·70 = 280: in lab u1 (LF +Inf)
			// ranks 2 (0.667), u2 (S 1/2, U 1: LF 0.5) ranks 1: C 666,
			// D 333. C first at 150, D at 250, though D is older.
			name: "Fair Tree: a job ending between calculations is not charged",
			args: func(a *slurm.Args) {
				a.PriorityWeightFairshare = 1000
				a.TRESBillingWeights = "GRES/gpu=1"
				a.PriorityDecayHalfLife, a.PriorityCalcPeriod = "0", "1"
			},
			jobs: endBetweenCalcs(),
			want: map[string]sim.Time{"A": 0, "B": 50, "C": 150, "D": 250},
		},
		{
			// The same with AccountingStorageEnforce=limits: A's 8·50 =
			// 400 is charged at its end (priority_p_job_end). At 120 u1
			// has 400, u2 280: U(u1) = 400/680, LF = 0.5/0.588 = 0.85;
			// U(u2) = 280/680, LF = 1.21. u2 ranks 2: D 666, C 333. D
			// first at 150, C at 250.
			name: "Fair Tree: AccountingStorageEnforce=limits charges the last period at the end",
			args: func(a *slurm.Args) {
				a.PriorityWeightFairshare = 1000
				a.TRESBillingWeights = "GRES/gpu=1"
				a.PriorityDecayHalfLife, a.PriorityCalcPeriod = "0", "1"
				a.AccountingStorageEnforce = "associations,limits"
			},
			jobs: endBetweenCalcs(),
			want: map[string]sim.Time{"A": 0, "B": 50, "C": 250, "D": 150},
		},
		{
			// Classic fair share on the same trace: at 60 root usage is
			// 480, all u1's. S(lab) = 1/2, S(u1) = S(u2) = 1/4. UE(u1) =
			// 1 + (1-1)/2 = 1: F = 2^(-1/0.25) = 0.0625, B = 62; UE(u2)
			// = 0 + (1-0)/2 = 0.5: F = 2^(-2) = 0.25, C = 250. C first.
			name: "classic fair share: usage changes the order",
			args: func(a *slurm.Args) {
				a.PriorityWeightFairshare = 1000
				a.TRESBillingWeights = "GRES/gpu=1"
				a.PriorityDecayHalfLife, a.PriorityCalcPeriod = "0", "1"
				a.PriorityFlags = "NO_FAIR_TREE"
			},
			jobs: []workload.Job{
				withUser(job("A", 0, 120, 120, g(8)), "u1", "lab"),
				withUser(job("B", 10, 100, 100, g(8)), "u1", "lab"),
				withUser(job("C", 20, 100, 100, g(8)), "u2", "lab"),
			},
			want: map[string]sim.Time{"A": 0, "B": 220, "C": 120},
		},
		{
			// Age below PriorityMaxAge (10 min): PriorityWeightAge 1000,
			// PriorityWeightQOS 500, O (submitted 0, QOS normal) and N
			// (submitted 400, QOS high = the only QOS priority, factor
			// 1). The blocker ends at 500; the calculation at 480 gives
			// O 1000·480/600 = 800 and N 500 + 1000·80/600 = 633: O
			// first [500,600), N [600,700).
			name: "age before the cap",
			args: ageArgs,
			jobs: []workload.Job{
				job("A", 0, 500, 500, g(8)),
				job("O", 0, 100, 100, g(8)),
				withQOS(job("N", 400, 100, 100, g(8)), "high"),
			},
			want: map[string]sim.Time{"A": 0, "O": 500, "N": 600},
		},
		{
			// Same with the blocker ending at 1100: at the calculation
			// at 1080 both ages are capped at PriorityMaxAge (O waited
			// 1080 s, N 680 s, both > 600): O 1000, N 1500. N first
			// [1100,1200), O [1200,1300). Without the cap O would have
			// 1800 against N's 1633.
			name: "age capped at PriorityMaxAge",
			args: ageArgs,
			jobs: []workload.Job{
				job("A", 0, 1100, 1100, g(8)),
				job("O", 0, 100, 100, g(8)),
				withQOS(job("N", 400, 100, 100, g(8)), "high"),
			},
			want: map[string]sim.Time{"A": 0, "O": 1200, "N": 1100},
		},
		{
			// TRES weight GRES/gpu=1000: S (5 GPUs) gets 1000·5/8 =
			// 625, L (6 GPUs, submitted later) 750: L first at 100, S
			// (11 GPUs together do not fit) at 200.
			name: "PriorityWeightTRES",
			args: func(a *slurm.Args) { a.PriorityWeightTRES = "GRES/gpu=1000" },
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(8)),
				job("S", 1, 100, 100, workload.Request{GPUs: 5}),
				job("L", 2, 100, 100, workload.Request{GPUs: 6}),
			},
			want: map[string]sim.Time{"A": 0, "S": 200, "L": 100},
		},
		{
			// Job size favoring small jobs: PriorityWeightJobSize 1000,
			// PriorityFavorSmall YES, one node of 64 CPUs. Big (48
			// CPUs): ((1-1)/1 + (64-48)/64)/2 = 0.125 → 125; Small (24
			// CPUs): (0 + 40/64)/2 = 0.3125 → 312. Small first though
			// submitted later; Big cannot fit beside it (72 CPUs).
			name: "job size, PriorityFavorSmall",
			args: func(a *slurm.Args) { a.PriorityWeightJobSize, a.PriorityFavorSmall = 1000, "YES" },
			jobs: []workload.Job{
				job("A", 0, 100, 100, workload.Request{CPUs: 64}),
				job("Big", 1, 100, 100, workload.Request{CPUs: 48}),
				job("Small", 2, 100, 100, workload.Request{CPUs: 24}),
			},
			want: map[string]sim.Time{"A": 0, "Big": 200, "Small": 100},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := fast()
			if tc.args != nil {
				tc.args(&a)
			}
			got := starts(runSlurm(t, one, tc.jobs, a))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("starts (-want +got):\n%s", d)
			}
		})
	}
}

func withQOS(j workload.Job, q string) workload.Job { j.QOS = q; return j }

func withDeps(j workload.Job, d ...workload.Dependency) workload.Job { j.Deps = d; return j }

// endBetweenCalcs is the trace of the "ending between calculations"
// cases of TestSlurmPriority.
func endBetweenCalcs() []workload.Job {
	return []workload.Job{
		withUser(job("A", 0, 50, 50, workload.Request{GPUs: 8}), "u1", "lab"),
		withUser(job("B", 5, 100, 100, workload.Request{GPUs: 4}), "u2", "lab"),
		withUser(job("D", 10, 100, 100, workload.Request{GPUs: 8}), "u2", "lab"),
		withUser(job("C", 20, 100, 100, workload.Request{GPUs: 8}), "u1", "lab"),
	}
}

func ageArgs(a *slurm.Args) {
	a.PriorityWeightAge, a.PriorityWeightQOS = 1000, 500
	a.PriorityMaxAge, a.PriorityCalcPeriod = "10", "1"
	a.QOS = []slurm.QOSArgs{{Name: "high", Priority: 10}}
}

// TestSlurmReasons checks the pending reasons recorded over time in a
// run: B, blocked, has Resources; C, behind it, Priority; u0's second job
// is held by its QOS (MaxJobsPerUser 1) with QOSMaxJobsPerUserLimit.
func TestSlurmReasons(t *testing.T) {
	c := policytest.GPUNodes(2, 8)
	a := fast()
	a.QOS = []slurm.QOSArgs{{Name: "normal", MaxJobsPerUser: 1}}
	jobs := []workload.Job{
		withUser(job("A", 0, 100, 100, workload.Request{GPUs: 12}), "u0", ""),
		withUser(job("B", 1, 100, 100, workload.Request{GPUs: 8}), "u1", ""),
		withUser(job("C", 2, 200, 200, workload.Request{GPUs: 1}), "u2", ""),
		withUser(job("Second", 5, 100, 100, workload.Request{GPUs: 1}), "u0", ""),
	}
	rec := runSlurm(t, c, jobs, a)
	type rc struct {
		At     sim.Time
		Job    string
		Reason string
	}
	var got []rc
	for r := range rec.Reasons.All() {
		got = append(got, rc{r.At, jobs[r.Job].ID, r.Reason.String()})
	}
	// A holds n0 and 4 GPUs of n1. At 5 the main pass skips Second
	// with reason Priority: its partition already failed at B, and
	// _schedule tests that before any limit. The cycle at 10 reserves
	// n0 for B at 100 (A's end); C (1 GPU, limit 200) starts on n1,
	// which is not reserved; Second is tested and held by its QOS
	// (QOSMaxJobsPerUserLimit) until A ends. At 100 B and Second start.
	want := []rc{
		{1, "B", "Resources"},
		{2, "C", "Priority"},
		{5, "Second", "Priority"},
		{10, "Second", "QOSMaxJobsPerUserLimit"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("reasons (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]sim.Time{"A": 0, "B": 100, "C": 10, "Second": 100}, starts(rec)); d != "" {
		t.Errorf("starts (-want +got):\n%s", d)
	}
}

// TestSlurmPartitionLimits runs one pass on a hand-made view: a job whose
// limit is above the partition's MaxTime is held (PartitionTimeLimit; the
// default EnforcePartLimits=NO), one asking for more nodes than MaxNodes
// is held (PartitionNodeLimit); neither blocks the partition, so the job
// behind them starts.
func TestSlurmPartitionLimits(t *testing.T) {
	c := policytest.GPUNodes(2, 8)
	c.Partitions[0].MaxTime = 1000
	c.Partitions[0].MaxNodes = 1
	jobs := []workload.Job{
		job("Long", 0, 2000, 100, workload.Request{GPUs: 1}),
		job("Wide", 0, 100, 100, workload.Request{Nodes: 2, GPUs: 2}),
		job("Fits", 0, 100, 100, workload.Request{GPUs: 1}),
	}
	v := &policytest.View{C: c, Jobs: jobs}
	for i, j := range jobs {
		v.Queue = append(v.Queue, sim.PendingJob{Ref: sim.JobRef(i), Submit: 0, Eligible: 0, Limit: j.TimeLimit, Part: 0, Parts: 1, Req: j.Request})
	}
	p, err := slurm.New(fast(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := p.Begin(sim.RunInfo{Cluster: c, Jobs: len(jobs)})
	if err != nil {
		t.Fatal(err)
	}
	plan := p.Schedule(sim.PassSet(1)<<len(tm.Passes)-1, v, nil) // every pass due, as at 0
	if len(plan.Starts) != 1 || plan.Starts[0].Job != 2 {
		t.Errorf("starts %+v, want only Fits (ref 2)", plan.Starts)
	}
	want := []sim.Reason{{Job: 0, Reason: sim.ReasonPartitionTimeLimit}, {Job: 1, Reason: sim.ReasonPartitionNodeLimit}}
	if d := cmp.Diff(want, plan.Reasons); d != "" {
		t.Errorf("reasons (-want +got):\n%s", d)
	}
}

// TestSlurmMultiPartition: a job submitted to two partitions (-p a,b) has
// one queue record per partition and runs in whichever starts it first,
// each record placed, limited and reserved in its own partition. n0 is in
// partition a, n1 in b; R holds one of them [0,1000). bf_interval =
// sched_interval = 10, runtimes equal limits.
func TestSlurmMultiPartition(t *testing.T) {
	twoParts := func() *hwmodels.Cluster {
		return policytest.Cluster([]hwmodels.Node{
			policytest.Node("n0", 8, "h100", 64, 524288, 1),
			policytest.Node("n1", 8, "h100", 64, 524288, 2),
		}, "a", "b")
	}
	g8 := workload.Request{GPUs: 8}
	tests := []struct {
		name     string
		mod      func(*hwmodels.Cluster)
		jobs     []workload.Job
		start    sim.Time
		part     string
		node     int32
		partStop string
	}{
		{
			// R holds n0 (partition a); J (-p a,b) starts at once in b.
			name:  "starts in the second partition",
			jobs:  []workload.Job{inPart(job("R", 0, 1000, 1000, g8), "a"), inPart(job("J", 10, 500, 500, g8), "a,b")},
			start: 10, part: "b", node: 1,
		},
		{
			// R holds n1 (partition b); J (-p b,a) starts at once in a.
			name:  "starts in the first partition listed second",
			jobs:  []workload.Job{inPart(job("R", 0, 1000, 1000, g8), "b"), inPart(job("J", 10, 500, 500, g8), "b,a")},
			start: 10, part: "a", node: 0,
		},
		{
			// Partition b has MaxTime 100 s and J's limit is 500 s: J's
			// record in b is held (PartitionTimeLimit), so J may not run
			// in b although n1 is free; its record in a waits for R:
			// [1000,1500) on n0. (A record of a placed in b would start
			// J at 10 on n1, over b's MaxTime.)
			name:  "the other partition's limit holds its record",
			mod:   func(c *hwmodels.Cluster) { c.Partitions[1].MaxTime = 100 },
			jobs:  []workload.Job{inPart(job("R", 0, 1000, 1000, g8), "a"), inPart(job("J", 10, 500, 500, g8), "a,b")},
			start: 1000, part: "a", node: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := twoParts()
			if tt.mod != nil {
				tt.mod(c)
			}
			rec := runSlurm(t, c, tt.jobs, fast())
			j := rec.Jobs[1]
			if j.Start != tt.start || c.Partitions[j.Part].Name != tt.part || j.Alloc.Len() != 1 || j.Alloc.At(0).Node != tt.node {
				t.Errorf("J: start %d in %s on %v, want %d in %s on n%d", j.Start, c.Partitions[j.Part].Name, j.Alloc, tt.start, tt.part, tt.node)
			}
		})
	}
}

// TestSlurmCalcPhase checks priority_calc_phase: the recalculations fall
// at phase + k·PriorityCalcPeriod (slurmctld's decay thread counts from
// its start). ageArgs: age weight 1000 over 600 s, QOS "high" 500,
// PriorityCalcPeriod 60 s. A holds the node [0,340); O (normal) is
// submitted at 0 and N (high) at 330. At 340 N still has its priority
// at submit, 500 (age 0); O has the value of the last recalculation.
//   - phase 0: recalculated at 300: O = 1000·300/600 = 500, a tie with
//     N, broken by submit time: O [340,440), N [440,540).
//   - phase 50: recalculated at 290: O = 1000·290/600 = 483: N first
//     [340,440), O [440,540).
func TestSlurmCalcPhase(t *testing.T) {
	g8 := workload.Request{GPUs: 8}
	jobs := []workload.Job{
		job("A", 0, 340, 340, g8),
		job("O", 0, 100, 100, g8),
		withQOS(job("N", 330, 100, 100, g8), "high"),
	}
	for _, tc := range []struct {
		phase int64
		want  map[string]sim.Time
	}{
		{0, map[string]sim.Time{"A": 0, "O": 340, "N": 440}},
		{50, map[string]sim.Time{"A": 0, "N": 340, "O": 440}},
	} {
		a := fast()
		ageArgs(&a)
		a.PriorityCalcPhase = tc.phase
		if d := cmp.Diff(tc.want, starts(runSlurm(t, policytest.GPUNodes(1, 8), jobs, a))); d != "" {
			t.Errorf("phase %d: starts (-want +got):\n%s", tc.phase, d)
		}
	}
	a := fast()
	ageArgs(&a)
	a.PriorityCalcPhase = 60
	if _, err := slurm.New(a, nil); err == nil {
		t.Errorf("priority_calc_phase 60 with PriorityCalcPeriod 1 minute: no error")
	}
}

// TestSlurmPlacementArg: the slurm policy's placement argument. Two nodes
// of 8 GPUs. A (8 GPUs) holds n0 [0,10), B (4 GPUs) n1 [0,100). At 20
// C (one node, 2 GPUs) arrives: first-fit puts it on n0 (the lowest
// node that fits), best-fit on n1 (the node it leaves fullest, as
// cons_tres picks for a one-node job). D (8 GPUs on one node) at 21
// then finds n0 empty under best-fit and starts at once; under first-fit
// it waits for C's end at 70.
func TestSlurmPlacementArg(t *testing.T) {
	one := func(g int32) workload.Request { return workload.Request{Nodes: 1, GPUs: g} }
	jobs := []workload.Job{
		job("A", 0, 10, 10, one(8)),
		job("B", 0, 100, 100, one(4)),
		job("C", 20, 50, 50, one(2)),
		job("D", 21, 10, 10, one(8)),
	}
	for _, tc := range []struct {
		placement string
		want      map[string]sim.Time
	}{
		{"", map[string]sim.Time{"A": 0, "B": 0, "C": 20, "D": 70}},
		{"best-fit", map[string]sim.Time{"A": 0, "B": 0, "C": 20, "D": 21}},
	} {
		p, err := slurm.Factory(func(into any) error {
			if a, ok := into.(*slurm.Args); ok {
				*a = fast()
				a.Placement = tc.placement
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := sim.Run(sim.Config{Cluster: policytest.GPUNodes(2, 8), Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, starts(rec)); d != "" {
			t.Errorf("placement %q: starts (-want +got):\n%s", tc.placement, d)
		}
	}
	if _, err := slurm.Factory(func(into any) error {
		if a, ok := into.(*slurm.Args); ok {
			a.Placement = "scatter"
		}
		return nil
	}); err == nil {
		t.Errorf("placement scatter: no error")
	}
}

// TestSlurmFailureMemoryLimit holds the pass's memory of failed demands
// to the limit of the job that failed: with a maintenance window, a job
// that failed for its long limit says nothing about a shorter one of the
// same shape. Two nodes of 8 GPUs, fast() passes, a window on n1 over
// [100,200). R holds n0 [0,300). X (2 nodes, limit 10) cannot start and
// blocks the partition in every main pass. At the backfill cycle of 10:
// X reserves both nodes [300,310); A (one node, limit 150) fits n1 by
// capacity but [10,160) meets the window, so it fails and reserves n1
// from 310; B (one node, limit 50) fits n1 over [10,60), before the
// window, and starts at 10. (When the main pass's memory of X's limit
// was left behind, A's failure was remembered with X's limit 10, so B,
// asking the same with limit 50, was taken as failing too and waited
// for the window's end, 200.) X starts at 300 when R ends, A at 310.
func TestSlurmFailureMemoryLimit(t *testing.T) {
	c := policytest.GPUNodes(2, 8)
	nodes := func(n int32) workload.Request { return workload.Request{Nodes: n, GPUs: 8 * n} }
	jobs := []workload.Job{
		job("R", 0, 300, 300, nodes(1)),
		job("X", 1, 10, 10, nodes(2)),
		job("A", 2, 150, 150, nodes(1)),
		job("B", 3, 50, 50, nodes(1)),
	}
	p, err := slurm.New(fast(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true,
		Reservations: []sim.AdvanceReservation{{Name: "maint", Start: 100, End: 200, Nodes: []int32{1}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sim.Time{"R": 0, "X": 300, "A": 310, "B": 10}
	if d := cmp.Diff(want, starts(rec)); d != "" {
		t.Errorf("starts (-want +got):\n%s", d)
	}
}

// TestSlurmReservationSpan holds the reservations of a backfill cycle to
// Slurm's rounding and horizon (backfill.c _attempt_backfill and
// _add_reservation): a reservation holds the slots from its start to its
// end, both rounded down to bf_resolution (at least one slot); a job
// whose predicted start is at most bf_window ahead gets one; the
// TRY_LATER retries go to slot boundaries before the horizon. Two nodes
// of 8 GPUs, bf_resolution 60; the reservations of the cycle at 0.
func TestSlurmReservationSpan(t *testing.T) {
	c := policytest.GPUNodes(2, 8)
	nodes := func(n int32) workload.Request { return workload.Request{Nodes: n, GPUs: 8 * n} }
	tests := []struct {
		name   string
		window int64 // bf_window, minutes
		jobs   []workload.Job
		want   []slurm.Reservation
	}{
		{
			// Horizon 240. A holds n0 [0,100), X n1 [0,50). B (both
			// nodes, limit 110) is predicted at 100, when A ends: it
			// holds [60, 210 rounded down = 180). E (both nodes, limit
			// 60): its window [0,60] meets B's slots from 60, so it is
			// tried again at the next slot boundary, 60, then at B's
			// end, 180, where no reservation holds the nodes: it
			// holds [180,240). (With the end rounded up, B held
			// [60,240) and E's retry at 240 was at the horizon, where
			// the map ends: no reservation.)
			name:   "ends rounded down",
			window: 4,
			jobs: []workload.Job{
				job("A", 0, 100, 100, nodes(1)),
				job("X", 0, 50, 50, nodes(1)),
				job("B", 0, 110, 110, nodes(2)),
				job("E", 0, 60, 60, nodes(2)),
			},
			want: []slurm.Reservation{
				{Job: 2, Predicted: 100, Start: 60, End: 180, Nodes: []int32{0, 1}},
				{Job: 3, Predicted: 180, Start: 180, End: 240, Nodes: []int32{0, 1}},
			},
		},
		{
			// Horizon 60. A holds n0 [0,60), X n1 [0,200). G (one
			// node, limit 10): will-run releases A (its end 60 sets
			// the grid end 90; X ends after 90+30) and G is predicted
			// at 60, the horizon itself: it gets a reservation, one
			// slot long, [60,120). (With the horizon exclusive it got
			// none.)
			name:   "a start at the horizon",
			window: 1,
			jobs: []workload.Job{
				job("A", 0, 60, 60, nodes(1)),
				job("X", 0, 200, 200, nodes(1)),
				job("G", 0, 10, 10, nodes(1)),
			},
			want: []slurm.Reservation{
				{Job: 2, Predicted: 60, Start: 60, End: 120, Nodes: []int32{0}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := fast()
			a.BfResolution, a.BfWindow = 60, tt.window
			s, err := slurm.New(a, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.AlwaysReserve = true
			probe := &reservationProbe{Policy: s}
			if _, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: tt.jobs}, Policy: probe, Seed: 1}); err != nil {
				t.Fatal(err)
			}
			var got []slurm.Reservation
			for _, p := range probe.log {
				if p.at == 0 {
					got = p.res
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("reservations of the cycle at 0 (-want +got):\n%s", d)
			}
		})
	}
}

// TestSlurmJobSizeAllocatedCPUs holds the job size factor to
// set_priority_factors (priority_multifactor.c): at submit it counts the
// CPUs a job asked for; once select/cons_tres has tested the job
// against the nodes it counts job_ptr->total_cpus, the CPUs the job
// would be allocated, here DefCpuPerGPU = 4 per GPU; the priority uses
// it from the next recalculation. One node of 8 GPUs and 64 CPUs,
// PriorityWeightJobSize 1000, PriorityCalcPeriod 1 minute, fast()
// passes. A holds the node [0,200). X (6 GPUs, 1 CPU) comes at 10, Y (8
// GPUs, 1 CPU) at 11: both have (1/1 + 1/64)/2·1000 = 507, and X, the
// older, goes first. The backfill cycle of 20 tests both; the
// recalculation at 60 counts 24 and 32 CPUs: X (1 + 24/64)/2·1000 =
// 687, Y (1 + 32/64)/2·1000 = 750, and Y goes first: it starts at 200
// when A ends, X when Y ends, at 300. (Counting the CPUs asked for, X
// started at 200 and Y at 250.)
func TestSlurmJobSizeAllocatedCPUs(t *testing.T) {
	c := policytest.GPUNodes(1, 8)
	req := func(gpus int32) workload.Request { return workload.Request{GPUs: gpus, CPUs: 1} }
	jobs := []workload.Job{
		job("A", 0, 200, 200, workload.Request{GPUs: 8}),
		job("X", 10, 50, 50, req(6)),
		job("Y", 11, 100, 100, req(8)),
	}
	a := fast()
	a.PriorityWeightJobSize = 1000
	a.PriorityCalcPeriod = "1"
	a.DefCpuPerGPU = 4
	rec := runSlurm(t, c, jobs, a)
	want := map[string]sim.Time{"A": 0, "X": 300, "Y": 200}
	if d := cmp.Diff(want, starts(rec)); d != "" {
		t.Errorf("starts (-want +got):\n%s", d)
	}
}

// TestSlurmJobSizeNodesDown: a job needing more nodes than its
// partition has up is not tested against the nodes (_attempt_backfill
// skips it before _try_sched: fewer than min_nodes in avail_bitmap), so
// its job size factor keeps the CPUs it asked for (gen-23/run1: G10 on 4
// nodes with gn1 down). Two nodes of 8 GPUs and 64 CPUs (N = 2, C =
// 128), n1 down [0,150); PriorityWeightJobSize 1000, PriorityWeightQOS
// 200, PriorityCalcPeriod 1 minute, DefCpuPerGPU 4, fast() passes. A
// holds n0 [0,200). X (2 nodes, 8 GPUs, 2 CPUs, limit 100) comes at 10:
// (2/2 + 2/128)/2·1000 = 507. Y (1 node, 8 GPUs, 1 CPU, limit 100, QOS
// high of priority 1: +200) at 11: (1/2 + 1/128)/2·1000 + 200 = 453.
// The backfill cycle of 20 tests Y, which then counts 32 CPUs: at the
// recalculation of 60 (1/2 + 32/128)/2·1000 + 200 = 575, above X's 507:
// X, never tested with n1 down, still counts 2 CPUs. n1 comes back at
// 150 and Y, first, starts on it [150,250); X waits for it: 250.
// (Had X counted its 32 CPUs, (1 + 32/128)/2·1000 = 625, it would go
// first, reserve both nodes at 200 and start then, Y at 300.)
func TestSlurmJobSizeNodesDown(t *testing.T) {
	c := policytest.GPUNodes(2, 8)
	jobs := []workload.Job{
		job("A", 0, 200, 200, workload.Request{Nodes: 1, GPUs: 8}),
		job("X", 10, 100, 100, workload.Request{Nodes: 2, GPUs: 8, CPUs: 2}),
		withQOS(job("Y", 11, 100, 100, workload.Request{Nodes: 1, GPUs: 8, CPUs: 1}), "high"),
	}
	a := fast()
	a.PriorityWeightJobSize, a.PriorityWeightQOS = 1000, 200
	a.PriorityCalcPeriod = "1"
	a.DefCpuPerGPU = 4
	a.QOS = []slurm.QOSArgs{{Name: "normal"}, {Name: "high", Priority: 1}}
	p, err := slurm.New(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true,
		NodeEvents: []sim.NodeEvent{{At: 0, Node: 1, Down: true}, {At: 150, Node: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sim.Time{"A": 0, "X": 250, "Y": 150}
	if d := cmp.Diff(want, starts(rec)); d != "" {
		t.Errorf("starts (-want +got):\n%s", d)
	}
}

// TestSlurmMainPassSecond holds the slurm policy to slurmctld's timing
// within a second under ends_after_pass: a job a cycle started ends just
// after that cycle's phase, so the backfill cycle of its second has run;
// at the main scheduler's instants (main_pass_every: every
// sched_min_interval, or every second when that is under a second) the
// event-driven main scheduler runs after the end and starts the queue's
// head in the same second, while a job only backfill may start waits for
// the next second's cycle. bf_interval = sched_interval = 1. n0 is held
// by A [0,100); n1 by W (4 GPUs) [0,200) and X (4 GPUs) [0,10) or
// [0,11).
func TestSlurmMainPassSecond(t *testing.T) {
	c := policytest.GPUNodes(2, 8)
	g := func(n int32) workload.Request { return workload.Request{GPUs: n} }
	nodes := func(n int32) workload.Request { return workload.Request{Nodes: n, GPUs: 8 * n} }
	running := func(xEnd sim.Time) []workload.Job {
		return []workload.Job{
			job("A", 0, 100, 100, nodes(1)),
			job("W", 0, 200, 200, g(4)),
			job("X", 0, xEnd, xEnd, g(4)),
		}
	}
	tests := []struct {
		name  string
		every sim.Time
		xEnd  sim.Time
		more  []workload.Job
		want  map[string]sim.Time
	}{
		{
			// Y (4 GPUs) heads the queue: X's end at 10, a main
			// scheduler instant (every 2 s), is followed by a main
			// pass at 10, which starts Y.
			name: "the head starts in the second of the end", every: 2, xEnd: 10,
			more: []workload.Job{job("Y", 2, 20, 20, g(4))},
			want: map[string]sim.Time{"A": 0, "W": 0, "X": 0, "Y": 10},
		},
		{
			// X ends at 11, between the main scheduler's instants:
			// Y starts at the next second's cycles.
			name: "an end between main scheduler instants", every: 2, xEnd: 11,
			more: []workload.Job{job("Y", 2, 20, 20, g(4))},
			want: map[string]sim.Time{"A": 0, "W": 0, "X": 0, "Y": 12},
		},
		{
			// sched_min_interval under a second: the main scheduler
			// runs after every end, and Y starts at 11.
			name: "every second a main scheduler instant", every: 1, xEnd: 11,
			more: []workload.Job{job("Y", 2, 20, 20, g(4))},
			want: map[string]sim.Time{"A": 0, "W": 0, "X": 0, "Y": 11},
		},
		{
			// H (both nodes) heads the queue and blocks it in the
			// main pass; Z (4 GPUs, limit 20) fits n1 once X ends,
			// before H's reservation at 200: only backfill may start
			// it. The backfill cycle of 10 came before X's end, the
			// main pass after it skips Z: Z starts at the cycle of 11.
			// (When ends at main scheduler instants came before all
			// of the instant's passes, Z started at 10.)
			name: "a backfill start waits for the next cycle", every: 2, xEnd: 10,
			more: []workload.Job{job("H", 1, 50, 50, nodes(2)), job("Z", 2, 20, 20, g(4))},
			want: map[string]sim.Time{"A": 0, "W": 0, "X": 0, "H": 200, "Z": 11},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := slurm.DefaultArgs()
			a.BfInterval, a.SchedInterval, a.BfResolution = 1, 1, 1
			a.EndsAfterPass, a.MainPassEvery = true, int64(tt.every)
			p, err := slurm.New(a, nil)
			if err != nil {
				t.Fatal(err)
			}
			jobs := append(running(tt.xEnd), tt.more...)
			rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, starts(rec)); d != "" {
				t.Errorf("starts (-want +got):\n%s", d)
			}
		})
	}
}
