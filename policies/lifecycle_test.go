package policies_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestLifecycleScenarios runs hand-worked traces with advance reservations
// (maintenance windows) and down nodes under fifo and easy. Nodes have 8
// GPUs (policytest.GPUNodes); every job's runtime is its limit.
func TestLifecycleScenarios(t *testing.T) {
	g := func(n int32) workload.Request { return workload.Request{GPUs: n} }
	two := workload.Request{Nodes: 2, GPUs: 16}
	lim := func(id string, submit, limit sim.Time, req workload.Request) workload.Job {
		return job(id, submit, limit, limit, req)
	}
	maint0 := []sim.AdvanceReservation{{Name: "maint", Start: 1000, End: 2000, Nodes: []int32{0}}}
	tests := []struct {
		name   string
		c      *hwmodels.Cluster
		resv   []sim.AdvanceReservation
		events []sim.NodeEvent
		jobs   []workload.Job
		fifo   []outcome
		easy   []outcome
	}{
		{
			// Window on n0 for [1000,2000). j1 (limit 3000) would run into
			// it on n0 and takes n1 [0,3000); j2 (limit 500) ends before it
			// and takes n0 [0,500). j3 (both nodes) waits for j1: EASY's
			// shadow time is 3000 (at the window's end, 2000, n1 is still
			// held). At 600, j5 (limit 600) would reach into the window on
			// n0 and waits; j6 (limit 300) ends by 1000 and by the shadow
			// time: [600,900). At 2000 the window ends and j5 backfills,
			// ending by 3000: [2000,2600). FIFO holds everything behind j3
			// until 3000, then j3 [3000,3100), j5 and j6 at 3100.
			name: "maintenance window on one node",
			c:    policytest.GPUNodes(2, 8),
			resv: maint0,
			jobs: []workload.Job{
				lim("j1", 0, 3000, g(8)), lim("j2", 0, 500, g(8)), lim("j3", 10, 100, two),
				lim("j5", 600, 600, g(8)), lim("j6", 600, 300, g(8)),
			},
			fifo: []outcome{out("j1", 0, 3000, done, 1), out("j2", 0, 500, done, 0), out("j3", 3000, 3100, done, 0, 1),
				out("j5", 3100, 3700, done, 0), out("j6", 3100, 3400, done, 1)},
			easy: []outcome{out("j1", 0, 3000, done, 1), out("j2", 0, 500, done, 0), out("j3", 3000, 3100, done, 0, 1),
				out("j5", 2000, 2600, done, 0), out("j6", 600, 900, done, 0)},
		},
		{
			// One node, window [1000,2000). a (4 GPUs) [0,900). h (8 GPUs,
			// limit 500) cannot start at 100; when a ends at 900 its run
			// would reach into the window, so EASY's shadow time is the
			// window's end, 2000 (not 900). s (4 GPUs, limit 850) ends by
			// 1000 and by the shadow time: it backfills [100,950) (an EASY
			// that ignored the window would put the shadow time at 900,
			// when a ends, and keep s out). l (limit 30) at 950 ends by
			// 1000:
			// [950,980). m (limit 100) at 950 would reach into the window,
			// and after it h holds the node: [2500,2600). FIFO: h blocks
			// until 2000 [2000,2500); s and l share the node [2500,...);
			// m follows l at 2530.
			name: "head's shadow time at a window's end",
			c:    policytest.GPUNodes(1, 8),
			resv: maint0,
			jobs: []workload.Job{
				lim("a", 0, 900, g(4)), lim("h", 100, 500, g(8)), lim("s", 100, 850, g(4)),
				lim("l", 950, 30, g(4)), lim("m", 950, 100, g(4)),
			},
			fifo: []outcome{out("a", 0, 900, done, 0), out("h", 2000, 2500, done, 0), out("s", 2500, 3350, done, 0),
				out("l", 2500, 2530, done, 0), out("m", 2530, 2630, done, 0)},
			easy: []outcome{out("a", 0, 900, done, 0), out("h", 2000, 2500, done, 0), out("s", 100, 950, done, 0),
				out("l", 950, 980, done, 0), out("m", 2500, 2600, done, 0)},
		},
		{
			// n1 is down for [0,500). h needs both nodes: no release brings
			// n1 back, so EASY has no reservation to protect and b starts
			// on n0 at once [0,1000). When n1 returns, h's shadow time is
			// b's end, 1000; c (limit 300) at 600 ends by then: [600,900)
			// on n1. FIFO: h blocks b until n1 returns: h [500,600), then
			// b on n0 [600,1600) and c on n1 [600,900).
			name: "head needs a down node",
			c:    policytest.GPUNodes(2, 8),
			events: []sim.NodeEvent{
				{At: 0, Node: 1, Down: true}, {At: 500, Node: 1},
			},
			jobs: []workload.Job{lim("h", 0, 100, two), lim("b", 0, 1000, g(8)), lim("c", 600, 300, g(8))},
			fifo: []outcome{out("h", 500, 600, done, 0, 1), out("b", 600, 1600, done, 0), out("c", 600, 900, done, 1)},
			easy: []outcome{out("h", 1000, 1100, done, 0, 1), out("b", 0, 1000, done, 0), out("c", 600, 900, done, 1)},
		},
	}
	for _, tt := range tests {
		for _, pol := range []struct {
			name string
			want []outcome
		}{{"fifo", tt.fifo}, {"easy", tt.easy}} {
			t.Run(pol.name+"/"+tt.name, func(t *testing.T) {
				p, err := catalog.Builtin().New(pol.name, nil)
				if err != nil {
					t.Fatal(err)
				}
				tr := &workload.Trace{Jobs: tt.jobs}
				rec, err := sim.Run(sim.Config{Cluster: tt.c, Trace: tr, Policy: p, Seed: 1, Check: true,
					Reservations: tt.resv, NodeEvents: tt.events})
				if err != nil {
					t.Fatal(err)
				}
				var got []outcome
				for i, r := range rec.Jobs {
					o := outcome{ID: tt.jobs[i].ID, Start: r.Start, End: r.End, State: r.State}
					for _, a := range r.Alloc.All() {
						o.Nodes = append(o.Nodes, a.Node)
					}
					got = append(got, o)
				}
				if diff := cmp.Diff(pol.want, got); diff != "" {
					t.Errorf("outcomes (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestFirstFitMultiPartition(t *testing.T) {
	// n0 is in p0 only, n1 in p1 only, n2 in both.
	c := policytest.Cluster([]hwmodels.Node{
		policytest.Node("n0", 8, "h100", 64, 524288, 1),
		policytest.Node("n1", 8, "h100", 64, 524288, 2),
		policytest.Node("n2", 8, "h100", 64, 524288, 3),
	}, "p0", "p1")
	free := []sim.NodeState{{}, {FreeGPUs: 8, FreeCPUs: 64, FreeMemMB: 524288}, {FreeGPUs: 8, FreeCPUs: 64, FreeMemMB: 524288}}
	cases := []struct {
		name string
		job  sim.PendingJob
		want []sim.NodeAlloc
	}{
		// p0 has only n2 free: a 2-node job does not fit there, p1 (n1,
		// n2) holds it.
		{"second partition", sim.PendingJob{Part: 0, Parts: 3, Req: workload.Request{Nodes: 2, GPUs: 16}},
			[]sim.NodeAlloc{{Node: 1, GPUs: 8}, {Node: 2, GPUs: 8}}},
		// The job's own partition first, when it holds the job.
		{"own partition", sim.PendingJob{Part: 0, Parts: 3, Req: workload.Request{GPUs: 4}},
			[]sim.NodeAlloc{{Node: 2, GPUs: 4}}},
		// Only one partition allowed: no placement although n1 and n2
		// together are free.
		{"one partition", sim.PendingJob{Part: 0, Parts: 1, Req: workload.Request{Nodes: 2, GPUs: 16}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := policies.FirstFit{}.Place(c.Nodes, free, &tc.job, nil)
			if ok != (tc.want != nil) {
				t.Fatalf("ok = %v, allocation %v", ok, got)
			}
			if d := cmp.Diff(tc.want, got); ok && d != "" {
				t.Errorf("allocation (-want +got):\n%s", d)
			}
		})
	}
}

// TestLifecycleConformance runs every builtin policy over the conformance
// workloads with a maintenance window, node failures (with and without
// requeue) and the 30 s time-limit sweep: no invalid decision, no
// oversubscription (Check), every job that may run finishes (or is held
// after the requeue limit), no run
// reaches into the window on its nodes, and the same seed gives the same
// record.
func TestLifecycleConformance(t *testing.T) {
	for _, name := range catalog.Builtin().Names() {
		for _, seed := range policytest.Seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				c, tr := policytest.Workload(seed)
				last := tr.Jobs[len(tr.Jobs)-1].Submit
				win := sim.AdvanceReservation{Name: "maint", Start: last / 3, End: last/3 + 3600, Nodes: []int32{0}}
				cfg := sim.Config{Cluster: c, Trace: tr, Seed: seed, Check: true,
					Reservations: []sim.AdvanceReservation{win},
					Failures:     &sim.FailureModel{MTBF: 6 * 3600, MTTR: 1800},
					JobRequeue:   seed%2 == 0,
				}
				if seed%3 == 0 {
					cfg.TimeLimitSweep = 30
				}
				runOnce := func() *sim.Record {
					p, err := catalog.Builtin().New(name, nil)
					if err != nil {
						t.Fatal(err)
					}
					cfg.Policy = p
					rec, err := sim.Run(cfg)
					if err != nil {
						t.Fatal(err)
					}
					return rec
				}
				rec := runOnce()
				if again := runOnce(); !cmp.Equal(rec, again) {
					t.Fatalf("records differ between two runs")
				}
				type run struct {
					ref        sim.JobRef
					start, end sim.Time
					alloc      []sim.NodeAlloc
				}
				var runs []run
				for _, s := range rec.Runs {
					runs = append(runs, run{s.Job, s.Start, s.End, s.Alloc.Append(nil)})
				}
				for i := range rec.Jobs {
					r := &rec.Jobs[i]
					switch r.State {
					case sim.Unfinished:
						// Held after sim.DefaultMaxRequeue requeues: it may
						// not run again.
						if r.Reason != "JobHoldMaxRequeue" || r.Requeues != sim.DefaultMaxRequeue {
							t.Errorf("job %s never finished (%s, %d requeues)", tr.Jobs[i].ID, r.Reason, r.Requeues)
						}
					case sim.Completed, sim.Timeout, sim.NodeFail:
						runs = append(runs, run{r.Ref, r.Start, r.End, r.Alloc.Append(nil)})
					}
				}
				for _, r := range runs {
					lim := tr.Jobs[r.ref].TimeLimit
					for _, a := range r.alloc {
						if a.Node == 0 && r.start < win.End && r.start+lim > win.Start {
							t.Errorf("job %s ran on n0 from %d with limit %d, into the window [%d,%d)",
								tr.Jobs[r.ref].ID, r.start, lim, win.Start, win.End)
						}
					}
				}
			})
		}
	}
}

// TestWindowScenarios runs hand-worked traces with advance reservations
// (maintenance windows) under conservative and slurm (bf_interval =
// sched_interval = 10, bf_resolution = 1). Nodes have 8 GPUs; every job's
// runtime is its limit. Both policies give the same schedule here.
func TestWindowScenarios(t *testing.T) {
	g := func(n int32) workload.Request { return workload.Request{GPUs: n} }
	lim := func(id string, submit, limit sim.Time, req workload.Request) workload.Job {
		return job(id, submit, limit, limit, req)
	}
	maint0 := []sim.AdvanceReservation{{Name: "maint", Start: 1000, End: 2000, Nodes: []int32{0}}}
	tests := []struct {
		name string
		c    *hwmodels.Cluster
		jobs []workload.Job
		want []outcome
	}{
		{
			// Three nodes, window on n0 for [1000,2000). X [0,100) on n0
			// (ends before the window). R (limit 5000) would run into the
			// window on n0, which X holds anyway: n1 [0,5000). H needs all
			// three nodes: R's end, 5000. B (limit 3000) at 200 fits now
			// on n0 and n2, but [200,3200) reaches into the window on n0:
			// it runs on n2 [200,3200), ending before H's reservation
			// [5000,5100). (slurm starts B in the backfill cycle at 200,
			// the main pass being blocked by H: its placement must leave
			// n0 out, as the pass's own fit test does.)
			name: "backfilled job kept off a node its window holds",
			c:    policytest.GPUNodes(3, 8),
			jobs: []workload.Job{
				lim("X", 0, 100, g(8)), lim("R", 0, 5000, g(8)),
				lim("H", 5, 100, workload.Request{Nodes: 3, GPUs: 24}), lim("B", 200, 3000, g(8)),
			},
			want: []outcome{out("X", 0, 100, done, 0), out("R", 0, 5000, done, 1),
				out("H", 5000, 5100, done, 0, 1, 2), out("B", 200, 3200, done, 2)},
		},
		{
			// Two nodes, window on n0 for [1000,2000). R1 [0,500) on n0,
			// R2 [0,600) on n1. H (both nodes, limit 1000) at 10: when R2
			// ends at 600 its run would reach into the window on n0, so
			// its reservation is at the window's end, [2000,3000) on both
			// nodes. D (limit 1500) at 610 fits n1 now, but [610,2110)
			// meets H's reservation: it waits until H ends, [3000,4500).
			// (Without the window's end as a candidate time H would get
			// no reservation and D would start at 610, delaying H.)
			name: "reservation of a job that needs the window's node",
			c:    policytest.GPUNodes(2, 8),
			jobs: []workload.Job{
				lim("R1", 0, 500, g(8)), lim("R2", 0, 600, g(8)),
				lim("H", 10, 1000, workload.Request{Nodes: 2, GPUs: 16}), lim("D", 610, 1500, g(8)),
			},
			want: []outcome{out("R1", 0, 500, done, 0), out("R2", 0, 600, done, 1),
				out("H", 2000, 3000, done, 0, 1), out("D", 3000, 4500, done, 0)},
		},
		{
			// One node, window [1000,2000). a (4 GPUs) [0,900). h (8 GPUs,
			// limit 500) cannot start at 100; at a's end, 900, its run
			// would reach into the window: its reservation is at the
			// window's end, [2000,2500). s (4 GPUs, limit 850) ends by
			// 1000: [100,950). l (limit 30) at 950: [950,980). m (limit
			// 100) at 950 would reach into the window, and from 2000 h
			// holds the node: [2500,2600).
			name: "reservation at a window's end",
			c:    policytest.GPUNodes(1, 8),
			jobs: []workload.Job{
				lim("a", 0, 900, g(4)), lim("h", 100, 500, g(8)), lim("s", 100, 850, g(4)),
				lim("l", 950, 30, g(4)), lim("m", 950, 100, g(4)),
			},
			want: []outcome{out("a", 0, 900, done, 0), out("h", 2000, 2500, done, 0), out("s", 100, 950, done, 0),
				out("l", 950, 980, done, 0), out("m", 2500, 2600, done, 0)},
		},
	}
	for _, tt := range tests {
		for _, name := range []string{"conservative", "slurm"} {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				var p sim.Policy = policies.NewConservative(nil)
				if name == "slurm" {
					var err error
					if p, err = slurm.New(fast(), nil); err != nil {
						t.Fatal(err)
					}
				}
				rec, err := sim.Run(sim.Config{Cluster: tt.c, Trace: &workload.Trace{Jobs: tt.jobs}, Policy: p,
					Seed: 1, Check: true, Reservations: maint0})
				if err != nil {
					t.Fatal(err)
				}
				var got []outcome
				for i, r := range rec.Jobs {
					o := outcome{ID: tt.jobs[i].ID, Start: r.Start, End: r.End, State: r.State}
					for _, a := range r.Alloc.All() {
						o.Nodes = append(o.Nodes, a.Node)
					}
					got = append(got, o)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("outcomes (-want +got):\n%s", diff)
				}
			})
		}
	}
}
