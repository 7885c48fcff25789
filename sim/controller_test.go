package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

// greedy is a test policy: it walks the queue in order and starts every job
// that fits on the lowest-numbered nodes, skipping those that do not (no
// reservations). It exists so the controller can be tested without
// importing policies.
type greedy struct{ bad func(v View) Plan }

func (g *greedy) Name() string                  { return "greedy" }
func (g *greedy) Begin(RunInfo) (Timing, error) { return onEvents, nil }

// onEvents is the Timing of a policy with one pass after every event.
var onEvents = Timing{Passes: []Pass{{Name: "pass", OnEvent: true}}}

func (g *greedy) JobStarted(JobRef, Time, []NodeAlloc)      {}
func (g *greedy) JobEnded(JobRef, Time, []NodeAlloc, State) {}
func (g *greedy) Schedule(_ PassSet, v View, _ *rand.Rand) Plan {
	if g.bad != nil {
		return g.bad(v)
	}
	free := append([]NodeState(nil), v.Nodes()...)
	nodes := v.Cluster().Nodes
	var plan Plan
	for _, p := range v.Pending() {
		need := Needed(&p.Req)
		var alloc []NodeAlloc
		for i := range nodes {
			if need == 0 {
				break
			}
			if !Eligible(&nodes[i], p.Part, p.Req.GPUType) {
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
	}
	return plan
}

// twoNodes is two nodes of 4 GPUs, 32 CPUs, 256 GiB in one partition
// (MaxTime 1000 s), and node n2 also in partition "b".
func twoNodes() *hwmodels.Cluster {
	return &hwmodels.Cluster{
		Name: "t",
		Nodes: []hwmodels.Node{
			{Name: "n1", GPUs: 4, GPUType: "h100", CPUs: 32, MemMB: 262144, Partitions: 1},
			{Name: "n2", GPUs: 4, GPUType: "a100", CPUs: 32, MemMB: 262144, Partitions: 3},
		},
		Partitions: []hwmodels.Partition{
			{Name: "a", Nodes: []int32{0, 1}, MaxTime: 1000, Default: true},
			{Name: "b", Nodes: []int32{1}},
		},
	}
}

func job(id string, submit, runtime, limit workload.Time, gpus int32) workload.Job {
	j := workload.NewJob(id)
	j.Submit, j.Runtime, j.TimeLimit = submit, runtime, limit
	j.Request = workload.Request{Nodes: 1, GPUs: gpus, CPUs: gpus}
	return j
}

type outcome struct {
	ID           string
	Start, End   Time
	State        string
	Nodes        string
	GPUs, Reason string
}

func outcomes(rec *Record) []outcome {
	var out []outcome
	for _, r := range rec.Jobs {
		var names []string
		for _, a := range r.Alloc.All() {
			names = append(names, rec.Cluster.Nodes[a.Node].Name)
		}
		reason := ""
		if r.Reason != "" {
			reason = "yes"
		}
		out = append(out, outcome{rec.Trace.Jobs[r.Ref].ID, r.Start, r.End, r.State.String(),
			strings.Join(names, ","), string(rune('0' + r.GPUs())), reason})
	}
	return out
}

func TestControllerLifecycle(t *testing.T) {
	cancelled := job("c", 0, 0, 100, 4)
	cancelled.CancelAfter = 5 // the user gave up after 5 s in the queue
	unknownPart := job("u", 3, 10, 100, 1)
	unknownPart.Partition = "nosuch"
	noLimit := job("nl", 3, 50, workload.Unknown, 1)
	multi := job("m", 40, 10, 20, 8)
	multi.Request.Nodes = 2
	spread := job("s", 40, 10, 20, 5)
	spread.Request.Nodes = 0
	tr := &workload.Trace{Jobs: []workload.Job{
		job("a", 0, 30, 100, 4),  // n1 [0,30)
		job("b", 0, 200, 10, 4),  // n2, killed at its limit: [0,10) TIMEOUT
		cancelled,                // queued behind a and b; cancelled at t=5
		job("big", 1, 10, 10, 5), // 5 GPUs on one node: never fits
		unknownPart,              // t=3: partition remapped to a; nothing free until b is killed at 10: n2 [10,20)
		noLimit,                  // t=3: limit = partition MaxTime 1000; also fits n2 at 10: [10,60)
		job("same", 30, 5, 5, 4), // submitted the instant a ends: the pass sees n1 free, [30,35)
		multi,                    // t=40: two whole nodes; n2 busy with nl until 60: [60,70)
		spread,                   // t=40: 5 GPUs over any nodes: n1 gives 4, n2 (3 free) the last 1: [40,50)
	}}
	rec, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: &greedy{}, Seed: 1, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	got := outcomes(rec)
	want := []outcome{
		{"a", 0, 30, "COMPLETED", "n1", "4", ""},
		{"b", 0, 10, "TIMEOUT", "n2", "4", ""},
		{"c", -1, 5, "CANCELLED", "", "0", ""},
		{"big", -1, -1, "REJECTED", "", "0", "yes"},
		{"u", 10, 20, "COMPLETED", "n2", "1", "yes"},
		{"nl", 10, 60, "COMPLETED", "n2", "1", ""},
		{"same", 30, 35, "COMPLETED", "n1", "4", ""},
		{"m", 60, 70, "COMPLETED", "n1,n2", "8", ""},
		{"s", 40, 50, "COMPLETED", "n1,n2", "5", ""},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	if len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], `"nosuch"`) {
		t.Errorf("notes = %q, want one about partition nosuch", rec.Notes)
	}
}

func TestControllerRejectsBadPlans(t *testing.T) {
	tr := func() *workload.Trace {
		return &workload.Trace{Jobs: []workload.Job{job("x", 0, 10, 10, 4), job("y", 0, 10, 10, 4)}}
	}
	cases := []struct {
		name string
		plan func(v View) Plan
		want string
	}{
		{"oversubscribe", func(v View) Plan {
			p := v.Pending()
			return Plan{Starts: []Start{
				{Job: p[0].Ref, Alloc: []NodeAlloc{{Node: 0, GPUs: 4, CPUs: 4}}},
				{Job: p[1].Ref, Alloc: []NodeAlloc{{Node: 0, GPUs: 4, CPUs: 4}}},
			}}
		}, "policy greedy: job y at t=0: node n1: allocation gpus=4 cpus=4 mem=0M exceeds free gpus=0 cpus=28 mem=262144M"},
		{"twice", func(v View) Plan {
			p := v.Pending()
			return Plan{Starts: []Start{
				{Job: p[0].Ref, Alloc: []NodeAlloc{{Node: 0, GPUs: 4, CPUs: 4}}},
				{Job: p[0].Ref, Alloc: []NodeAlloc{{Node: 1, GPUs: 4, CPUs: 4}}},
			}}
		}, "policy greedy: job x: started at t=0 but it is not pending"},
		{"short share", func(v View) Plan {
			return Plan{Starts: []Start{{Job: v.Pending()[0].Ref, Alloc: []NodeAlloc{{Node: 0, GPUs: 2, CPUs: 4}}}}}
		}, "job needs gpus=4 cpus=4 mem=0M per node"},
		{"bad node", func(v View) Plan {
			return Plan{Starts: []Start{{Job: v.Pending()[0].Ref, Alloc: []NodeAlloc{{Node: 7, GPUs: 4, CPUs: 4}}}}}
		}, "node index 7 out of range"},
		{"empty", func(v View) Plan {
			return Plan{Starts: []Start{{Job: v.Pending()[0].Ref}}}
		}, "empty allocation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(Config{Cluster: twoNodes(), Trace: tr(), Policy: &greedy{bad: tc.plan}, Check: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestControllerRejectsBadSpreadPlans covers the nodes after the first of a
// multi-node plan, which checkAlloc's one-loop path (plainFits) sees: a
// plan it does not accept goes to the full checks, which name the fault.
func TestControllerRejectsBadSpreadPlans(t *testing.T) {
	tr := func(gpuType, part string) *workload.Trace {
		s := job("s", 0, 10, 10, 8)
		s.Request.Nodes = 0 // 8 units of 1 GPU and 1 CPU, over any nodes
		if gpuType != "" || part != "" {
			// 4 units, which one node can hold
			s.Request = workload.Request{GPUs: 4, CPUs: 4, GPUType: gpuType}
			s.Partition = part
		}
		return &workload.Trace{Jobs: []workload.Job{job("x", 0, 10, 10, 4), s}}
	}
	spread := func(a ...NodeAlloc) func(v View) Plan {
		return func(v View) Plan { return Plan{Starts: []Start{{Job: v.Pending()[1].Ref, Alloc: a}}} }
	}
	cases := []struct {
		name, gpuType, part string
		plan                func(v View) Plan
		want                string
	}{
		{"second node full", "", "", func(v View) Plan {
			p := v.Pending()
			return Plan{Starts: []Start{
				{Job: p[0].Ref, Alloc: []NodeAlloc{{Node: 1, GPUs: 4, CPUs: 4}}},
				{Job: p[1].Ref, Alloc: []NodeAlloc{{Node: 0, GPUs: 4, CPUs: 4}, {Node: 1, GPUs: 4, CPUs: 4}}},
			}}
		}, "policy greedy: job s at t=0: node n2: allocation gpus=4 cpus=4 mem=0M exceeds free gpus=0 cpus=28 mem=262144M"},
		{"listed twice", "", "", spread(NodeAlloc{Node: 0, GPUs: 4, CPUs: 4}, NodeAlloc{Node: 0, GPUs: 4, CPUs: 4}),
			"policy greedy: job s at t=0: node n1 listed twice"},
		{"second out of range", "", "", spread(NodeAlloc{Node: 0, GPUs: 4, CPUs: 4}, NodeAlloc{Node: 2, GPUs: 4, CPUs: 4}),
			"node index 2 out of range"},
		{"second ineligible", "h100", "", spread(NodeAlloc{Node: 0, GPUs: 2, CPUs: 2}, NodeAlloc{Node: 1, GPUs: 2, CPUs: 2}),
			`node n2 is not eligible (partition a, gpu type "h100")`},
		{"short units", "", "", spread(NodeAlloc{Node: 0, GPUs: 4, CPUs: 4}, NodeAlloc{Node: 1, GPUs: 2, CPUs: 2}),
			"allocation holds 6 units, job needs 8"},
		{"same share short", "", "", spread(NodeAlloc{Node: 0, GPUs: 2, CPUs: 2}, NodeAlloc{Node: 1, GPUs: 2, CPUs: 2}),
			"allocation holds 4 units, job needs 8"},
		{"second not whole units", "", "", spread(NodeAlloc{Node: 0, GPUs: 4, CPUs: 4}, NodeAlloc{Node: 1, GPUs: 4, CPUs: 3}),
			"node n2: allocation gpus=4 cpus=3 mem=0M is not a whole number of units"},
		{"second MPS share", "", "", spread(NodeAlloc{Node: 0, GPUs: 4, CPUs: 4}, NodeAlloc{Node: 1, GPUs: 4, CPUs: 4, MPS: MPSShare{Share: 50}}),
			"node n2"},
		{"first not in partition", "", "b", spread(NodeAlloc{Node: 0, GPUs: 2, CPUs: 2}, NodeAlloc{Node: 1, GPUs: 2, CPUs: 2}),
			"node n1 is not eligible (partition b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(Config{Cluster: twoNodes(), Trace: tr(tc.gpuType, tc.part), Policy: &greedy{bad: tc.plan}, Check: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestControllerAcceptsUnorderedSpread: nodes out of increasing order are
// no fault; the full checks, not the one-loop path, accept them.
func TestControllerAcceptsUnorderedSpread(t *testing.T) {
	s := job("s", 0, 10, 10, 8)
	s.Request.Nodes = 0
	plan := func(v View) Plan {
		if len(v.Pending()) == 0 {
			return Plan{}
		}
		return Plan{Starts: []Start{{Job: v.Pending()[0].Ref, Alloc: []NodeAlloc{{Node: 1, GPUs: 4, CPUs: 4}, {Node: 0, GPUs: 4, CPUs: 4}}}}}
	}
	rec, err := Run(Config{Cluster: twoNodes(), Trace: &workload.Trace{Jobs: []workload.Job{s}}, Policy: &greedy{bad: plan}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []outcome{{"s", 0, 10, "COMPLETED", "n2,n1", "8", ""}}
	if d := cmp.Diff(want, outcomes(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
}

func TestControllerIneligibleNode(t *testing.T) {
	j := job("x", 0, 10, 10, 4)
	j.Partition = "b" // only n2
	tr := &workload.Trace{Jobs: []workload.Job{j}}
	bad := func(v View) Plan {
		return Plan{Starts: []Start{{Job: v.Pending()[0].Ref, Alloc: []NodeAlloc{{Node: 0, GPUs: 4, CPUs: 4}}}}}
	}
	_, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: &greedy{bad: bad}})
	if err == nil || !strings.Contains(err.Error(), "node n1 is not eligible (partition b") {
		t.Fatalf("err = %v", err)
	}
}

// periodic is greedy that only runs every 30 s.
type periodic struct{ greedy }

func (p *periodic) Begin(RunInfo) (Timing, error) {
	return Timing{Passes: []Pass{{Name: "periodic", Period: 30}}}, nil
}

func TestControllerPeriodicPasses(t *testing.T) {
	// Jobs start only at multiples of 30 s: there is no event-triggered
	// pass, so a node freed between passes stays idle until the next one.
	tr := &workload.Trace{Jobs: []workload.Job{job("p", 5, 10, 10, 4), job("q", 61, 10, 10, 4), job("r", 61, 5, 5, 4), job("s", 62, 5, 5, 4)}}
	rec, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: &periodic{}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	var starts []Time
	for _, r := range rec.Jobs {
		starts = append(starts, r.Start)
	}
	// p at 30; q and r at 90 (one node each); s waits for r (ends 95) and
	// starts at the next pass, 120.
	if d := cmp.Diff([]Time{30, 90, 90, 120}, starts); d != "" {
		t.Errorf("starts (-want +got):\n%s", d)
	}
	// The record keeps the declared passes, for reports that read a
	// policy's cadence (validate's backfill interval).
	if d := cmp.Diff([]Pass{{Name: "periodic", Period: 30}}, rec.Passes); d != "" {
		t.Errorf("Record.Passes (-want +got):\n%s", d)
	}
}

// reasoning is greedy that reports Resources for every job it leaves.
type reasoning struct{ greedy }

func (r *reasoning) Schedule(_ PassSet, v View, rng *rand.Rand) Plan {
	p := r.greedy.Schedule(0, v, rng)
	started := map[JobRef]bool{}
	for _, s := range p.Starts {
		started[s.Job] = true
	}
	for _, pj := range v.Pending() {
		if !started[pj.Ref] {
			p.Reasons = append(p.Reasons, Reason{Job: pj.Ref, Reason: ReasonResources})
		}
	}
	return p
}

func TestControllerRecordsReasonChanges(t *testing.T) {
	// a fills n1 and n2 (8 GPUs over two nodes) for [0,10); b and c wait
	// for Resources from their submits at 0 and 5, and start at 10. The
	// reason is recorded once per job, when it first changes.
	a := job("a", 0, 10, 10, 8)
	a.Request.Nodes = 2
	tr := &workload.Trace{Jobs: []workload.Job{a, job("b", 0, 5, 5, 4), job("c", 5, 5, 5, 4)}}
	rec, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: &reasoning{}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []ReasonChange{{0, 1, ReasonResources}, {5, 2, ReasonResources}}
	if d := cmp.Diff(want, rec.Reasons.Changes()); d != "" {
		t.Errorf("reasons (-want +got):\n%s", d)
	}
	if rec.Jobs[1].Start != 10 || rec.Jobs[2].Start != 10 {
		t.Errorf("b, c start at %d, %d; want 10, 10", rec.Jobs[1].Start, rec.Jobs[2].Start)
	}
}

// deltaLog is greedy that logs every pass's Delta.
type deltaLog struct {
	greedy
	log []string
}

func (d *deltaLog) Schedule(_ PassSet, v View, rng *rand.Rand) Plan {
	dl := v.Delta()
	nodes := slices.Sorted(slices.Values(dl.Nodes)) // in no set order
	d.log = append(d.log, fmt.Sprintf("t=%d nodes=%v started=%v ended=%v", v.Now(), nodes, dl.Started, dl.Ended))
	return d.greedy.Schedule(0, v, rng)
}

// TestControllerDelta: each pass's Delta lists what changed since the pass
// before. On two 4-GPU nodes, A (runtime 10) and B (20) start at 0 on n1
// and n2; C (5) waits for A and runs on n1 over [10, 15); D, submitted at
// 12, waits for C and starts at 15. The pass at 0 lists every node; at 10
// both nodes (the starts at 0) and A's end; at 12 only n1 (C's start); at
// 15 n1 again (C's end). B's end at 20 leaves nothing queued, so no pass
// runs.
func TestControllerDelta(t *testing.T) {
	tr := &workload.Trace{Jobs: []workload.Job{job("A", 0, 10, 100, 4), job("B", 0, 20, 100, 4), job("C", 0, 5, 100, 4), job("D", 12, 1, 100, 4)}}
	p := &deltaLog{}
	if _, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: p, Check: true}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"t=0 nodes=[0 1] started=[] ended=[]",
		"t=10 nodes=[0 1] started=[0 1] ended=[0]",
		"t=12 nodes=[0] started=[2] ended=[]",
		"t=15 nodes=[0] started=[] ended=[2]",
	}
	if d := cmp.Diff(want, p.log); d != "" {
		t.Errorf("deltas (-want +got):\n%s", d)
	}
}

// runtimeLog is greedy that logs the runtime the view gives each pending
// job.
type runtimeLog struct {
	greedy
	seen []Time
}

func (r *runtimeLog) Schedule(_ PassSet, v View, rng *rand.Rand) Plan {
	for _, p := range v.Pending() {
		r.seen = append(r.seen, v.Job(p.Ref).Runtime)
	}
	return r.greedy.Schedule(0, v, rng)
}

// TestControllerOracle: a policy sees a job's runtime (here 7 s, limit
// 100 s) only with Config.Oracle.
func TestControllerOracle(t *testing.T) {
	for _, oracle := range []bool{false, true} {
		tr := &workload.Trace{Jobs: []workload.Job{job("x", 0, 7, 100, 4)}}
		p := &runtimeLog{}
		if _, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: p, Oracle: oracle}); err != nil {
			t.Fatal(err)
		}
		want := []Time{workload.Unknown}
		if oracle {
			want = []Time{7}
		}
		if d := cmp.Diff(want, p.seen); d != "" {
			t.Errorf("oracle=%v: runtimes seen (-want +got):\n%s", oracle, d)
		}
	}
}
