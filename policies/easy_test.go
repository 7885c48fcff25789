package policies_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// running returns a running job holding allocs from start to end.
func running(ref sim.JobRef, start, end sim.Time, allocs ...sim.NodeAlloc) sim.RunningJob {
	return sim.RunningJob{Ref: ref, Start: start, End: end, Alloc: allocs}
}

// pending returns a queued job with the given limit and request.
func pending(ref sim.JobRef, limit sim.Time, req workload.Request) sim.PendingJob {
	return sim.PendingJob{Ref: ref, Limit: limit, Req: req}
}

// ns returns a free state.
func ns(gpus, cpus int32, memMB int64) sim.NodeState {
	return sim.NodeState{FreeGPUs: gpus, FreeCPUs: cpus, FreeMemMB: memMB}
}

// gpus returns an allocation of g GPUs (nothing else) on node n.
func gpus(n, g int32) sim.NodeAlloc { return sim.NodeAlloc{Node: n, GPUs: g} }

// passResult is what one EASY pass decided, in a comparable form.
type passResult struct {
	Starts []sim.Start
	Res    *policies.Reservation
}

func runPass(p interface {
	Schedule(sim.PassSet, sim.View, *rand.Rand) sim.Plan
}, v sim.View, e *policies.EASY) passResult {
	plan := p.Schedule(1, v, nil) // the one pass, "main"
	var got passResult
	for _, s := range plan.Starts { // copy: the policy reuses its buffers
		got.Starts = append(got.Starts, sim.Start{Job: s.Job, Alloc: slices.Clone(s.Alloc)})
	}
	if e != nil {
		if r, ok := e.Reservation(); ok {
			r.Alloc = slices.Clone(r.Alloc)
			r.Extra = slices.Clone(r.Extra)
			got.Res = &r
		}
	}
	return got
}

// TestEASYPass checks single EASY passes on hand-made views: the shadow
// time, the reserved nodes and which later jobs may backfill. Every view
// is at t=0 on nodes of 8 h100 GPUs, 64 CPUs and 512 GiB (GPUNodes), and
// requests ask only for GPUs unless said otherwise.
func TestEASYPass(t *testing.T) {
	two, three := policytest.GPUNodes(2, 8), policytest.GPUNodes(3, 8)
	// A holds n0 until 100, B holds half of n1 until 50.
	ab := []sim.RunningJob{running(0, -10, 100, gpus(0, 8)), running(1, -10, 50, gpus(1, 4))}
	// Three nodes: A holds n0 until 100, B n1 until 50, C 2 GPUs of n2 until 1000.
	abc := []sim.RunningJob{running(0, -10, 100, gpus(0, 8)), running(1, -10, 50, gpus(1, 8)), running(2, -10, 1000, gpus(2, 2))}
	tests := []struct {
		name  string
		c     *hwmodels.Cluster
		run   []sim.RunningJob
		queue []sim.PendingJob
		want  passResult
	}{
		{
			name:  "empty queue: no reservation",
			c:     two,
			run:   ab,
			queue: nil,
		},
		{
			name:  "everything fits: no reservation",
			c:     two,
			run:   ab,
			queue: []sim.PendingJob{pending(2, 10, workload.Request{GPUs: 3}), pending(3, 10, workload.Request{GPUs: 1})},
			want: passResult{Starts: []sim.Start{
				{Job: 2, Alloc: []sim.NodeAlloc{gpus(1, 3)}},
				{Job: 3, Alloc: []sim.NodeAlloc{gpus(1, 1)}},
			}},
		},
		{
			// n1 has 4 free now; B's end at 50 frees the other 4.
			name:  "shadow at the first end that frees enough",
			c:     two,
			run:   ab,
			queue: []sim.PendingJob{pending(2, 10, workload.Request{GPUs: 8})},
			want: passResult{Res: &policies.Reservation{Job: 2, Shadow: 50,
				Alloc: []sim.NodeAlloc{gpus(1, 8)}, Extra: []sim.NodeState{ns(0, 64, 524288), ns(0, 64, 524288)}}},
		},
		{
			// Two whole nodes: n0 is busy until 100.
			name:  "multi-node head waits for every node it needs",
			c:     two,
			run:   ab,
			queue: []sim.PendingJob{pending(2, 10, workload.Request{Nodes: 2, GPUs: 16})},
			want: passResult{Res: &policies.Reservation{Job: 2, Shadow: 100,
				Alloc: []sim.NodeAlloc{gpus(0, 8), gpus(1, 8)}, Extra: []sim.NodeState{ns(0, 64, 524288), ns(0, 64, 524288)}}},
		},
		{
			// At 50 only 8 units are free (n1); at 100, 16.
			name:  "spread head over both nodes",
			c:     two,
			run:   ab,
			queue: []sim.PendingJob{pending(2, 10, workload.Request{GPUs: 12})},
			want: passResult{Res: &policies.Reservation{Job: 2, Shadow: 100,
				Alloc: []sim.NodeAlloc{gpus(0, 8), gpus(1, 4)}, Extra: []sim.NodeState{ns(0, 64, 524288), ns(4, 64, 524288)}}},
		},
		{
			// B holds half of n1 until 20. X (job 2, limit 30) starts on
			// the other half; the head needs a whole node. At 20 n1 is
			// still half held by X, so the shadow is X's end at 30 (20
			// if X were forgotten).
			name: "jobs started in this pass are released at now+limit",
			c:    two,
			run:  []sim.RunningJob{running(0, -10, 100, gpus(0, 8)), running(1, -10, 20, gpus(1, 4))},
			queue: []sim.PendingJob{
				pending(2, 30, workload.Request{GPUs: 4}),
				pending(3, 10, workload.Request{Nodes: 1, GPUs: 8}),
			},
			want: passResult{
				Starts: []sim.Start{{Job: 2, Alloc: []sim.NodeAlloc{gpus(1, 4)}}},
				Res: &policies.Reservation{Job: 3, Shadow: 30,
					Alloc: []sim.NodeAlloc{gpus(1, 8)}, Extra: []sim.NodeState{ns(0, 64, 524288), ns(0, 64, 524288)}},
			},
		},
		{
			// J (limit 50) ends exactly at the shadow time 50: it may start.
			name: "backfill whose limit ends exactly at the shadow time",
			c:    two,
			run:  ab,
			queue: []sim.PendingJob{
				pending(2, 10, workload.Request{GPUs: 8}),
				pending(3, 50, workload.Request{GPUs: 4}),
			},
			want: passResult{
				Starts: []sim.Start{{Job: 3, Alloc: []sim.NodeAlloc{gpus(1, 4)}}},
				Res: &policies.Reservation{Job: 2, Shadow: 50,
					Alloc: []sim.NodeAlloc{gpus(1, 8)}, Extra: []sim.NodeState{ns(0, 64, 524288), ns(0, 64, 524288)}},
			},
		},
		{
			// J (limit 51) would still hold half of n1 at 50.
			name: "backfill that would delay the reservation does not start",
			c:    two,
			run:  ab,
			queue: []sim.PendingJob{
				pending(2, 10, workload.Request{GPUs: 8}),
				pending(3, 51, workload.Request{GPUs: 4}),
			},
			want: passResult{Res: &policies.Reservation{Job: 2, Shadow: 50,
				Alloc: []sim.NodeAlloc{gpus(1, 8)}, Extra: []sim.NodeState{ns(0, 64, 524288), ns(0, 64, 524288)}}},
		},
		{
			// The head needs one whole node, n1 at 50. J runs long on
			// n2, which the head does not need.
			name: "long backfill on resources the head does not need",
			c:    three,
			run:  abc,
			queue: []sim.PendingJob{
				pending(3, 10, workload.Request{Nodes: 1, GPUs: 8}),
				pending(4, 10000, workload.Request{GPUs: 4}),
			},
			want: passResult{
				Starts: []sim.Start{{Job: 4, Alloc: []sim.NodeAlloc{gpus(2, 4)}}},
				Res: &policies.Reservation{Job: 3, Shadow: 50, Alloc: []sim.NodeAlloc{gpus(1, 8)},
					Extra: []sim.NodeState{ns(0, 64, 524288), ns(0, 64, 524288), ns(2, 64, 524288)}},
			},
		},
		{
			// The head (10 GPUs) gets n1 (8) and 2 of n2's 6 at 50: the
			// extra is 4 GPUs on n2. J1 (4, long) takes them; J2 (1, long)
			// would then delay the head; J3 (1, ends at 50) may start.
			name: "backfilled jobs use up the extra resources",
			c:    three,
			run:  abc,
			queue: []sim.PendingJob{
				pending(3, 10, workload.Request{GPUs: 10}),
				pending(4, 10000, workload.Request{GPUs: 4}),
				pending(5, 10000, workload.Request{GPUs: 1}),
				pending(6, 50, workload.Request{GPUs: 1}),
			},
			want: passResult{
				Starts: []sim.Start{
					{Job: 4, Alloc: []sim.NodeAlloc{gpus(2, 4)}},
					{Job: 6, Alloc: []sim.NodeAlloc{gpus(2, 1)}},
				},
				Res: &policies.Reservation{Job: 3, Shadow: 50, Alloc: []sim.NodeAlloc{gpus(1, 8), gpus(2, 2)},
					Extra: []sim.NodeState{ns(0, 64, 524288), ns(0, 64, 524288), ns(0, 64, 524288)}},
			},
		},
		{
			// K (3 whole nodes) is blocked too, but only the head is
			// protected: J may start although it delays K.
			name: "only the first blocked job gets a reservation",
			c:    three,
			run:  abc,
			queue: []sim.PendingJob{
				pending(3, 10, workload.Request{Nodes: 1, GPUs: 8}),
				pending(4, 10, workload.Request{Nodes: 3, GPUs: 24}),
				pending(5, 10000, workload.Request{GPUs: 4}),
			},
			want: passResult{
				Starts: []sim.Start{{Job: 5, Alloc: []sim.NodeAlloc{gpus(2, 4)}}},
				Res: &policies.Reservation{Job: 3, Shadow: 50, Alloc: []sim.NodeAlloc{gpus(1, 8)},
					Extra: []sim.NodeState{ns(0, 64, 524288), ns(0, 64, 524288), ns(2, 64, 524288)}},
			},
		},
		{
			// n1's GPUs are free but a CPU-only job holds all its CPUs
			// until 50; the head needs 8 CPUs per GPU.
			name: "CPUs, not GPUs, set the shadow time",
			c:    two,
			run: []sim.RunningJob{
				running(0, -10, 100, gpus(0, 8)),
				running(1, -10, 50, sim.NodeAlloc{Node: 1, CPUs: 64}),
			},
			queue: []sim.PendingJob{pending(2, 10, workload.Request{GPUs: 8, CPUs: 64})},
			want: passResult{Res: &policies.Reservation{Job: 2, Shadow: 50,
				Alloc: []sim.NodeAlloc{{Node: 1, GPUs: 8, CPUs: 64}}, Extra: []sim.NodeState{ns(0, 64, 524288), ns(0, 0, 524288)}}},
		},
		{
			// Both running jobs end at 50; the head needs both nodes.
			name: "running jobs ending at one instant are released together",
			c:    two,
			run:  []sim.RunningJob{running(0, -10, 50, gpus(0, 8)), running(1, -10, 50, gpus(1, 8))},
			queue: []sim.PendingJob{
				pending(2, 10, workload.Request{Nodes: 2, GPUs: 16}),
				pending(3, 10, workload.Request{GPUs: 1}),
			},
			want: passResult{Res: &policies.Reservation{Job: 2, Shadow: 50,
				Alloc: []sim.NodeAlloc{gpus(0, 8), gpus(1, 8)}, Extra: []sim.NodeState{ns(0, 64, 524288), ns(0, 64, 524288)}}},
		},
	}
	e := policies.NewEASY(nil) // one value for every case: scratch reuse must not leak
	e.AlwaysReserve = true
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &policytest.View{T: 0, C: tt.c, Run: tt.run, Queue: tt.queue}
			got := runPass(e, v, e)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("EASY pass (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFIFOPass checks that FIFO stops at the first job that does not fit.
func TestFIFOPass(t *testing.T) {
	c := policytest.GPUNodes(2, 8)
	v := &policytest.View{C: c, Run: []sim.RunningJob{running(0, -10, 100, gpus(0, 8))}, Queue: []sim.PendingJob{
		pending(1, 10, workload.Request{GPUs: 2}),
		pending(2, 10, workload.Request{GPUs: 8}), // 6 left: blocks
		pending(3, 10, workload.Request{GPUs: 1}),
	}}
	got := runPass(policies.NewFIFO(nil), v, nil)
	want := passResult{Starts: []sim.Start{{Job: 1, Alloc: []sim.NodeAlloc{gpus(1, 2)}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FIFO pass (-want +got):\n%s", diff)
	}
}

// referenceEASY is a brute-force EASY pass: every free state it needs is
// recomputed from scratch from the cluster's capacity and the jobs that
// hold resources at that time, with no incremental bookkeeping or caches.
func referenceEASY(v *policytest.View) passResult {
	ff := policies.FirstFit{}
	nodes := v.C.Nodes
	type hold struct {
		end   sim.Time
		alloc []sim.NodeAlloc
	}
	var holds []hold
	for _, r := range v.Run {
		holds = append(holds, hold{r.End, r.Alloc})
	}
	freeAt := func(t sim.Time, more []hold) []sim.NodeState {
		var rs []sim.RunningJob
		for _, h := range append(slices.Clone(holds), more...) {
			if h.end > t {
				rs = append(rs, sim.RunningJob{Alloc: h.alloc})
			}
		}
		return policytest.FreeAfter(v.C, rs)
	}
	now := freeAt(v.T-1, nil) // everything is running now
	var res passResult
	start := func(j *sim.PendingJob, a []sim.NodeAlloc) hold {
		res.Starts = append(res.Starts, sim.Start{Job: j.Ref, Alloc: a})
		for _, x := range a {
			now[x.Node].FreeGPUs -= x.GPUs
			now[x.Node].FreeCPUs -= x.CPUs
			now[x.Node].FreeMemMB -= x.MemMB
		}
		return hold{v.T + j.Limit, a}
	}
	q := v.Queue
	i := 0
	for ; i < len(q); i++ {
		a, ok := ff.Place(nodes, now, &q[i], nil)
		if !ok {
			break
		}
		holds = append(holds, start(&q[i], a))
	}
	if i == len(q) {
		return res
	}
	head := &q[i]
	var ends []sim.Time
	for _, h := range holds {
		ends = append(ends, h.end)
	}
	slices.Sort(ends)
	shadow := sim.Time(-1)
	for _, t := range slices.Compact(ends) {
		if _, ok := ff.Place(nodes, freeAt(t, nil), head, nil); ok {
			shadow = t
			break
		}
	}
	if shadow < 0 {
		return res
	}
	var bf []hold
	for j := i + 1; j < len(q); j++ {
		a, ok := ff.Place(nodes, now, &q[j], nil)
		if !ok {
			continue
		}
		if end := v.T + q[j].Limit; end > shadow {
			if _, ok := ff.Place(nodes, freeAt(shadow, append(slices.Clone(bf), hold{end, a})), head, nil); !ok {
				continue
			}
		}
		bf = append(bf, start(&q[j], a))
	}
	fs := freeAt(shadow, bf)
	alloc, _ := ff.Place(nodes, fs, head, nil)
	for _, x := range alloc {
		fs[x.Node].FreeGPUs -= x.GPUs
		fs[x.Node].FreeCPUs -= x.CPUs
		fs[x.Node].FreeMemMB -= x.MemMB
	}
	res.Res = &policies.Reservation{Job: head.Ref, Shadow: shadow, Alloc: alloc, Extra: fs}
	return res
}

// randomView returns a view at t=1000 of a small random cluster (from
// policytest.Workload) with random running jobs, placed at random on the
// nodes, and a random queue of jobs that fit the empty cluster.
func randomView(seed uint64) *policytest.View {
	rng := rand.New(rand.NewPCG(seed, 99))
	c, _ := policytest.Workload(seed)
	v := &policytest.View{T: 1000, C: c}
	free := policytest.FreeAfter(c, nil)
	ref := sim.JobRef(0)
	randomReq := func() (int32, workload.Request) {
		part := int32(rng.IntN(2))
		var r workload.Request
		switch rng.IntN(4) {
		case 0:
			r.Nodes = int32(1 + rng.IntN(3))
			r.GPUs = r.Nodes * int32(rng.IntN(9))
			r.CPUs = r.Nodes * int32(rng.IntN(40))
		case 1:
			r.CPUs = int32(1 + rng.IntN(64))
		default:
			r.GPUs = int32(1 + rng.IntN(12))
			r.CPUs = r.GPUs * int32(rng.IntN(12))
		}
		if rng.IntN(3) == 0 {
			r.MemMB = int64(1 + rng.IntN(300000))
		}
		if r.GPUs > 0 && rng.IntN(4) == 0 {
			r.GPUType = []string{"a100", "h100"}[rng.IntN(2)]
		}
		return part, r
	}
	// Running jobs: each node in random order gives a random part of
	// what fits.
	for range 2 + rng.IntN(8) {
		part, r := randomReq()
		job := sim.PendingJob{Part: part, Req: r}
		order := rng.Perm(len(c.Nodes))
		var alloc []sim.NodeAlloc
		need := sim.Needed(&r)
		if r.Nodes == 0 && r.GPUs == 0 && r.CPUs == 0 {
			continue
		}
		for _, n := range order {
			node := &c.Nodes[n]
			if !sim.Eligible(node, part, r.GPUType) || need == 0 {
				continue
			}
			u := min(sim.UnitsOn(&r, free[n]), need)
			if u == 0 {
				continue
			}
			if r.Nodes == 0 {
				u = 1 + rng.Int32N(u)
			}
			alloc = append(alloc, sim.Take(&r, int32(n), u))
			need -= u
		}
		if need > 0 {
			continue
		}
		_ = job
		for _, a := range alloc {
			free[a.Node].FreeGPUs -= a.GPUs
			free[a.Node].FreeCPUs -= a.CPUs
			free[a.Node].FreeMemMB -= a.MemMB
		}
		v.Run = append(v.Run, running(ref, 0, v.T+sim.Time(50*(1+rng.IntN(10))), alloc...))
		ref++
	}
	empty := policytest.FreeAfter(c, nil)
	for range 1 + rng.IntN(12) {
		part, r := randomReq()
		j := sim.PendingJob{Ref: ref, Part: part, Req: r, Limit: sim.Time(50 * (1 + rng.IntN(12)))}
		if r.Nodes == 0 && r.GPUs == 0 && r.CPUs == 0 {
			j.Req.Nodes = 1
		}
		if _, ok := (policies.FirstFit{}).Place(c.Nodes, empty, &j, nil); ok {
			v.Queue = append(v.Queue, j)
			ref++
		}
	}
	return v
}

// TestEASYMatchesReference runs EASY passes on random views of tiny
// clusters and compares them with the brute-force reference: same starts,
// same shadow time, reserved nodes and extra.
func TestEASYMatchesReference(t *testing.T) {
	always, lazy := policies.NewEASY(nil), policies.NewEASY(nil)
	always.AlwaysReserve = true
	var reserved int
	for seed := range uint64(3000) {
		v := randomView(seed)
		want := referenceEASY(v)
		got := runPass(always, v, always)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d: EASY differs from the reference (-want +got):\n%s\nview: %s", seed, diff, describe(v))
		}
		if got.Res != nil {
			reserved++
		}
		// Computing the reservation lazily changes no decision.
		v.Free = nil
		if diff := cmp.Diff(want.Starts, runPass(lazy, v, nil).Starts); diff != "" {
			t.Fatalf("seed %d: EASY without AlwaysReserve starts differently (-want +got):\n%s\nview: %s", seed, diff, describe(v))
		}
	}
	if reserved < 500 {
		t.Errorf("only %d of 3000 random views had a reservation; the generator is too lenient", reserved)
	}
}

func describe(v *policytest.View) string {
	s := fmt.Sprintf("t=%d\n", v.T)
	for _, n := range v.C.Nodes {
		s += fmt.Sprintf("  node %s gpus=%d/%s cpus=%d mem=%d parts=%b\n", n.Name, n.GPUs, n.GPUType, n.CPUs, n.MemMB, n.Partitions)
	}
	for _, r := range v.Run {
		s += fmt.Sprintf("  running %d end=%d %v\n", r.Ref, r.End, r.Alloc)
	}
	for _, j := range v.Queue {
		s += fmt.Sprintf("  pending %d limit=%d part=%d %+v\n", j.Ref, j.Limit, j.Part, j.Req)
	}
	return s
}
