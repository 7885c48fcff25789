package slurm_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// seedCluster imports the seed-derived slurm.conf fixture (four 8 × H100
// nodes; partitions gpu-short, Priority=300, MaxTime 4 h, default;
// gpu-long, Priority=100; gpu-interactive, Priority=500, gpu01 only) with
// extra global lines appended, as `schedsim cluster import` would.
func seedCluster(t *testing.T, extra string) *hwmodels.Cluster {
	t.Helper()
	conf, err := os.ReadFile("../../hwmodels/testdata/seeds/mevasis-slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	gres, err := os.ReadFile("../../hwmodels/testdata/seeds/mevasis-gres.conf")
	if err != nil {
		t.Fatal(err)
	}
	spec, _, err := hwmodels.ImportSlurm(hwmodels.SlurmFiles{SlurmConf: append(conf, extra...), GresConf: gres,
		SlurmPath: "mevasis-slurm.conf", GresPath: "mevasis-gres.conf"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := hwmodels.ParseCluster(spec, "imported.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func yamlArgs(src string) func(any) error {
	return func(into any) error { return yaml.Unmarshal([]byte(src), into) }
}

// TestSlurmConfDefaults: the slurm policy takes its defaults from the
// cluster's slurm.conf settings (SchedulerParameters, Priority*,
// Preempt*), and the scenario's arguments override them.
func TestSlurmConfDefaults(t *testing.T) {
	c := seedCluster(t, `
SchedulerParameters=bf_window=2880,bf_interval=60,default_queue_depth=200,bf_continue,sched_interval=120,bf_max_time=300
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityMaxAge=14-0
PriorityCalcPeriod=2
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
`)
	p, err := slurm.Factory(yamlArgs("bf_interval: 15\nPriorityWeightAge: 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := p.(*slurm.Policy)
	tm, err := s.Begin(sim.RunInfo{Cluster: c})
	if err != nil {
		t.Fatal(err)
	}
	want := slurm.DefaultArgs()
	want.BfWindow, want.BfInterval, want.DefaultQueueDepth, want.BfContinue, want.SchedInterval = 2880, 15, 200, true, 120
	want.PriorityWeightAge, want.PriorityWeightFairshare, want.PriorityMaxAge, want.PriorityCalcPeriod = 5, 10000, "14-0", "2"
	want.PreemptType, want.PreemptMode = "preempt/partition_prio", "REQUEUE"
	if d := cmp.Diff(want, s.Args()); d != "" {
		t.Errorf("arguments in effect (-want +got):\n%s", d)
	}
	// Full main passes every 120 s, backfill every 15 s; settled after
	// max(120, 15, 2 min).
	wantTm := policies.OnEvents()
	wantTm.Passes = append(wantTm.Passes, sim.Pass{Name: "main-full", Period: 120}, sim.Pass{Name: "backfill", Period: 15})
	wantTm.Settle = 120
	if d := cmp.Diff(wantTm, tm); d != "" {
		t.Errorf("timing (-want +got):\n%s", d)
	}

	// The configuration acts: L (gpu-long, tier 100) holds all four nodes;
	// H (gpu-short, tier 300) at 100 preempts it (REQUEUE from slurm.conf)
	// and starts in the pass the freed nodes trigger, [100,400); L, held
	// until 220, reruns [400,1400).
	jobs := []workload.Job{
		inPart(job("L", 0, 1000, 1000, workload.Request{Nodes: 4, GPUs: 32}), "gpu-long"),
		inPart(job("H", 100, 300, 300, workload.Request{Nodes: 1, GPUs: 8}), "gpu-short"),
	}
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Policy: s, Seed: 1, Check: true, JobRequeue: true})
	if err != nil {
		t.Fatal(err)
	}
	got := lifeRuns(rec)
	wantRuns := []life{{"L", 0, 100, "PREEMPTED", []int32{0, 1, 2, 3}}, {"L", 400, 1400, "COMPLETED", []int32{0, 1, 2, 3}},
		{"H", 100, 400, "COMPLETED", []int32{0}}}
	if d := cmp.Diff(wantRuns, got); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}

	// Without a slurm section nothing changes; bad values are errors
	// naming the setting.
	plain := seedCluster(t, "")
	p2, _ := slurm.Factory(nil)
	if _, err := p2.Begin(sim.RunInfo{Cluster: plain}); err != nil || !cmp.Equal(p2.(*slurm.Policy).Args(), slurm.DefaultArgs()) {
		t.Errorf("no settings: %v, args %+v", err, p2.(*slurm.Policy).Args())
	}
	for extra, want := range map[string]string{
		"SchedulerParameters=bf_window=soon\n":  "SchedulerParameters: bf_window",
		"SchedulerParameters=bf_window=99999\n": "bf_window: must be in [1, 43200]",
		"PreemptMode=SUSPEND,GANG\n":            "PreemptMode",
		"PriorityWeightAge=lots\n":              "PriorityWeightAge",
	} {
		p, _ := slurm.Factory(nil)
		_, err := p.Begin(sim.RunInfo{Cluster: seedCluster(t, extra)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to mention %q", extra, err, want)
		}
	}
}

// TestSlurmConfPartitionPreemptMode: a partition's PreemptMode from the
// cluster's slurm settings overrides the cluster's: lo's jobs are
// cancelled (PREEMPTED) although PreemptMode is REQUEUE. One node in lo
// (tier 1) and hi (tier 2); L (lo) from 0, H (hi) at 100.
func TestSlurmConfPartitionPreemptMode(t *testing.T) {
	c := tiered()
	c.Slurm = &hwmodels.SlurmSettings{
		Settings:   []hwmodels.KeyValue{{Key: "PreemptType", Value: "preempt/partition_prio"}, {Key: "PreemptMode", Value: "REQUEUE"}},
		Partitions: []hwmodels.PartitionSettings{{Partition: "lo", Settings: []hwmodels.KeyValue{{Key: "PreemptMode", Value: "CANCEL"}}}},
	}
	p, err := slurm.New(fast(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Begin(sim.RunInfo{Cluster: c}); err != nil {
		t.Fatal(err)
	}
	g8 := workload.Request{GPUs: 8}
	jobs := []workload.Job{inPart(job("L", 0, 1000, 1000, g8), "lo"), inPart(job("H", 100, 300, 300, g8), "hi")}
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true, JobRequeue: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []life{{"L", 0, 100, "PREEMPTED", []int32{0}}, {"H", 100, 400, "COMPLETED", []int32{0}}}
	if d := cmp.Diff(want, lifeRuns(rec)); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}
}

// TestSlurmConfZeroShares: an association's explicit fairshare 0 stays 0
// when the policy merges its arguments with the cluster's slurm.conf
// settings (it became 1, the default for a missing one). One node of 8
// GPUs; Fair Tree with PriorityWeightFairshare 1000 from the cluster's
// settings, recalculated every minute; lab has u0, u1 (fairshare 0), u2.
// A (u0) holds the node [0,100); B (u1, at 10) and C (u2, at 20) wait.
// At the calculation at 60 u1 has S = 0 (LF 0) and u2 S = 1/2 with no
// usage (LF +Inf): C ranks above B and starts first at 100, B at 200.
// With u1's shares 1 both would have LF +Inf and tie: B, older, first.
func TestSlurmConfZeroShares(t *testing.T) {
	c := policytest.GPUNodes(1, 8)
	c.Slurm = &hwmodels.SlurmSettings{Settings: []hwmodels.KeyValue{
		{Key: "PriorityWeightFairshare", Value: "1000"}, {Key: "PriorityCalcPeriod", Value: "1"},
	}}
	p, err := slurm.Factory(yamlArgs(`
bf_interval: 10
sched_interval: 10
bf_resolution: 1
accounts: [{name: lab}]
users: [{name: u0, account: lab}, {name: u1, account: lab, fairshare: 0}, {name: u2, account: lab}]
`))
	if err != nil {
		t.Fatal(err)
	}
	g8 := workload.Request{GPUs: 8}
	jobs := []workload.Job{
		withUser(job("A", 0, 100, 100, g8), "u0", "lab"),
		withUser(job("B", 10, 100, 100, g8), "u1", "lab"),
		withUser(job("C", 20, 100, 100, g8), "u2", "lab"),
	}
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]sim.Time{"A": 0, "B": 200, "C": 100}, starts(rec)); d != "" {
		t.Errorf("starts (-want +got):\n%s", d)
	}
}

// TestSlurmConfSelectTypeConsTres: with SelectType=select/cons_tres in
// the cluster's slurm.conf, the slurm policy places as cons_tres does
// (policies.ConsTres), unless the scenario names a placement. Four nodes
// of 8 GPUs and 112 CPUs, gpu-short. At 0: A (8 GPUs) takes gpu01, B
// (8 GPUs, 10 s) gpu02, C (8 GPUs) gpu03, D (2 GPUs, 16 CPUs) gpu04.
// At 10 B ends. At 20 E (1 GPU, 8 CPUs) fits gpu02 (112 CPUs free) and
// gpu04 (96), two sets of one node since gpu03 is full: cons_tres takes
// the tighter, gpu04; first fit gpu02.
func TestSlurmConfSelectTypeConsTres(t *testing.T) {
	c := seedCluster(t, "SelectType=select/cons_tres\n")
	one := func(g, cpus int32) workload.Request { return workload.Request{Nodes: 1, GPUs: g, CPUs: cpus} }
	jobs := []workload.Job{
		inPart(job("A", 0, 1000, 1000, one(8, 8)), "gpu-short"),
		inPart(job("B", 0, 10, 10, one(8, 8)), "gpu-short"),
		inPart(job("C", 0, 1000, 1000, one(8, 8)), "gpu-short"),
		inPart(job("D", 0, 1000, 1000, one(2, 16)), "gpu-short"),
		inPart(job("E", 20, 100, 100, one(1, 8)), "gpu-short"),
	}
	for _, tc := range []struct {
		args      string
		placement string
		node      int32
	}{
		{"", policies.PlacementConsTres, 3},
		{"placement: first-fit\n", policies.PlacementFirstFit, 1},
	} {
		p, err := slurm.Factory(yamlArgs(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.(*slurm.Policy).Args().Placement; got != tc.placement {
			t.Errorf("args %q: placement in effect %q, want %q", tc.args, got, tc.placement)
		}
		e := rec.Jobs[4]
		if e.Start != 20 || e.Alloc.Len() != 1 || e.Alloc.At(0).Node != tc.node {
			t.Errorf("args %q: E started at %d on %v, want 20 on node %d", tc.args, e.Start, e.Alloc.Append(nil), tc.node)
		}
	}
}
