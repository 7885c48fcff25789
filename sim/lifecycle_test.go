package sim

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

// lgreedy is the policy of the lifecycle tests: it walks the queue in order
// and starts every job that fits on the lowest-numbered nodes of the first
// of its partitions (Part, then the others by index) that holds it, leaving
// out nodes with an advance reservation the job's limit would reach into.
// preempt, when set, is asked for preemptions first. It logs every start
// and end it is told of.
type lgreedy struct {
	preempt func(v View) []Preemption
	log     []string
	// tm is the policy's Timing; zero means one pass after every event.
	tm Timing
}

func (g *lgreedy) timing() Timing {
	if g.tm.Passes == nil {
		return onEvents
	}
	return g.tm
}

func (g *lgreedy) Name() string                  { return "lgreedy" }
func (g *lgreedy) Begin(RunInfo) (Timing, error) { return g.timing(), nil }

func (g *lgreedy) JobStarted(ref JobRef, at Time, alloc []NodeAlloc) {
	g.log = append(g.log, fmt.Sprintf("%d start %d on %d nodes", at, ref, len(alloc)))
}

func (g *lgreedy) JobEnded(ref JobRef, at Time, alloc []NodeAlloc, st State) {
	g.log = append(g.log, fmt.Sprintf("%d end %d %v", at, ref, st))
}

// reservedFor reports whether a job with limit lim starting at now may not
// use node n because of an advance reservation.
func reservedFor(v View, n int32, lim Time) bool {
	for _, r := range v.Reservations() {
		for _, m := range r.Nodes {
			if m == n && v.Now() < r.End && v.Now()+lim > r.Start {
				return true
			}
		}
	}
	return false
}

func (g *lgreedy) Schedule(_ PassSet, v View, _ *rand.Rand) Plan {
	var plan Plan
	if g.preempt != nil {
		plan.Preempts = g.preempt(v)
	}
	free := append([]NodeState(nil), v.Nodes()...)
	nodes := v.Cluster().Nodes
	for _, p := range v.Pending() {
		order := []int32{p.Part}
		for m := p.Parts &^ (1 << uint(p.Part)); m != 0; m &= m - 1 {
			order = append(order, int32(bits.TrailingZeros64(m)))
		}
		for _, part := range order {
			need := Needed(&p.Req)
			var alloc []NodeAlloc
			for i := range nodes {
				if need == 0 {
					break
				}
				if !Eligible(&nodes[i], part, p.Req.GPUType) || reservedFor(v, int32(i), p.Limit) {
					continue
				}
				u := min(UnitsOn(&p.Req, free[i]), need)
				if u == 0 {
					continue
				}
				alloc = append(alloc, Take(&p.Req, int32(i), u))
				if p.Req.Nodes > 0 {
					need--
				} else {
					need -= u
				}
			}
			if need > 0 {
				continue
			}
			for _, a := range alloc {
				free[a.Node].FreeGPUs -= a.GPUs
				free[a.Node].FreeCPUs -= a.CPUs
				free[a.Node].FreeMemMB -= a.MemMB
			}
			plan.Starts = append(plan.Starts, Start{Job: p.Ref, Alloc: alloc})
			break
		}
	}
	return plan
}

// life is one job's outcome in the lifecycle tests.
type life struct {
	ID         string
	Eligible   Time
	Start, End Time
	State      string
	Nodes      string
	Requeues   int32
}

func lives(rec *Record) []life {
	var out []life
	for _, r := range rec.Jobs {
		var names []string
		for _, a := range r.Alloc.All() {
			names = append(names, rec.Cluster.Nodes[a.Node].Name)
		}
		out = append(out, life{rec.Trace.Jobs[r.Ref].ID, r.Eligible, r.Start, r.End, r.State.String(),
			strings.Join(names, ","), r.Requeues})
	}
	return out
}

func dep(t workload.DepType, id string) []workload.Dependency {
	return []workload.Dependency{{Type: t, JobID: id}}
}

func run(t *testing.T, cfg Config) *Record {
	t.Helper()
	if cfg.Policy == nil {
		cfg.Policy = &lgreedy{}
	}
	if cfg.Cluster == nil {
		cfg.Cluster = twoNodes()
	}
	cfg.Check = true
	rec, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

const U = workload.Unknown

func TestDependencies(t *testing.T) {
	// twoNodes: n1 (4 GPUs, partition a) and n2 (4 GPUs, a and b). All
	// jobs are submitted at 0.
	p := job("p", 0, 100, 200, 4) // n1 [0,100) COMPLETED
	tj := job("t", 0, 50, 20, 4)  // n2 [0,20) TIMEOUT
	ok := job("ok", 0, 10, 100, 4)
	ok.Deps = dep(workload.DepAfterOK, "p") // eligible when p completes at 100: n1 [100,110)
	okt := job("okt", 0, 10, 100, 4)
	okt.Deps = dep(workload.DepAfterOK, "t") // t timed out at 20: never satisfied
	notok := job("notok", 0, 10, 100, 4)
	notok.Deps = dep(workload.DepAfterNotOK, "t") // eligible at 20: n2 [20,30)
	anyj := job("any", 0, 10, 100, 4)
	anyj.Deps = dep(workload.DepAfterAny, "t") // eligible at 20, queued behind notok: n2 [30,40)
	notokp := job("notokp", 0, 10, 100, 4)
	notokp.Deps = dep(workload.DepAfterNotOK, "p") // p completed at 100: never satisfied
	after := job("after", 0, 5, 10, 0)
	after.Request.CPUs = 1
	after.Deps = dep(workload.DepAfter, "p") // p starts in the pass at 0: eligible at 0, n1's CPUs [0,5)
	outside := job("outside", 0, 5, 10, 0)
	outside.Request.CPUs = 1
	outside.Deps = dep(workload.DepAfterOK, "gone") // not in the trace: taken as satisfied
	tr := &workload.Trace{Jobs: []workload.Job{p, tj, ok, okt, notok, anyj, notokp, after, outside}}
	rec := run(t, Config{Trace: tr})
	want := []life{
		{"p", 0, 0, 100, "COMPLETED", "n1", 0},
		{"t", 0, 0, 20, "TIMEOUT", "n2", 0},
		{"ok", 100, 100, 110, "COMPLETED", "n1", 0},
		{"okt", U, U, U, "UNFINISHED", "", 0},
		{"notok", 20, 20, 30, "COMPLETED", "n2", 0},
		{"any", 20, 30, 40, "COMPLETED", "n2", 0},
		{"notokp", U, U, U, "UNFINISHED", "", 0},
		{"after", 0, 0, 5, "COMPLETED", "n1", 0},
		{"outside", 0, 0, 5, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	wantReasons := []ReasonChange{
		{0, 2, ReasonDependency}, {0, 3, ReasonDependency}, {0, 4, ReasonDependency},
		{0, 5, ReasonDependency}, {0, 6, ReasonDependency}, {0, 7, ReasonDependency},
		{0, 7, ReasonNone}, // p started
		{20, 3, ReasonDependencyNeverSatisfied}, {20, 4, ReasonNone}, {20, 5, ReasonNone},
		{100, 2, ReasonNone}, {100, 6, ReasonDependencyNeverSatisfied},
	}
	if d := cmp.Diff(wantReasons, rec.Reasons.Changes()); d != "" {
		t.Errorf("reasons (-want +got):\n%s", d)
	}
	if len(rec.Notes) != 2 || !strings.Contains(rec.Notes[0], "1 dependencies name no other job") {
		t.Errorf("notes = %q, want one about the unknown dependency first", rec.Notes)
	}

	// With kill_invalid_depend the never-satisfiable jobs are cancelled
	// when that becomes known, and a job that waits for any end of okt
	// follows at once (20), on n1's CPUs as p holds its GPUs.
	chain := job("chain", 0, 5, 10, 0)
	chain.Request.CPUs = 1
	chain.Deps = dep(workload.DepAfterAny, "okt")
	tr.Jobs = append(tr.Jobs, chain)
	rec = run(t, Config{Trace: tr, KillInvalidDepend: true})
	got := lives(rec)
	for _, w := range []life{
		{"okt", U, U, 20, "CANCELLED", "", 0},
		{"notokp", U, U, 100, "CANCELLED", "", 0},
		{"chain", 20, 20, 25, "COMPLETED", "n1", 0},
	} {
		found := false
		for _, g := range got {
			if g.ID == w.ID {
				found = true
				if d := cmp.Diff(w, g); d != "" {
					t.Errorf("kill_invalid_depend: %s (-want +got):\n%s", w.ID, d)
				}
			}
		}
		if !found {
			t.Errorf("job %s missing", w.ID)
		}
	}
}

func TestSingleton(t *testing.T) {
	single := func(id string, submit, runtime Time, user string) workload.Job {
		j := job(id, submit, runtime, 100, 1)
		j.Name, j.User = "train", user
		j.Deps = []workload.Dependency{{Type: workload.DepSingleton}}
		return j
	}
	// As Slurm's _find_singleton_job: a singleton job waits while a job
	// of its user and name runs or an earlier one is queued.
	x := job("x", 12, 30, 100, 1)
	x.Name, x.User = "train", "u" // same name and user, no singleton dependency: runs at once
	tr := &workload.Trace{Jobs: []workload.Job{
		single("s1", 0, 10, "u"), // nothing else of u/train: [0,10)
		single("s2", 1, 10, "u"), // waits for s1 to end: [10,20)
		single("s3", 3, 10, "u"), // behind s2 (earlier, queued) until 20, then x (running) until 42: [42,52)
		single("o", 3, 10, "v"),  // another user's job of that name: [3,13)
		x,                        // [12,42), alongside s2
	}}
	rec := run(t, Config{Trace: tr})
	want := []life{
		{"s1", 0, 0, 10, "COMPLETED", "n1", 0},
		{"s2", 10, 10, 20, "COMPLETED", "n1", 0},
		{"s3", 42, 42, 52, "COMPLETED", "n1", 0},
		{"o", 3, 3, 13, "COMPLETED", "n1", 0},
		{"x", 12, 12, 42, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
}

func TestArrayThrottle(t *testing.T) {
	// Array A = 5 tasks of 1 GPU with %2: the cluster could run all five,
	// the throttle runs two at a time. Runtimes 10, 15, 10, 10, 10:
	// t0 [0,10), t1 [0,15); t2 takes t0's slot at 10: [10,20); t3 takes
	// t1's at 15: [15,25); t4 takes t2's at 20: [20,30). "after" waits
	// for every task of A (afterok on the array id): eligible at 30.
	var jobs []workload.Job
	for k, rt := range []Time{10, 15, 10, 10, 10} {
		j := job(fmt.Sprintf("A_%d", k), 0, rt, 100, 1)
		j.ArrayJobID, j.ArrayTaskID, j.ArrayThrottle = "A", int32(k), 2
		jobs = append(jobs, j)
	}
	after := job("after", 0, 5, 10, 1)
	after.Deps = dep(workload.DepAfterOK, "A")
	jobs = append(jobs, after)
	rec := run(t, Config{Trace: &workload.Trace{Jobs: jobs}})
	want := []life{
		{"A_0", 0, 0, 10, "COMPLETED", "n1", 0},
		{"A_1", 0, 0, 15, "COMPLETED", "n1", 0},
		{"A_2", 10, 10, 20, "COMPLETED", "n1", 0},
		{"A_3", 15, 15, 25, "COMPLETED", "n1", 0},
		{"A_4", 20, 20, 30, "COMPLETED", "n1", 0},
		{"after", 30, 30, 35, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	wantReasons := []ReasonChange{
		{0, 2, ReasonJobArrayTaskLimit}, {0, 3, ReasonJobArrayTaskLimit}, {0, 4, ReasonJobArrayTaskLimit},
		{0, 5, ReasonDependency},
		{10, 2, ReasonNone}, {15, 3, ReasonNone}, {20, 4, ReasonNone}, {30, 5, ReasonNone},
	}
	if d := cmp.Diff(wantReasons, rec.Reasons.Changes()); d != "" {
		t.Errorf("reasons (-want +got):\n%s", d)
	}
}

// preemptAt returns a preempt hook that preempts job victim in mode m at
// time at (and in every pass of that instant).
func preemptAt(at Time, victim JobRef, m PreemptMode) func(v View) []Preemption {
	return func(v View) []Preemption {
		if v.Now() != at {
			return nil
		}
		for _, r := range v.Running() {
			if r.Ref == victim {
				return []Preemption{{Job: victim, Mode: m}}
			}
		}
		return nil
	}
}

func TestPreemption(t *testing.T) {
	// victim (4 GPUs, runtime 1000, checkpoints every 100 s) runs on n1
	// from 0 and filler on n2 [0,1000). urgent (4 GPUs, 100 s) arrives at
	// 250 and the policy preempts victim for it.
	trace := func(requeue bool) *workload.Trace {
		v := job("victim", 0, 1000, 1000, 4)
		v.Requeue = requeue
		v.CheckpointInterval = 100
		return &workload.Trace{Jobs: []workload.Job{v, job("filler", 0, 1000, 1000, 4), job("urgent", 250, 100, 200, 4)}}
	}
	cases := []struct {
		name    string
		requeue bool
		mode    PreemptMode
		grace   Time
		want    []life
		runs    []RunSegment
		log     []string
	}{{
		// Requeue: the run [0,250) is closed PREEMPTED; 200 s of work
		// were saved (checkpoints at 100 and 200), so 800 s remain. The
		// job is held until 250+120 = 370; n1 is free again from 350
		// (urgent [250,350)), so it reruns [370,1170).
		name: "requeue", requeue: true, mode: PreemptRequeue,
		want: []life{
			{"victim", 370, 370, 1170, "COMPLETED", "n1", 1},
			{"filler", 0, 0, 1000, "COMPLETED", "n2", 0},
			{"urgent", 250, 250, 350, "COMPLETED", "n1", 0},
		},
		runs: []RunSegment{{Job: 0, Start: 0, End: 250, State: Preempted, Alloc: AllocsOf([]NodeAlloc{{Node: 0, GPUs: 4, CPUs: 4}})}},
		log: []string{"0 start 0 on 1 nodes", "0 start 1 on 1 nodes", "250 end 0 PREEMPTED", "250 start 2 on 1 nodes",
			"350 end 2 COMPLETED", "370 start 0 on 1 nodes", "1000 end 1 COMPLETED", "1170 end 0 COMPLETED"},
	}, {
		// GraceTime 30: victim keeps n1 until 280 and its run closes
		// then; still 200 s saved (the checkpoint at 300 is not reached).
		// urgent starts at 280 [280,380); victim is held until 400 and
		// reruns its 800 s [400,1200).
		name: "requeue with grace", requeue: true, mode: PreemptRequeue, grace: 30,
		want: []life{
			{"victim", 400, 400, 1200, "COMPLETED", "n1", 1},
			{"filler", 0, 0, 1000, "COMPLETED", "n2", 0},
			{"urgent", 250, 280, 380, "COMPLETED", "n1", 0},
		},
		runs: []RunSegment{{Job: 0, Start: 0, End: 280, State: Preempted, Alloc: AllocsOf([]NodeAlloc{{Node: 0, GPUs: 4, CPUs: 4}})}},
	}, {
		// Cancel: victim ends PREEMPTED at 250 and does not come back.
		name: "cancel", requeue: true, mode: PreemptCancel,
		want: []life{
			{"victim", 0, 0, 250, "PREEMPTED", "n1", 0},
			{"filler", 0, 0, 1000, "COMPLETED", "n2", 0},
			{"urgent", 250, 250, 350, "COMPLETED", "n1", 0},
		},
	}, {
		// REQUEUE mode on a job that may not be requeued cancels it.
		name: "requeue mode, not requeueable", requeue: false, mode: PreemptRequeue,
		want: []life{
			{"victim", 0, 0, 250, "PREEMPTED", "n1", 0},
			{"filler", 0, 0, 1000, "COMPLETED", "n2", 0},
			{"urgent", 250, 250, 350, "COMPLETED", "n1", 0},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol := &lgreedy{preempt: preemptAt(250, 0, tc.mode)}
			rec := run(t, Config{Trace: trace(tc.requeue), Policy: pol, PreemptGraceTime: tc.grace})
			if d := cmp.Diff(tc.want, lives(rec)); d != "" {
				t.Errorf("outcomes (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.runs, rec.Runs); d != "" {
				t.Errorf("runs (-want +got):\n%s", d)
			}
			if tc.log != nil {
				if d := cmp.Diff(tc.log, pol.log); d != "" {
					t.Errorf("observer log (-want +got):\n%s", d)
				}
			}
		})
	}
}

func TestPreemptionWithoutCheckpointRestartsFromScratch(t *testing.T) {
	// No checkpoint: preempted at 250 with RequeueDelay 60, the job
	// reruns its whole 1000 s from 310 (n1 free from 300): [310,1310).
	v := job("victim", 0, 1000, 1000, 4)
	tr := &workload.Trace{Jobs: []workload.Job{v, job("filler", 0, 1000, 1000, 4), job("urgent", 250, 50, 100, 4)}}
	rec := run(t, Config{Trace: tr, Policy: &lgreedy{preempt: preemptAt(250, 0, PreemptRequeue)}, JobRequeue: true, RequeueDelay: 60})
	if got := lives(rec)[0]; got != (life{"victim", 310, 310, 1310, "COMPLETED", "n1", 1}) {
		t.Errorf("victim = %+v", got)
	}
}

func TestPreemptionErrors(t *testing.T) {
	tr := &workload.Trace{Jobs: []workload.Job{job("a", 0, 10, 10, 4), job("b", 5, 10, 10, 4)}}
	bad := func(v View) []Preemption {
		if v.Now() == 5 {
			return []Preemption{{Job: 1, Mode: PreemptCancel}} // b is pending, not running
		}
		return nil
	}
	_, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: &lgreedy{preempt: bad}})
	if err == nil || !strings.Contains(err.Error(), "policy lgreedy: job b: preempted at t=5 but it is not running") {
		t.Fatalf("err = %v", err)
	}
}

func TestNodeFailure(t *testing.T) {
	// wide holds n1 and n2 from 0 (runtime 100). n2 fails at 30 and is
	// back at 60. small (4 GPUs, any node of a) waits from 10 and gets n1
	// the moment wide dies at 30: [30,50). onb (partition b = n2 only)
	// waits for n2's return: [60,70).
	wide := job("wide", 0, 100, 200, 8)
	wide.Request.Nodes = 2
	onb := job("onb", 10, 10, 100, 4)
	onb.Partition = "b"
	tr := func() *workload.Trace {
		return &workload.Trace{Jobs: []workload.Job{wide, job("small", 10, 20, 100, 4), onb}}
	}
	events := []NodeEvent{{At: 60, Node: 1}, {At: 30, Node: 1, Down: true}}
	t.Run("no requeue", func(t *testing.T) {
		rec := run(t, Config{Trace: tr(), NodeEvents: events})
		want := []life{
			{"wide", 0, 0, 30, "NODE_FAIL", "n1,n2", 0},
			{"small", 10, 30, 50, "COMPLETED", "n1", 0},
			{"onb", 10, 60, 70, "COMPLETED", "n2", 0},
		}
		if d := cmp.Diff(want, lives(rec)); d != "" {
			t.Errorf("outcomes (-want +got):\n%s", d)
		}
		wantEv := []NodeEvent{{At: 30, Node: 1, Down: true}, {At: 60, Node: 1}}
		if d := cmp.Diff(wantEv, rec.NodeEvents); d != "" {
			t.Errorf("node events (-want +got):\n%s", d)
		}
	})
	t.Run("requeue", func(t *testing.T) {
		// wide's run [0,30) closes NODE_FAIL; it is held until 150 and,
		// without a checkpoint, reruns its 100 s on both nodes
		// [150,250).
		rec := run(t, Config{Trace: tr(), NodeEvents: events, JobRequeue: true})
		want := []life{
			{"wide", 150, 150, 250, "COMPLETED", "n1,n2", 1},
			{"small", 10, 30, 50, "COMPLETED", "n1", 0},
			{"onb", 10, 60, 70, "COMPLETED", "n2", 0},
		}
		if d := cmp.Diff(want, lives(rec)); d != "" {
			t.Errorf("outcomes (-want +got):\n%s", d)
		}
		wantRuns := []RunSegment{{Job: 0, Start: 0, End: 30, State: NodeFail,
			Alloc: AllocsOf([]NodeAlloc{{Node: 0, GPUs: 4, CPUs: 4}, {Node: 1, GPUs: 4, CPUs: 4}})}}
		if d := cmp.Diff(wantRuns, rec.Runs); d != "" {
			t.Errorf("runs (-want +got):\n%s", d)
		}
	})
	t.Run("drain", func(t *testing.T) {
		// Draining n2 at 30 lets wide finish [0,100). The drain lifts
		// at 60, but wide holds both nodes until 100: then small gets n1
		// [100,120) and onb n2 [100,110).
		drain := []NodeEvent{{At: 30, Node: 1, Down: true, Drain: true}, {At: 60, Node: 1}}
		rec := run(t, Config{Trace: tr(), NodeEvents: drain})
		want := []life{
			{"wide", 0, 0, 100, "COMPLETED", "n1,n2", 0},
			{"small", 10, 100, 120, "COMPLETED", "n1", 0},
			{"onb", 10, 100, 110, "COMPLETED", "n2", 0},
		}
		if d := cmp.Diff(want, lives(rec)); d != "" {
			t.Errorf("outcomes (-want +got):\n%s", d)
		}
		// With the drain lasting until 200, onb waits for it although n2
		// is idle from 100: [200,210).
		drain[1].At = 200
		rec = run(t, Config{Trace: tr(), NodeEvents: drain})
		if got := lives(rec)[2]; got.Start != 200 || got.End != 210 {
			t.Errorf("onb under a long drain = %+v, want [200,210)", got)
		}
		wantEv := []NodeEvent{{At: 30, Node: 1, Down: true, Drain: true}, {At: 200, Node: 1}}
		if d := cmp.Diff(wantEv, rec.NodeEvents); d != "" {
			t.Errorf("node events (-want +got):\n%s", d)
		}
	})
	t.Run("bad node", func(t *testing.T) {
		_, err := Run(Config{Cluster: twoNodes(), Trace: tr(), Policy: &lgreedy{}, NodeEvents: []NodeEvent{{At: 5, Node: 9, Down: true}}})
		if err == nil || !strings.Contains(err.Error(), "node index 9 out of range") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestDownNodeRefusedInPlan(t *testing.T) {
	// A policy that ignores the node's zero free state and places a job
	// on a down node is stopped.
	tr := &workload.Trace{Jobs: []workload.Job{job("x", 10, 10, 10, 4)}}
	bad := &greedy{bad: func(v View) Plan {
		return Plan{Starts: []Start{{Job: v.Pending()[0].Ref, Alloc: []NodeAlloc{{Node: 1, GPUs: 4, CPUs: 4}}}}}
	}}
	_, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: bad, NodeEvents: []NodeEvent{{At: 0, Node: 1, Down: true}}})
	if err == nil || !strings.Contains(err.Error(), "policy greedy: job x at t=10: node n2 is out of service") {
		t.Fatalf("err = %v", err)
	}
}

// manyJobs is a trace of n 1-GPU to 4-GPU jobs, some requeueable, some
// with checkpoints, arriving over time, for the randomized tests.
func manyJobs(seed uint64, n int) *workload.Trace {
	rng := rand.New(rand.NewPCG(seed, 7))
	tr := &workload.Trace{}
	var at Time
	for i := range n {
		at += Time(rng.IntN(200))
		j := job(fmt.Sprint(i), at, Time(1+rng.IntN(2000)), Time(100+rng.IntN(2000)), int32(1+rng.IntN(4)))
		j.Requeue = rng.IntN(2) == 0
		if rng.IntN(3) == 0 {
			j.CheckpointInterval = int32(50 + rng.IntN(300))
		}
		if rng.IntN(4) == 0 {
			j.Request.Nodes = 2
			j.Request.GPUs *= 2
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

func TestFailureModelDeterminism(t *testing.T) {
	cfg := func(seed uint64) Config {
		return Config{Trace: manyJobs(3, 200), Seed: seed, Failures: &FailureModel{MTBF: 20000, MTTR: 1500}}
	}
	a, b, c := run(t, cfg(1)), run(t, cfg(1)), run(t, cfg(2))
	if d := cmp.Diff(a, b); d != "" {
		t.Fatalf("same seed, different records:\n%s", d)
	}
	if len(a.NodeEvents) < 4 || len(a.Runs) == 0 {
		t.Fatalf("seed 1: %d node events, %d interrupted runs; want failures that hit jobs", len(a.NodeEvents), len(a.Runs))
	}
	if cmp.Equal(a.NodeEvents, c.NodeEvents) {
		t.Errorf("seeds 1 and 2 drew the same failures: %v", a.NodeEvents)
	}
	// Failures alternate down/up per node, and the run stops with the
	// last job: no node event after it.
	last := map[int32]bool{}
	for _, ev := range a.NodeEvents {
		if last[ev.Node] == ev.Down {
			t.Errorf("node %d: %+v repeats its state", ev.Node, ev)
		}
		last[ev.Node] = ev.Down
		if ev.At > a.End {
			t.Errorf("node event %+v after the run's end %d", ev, a.End)
		}
	}
	// The policy's stream is not shifted by the failure stream: without
	// failures the run is the same as ever.
	plain := run(t, Config{Trace: manyJobs(3, 200), Seed: 1})
	again := run(t, Config{Trace: manyJobs(3, 200), Seed: 1, Failures: nil})
	if !cmp.Equal(plain, again) {
		t.Errorf("runs without failures differ")
	}
}

func TestTimeLimitSweep(t *testing.T) {
	// Both jobs start at 7 with limit 100. "over" would run 1000 s: its
	// limit passes at 107 and the 30 s sweep kills it at 120 (113 s,
	// TIMEOUT). "slack" runs 110 s, past its limit, but ends at 117
	// before the sweep at 120 finds it: COMPLETED. "exact" (limit 90,
	// runs 500 s) starts at 7 too: 97 → sweep at 120 as well.
	tr := func() *workload.Trace {
		return &workload.Trace{Jobs: []workload.Job{job("over", 7, 1000, 100, 1), job("slack", 7, 110, 100, 1), job("exact", 7, 500, 90, 1)}}
	}
	// The view gives running jobs their latest end: the sweep's kill
	// instant, 120, for all three (slack may end earlier; policies are
	// not told).
	ends := map[Time]bool{}
	probe := &lgreedy{preempt: func(v View) []Preemption {
		for _, r := range v.Running() {
			ends[r.End] = true
		}
		return nil
	}}
	pt := tr()
	wide := job("wide", 50, 1, 10, 8) // queued at 50 behind all three: a pass sees them running
	wide.Request.Nodes = 2
	pt.Jobs = append(pt.Jobs, wide)
	run(t, Config{Trace: pt, TimeLimitSweep: 30, Policy: probe})
	if !cmp.Equal(ends, map[Time]bool{120: true}) {
		t.Errorf("running jobs' ends in the view = %v, want only 120", ends)
	}
	rec := run(t, Config{Trace: tr(), TimeLimitSweep: 30})
	want := []life{
		{"over", 7, 7, 120, "TIMEOUT", "n1", 0},
		{"slack", 7, 7, 117, "COMPLETED", "n1", 0},
		{"exact", 7, 7, 120, "TIMEOUT", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("sweep 30 (-want +got):\n%s", d)
	}
	// Exact kill (sweep 0) with OverTimeLimit 60: killed at 7+100+60 =
	// 167; slack completes at 117; exact at 7+90+60 = 157.
	rec = run(t, Config{Trace: tr(), OverTimeLimit: 60})
	want = []life{
		{"over", 7, 7, 167, "TIMEOUT", "n1", 0},
		{"slack", 7, 7, 117, "COMPLETED", "n1", 0},
		{"exact", 7, 7, 157, "TIMEOUT", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("over time limit 60 (-want +got):\n%s", d)
	}
	// The textbook default: killed exactly at the limit.
	rec = run(t, Config{Trace: tr()})
	if got := lives(rec)[0]; got.End != 107 || got.State != "TIMEOUT" {
		t.Errorf("default: over = %+v, want TIMEOUT at 107", got)
	}
}

// disjoint is two nodes in two disjoint partitions: n1 in a, n2 in b.
func disjoint() *hwmodels.Cluster {
	return &hwmodels.Cluster{
		Name: "d",
		Nodes: []hwmodels.Node{
			{Name: "n1", GPUs: 4, GPUType: "h100", CPUs: 32, MemMB: 262144, Partitions: 1},
			{Name: "n2", GPUs: 4, GPUType: "h100", CPUs: 32, MemMB: 262144, Partitions: 2},
		},
		Partitions: []hwmodels.Partition{
			{Name: "a", Nodes: []int32{0}, Default: true},
			{Name: "b", Nodes: []int32{1}},
		},
	}
}

func TestMultiPartition(t *testing.T) {
	// blocker holds n1 (partition a) [0,100). m (-p a,b) cannot start in
	// a but can in b: it starts at once on n2 and is recorded in b. m2
	// (-p b,a) arrives at 5 with n2 taken by m until 50 and n1 by blocker
	// until 100: it starts in b when m ends, at 50. n (-p nosuch,b) runs
	// in b (the partition the cluster lacks is left out) after m2.
	m := job("m", 0, 50, 100, 4)
	m.Partition = "a,b"
	m2 := job("m2", 5, 10, 100, 4)
	m2.Partition = "b,a"
	n := job("n", 5, 10, 100, 4)
	n.Partition = "nosuch,b"
	tr := &workload.Trace{Jobs: []workload.Job{job("blocker", 0, 100, 200, 4), m, m2, n}}
	rec := run(t, Config{Cluster: disjoint(), Trace: tr})
	want := []life{
		{"blocker", 0, 0, 100, "COMPLETED", "n1", 0},
		{"m", 0, 0, 50, "COMPLETED", "n2", 0},
		{"m2", 5, 50, 60, "COMPLETED", "n2", 0},
		{"n", 5, 60, 70, "COMPLETED", "n2", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	if p := []int32{rec.Jobs[1].Part, rec.Jobs[2].Part, rec.Jobs[3].Part}; !cmp.Equal(p, []int32{1, 1, 1}) {
		t.Errorf("partitions of m, m2, n = %v, want b (1) for each", p)
	}

	// An allocation that no single partition of the job holds is refused.
	w := job("w", 0, 10, 10, 8)
	w.Request.Nodes = 2
	w.Partition = "a,b"
	bad := &greedy{bad: func(v View) Plan {
		return Plan{Starts: []Start{{Job: 0, Alloc: []NodeAlloc{{Node: 0, GPUs: 4, CPUs: 4}, {Node: 1, GPUs: 4, CPUs: 4}}}}}
	}}
	// In disjoint() w could never run (no partition has two nodes) and
	// would be rejected, so b gets both nodes: w may run only in b.
	c := disjoint()
	c.Nodes[0].Partitions = 3
	c.Partitions[1].Nodes = []int32{0, 1}
	w.Partition = "a,b"
	rec, err := Run(Config{Cluster: c, Trace: &workload.Trace{Jobs: []workload.Job{w}}, Policy: bad, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Jobs[0].Part != 1 || rec.Jobs[0].State != Completed {
		t.Errorf("w: part %d state %v, want b COMPLETED", rec.Jobs[0].Part, rec.Jobs[0].State)
	}
	c.Nodes[0].Partitions = 1
	c.Partitions[1].Nodes = []int32{1}
	c.Partitions[0].Nodes = []int32{0}
	// A spread job of 4 GPUs fits either partition, but not both at once.
	w.Request = workload.Request{GPUs: 4, CPUs: 4}
	split := &greedy{bad: func(v View) Plan {
		return Plan{Starts: []Start{{Job: 0, Alloc: []NodeAlloc{{Node: 0, GPUs: 2, CPUs: 2}, {Node: 1, GPUs: 2, CPUs: 2}}}}}
	}}
	_, err = Run(Config{Cluster: c, Trace: &workload.Trace{Jobs: []workload.Job{w}}, Policy: split})
	if err == nil || !strings.Contains(err.Error(), "not eligible (partition a,b") {
		t.Fatalf("err = %v", err)
	}
}

func TestAdvanceReservation(t *testing.T) {
	// Maintenance on n1 for [100,200). twoNodes, lgreedy (which skips
	// nodes whose window a job's limit would reach into).
	resv := []AdvanceReservation{{Name: "maint", Start: 100, End: 200, Nodes: []int32{0}}}
	// long (limit 150, 4 GPUs) at 0 would overlap the window on n1, so
	// it takes n2: [0,120). fits (limit 100) on n1 ends by 100: [0,90).
	// late (limit 50) at 95 finds n2 busy and n1's window 5 s away: it
	// waits for n2, free at 120: [120,150).
	tr := &workload.Trace{Jobs: []workload.Job{
		job("long", 0, 120, 150, 4), job("fits", 0, 90, 100, 4), job("late", 95, 30, 50, 4),
	}}
	rec := run(t, Config{Trace: tr, Reservations: resv})
	want := []life{
		{"long", 0, 0, 120, "COMPLETED", "n2", 0},
		{"fits", 0, 0, 90, "COMPLETED", "n1", 0},
		{"late", 95, 120, 150, "COMPLETED", "n2", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}

	// With n2 reserved too, late waits for the window's end at 200; the
	// controller runs a pass then although nothing else happens.
	resv[0].Nodes = []int32{0, 1}
	// long's limit is now 100: it ends by the window and takes n1
	// [0,100); fits takes n2 [0,90).
	tr.Jobs[0].TimeLimit = 100
	tr.Jobs[0].Runtime = 100
	rec = run(t, Config{Trace: tr, Reservations: resv})
	want = []life{
		{"long", 0, 0, 100, "COMPLETED", "n1", 0},
		{"fits", 0, 0, 90, "COMPLETED", "n2", 0},
		{"late", 95, 200, 230, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("both nodes reserved (-want +got):\n%s", d)
	}

	// A policy that ignores the window is stopped.
	bad := &greedy{}
	_, err := Run(Config{Cluster: twoNodes(), Trace: &workload.Trace{Jobs: []workload.Job{job("x", 50, 10, 60, 4)}},
		Policy: bad, Reservations: resv})
	if err == nil || !strings.Contains(err.Error(), `policy greedy: job x at t=50: node n1 is reserved by "maint" for [100, 200)`) {
		t.Fatalf("err = %v", err)
	}
}

func TestReservationsView(t *testing.T) {
	// The view lists the windows that have not ended, by start.
	var seen [][]string
	probe := &greedy{bad: func(v View) Plan {
		var names []string
		for _, r := range v.Reservations() {
			names = append(names, r.Name)
		}
		seen = append(seen, names)
		return Plan{}
	}}
	resv := []AdvanceReservation{
		{Name: "b", Start: 50, End: 60, Nodes: []int32{1}},
		{Name: "a", Start: 10, End: 30, Nodes: []int32{0}},
	}
	tr := &workload.Trace{Jobs: []workload.Job{job("x", 0, 1, 1, 1), job("y", 40, 1, 1, 1), job("z", 70, 1, 1, 1)}}
	if _, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: probe, Reservations: resv}); err != nil {
		t.Fatal(err)
	}
	// Passes at 0, 30 (a ends), 40, 60 (b ends), 70; x, y and z never
	// start (the probe starts nothing), so passes run while they wait.
	want := [][]string{{"a", "b"}, {"b"}, {"b"}, nil, nil}
	if d := cmp.Diff(want, seen); d != "" {
		t.Errorf("reservations seen (-want +got):\n%s", d)
	}
}

// dagTrace is a random trace of n jobs on twoNodes: some arrays with a
// throttle, and dependencies of every kind on earlier jobs or arrays.
func dagTrace(seed uint64, n int) *workload.Trace {
	rng := rand.New(rand.NewPCG(seed, 11))
	tr := &workload.Trace{}
	var at Time
	var ids []string
	types := []workload.DepType{workload.DepAfter, workload.DepAfterAny, workload.DepAfterOK, workload.DepAfterNotOK}
	for len(tr.Jobs) < n {
		at += Time(rng.IntN(60))
		var deps []workload.Dependency
		if len(ids) > 0 {
			for range rng.IntN(3) {
				deps = append(deps, workload.Dependency{Type: types[rng.IntN(len(types))], JobID: ids[rng.IntN(len(ids))]})
			}
		}
		mk := func(id string) workload.Job {
			lim := Time(50 + rng.IntN(300))
			j := job(id, at, Time(rng.IntN(400)), lim, int32(1+rng.IntN(4)))
			j.Deps = deps
			j.Requeue = rng.IntN(2) == 0
			j.CheckpointInterval = int32(rng.IntN(2) * 40)
			return j
		}
		id := fmt.Sprint(len(tr.Jobs))
		if rng.IntN(5) == 0 { // an array of 2 to 4 tasks
			tasks, thr := 2+rng.IntN(3), int32(rng.IntN(3))
			for k := range tasks {
				j := mk(fmt.Sprintf("%s_%d", id, k))
				j.ArrayJobID, j.ArrayTaskID, j.ArrayThrottle = id, int32(k), thr
				tr.Jobs = append(tr.Jobs, j)
			}
		} else {
			tr.Jobs = append(tr.Jobs, mk(id))
		}
		ids = append(ids, id)
	}
	return tr
}

// TestDependencyProperty checks on random DAGs, with node failures and
// requeues, that no job starts before its dependencies are satisfied (as
// the record shows them), that jobs whose dependency failed never start,
// that resources are conserved (Check), and that the same seed gives the
// same record.
func TestDependencyProperty(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		tr := dagTrace(seed, 40)
		cfg := Config{Trace: tr, Seed: seed, Failures: &FailureModel{MTBF: 3000, MTTR: 300}, JobRequeue: seed%2 == 0}
		rec := run(t, cfg)
		if again := run(t, cfg); !cmp.Equal(rec, again) {
			t.Fatalf("seed %d: records differ between two runs", seed)
		}
		firstStart := map[JobRef]Time{}
		for _, r := range rec.Runs {
			if _, ok := firstStart[r.Job]; !ok {
				firstStart[r.Job] = r.Start
			}
		}
		for i := range rec.Jobs {
			r := &rec.Jobs[i]
			if _, ok := firstStart[r.Ref]; !ok && r.Start != U {
				firstStart[r.Ref] = r.Start
			}
		}
		// begun: when the job started first or ended without starting;
		// ended: when it ended for good (U while it has not).
		begun := func(ref JobRef) Time {
			if s, ok := firstStart[ref]; ok {
				return s
			}
			switch r := &rec.Jobs[ref]; r.State {
			case Rejected:
				return tr.Jobs[ref].Submit
			case Cancelled:
				return r.End
			}
			return U
		}
		ended := func(ref JobRef) Time {
			switch r := &rec.Jobs[ref]; r.State {
			case Unfinished:
				return U
			case Rejected:
				return tr.Jobs[ref].Submit
			default:
				return r.End
			}
		}
		members := func(id string) []JobRef {
			var m []JobRef
			for k := range tr.Jobs {
				if tr.Jobs[k].ID == id || tr.Jobs[k].ArrayJobID == id {
					m = append(m, JobRef(k))
				}
			}
			return m
		}
		for i := range tr.Jobs {
			child := JobRef(i)
			start, started := firstStart[child]
			for _, d := range tr.Jobs[i].Deps {
				// when is the time it was satisfied; never that it cannot be.
				when, never := Time(0), false
				okAll := true
				for _, m := range members(d.JobID) {
					var at Time
					switch d.Type {
					case workload.DepAfter:
						at = begun(m)
					default:
						at = ended(m)
						if rec.Jobs[m].State != Completed {
							okAll = false
							if d.Type == workload.DepAfterOK && at != U {
								never = true
							}
						}
					}
					if at == U {
						when = U
					} else if when != U {
						when = max(when, at)
					}
				}
				if d.Type == workload.DepAfterNotOK && when != U && okAll {
					never = true
				}
				where := fmt.Sprintf("seed %d: job %s (%v on %s)", seed, tr.Jobs[i].ID, d.Type, d.JobID)
				switch {
				case !started:
				case never:
					t.Errorf("%s: started at %d although the dependency failed", where, start)
				case when == U || start < when:
					t.Errorf("%s: started at %d, dependency satisfied at %d", where, start, when)
				case rec.Jobs[i].Eligible < when && rec.Jobs[i].Requeues == 0:
					t.Errorf("%s: eligible at %d, dependency satisfied at %d", where, rec.Jobs[i].Eligible, when)
				}
			}
		}
	}
}

func TestTimeLimitSweepPhase(t *testing.T) {
	// As TestTimeLimitSweep, with the checks at 29 + 30k (slurmctld
	// started 1 s before the replay's time 0: timeout-deps-array/run1).
	// "over" (start 7, limit 100) passes its limit at 107: the check at
	// 119 kills it (112 s). "slack" runs 110 s and would end at 117, before
	// that check: COMPLETED. "exact" (limit 90) passes it at 97: killed
	// at 119 too. "late" (start 7, limit 112) passes it at 119 exactly:
	// the check at 119 finds it at its limit and kills it.
	tr := &workload.Trace{Jobs: []workload.Job{job("over", 7, 1000, 100, 1), job("slack", 7, 110, 100, 1),
		job("exact", 7, 500, 90, 1), job("late", 7, 500, 112, 1)}}
	rec := run(t, Config{Trace: tr, TimeLimitSweep: 30, TimeLimitSweepPhase: 29})
	want := []life{
		{"over", 7, 7, 119, "TIMEOUT", "n1", 0},
		{"slack", 7, 7, 117, "COMPLETED", "n1", 0},
		{"exact", 7, 7, 119, "TIMEOUT", "n1", 0},
		{"late", 7, 7, 119, "TIMEOUT", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("sweep 30 phase 29 (-want +got):\n%s", d)
	}
	if _, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: &lgreedy{}, TimeLimitSweep: 30, TimeLimitSweepPhase: 30}); err == nil {
		t.Errorf("phase 30 with sweep 30: no error")
	}
}

func TestKillWait(t *testing.T) {
	// timeout-deps-array in small: "t" (n1's 4 GPUs, start 0, limit 60,
	// runs 120) is killed by the check at 89 (sweep 30, phase 29) and,
	// with KillWait 3, holds n1 until 92. "any" (afterany:t) becomes
	// eligible at 92; "wait" (4 GPUs, submitted at 5, n2 held by "long"
	// until 200) fits only n1 and waits for 92 too. The queue is in submit
	// order: "any" (submitted at 1) takes n1 [92, 102), then "wait"
	// [102, 112). t's record keeps the kill, 89, as its End.
	tj := job("t", 0, 120, 60, 4)
	long := job("long", 0, 200, 300, 4)
	wait := job("wait", 5, 10, 60, 4)
	anyj := job("any", 1, 10, 60, 4)
	anyj.Deps = dep(workload.DepAfterAny, "t")
	tr := &workload.Trace{Jobs: []workload.Job{tj, long, anyj, wait}}
	ends := map[Time]bool{}
	probe := &lgreedy{preempt: func(v View) []Preemption {
		for _, r := range v.Running() {
			if r.Ref == 0 {
				ends[r.End] = true
			}
		}
		return nil
	}}
	rec := run(t, Config{Trace: tr, TimeLimitSweep: 30, TimeLimitSweepPhase: 29, KillWait: 3, Policy: probe})
	want := []life{
		{"t", 0, 0, 89, "TIMEOUT", "n1", 0},
		{"long", 0, 0, 200, "COMPLETED", "n2", 0},
		{"any", 92, 92, 102, "COMPLETED", "n1", 0},
		{"wait", 5, 102, 112, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("kill wait 3 (-want +got):\n%s", d)
	}
	// The view's latest end of t is the release: 89 + 3.
	if !cmp.Equal(ends, map[Time]bool{92: true}) {
		t.Errorf("t's ends in the view = %v, want only 92", ends)
	}
	// Without KillWait, n1 is free at the kill: "any" at 89.
	rec = run(t, Config{Trace: tr, TimeLimitSweep: 30, TimeLimitSweepPhase: 29})
	if got := lives(rec)[2]; got.Start != 89 || got.Eligible != 89 {
		t.Errorf("no kill wait: any = %+v, want eligible and started at 89", got)
	}
}

func TestPreemptKillWait(t *testing.T) {
	// twoNodes: "blk" holds n2 [0,1000). "lo" (n1's 4 GPUs, --requeue,
	// runs 1000) starts at 0 and is preempted in REQUEUE mode at 10 for
	// "hi" (4 GPUs, submitted at 10, runs 50). With KillWait 3 lo is
	// killed at 10 (its run segment ends there) but holds n1 until 13,
	// when its termination completes and its requeue hold of 120 s
	// starts (Slurm's batch_requeue_fini): eligible at 133. hi starts at
	// 13 and ends at 63; lo reruns at 133 on n1 [133,1133).
	// Run again with lo not requeueable: it ends PREEMPTED with End 10,
	// and n1 is free at 13 all the same.
	lo := job("lo", 0, 1000, 1000, 4)
	lo.Requeue = true
	blk := job("blk", 0, 1000, 1000, 4)
	hi := job("hi", 10, 50, 100, 4)
	preemptAt10 := func(mode PreemptMode) *lgreedy {
		return &lgreedy{preempt: func(v View) []Preemption {
			if v.Now() != 10 {
				return nil
			}
			for _, r := range v.Running() {
				if r.Ref == 0 {
					return []Preemption{{Job: 0, Mode: mode}}
				}
			}
			return nil
		}}
	}
	tr := &workload.Trace{Jobs: []workload.Job{lo, blk, hi}}
	rec := run(t, Config{Trace: tr, KillWait: 3, Policy: preemptAt10(PreemptRequeue)})
	want := []life{
		{"lo", 133, 133, 1133, "COMPLETED", "n1", 1},
		{"blk", 0, 0, 1000, "COMPLETED", "n2", 0},
		{"hi", 10, 13, 63, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("requeue (-want +got):\n%s", d)
	}
	if len(rec.Runs) != 1 || rec.Runs[0].Start != 0 || rec.Runs[0].End != 10 || rec.Runs[0].State != Preempted {
		t.Errorf("runs = %+v, want lo's [0,10) PREEMPTED", rec.Runs)
	}
	lo.Requeue = false
	tr = &workload.Trace{Jobs: []workload.Job{lo, blk, hi}}
	rec = run(t, Config{Trace: tr, KillWait: 3, Policy: preemptAt10(PreemptRequeue)})
	want = []life{
		{"lo", 0, 0, 10, "PREEMPTED", "n1", 0},
		{"blk", 0, 0, 1000, "COMPLETED", "n2", 0},
		{"hi", 10, 13, 63, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("cancel (-want +got):\n%s", d)
	}
	// Without KillWait hi starts at the preemption.
	rec = run(t, Config{Trace: tr, Policy: preemptAt10(PreemptRequeue)})
	if got := lives(rec)[2]; got.Start != 10 {
		t.Errorf("no kill wait: hi = %+v, want a start at 10", got)
	}
	// lo's own kill wait (workload.Job.KillWait, one more than its
	// seconds) replaces the run's: 2 s, hi starts at 12; 0 s, at 11, not
	// in the plan that preempts (no KillWait at all: 10): the end comes
	// before the passes of the next second.
	for kw, start := range map[int16]Time{1: 11, 3: 12} {
		lo.KillWait = kw
		tr = &workload.Trace{Jobs: []workload.Job{lo, blk, hi}}
		rec = run(t, Config{Trace: tr, KillWait: 3, Policy: preemptAt10(PreemptRequeue)})
		if got := lives(rec); got[2].Start != start || got[0].End != 10 {
			t.Errorf("lo.KillWait %d: lo = %+v, hi = %+v, want lo ending at 10 and hi starting at %d", kw, got[0], got[2], start)
		}
	}
}

func TestKillWaitKilled(t *testing.T) {
	// twoNodes: "small" (n1's 4 GPUs, start 0, limit 60, runs 120) is
	// killed by the check at 89 (sweep 30, phase 29) and, with KillWait 3,
	// holds n1 until 92; "big" (8 GPUs, both nodes, submitted at 1) waits
	// for it. The view marks small Killed from the kill: the passes of
	// every second see it unmarked up to 88 and marked at 89-91; big
	// starts at 92. A preempted job is not marked (its policy knows).
	small := job("small", 0, 120, 60, 4)
	big := job("big", 1, 10, 60, 8)
	big.Request.Nodes = 2
	tr := &workload.Trace{Jobs: []workload.Job{small, big}}
	killed := map[Time]bool{}
	probe := &lgreedy{preempt: func(v View) []Preemption {
		for _, r := range v.Running() {
			if r.Ref == 0 && v.Now() >= 87 {
				killed[v.Now()] = r.Killed
			}
		}
		return nil
	}, tm: Timing{Passes: []Pass{{Name: "pass", OnEvent: true}, {Name: "tick", Period: 1}}}}
	rec := run(t, Config{Trace: tr, TimeLimitSweep: 30, TimeLimitSweepPhase: 29, KillWait: 3, Policy: probe})
	want := []life{
		{"small", 0, 0, 89, "TIMEOUT", "n1", 0},
		{"big", 1, 92, 102, "COMPLETED", "n1,n2", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("kill wait 3 (-want +got):\n%s", d)
	}
	if !cmp.Equal(killed, map[Time]bool{87: false, 88: false, 89: true, 90: true, 91: true}) {
		t.Errorf("small's Killed in the view by pass: %v, want false to 88 and true from the kill at 89", killed)
	}

	// Preempted at 10 (CANCEL) with grace 0 and KillWait 3: it keeps n1
	// until 13, not marked.
	small.TimeLimit = 1000
	tr = &workload.Trace{Jobs: []workload.Job{small, big}}
	marked := false
	rec = run(t, Config{Trace: tr, KillWait: 3, Policy: &lgreedy{preempt: func(v View) []Preemption {
		for _, r := range v.Running() {
			marked = marked || r.Killed
		}
		if v.Now() == 10 && len(v.Running()) > 0 && v.Running()[0].Ref == 0 {
			return []Preemption{{Job: 0, Mode: PreemptCancel}}
		}
		return nil
	}, tm: Timing{Passes: []Pass{{Name: "pass", OnEvent: true}, {Name: "tick", Period: 1}}}}})
	want = []life{
		{"small", 0, 0, 10, "PREEMPTED", "n1", 0},
		{"big", 1, 13, 23, "COMPLETED", "n1,n2", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("preempted (-want +got):\n%s", d)
	}
	if marked {
		t.Error("a preempted job is marked Killed in the view")
	}
}

// endNodes is lgreedy noting how many nodes each job's end names.
type endNodes struct {
	*lgreedy
	n map[JobRef]int
}

func (e *endNodes) JobEnded(ref JobRef, at Time, alloc []NodeAlloc, st State) {
	e.n[ref] = len(alloc)
	e.lgreedy.JobEnded(ref, at, alloc, st)
}

func TestKillWaitBatchHost(t *testing.T) {
	// twoNodes: "big" (both nodes' 4 GPUs, start 0, limit 60, runs 120)
	// is killed by the check at 89 (sweep 30, phase 29). With KillWait 3
	// only its batch host, n1 (the lower index), is held until 92; n2 is
	// free at the kill. "one" (4 GPUs, submitted at 5) takes n2 at 89
	// [89, 99); "two" (4 GPUs, submitted at 6) takes n1 at 92 [92, 102).
	// big's record keeps both nodes and the kill, 89, as its End. In the
	// view from 89 to 92 big holds n1 alone.
	big := job("big", 0, 120, 60, 8)
	big.Request.Nodes = 2
	one := job("one", 5, 10, 60, 4)
	two := job("two", 6, 10, 60, 4)
	tr := &workload.Trace{Jobs: []workload.Job{big, one, two}}
	held := map[Time]int{}
	probe := &lgreedy{preempt: func(v View) []Preemption {
		for _, r := range v.Running() {
			if r.Ref == 0 {
				held[v.Now()] = len(r.Alloc)
			}
		}
		return nil
	}}
	ends := &endNodes{lgreedy: probe, n: map[JobRef]int{}}
	rec := run(t, Config{Trace: tr, TimeLimitSweep: 30, TimeLimitSweepPhase: 29, KillWait: 3, Policy: ends})
	if ends.n[0] != 2 {
		t.Errorf("big's end told the policy of %d nodes, want its whole allocation, 2 (it held 1 after the kill)", ends.n[0])
	}
	want := []life{
		{"big", 0, 0, 89, "TIMEOUT", "n1,n2", 0},
		{"one", 5, 89, 99, "COMPLETED", "n2", 0},
		{"two", 6, 92, 102, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("kill wait 3 (-want +got):\n%s", d)
	}
	if !cmp.Equal(held, map[Time]int{5: 2, 6: 2, 89: 1}) {
		t.Errorf("big's nodes in the view by pass: %v, want 2 before the kill at 89 and 1 from it", held)
	}

	// Preempted at 10 (CANCEL) by the pass that one's and two's submits
	// ask for, with KillWait 3: n2 is free at 10 and the pass the kill
	// asks for starts "one" there [10, 20); n1 at 13 [13, 23) for "two".
	// big's record ends PREEMPTED at 10 on both nodes.
	big.TimeLimit, one.Submit, two.Submit = 1000, 10, 10
	tr = &workload.Trace{Jobs: []workload.Job{big, one, two}}
	rec = run(t, Config{Trace: tr, KillWait: 3, Policy: &lgreedy{preempt: func(v View) []Preemption {
		if v.Now() == 10 && len(v.Running()) > 0 && v.Running()[0].Ref == 0 {
			return []Preemption{{Job: 0, Mode: PreemptCancel}}
		}
		return nil
	}}})
	want = []life{
		{"big", 0, 0, 10, "PREEMPTED", "n1,n2", 0},
		{"one", 10, 10, 20, "COMPLETED", "n2", 0},
		{"two", 10, 13, 23, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("preempted, kill wait 3 (-want +got):\n%s", d)
	}

	// The same with big running 11 s: it would end on its own at 11,
	// before KillWait is over (13), yet the kill at 10 frees n2 at once:
	// "one" [10, 20) there. big's end at 11 frees n1 (PREEMPTED, its
	// record ending at the kill, 10): "two" [11, 21). Were n2 held until
	// big's end, "one" would start at 11.
	big.Runtime = 11
	tr = &workload.Trace{Jobs: []workload.Job{big, one, two}}
	rec = run(t, Config{Trace: tr, KillWait: 3, Policy: &lgreedy{preempt: func(v View) []Preemption {
		if v.Now() == 10 && len(v.Running()) > 0 && v.Running()[0].Ref == 0 {
			return []Preemption{{Job: 0, Mode: PreemptCancel}}
		}
		return nil
	}}})
	want = []life{
		{"big", 0, 0, 10, "PREEMPTED", "n1,n2", 0},
		{"one", 10, 10, 20, "COMPLETED", "n2", 0},
		{"two", 10, 11, 21, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("preempted within kill wait of its end (-want +got):\n%s", d)
	}
}

func TestEndsAfterPasses(t *testing.T) {
	// twoNodes: "a" holds n1 [0,10), "b" n2 [0,100). "c" (4 GPUs,
	// submitted at 5) waits for a. With EndsAfterPasses a's end at 10 comes
	// after the pass of instant 10, and the pass it asks for is at 11: c
	// starts at 11 (a's record still ends at 10). "d" (4 GPUs) submitted
	// at 10 is seen by the pass at 10, before a's end: nothing fits then;
	// at 11 c, submitted first, takes n1, and d waits for c's end at 21,
	// whose pass comes at 22. Without the option: c at 10, d at 20.
	tr := &workload.Trace{Jobs: []workload.Job{job("a", 0, 10, 100, 4), job("b", 0, 100, 200, 4),
		job("c", 5, 10, 100, 4), job("d", 10, 10, 100, 4)}}
	late := &lgreedy{tm: Timing{Passes: onEvents.Passes, EndsAfterPasses: true}}
	rec := run(t, Config{Trace: tr, Policy: late})
	want := []life{
		{"a", 0, 0, 10, "COMPLETED", "n1", 0},
		{"b", 0, 0, 100, "COMPLETED", "n2", 0},
		{"c", 5, 11, 21, "COMPLETED", "n1", 0},
		{"d", 10, 22, 32, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("ends after pass (-want +got):\n%s", d)
	}
	rec = run(t, Config{Trace: tr})
	if got := lives(rec); got[2].Start != 10 || got[3].Start != 20 {
		t.Errorf("default: c %+v, d %+v; want starts 10 and 20", got[2], got[3])
	}
}

func TestEndEarly(t *testing.T) {
	// TestEndsAfterPasses's jobs with a's end early in its second
	// (workload.Job.EndEarly): under EndsAfterPasses it still comes before
	// the pass of instant 10, so c, submitted first, starts at 10; c's own
	// end at 20 is late, after the pass of 20: d starts at 21.
	tr := &workload.Trace{Jobs: []workload.Job{job("a", 0, 10, 100, 4), job("b", 0, 100, 200, 4),
		job("c", 5, 10, 100, 4), job("d", 10, 10, 100, 4)}}
	tr.Jobs[0].EndEarly = true
	late := &lgreedy{tm: Timing{Passes: onEvents.Passes, EndsAfterPasses: true}}
	rec := run(t, Config{Trace: tr, Policy: late})
	want := []life{
		{"a", 0, 0, 10, "COMPLETED", "n1", 0},
		{"b", 0, 0, 100, "COMPLETED", "n2", 0},
		{"c", 5, 10, 20, "COMPLETED", "n1", 0},
		{"d", 10, 21, 31, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("early end (-want +got):\n%s", d)
	}
}

func TestEndAtLimit(t *testing.T) {
	// "a" (n1, limit 100, runs 1000) starts at 0; the 30 s sweep kills
	// it at 120. "b" holds n2. "p1" (submitted at 50) and "p2" (at 110)
	// need both nodes and only make passes happen. With EndAtLimit the
	// View gives a's End as Slurm's end_time: 100 at 50, and at 110, past
	// it, 111 (now + 1); without, its latest end: the kill, 120.
	wide := func(id string, at Time) workload.Job {
		j := job(id, at, 10, 10, 8)
		j.Request.Nodes = 2
		return j
	}
	tr := &workload.Trace{Jobs: []workload.Job{job("a", 0, 1000, 100, 4), job("b", 0, 1000, 1000, 4), wide("p1", 50), wide("p2", 110)}}
	for _, tc := range []struct {
		endAtLimit bool
		want       map[Time]Time
	}{
		{true, map[Time]Time{50: 100, 110: 111}},
		{false, map[Time]Time{50: 120, 110: 120}},
	} {
		seen := map[Time]Time{}
		probe := &lgreedy{preempt: func(v View) []Preemption {
			for _, r := range v.Running() {
				if r.Ref == 0 {
					seen[v.Now()] = r.End
				}
			}
			return nil
		}, tm: Timing{Passes: onEvents.Passes, EndAtLimit: tc.endAtLimit}}
		rec := run(t, Config{Trace: tr, TimeLimitSweep: 30, Policy: probe})
		if d := cmp.Diff(tc.want, seen); d != "" {
			t.Errorf("EndAtLimit %v: a's End in the view by pass (-want +got):\n%s", tc.endAtLimit, d)
		}
		if got := lives(rec)[0]; got.End != 120 || got.State != "TIMEOUT" {
			t.Errorf("EndAtLimit %v: a = %+v, want TIMEOUT at 120", tc.endAtLimit, got)
		}
	}
}

func TestAfterEndsPass(t *testing.T) {
	// TestEndsAfterPasses's jobs, c running 11 s, with a second OnEvent
	// pass that runs AfterEnds on a grid of Period 2, Phase 0: an end
	// late in an even second asks for it at its own instant, after the
	// ends. a ends at 10 (even): the pass at 10 runs before a's end (d,
	// submitted at 10, sees nothing free) and another after it, where c
	// starts; c ends at 21 (odd), so its pass is at 22, where d starts.
	// With Period 1 every end's pass is at its own instant (c at 10), but
	// c, started by the AfterEnds pass, ends just after that pass's phase
	// at 21, after the AfterEnds pass of 21 (classEndLast): d at 22. With
	// every end late and no AfterEnds pass: c at 11, ends at 22, d at 23.
	tr := &workload.Trace{Jobs: []workload.Job{job("a", 0, 10, 100, 4), job("b", 0, 100, 200, 4),
		job("c", 5, 11, 100, 4), job("d", 10, 10, 100, 4)}}
	for _, tc := range []struct {
		every  Time
		cStart Time
		dStart Time
		at10   []int // running jobs seen by the passes at 10
	}{{2, 10, 22, []int{2, 1}}, {1, 10, 22, []int{2, 1}}, {0, 11, 23, []int{2}}} {
		var at10 []int
		probe := &lgreedy{preempt: func(v View) []Preemption {
			if v.Now() == 10 {
				at10 = append(at10, len(v.Running()))
			}
			return nil
		}}
		probe.tm = Timing{Passes: onEvents.Passes, EndsAfterPasses: true}
		if tc.every > 0 {
			probe.tm.Passes = []Pass{onEvents.Passes[0], {Name: "after-ends", Period: tc.every, OnEvent: true, AfterEnds: true}}
		}
		got := lives(run(t, Config{Trace: tr, Policy: probe}))
		if got[2].Start != tc.cStart || got[3].Start != tc.dStart {
			t.Errorf("Period %d: c %+v, d %+v; want starts %d and %d", tc.every, got[2], got[3], tc.cStart, tc.dStart)
		}
		if !slices.Equal(at10, tc.at10) {
			t.Errorf("Period %d: the passes at 10 saw %v jobs running, want %v", tc.every, at10, tc.at10)
		}
	}
}

// TestHorizon checks that a run that cannot settle stops at its horizon:
// a job on both nodes runs 100 days, and each node fails every 20 days on
// average (repaired in an hour), so every run is cut short and the job is
// requeued for ever (MaxRequeue -1: no requeue limit; see
// TestMaxRequeue). The run stops at the default horizon (a year after
// the last submit) or at an explicit one, the job UNFINISHED with many
// NODE_FAIL runs and a note that names the horizon.
func TestHorizon(t *testing.T) {
	c := twoNodes()
	c.Partitions[0].MaxTime = 0
	long := job("long", 0, 100*86400, 101*86400, 8)
	long.Request.Nodes = 2
	tr := &workload.Trace{Jobs: []workload.Job{long}}
	if got := DefaultHorizon(tr); got != 365*86400 {
		t.Fatalf("DefaultHorizon = %d, want 365 days", got)
	}
	spread := []workload.Job{job("a", 1000, 10, 10, 1), job("b", 1000+200*86400, 10, 10, 1)}
	if got, want := DefaultHorizon(&workload.Trace{Jobs: spread}), Time(1000+200*86400+4*200*86400); got != want {
		t.Fatalf("DefaultHorizon = %d, want %d (four spans after the last submit)", got, want)
	}
	for _, tc := range []struct {
		horizon, end Time
	}{{0, 365 * 86400}, {40 * 86400, 40 * 86400}} {
		rec := run(t, Config{Cluster: c, Trace: tr, Seed: 7, JobRequeue: true, Horizon: tc.horizon, MaxRequeue: -1,
			Failures: &FailureModel{MTBF: 20 * 86400, MTTR: 3600}})
		if rec.End != tc.end || rec.Jobs[0].State != Unfinished {
			t.Fatalf("horizon %d: run ended at %d with the job %s; want %d, UNFINISHED", tc.horizon, rec.End, rec.Jobs[0].State, tc.end)
		}
		fails := 0
		for _, r := range rec.Runs {
			if r.State == NodeFail {
				fails++
			}
		}
		if fails < 2 || !strings.Contains(strings.Join(rec.Notes, "\n"), "stopped at its horizon") {
			t.Fatalf("horizon %d: %d node-failed runs, notes %q", tc.horizon, fails, rec.Notes)
		}
	}
}

// TestMaxRequeue: a job whose node keeps failing is held after
// MaxRequeue requeues, as slurmctld holds one past MAX_BATCH_REQUEUE.
// twoNodes; v (4 GPUs, runs 1000, --requeue) starts on n1 at 0; n1 is
// down [100,110), [300,310) and [500,510); the requeue hold is 120 s:
//
//	run 1 [0,100)   NODE_FAIL, requeue 1, eligible at 220
//	run 2 [220,300) NODE_FAIL, requeue 2, eligible at 420
//	run 3 [420,500) NODE_FAIL, requeue 3
//
// With MaxRequeue 3 the third requeue holds v (JobHoldMaxRequeue): it
// ends UNFINISHED, and the run stops after the repair at 510, the last
// event that is applied (it changes nothing for v). With the default (5), and with no limit, v reruns at 620
// and completes at 1620.
func TestMaxRequeue(t *testing.T) {
	v := job("v", 0, 1000, 1000, 4)
	v.Requeue = true
	var evs []NodeEvent
	for _, at := range []Time{100, 300, 500} {
		evs = append(evs, NodeEvent{At: at, Node: 0, Down: true}, NodeEvent{At: at + 10, Node: 0})
	}
	runs := []RunSegment{
		{Job: 0, Eligible: 0, Start: 0, End: 100, State: NodeFail},
		{Job: 0, Eligible: 220, Start: 220, End: 300, State: NodeFail},
		{Job: 0, Eligible: 420, Start: 420, End: 500, State: NodeFail},
	}
	for _, tc := range []struct {
		max  int32
		want life
		end  Time
	}{
		{3, life{"v", U, U, U, "UNFINISHED", "", 3}, 510},
		{0, life{"v", 620, 620, 1620, "COMPLETED", "n1", 3}, 1620},
		{-1, life{"v", 620, 620, 1620, "COMPLETED", "n1", 3}, 1620},
	} {
		rec := run(t, Config{Trace: &workload.Trace{Jobs: []workload.Job{v}}, NodeEvents: evs, MaxRequeue: tc.max})
		if got := lives(rec)[0]; got != tc.want || rec.End != tc.end {
			t.Errorf("MaxRequeue %d: %+v, run end %d; want %+v, %d", tc.max, got, rec.End, tc.want, tc.end)
		}
		var got []RunSegment
		for _, r := range rec.Runs {
			r.Alloc = Allocs{}
			got = append(got, r)
		}
		if d := cmp.Diff(runs, got); d != "" {
			t.Errorf("MaxRequeue %d: runs (-want +got):\n%s", tc.max, d)
		}
		held := tc.max == 3
		if r := rec.Jobs[0].Reason; held != (r == "JobHoldMaxRequeue") {
			t.Errorf("MaxRequeue %d: reason %q", tc.max, r)
		}
		if notes := strings.Join(rec.Notes, "\n"); held != strings.Contains(notes, "1 jobs were requeued 3 times and held (JobHoldMaxRequeue)") {
			t.Errorf("MaxRequeue %d: notes %q", tc.max, rec.Notes)
		}
	}
}

// TestMaxNodeEvents: a failure model cannot make Record.NodeEvents grow
// without bound. On twoNodes:
//   - a model expected to log more than MaxNodeEvents over the submit
//     span is refused at once: jobs submitted over 10,000 s, MTBF and
//     MTTR 60 s: about 2 × 2 × 10000 / 120 = 333 changes, over 100;
//   - a run whose log passes it stops with ErrLimit: one job (no submit
//     span), MTBF and MTTR 10 s, no requeue limit, MaxNodeEvents 50.
func TestMaxNodeEvents(t *testing.T) {
	tr := &workload.Trace{Jobs: []workload.Job{job("a", 0, 10, 10, 1), job("b", 10000, 10, 10, 1)}}
	_, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: &lgreedy{}, Seed: 1, MaxNodeEvents: 100,
		Failures: &FailureModel{MTBF: 60, MTTR: 60}})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "about 333 times over the 10000 s of the trace's submits, more than Config.MaxNodeEvents (100)") {
		t.Errorf("refused up front: err = %v", err)
	}
	long := job("long", 0, 900, 1000, 8)
	long.Requeue, long.Request.Nodes = true, 2
	_, err = Run(Config{Cluster: twoNodes(), Trace: &workload.Trace{Jobs: []workload.Job{long}}, Policy: &lgreedy{}, Seed: 1,
		MaxNodeEvents: 50, MaxRequeue: -1, Failures: &FailureModel{MTBF: 10, MTTR: 10}})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "node availability changed more than Config.MaxNodeEvents (50) times") {
		t.Errorf("stopped at run time: err = %v", err)
	}
}
