package policies_test

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

var updateSlurmGolden = flag.Bool("update-slurm-golden", false, "rewrite testdata/slurm_golden.txt from the current slurm policy")

// slurmGoldenFile holds one line per case: name and decision hash.
const slurmGoldenFile = "testdata/slurm_golden.txt"

// slurmGoldenCase is one run (or several, hashed together) of the slurm
// policy.
type slurmGoldenCase struct {
	name string
	run  func(t *testing.T) []*sim.Record
}

func newGoldenSlurm(t *testing.T, edit func(*policies.SlurmArgs)) *policies.Slurm {
	t.Helper()
	a := policies.DefaultSlurmArgs()
	if edit != nil {
		edit(&a)
	}
	s, err := policies.NewSlurm(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.NoBackfillSkip = goldenNoSkip
	goldenMade = append(goldenMade, s)
	return s
}

// goldenNoSkip sets Slurm.NoBackfillSkip in the policies the golden cases
// make; goldenMade lists them (TestSlurmBackfillSkip).
var (
	goldenNoSkip bool
	goldenMade   []*policies.Slurm
)

func runGolden(t *testing.T, cfg sim.Config) *sim.Record {
	t.Helper()
	rec, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// withUsers gives the jobs of a synthetic trace users in accounts, so
// that fair share and per-user limits have something to tell apart.
func withUsers(tr *workload.Trace, users int) {
	for i := range tr.Jobs {
		u := (i*7 + i/13) % users
		tr.Jobs[i].User = fmt.Sprintf("u%d", u)
		tr.Jobs[i].Account = fmt.Sprintf("a%d", u%3)
	}
}

// twoTiers makes a synthetic cluster's nodes members of a second partition
// "hi" of a higher PriorityTier (the first n/2 nodes) and sends every
// fifth job there.
func twoTiers(c *hwmodels.Cluster, tr *workload.Trace) *hwmodels.Cluster {
	nodes := slices.Clone(c.Nodes)
	for i := range nodes[:len(nodes)/2] {
		nodes[i].Partitions |= 2
	}
	out := policytest.Cluster(nodes, "lo", "hi")
	out.Partitions[1].PriorityTier = 2
	for i := range tr.Jobs {
		if i%5 == 0 {
			tr.Jobs[i].Partition = "hi"
		} else {
			tr.Jobs[i].Partition = "lo"
		}
	}
	return out
}

func syntheticCase(name string, seed uint64, nodes, jobs int, load float64, edit func(*policies.SlurmArgs), prep func(*sim.Config)) slurmGoldenCase {
	return slurmGoldenCase{name: name, run: func(t *testing.T) []*sim.Record {
		c, tr := policytest.Synthetic(seed, nodes, 8, jobs, load)
		cfg := sim.Config{Cluster: c, Trace: tr, Seed: seed}
		if prep != nil {
			prep(&cfg)
		}
		cfg.Policy = newGoldenSlurm(t, edit)
		return []*sim.Record{runGolden(t, cfg)}
	}}
}

// lifecycleCase replays policytest.Workload seeds with a maintenance
// window, node failures, requeue and a time-limit sweep (as
// TestLifecycleConformance does).
func lifecycleCase(name string, edit func(*policies.SlurmArgs), tiers bool) slurmGoldenCase {
	return slurmGoldenCase{name: name, run: func(t *testing.T) []*sim.Record {
		var out []*sim.Record
		for seed := uint64(1); seed <= 48; seed++ {
			c, tr := policytest.Workload(seed)
			if tiers {
				c.Partitions[1].PriorityTier = 2
			}
			last := tr.Jobs[len(tr.Jobs)-1].Submit
			win := sim.AdvanceReservation{Name: "maint", Start: last / 3, End: last/3 + 3600, Nodes: []int32{0}}
			cfg := sim.Config{Cluster: c, Trace: tr, Seed: seed,
				Reservations: []sim.AdvanceReservation{win},
				Failures:     &sim.FailureModel{MTBF: 6 * 3600, MTTR: 1800},
				JobRequeue:   seed%2 == 0,
				Policy:       newGoldenSlurm(t, edit),
			}
			if seed%3 == 0 {
				cfg.TimeLimitSweep = 30
			}
			out = append(out, runGolden(t, cfg))
		}
		return out
	}}
}

func slurmGoldenCases() []slurmGoldenCase {
	prio := func(a *policies.SlurmArgs) {
		a.PriorityWeightAge = 1000
		a.PriorityWeightFairshare = 10000
		a.PriorityWeightJobSize = 500
		a.PriorityWeightTRES = "GRES/gpu=2000"
		a.PriorityCalcPeriod = "1"
		a.PriorityMaxAge = "0-4"
		a.PriorityDecayHalfLife = "0-2"
	}
	users := func(cfg *sim.Config) { withUsers(cfg.Trace, 11) }
	windows := func(cfg *sim.Config) {
		end := cfg.Trace.Jobs[len(cfg.Trace.Jobs)-1].Submit
		cfg.Reservations = []sim.AdvanceReservation{
			{Name: "m1", Start: end / 4, End: end/4 + 4*3600, Nodes: []int32{0, 1, 2, 3, 4, 5, 6, 7}},
			{Name: "m2", Start: end / 2, End: end/2 + 7200, Nodes: []int32{10, 20, 30}},
		}
		cfg.Failures = &sim.FailureModel{MTBF: 30 * 86400, MTTR: 3600}
		cfg.JobRequeue = true
	}
	return []slurmGoldenCase{
		syntheticCase("synthetic/seed=1/nodes=16", 1, 16, 2000, 0.9, nil, nil),
		syntheticCase("synthetic/seed=2/nodes=64", 2, 64, 4000, 0.9, nil, nil),
		syntheticCase("synthetic/seed=1/nodes=128", 1, 128, 10000, 0.9, nil, nil),
		syntheticCase("synthetic/seed=1/nodes=1024/load=1.2", 1, 1024, 8000, 1.2, nil, nil),
		syntheticCase("synthetic/seed=5/nodes=48/load=1.3", 5, 48, 1000, 1.3, nil, nil),
		syntheticCase("synthetic/busy-nodes", 4, 32, 2000, 1.0, func(a *policies.SlurmArgs) {
			a.BfBusyNodes = true
			a.BfResolution = 300
			a.BfWindow = 600
		}, nil),
		syntheticCase("synthetic/linear-limits", 4, 32, 2000, 1.0, func(a *policies.SlurmArgs) {
			a.BfWindowLinear = 60
			a.BfMaxJobTest = 50
			a.BfMaxJobUser = 4
			a.BfMinAgeReserve = 600
			a.DefaultQueueDepth = 10
		}, users),
		syntheticCase("synthetic/intervals", 6, 32, 2000, 1.0, func(a *policies.SlurmArgs) {
			a.BfInterval = 60
			a.SchedInterval = 45
			a.BfResolution = 1
		}, nil),
		syntheticCase("synthetic/priority", 7, 32, 1500, 1.0, prio, users),
		syntheticCase("synthetic/qos-limits", 8, 32, 2000, 1.0, func(a *policies.SlurmArgs) {
			a.QOS = []policies.QOSArgs{{Name: "normal", MaxJobsPerUser: 20, MaxTRESPerUser: "gres/gpu=48", GrpTRES: "gres/gpu=400"}}
		}, users),
		syntheticCase("synthetic/preempt", 9, 32, 1200, 1.0, func(a *policies.SlurmArgs) {
			prio(a)
			a.PriorityWeightPartition = 1000
			a.PreemptType = "preempt/partition_prio"
			a.PreemptMode = "REQUEUE"
			a.PreemptExemptTime = "0-0:10"
		}, func(cfg *sim.Config) {
			users(cfg)
			cfg.Cluster = twoTiers(cfg.Cluster, cfg.Trace)
			cfg.JobRequeue = true
		}),
		syntheticCase("synthetic/windows-failures", 10, 32, 2000, 1.0, nil, windows),
		lifecycleCase("lifecycle/default", nil, false),
		lifecycleCase("lifecycle/preempt-priority", func(a *policies.SlurmArgs) {
			prio(a)
			a.BfBusyNodes = true
			a.BfResolution = 30
			a.PreemptType = "preempt/partition_prio"
			a.PreemptMode = "REQUEUE"
		}, true),
	}
}

// TestSlurmGolden holds the slurm policy's decisions on a set of
// workloads to the hashes recorded in testdata/slurm_golden.txt, so that
// an optimization of the policy is proven to change no decision. Rewrite
// the file (only for an intended change of behaviour) with
// go test ./policies -run SlurmGolden -update-slurm-golden.
func TestSlurmGolden(t *testing.T) {
	want := map[string]string{}
	if f, err := os.Open(slurmGoldenFile); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if name, h, ok := strings.Cut(sc.Text(), " "); ok {
				want[name] = h
			}
		}
		f.Close()
	} else if !*updateSlurmGolden {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range slurmGoldenCases() {
		t.Run(c.name, func(t *testing.T) {
			recs := c.run(t)
			h := fnv.New64a()
			var runs, reasons, started int
			for _, rec := range recs {
				runs += len(rec.Runs)
				reasons += rec.Reasons.Len()
				for i := range rec.Jobs {
					if rec.Jobs[i].Start >= 0 {
						started++
					}
				}
				h.Write(binary.LittleEndian.AppendUint64(nil, policytest.DecisionHash(rec)))
			}
			got := fmt.Sprintf("%016x", h.Sum64())
			t.Logf("%d runs, %d jobs started, %d earlier runs, %d reason changes", len(recs), started, runs, reasons)
			lines = append(lines, c.name+" "+got)
			if !*updateSlurmGolden && want[c.name] != got {
				t.Errorf("decisions hash %s, golden %s", got, want[c.name])
			}
		})
	}
	if *updateSlurmGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(slurmGoldenFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
