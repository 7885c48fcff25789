package policies_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// lockstep runs Conservative's kept schedule and the plain reference on
// the same view at every pass, and fails the run at the first pass where
// their starts or reservations differ or the kept profile is inconsistent.
// With ask set, the reservations are compared only at the passes it
// picks: at the others Conservative may leave jobs that cannot start
// stale, to be placed by a later pass.
type lockstep struct {
	fast   *policies.Conservative
	ref    sim.Policy
	refRes func() []policies.ConservativeReservation
	ask    func() bool
	err    error
	passes int
}

func newLockstep() *lockstep {
	ref := policies.NewConservativeReference(nil)
	return &lockstep{fast: policies.NewConservative(nil), ref: ref, refRes: ref.Reservations}
}

func (l *lockstep) Name() string { return "conservative" }

func (l *lockstep) JobStarted(ref sim.JobRef, at sim.Time, alloc []sim.NodeAlloc) {
	l.ref.JobStarted(ref, at, alloc)
	l.fast.JobStarted(ref, at, alloc)
}

func (l *lockstep) JobEnded(ref sim.JobRef, at sim.Time, alloc []sim.NodeAlloc, st sim.State) {
	l.ref.JobEnded(ref, at, alloc, st)
	l.fast.JobEnded(ref, at, alloc, st)
}

func (l *lockstep) Begin(info sim.RunInfo) (sim.Timing, error) {
	if _, err := l.ref.Begin(info); err != nil {
		return sim.Timing{}, err
	}
	return l.fast.Begin(info)
}

func (l *lockstep) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	want := l.ref.Schedule(due, v, rng)
	got := l.fast.Schedule(due, v, rng)
	l.passes++
	if l.err != nil {
		return got
	}
	switch {
	case !reflect.DeepEqual(startsOf(got), startsOf(want)):
		l.err = fmt.Errorf("t=%d pass %d: starts %v, reference %v", v.Now(), l.passes, startsOf(got), startsOf(want))
	case l.ask != nil && !l.ask():
		if err := l.fast.CheckProfile(); err != nil {
			l.err = fmt.Errorf("t=%d pass %d (reservations not asked): %v", v.Now(), l.passes, err)
		}
	case !slices.Equal(l.fast.Reservations(), l.refRes()):
		l.err = fmt.Errorf("t=%d pass %d: reservations %v, reference %v", v.Now(), l.passes, l.fast.Reservations(), l.refRes())
	default:
		if err := l.fast.CheckProfile(); err != nil {
			l.err = fmt.Errorf("t=%d pass %d: %v", v.Now(), l.passes, err)
		}
	}
	return got
}

func startsOf(p sim.Plan) []sim.Start {
	out := []sim.Start{}
	for _, s := range p.Starts {
		out = append(out, sim.Start{Job: s.Job, Alloc: slices.Clone(s.Alloc)})
	}
	return out
}

// consCase is one workload of TestConservativeMatchesReference.
type consCase struct {
	name string
	cfg  sim.Config
	// timing changes the policies' Timing (policytest.Timed); nil: none.
	timing func(*sim.Timing)
}

// consCases returns the random workloads: policytest.Workload (1 to 4
// nodes of two GPU types, CPU-only nodes, two overlapping partitions,
// multi-partition and typed requests, jobs cancelled in the queue, runs
// past their limits) plain, with node failures and requeue, with drains,
// node downs and maintenance windows, with dependencies (jobs entering the
// queue ahead of others), under Slurm's end-of-limit settings; loaded
// synthetic traces (deep queues); and MIG and MPS clusters.
func consCases(t *testing.T) []consCase {
	var cases []consCase
	add := func(name string, cfg sim.Config) { cases = append(cases, consCase{name: name, cfg: cfg}) }
	for seed := uint64(1); seed <= 300; seed++ {
		c, tr := policytest.Workload(seed)
		add(fmt.Sprintf("workload/%d", seed), sim.Config{Cluster: c, Trace: tr, Seed: seed})
	}
	for seed := uint64(1); seed <= 150; seed++ {
		c, tr := policytest.Workload(1000 + seed)
		add(fmt.Sprintf("failures/%d", seed), sim.Config{Cluster: c, Trace: tr, Seed: seed,
			Failures: &sim.FailureModel{MTBF: 3 * 3600, MTTR: 900}, JobRequeue: true})
	}
	for seed := uint64(1); seed <= 150; seed++ {
		c, tr := policytest.Workload(2000 + seed)
		last := int32(len(c.Nodes) - 1)
		rng := rand.New(rand.NewPCG(seed, 3))
		at := func() sim.Time { return sim.Time(rng.IntN(8000)) }
		add(fmt.Sprintf("windows/%d", seed), sim.Config{Cluster: c, Trace: tr, Seed: seed,
			Reservations: []sim.AdvanceReservation{
				{Name: "m", Start: 1000 + at()/4, End: 5000, Nodes: []int32{0}},
				{Name: "n", Start: at(), End: 9000 + at(), Nodes: []int32{last}},
			},
			NodeEvents: []sim.NodeEvent{
				{At: at(), Node: last, Down: true, Drain: true},
				{At: 2500, Node: 0, Down: true},
				{At: 8500, Node: last},
				{At: 6000, Node: 0},
			}})
	}
	for seed := uint64(1); seed <= 150; seed++ {
		c, tr := policytest.Workload(3000 + seed)
		rng := rand.New(rand.NewPCG(seed, 4))
		for i := range tr.Jobs {
			if i > 0 && rng.IntN(3) == 0 {
				dep := []workload.DepType{workload.DepAfterAny, workload.DepAfterOK, workload.DepAfter}[rng.IntN(3)]
				tr.Jobs[i].Deps = []workload.Dependency{{Type: dep, JobID: tr.Jobs[rng.IntN(i)].ID}}
			}
		}
		add(fmt.Sprintf("deps/%d", seed), sim.Config{Cluster: c, Trace: tr, Seed: seed})
	}
	for seed := uint64(1); seed <= 150; seed++ {
		c, tr := policytest.Workload(4000 + seed)
		k := consCase{name: fmt.Sprintf("limits/%d", seed), cfg: sim.Config{Cluster: c, Trace: tr, Seed: seed}}
		switch seed % 3 {
		case 0:
			k.timing = func(tm *sim.Timing) { tm.EndAtLimit = true }
		case 1:
			k.cfg.OverTimeLimit, k.cfg.KillWait = 60, 30
		default:
			k.cfg.TimeLimitSweep = 30
			k.timing = func(tm *sim.Timing) { tm.EndsAfterPasses = true }
		}
		cases = append(cases, k)
	}
	for seed := uint64(1); seed <= 40; seed++ {
		c, tr := policytest.Synthetic(seed, 6, 8, 150, 1.3)
		add(fmt.Sprintf("synthetic/%d", seed), sim.Config{Cluster: c, Trace: tr, Seed: seed})
	}
	// Wide clusters, up to 70 nodes (more than one word of free-GPU bits
	// per segment), in three overlapping partitions.
	for seed := uint64(1); seed <= 24; seed++ {
		nodes := []int{12, 40, 64, 70}[seed%4]
		c, tr := wideWorkload(seed, nodes, 120)
		add(fmt.Sprintf("wide/%d/%d", nodes, seed), sim.Config{Cluster: c, Trace: tr, Seed: seed})
	}
	mig := catalogCluster(t, migMixedSpec)
	for seed := uint64(1); seed <= 40; seed++ {
		add(fmt.Sprintf("mig/%d", seed), sim.Config{Cluster: mig, Trace: randomMIGTrace(t, seed, 60), Seed: seed})
	}
	mps := []*hwmodels.Cluster{catalogCluster(t, mpsSpec(2, 4)), catalogCluster(t, mpsSpec(4, 3))}
	for seed := uint64(1); seed <= 80; seed++ {
		add(fmt.Sprintf("mps/%d", seed), sim.Config{Cluster: mps[seed%2], Trace: randomMPSTrace(seed, 60), Seed: seed})
	}
	return cases
}

// wideWorkload returns a cluster of n nodes of two GPU types (every
// seventh node CPU-only) in three overlapping partitions, like the
// default scenario's, and jobs jobs arriving about as fast as they can
// run: one to eight GPUs, or two to six whole nodes, in one of the
// partitions, two of them, or the default, some with a GPU type or memory.
func wideWorkload(seed uint64, n, jobs int) (*hwmodels.Cluster, *workload.Trace) {
	rng := rand.New(rand.NewPCG(seed, 21))
	nodes := make([]hwmodels.Node, n)
	for i := range nodes {
		parts := uint64(1) << uint(i*3/n) // thirds
		if rng.IntN(4) == 0 {
			parts |= 1 << uint(rng.IntN(3))
		}
		gpus, typ := int32(8), []string{"a100", "h100"}[i%2]
		if i%7 == 6 {
			gpus, typ = 0, ""
		}
		nodes[i] = policytest.Node(fmt.Sprintf("n%d", i), gpus, typ, 64, 512*1024, parts)
	}
	c := policytest.Cluster(nodes, "p0", "p1", "p2")
	tr := &workload.Trace{Source: fmt.Sprintf("wideWorkload(%d, %d)", seed, n)}
	var at workload.Time
	for i := range jobs {
		if rng.IntN(4) > 0 {
			at += workload.Time(rng.IntN(120 * 48 / n))
		}
		j := workload.NewJob(fmt.Sprint(i + 1))
		j.Submit = at
		var r workload.Request
		switch k := rng.IntN(10); {
		case k < 7:
			r.GPUs = int32(1 << rng.IntN(4))
			r.CPUs = r.GPUs * int32(1+rng.IntN(4))
		case k < 9:
			r.Nodes = int32(2 + rng.IntN(5))
			r.GPUs = 8 * r.Nodes
		default:
			r.CPUs = int32(1 + rng.IntN(32))
		}
		if rng.IntN(4) == 0 {
			r.MemMB = int64(4096 * (1 + rng.IntN(64)))
		}
		if r.GPUs > 0 && rng.IntN(5) == 0 {
			r.GPUType = []string{"a100", "h100"}[rng.IntN(2)]
		}
		j.Request = r
		j.Partition = []string{"", "p0", "p1", "p2", "p1,p2", "p2,p0"}[rng.IntN(6)]
		j.TimeLimit = workload.Time(600 * (1 + rng.IntN(24)))
		j.Runtime = workload.Time(rng.Int64N(int64(j.TimeLimit) * 5 / 4))
		tr.Jobs = append(tr.Jobs, j)
	}
	return c, tr
}

// randomMIGTrace is whole-GPU and MIG jobs on migMixedSpec, limits above
// runtimes.
func randomMIGTrace(t *testing.T, seed uint64, n int) *workload.Trace {
	profiles := []string{"", "", "1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"}
	rng := rand.New(rand.NewPCG(seed, 7))
	tr := &workload.Trace{}
	var at workload.Time
	for i := range n {
		at += workload.Time(rng.IntN(200))
		p := profiles[rng.IntN(len(profiles))]
		k := int32(1 + rng.IntN(3))
		if p == "" {
			k = int32(1 + rng.IntN(8))
		}
		j := migJob(t, fmt.Sprint(i), at, workload.Time(60+rng.IntN(2400)), p, k)
		j.TimeLimit += workload.Time(rng.IntN(2400))
		if rng.IntN(4) == 0 {
			j.Request.Nodes = 0 // spread
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

// randomMPSTrace is MPS shares and whole-GPU jobs on mpsSpec(2, 4), limits
// above runtimes.
func randomMPSTrace(seed uint64, n int) *workload.Trace {
	rng := rand.New(rand.NewPCG(seed, 10))
	tr := &workload.Trace{}
	var at workload.Time
	for i := range n {
		at += workload.Time(rng.IntN(60))
		rt := workload.Time(30 + rng.IntN(300))
		var j workload.Job
		if rng.IntN(3) == 0 {
			j = mpsJob(fmt.Sprint(i), at, rt, 0, int32(1+rng.IntN(2)))
		} else {
			j = mpsJob(fmt.Sprint(i), at, rt, int32(10*(1+rng.IntN(6))), 0)
		}
		j.TimeLimit += workload.Time(rng.IntN(600))
		if rng.IntN(3) == 0 {
			j.Runtime = 1 + j.Runtime/4 // ends early: the schedule compresses
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

// TestConservativeMatchesReference replays 1,220 random workloads (see
// consCases) under Conservative, which keeps its schedule between passes
// and searches a free-resource profile, and under the plain pass that
// rebuilds the schedule at every pass (conservativeReference), run side
// by side on the same views: at every pass both must start the same jobs
// on the same nodes and give every queued job the same reservation, and
// the kept profile must be consistent (CheckProfile). Each workload runs
// in lockstep twice: with the reservations compared at every pass, and
// at a random quarter of the passes only (the others may leave jobs
// stale: see consState.leaveStale), the starts at every pass. Every tenth
// workload is also replayed by each policy alone (never asked for its
// reservations), and the records must be equal.
func TestConservativeMatchesReference(t *testing.T) {
	cases := consCases(t)
	if len(cases) < 1000 {
		t.Fatalf("only %d workloads", len(cases))
	}
	passes := 0
	for i, k := range cases {
		cfg := k.cfg
		cfg.Check = true
		for _, sometimes := range []bool{false, true} {
			l := newLockstep()
			if sometimes {
				rng := rand.New(rand.NewPCG(uint64(i), 99))
				l.ask = func() bool { return rng.IntN(4) == 0 }
			}
			cfg.Policy = policytest.Timed(l, k.timing)
			if _, err := sim.Run(cfg); err != nil {
				t.Fatalf("%s (asked sometimes: %v): %v", k.name, sometimes, err)
			}
			if l.err != nil {
				t.Fatalf("%s (asked sometimes: %v): %v", k.name, sometimes, l.err)
			}
			passes += l.passes
		}
		if i%10 != 0 {
			continue
		}
		cfg.Policy = policytest.Timed(policies.NewConservative(nil), k.timing)
		got, err := sim.Run(cfg)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		cfg.Policy = policytest.Timed(policies.NewConservativeReference(nil), k.timing)
		want, err := sim.Run(cfg)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		if !reflect.DeepEqual(got.Jobs, want.Jobs) {
			t.Fatalf("%s: records differ from the reference's", k.name)
		}
		if g, w := policytest.JobTable(got, 1), policytest.JobTable(want, 1); g != w {
			t.Fatalf("%s: job tables differ from the reference's:\n%s\nwant:\n%s", k.name, g, w)
		}
	}
	if passes < 20000 {
		t.Errorf("only %d passes compared", passes)
	}
}

// TestConservativeHintsAfterFail is built to reach certified's path
// where the gain reaches the slack (fail) at one node and a later node
// of the pass's changes would rule out the search's no-check shortcut at
// the job's start (hints): a partition FirstFit tries before the job's
// own gains there.
//
// Partitions all (default; nodes 0-2), po (nodes 0, 1), pa (node 2), pk
// (nodes 1, 2); nodes 0 and 2 have one GPU, node 1 two. A maintenance
// window holds node 1 over [50, 1000). At 0: X (po, limit 100) runs on
// node 0 [0,100), Y (po, 2 GPUs, limit 40, runs 10) on node 1 [0,40)
// (clear of the window), Z (pa, limit 100) on node 2 [0,100). K (pk,
// limit 30) fits node 1 at neither 0 nor 40 (Y, then the window): it is
// reserved on node 2 at 100. J (1 GPU, "pa,po", limit 100): at 0 and 40
// no node fits ([s,s+100) meets X, Z, or the window on node 1); at 100
// pa fails (K holds node 2), so J is reserved in po on node 0 at 100:
// slack 1 (its earlier starts lack one GPU), pa's deficit there 1.
//
// At 10 Y ends: K moves to node 1 [10,40) and starts, which frees node 2
// over [100,130). For J the pass's changes are node 1 (Y's 2 GPUs over
// [10,40), before J's start; with K beside them 1 is free over J's
// earliest window, a gain of 1, which reaches the slack although the
// window still rules node 1 out) and then node 2 (meeting J's window at
// its start). Nothing before 100 fits (node 2 is Z's until 100), and at
// 100 FirstFit tries pa first: J must move to node 2 at 100, which the
// shortcut (J's old node 0) would miss. The reference and the kept
// schedule run in lockstep; the record must show J on node 2 at 100.
func TestConservativeHintsAfterFail(t *testing.T) {
	nodes := []hwmodels.Node{
		policytest.Node("n0", 1, "a100", 8, 1024, 0b0011),
		policytest.Node("n1", 2, "a100", 8, 1024, 0b1011),
		policytest.Node("n2", 1, "a100", 8, 1024, 0b1101),
	}
	c := policytest.Cluster(nodes, "all", "po", "pa", "pk")
	mk := func(id, part string, gpus int32, limit, runtime sim.Time) workload.Job {
		j := job(id, 0, limit, runtime, workload.Request{GPUs: gpus})
		j.Partition = part
		return j
	}
	tr := &workload.Trace{Jobs: []workload.Job{
		mk("X", "po", 1, 100, 100), mk("Y", "po", 2, 40, 10), mk("Z", "pa", 1, 100, 100),
		mk("K", "pk", 1, 30, 30), mk("J", "pa,po", 1, 100, 100),
	}}
	cfg := sim.Config{Cluster: c, Trace: tr, Seed: 1, Check: true,
		Reservations: []sim.AdvanceReservation{{Name: "w", Start: 50, End: 1000, Nodes: []int32{1}}}}
	want := map[string]string{"X": "0@0", "Y": "0@1", "Z": "0@2", "K": "10@1", "J": "100@2"}
	check := func(what string, rec *sim.Record) {
		t.Helper()
		for i := range rec.Jobs {
			r := &rec.Jobs[i]
			got := fmt.Sprintf("%d@", r.Start)
			for _, a := range r.Alloc.All() {
				got += fmt.Sprint(a.Node)
			}
			if id := tr.Jobs[i].ID; got != want[id] {
				t.Errorf("%s: %s started at node %s, want %s", what, id, got, want[id])
			}
		}
	}
	l := newLockstep()
	cfg.Policy = l
	rec, err := sim.Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l.err != nil {
		t.Fatal(l.err)
	}
	check("lockstep", rec)
	cfg.Policy = policies.NewConservative(nil)
	if rec, err = sim.Run(cfg); err != nil {
		t.Fatal(err)
	}
	check("alone", rec)
}
