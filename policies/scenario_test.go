package policies_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Shorthands of policytest's helpers for the many scenarios.
var (
	job    = policytest.Job
	starts = policytest.Starts
	inPart = policytest.InPart
)

// fast returns Slurm's defaults with passes every 10 s and a one-second
// reservation map, so hand-worked schedules are not blurred by rounding.
func fast() slurm.Args {
	a := slurm.DefaultArgs()
	a.BfInterval, a.SchedInterval, a.BfResolution = 10, 10, 1
	return a
}

// outcome is what happened to one job, in a comparable form.
type outcome struct {
	ID         string
	Start, End sim.Time
	State      sim.State
	Nodes      []int32 // nodes of the allocation, in its order
}

// out is shorthand for an outcome.
func out(id string, start, end sim.Time, st sim.State, nodes ...int32) outcome {
	return outcome{ID: id, Start: start, End: end, State: st, Nodes: nodes}
}

const (
	done    = sim.Completed
	timeout = sim.Timeout
	never   = workload.Unknown
)

// TestScenarios runs hand-worked traces through sim.Run (with capacity
// checks after every event) under fifo and easy and compares every job's
// start, end, state and nodes with the outcome worked out in the comments.
// Unless said otherwise nodes have 8 h100 GPUs, 64 CPUs and 512 GiB
// (policytest.GPUNodes) and requests ask only for GPUs. "[a,b)" is a job's
// run; the shadow time is EASY's reservation for the first blocked job.
func TestScenarios(t *testing.T) {
	one, three := policytest.GPUNodes(1, 8), policytest.GPUNodes(3, 8)
	typed := policytest.Cluster([]hwmodels.Node{
		policytest.Node("h0", 8, "h100", 64, 524288, 1),
		policytest.Node("a0", 8, "a100", 64, 524288, 1),
	})
	g := func(n int32) workload.Request { return workload.Request{GPUs: n} }
	tests := []struct {
		name string
		c    *hwmodels.Cluster
		jobs []workload.Job
		fifo []outcome
		easy []outcome
	}{
		{
			// A [0,100) holds 6 of 8 GPUs. B (8 GPUs) is blocked at 1;
			// its shadow time is A's end, 100. C (2 GPUs, limit 90)
			// submitted at 2 would end by 92 <= 100: EASY backfills it at
			// 2. FIFO starts nothing past B: C waits for B [100,150) and
			// starts at 150.
			name: "backfill that ends before the reservation",
			c:    one,
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(6)),
				job("B", 1, 100, 50, g(8)),
				job("C", 2, 90, 90, g(2)),
			},
			fifo: []outcome{out("A", 0, 100, done, 0), out("B", 100, 150, done, 0), out("C", 150, 240, done, 0)},
			easy: []outcome{out("A", 0, 100, done, 0), out("B", 100, 150, done, 0), out("C", 2, 92, done, 0)},
		},
		{
			// As above, but C's limit is 200: started at 2 it would
			// still hold 2 GPUs at the shadow time 100, and B needs all
			// 8. C must wait (its actual 10 s runtime is unknown to the
			// scheduler): both policies run it after B, [150,160).
			name: "backfill that would delay the reservation does not start",
			c:    one,
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(6)),
				job("B", 1, 100, 50, g(8)),
				job("C", 2, 200, 10, g(2)),
			},
			fifo: []outcome{out("A", 0, 100, done, 0), out("B", 100, 150, done, 0), out("C", 150, 160, done, 0)},
			easy: []outcome{out("A", 0, 100, done, 0), out("B", 100, 150, done, 0), out("C", 150, 160, done, 0)},
		},
		{
			// A (6 GPUs) runs past its limit 100 and is killed then
			// (TIMEOUT). B (8 GPUs) blocks at 1 with shadow time 100:
			// the limit, not A's 500 s runtime. C (2 GPUs, limit 98,
			// from 2) ends by 100: EASY backfills it [2,52). D (2 GPUs,
			// limit 98, from 3) would end at 101 > 100, and at 52 at
			// 150: it waits for B [100,200) and starts at 200. FIFO:
			// B [100,200), then C and D together at 200.
			name: "time-limit kill sets the shadow time",
			c:    one,
			jobs: []workload.Job{
				job("A", 0, 100, 500, g(6)),
				job("B", 1, 100, 100, g(8)),
				job("C", 2, 98, 50, g(2)),
				job("D", 3, 98, 10, g(2)),
			},
			fifo: []outcome{out("A", 0, 100, timeout, 0), out("B", 100, 200, done, 0), out("C", 200, 250, done, 0), out("D", 200, 210, done, 0)},
			easy: []outcome{out("A", 0, 100, timeout, 0), out("B", 100, 200, done, 0), out("C", 2, 52, done, 0), out("D", 200, 210, done, 0)},
		},
		{
			// At 100, A's end is applied before B's and C's submits, so
			// the pass at 100 sees the node empty: B (8 GPUs) starts at
			// 100. C (4 GPUs) then waits for B's end at 110.
			name: "submit and completion at one instant",
			c:    one,
			jobs: []workload.Job{
				job("A", 0, 200, 100, g(8)),
				job("B", 100, 10, 10, g(8)),
				job("C", 100, 50, 50, g(4)),
			},
			fifo: []outcome{out("A", 0, 100, done, 0), out("B", 100, 110, done, 0), out("C", 110, 160, done, 0)},
			easy: []outcome{out("A", 0, 100, done, 0), out("B", 100, 110, done, 0), out("C", 110, 160, done, 0)},
		},
		{
			// Z runs 0 s: started by the pass at 0, it ends at 0 and
			// frees the node at once, so a second pass at 0 starts A.
			name: "zero-second job frees its node in the same instant",
			c:    one,
			jobs: []workload.Job{
				job("Z", 0, 10, 0, g(8)),
				job("A", 0, 200, 100, g(8)),
				job("B", 150, 10, 10, g(8)),
			},
			fifo: []outcome{out("Z", 0, 0, done, 0), out("A", 0, 100, done, 0), out("B", 150, 160, done, 0)},
			easy: []outcome{out("Z", 0, 0, done, 0), out("A", 0, 100, done, 0), out("B", 150, 160, done, 0)},
		},
		{
			// X (16 GPUs) and Y (2 whole nodes) can never fit the
			// one-node cluster: rejected at submit, they never block
			// anyone, not even under FIFO. A and B run back to back.
			name: "jobs that can never fit are rejected",
			c:    one,
			jobs: []workload.Job{
				job("X", 0, 100, 100, g(16)),
				job("A", 0, 100, 100, g(8)),
				job("Y", 1, 100, 100, workload.Request{Nodes: 2, GPUs: 2}),
				job("B", 2, 100, 100, g(8)),
			},
			fifo: []outcome{out("X", never, never, sim.Rejected), out("A", 0, 100, done, 0), out("Y", never, never, sim.Rejected), out("B", 100, 200, done, 0)},
			easy: []outcome{out("X", never, never, sim.Rejected), out("A", 0, 100, done, 0), out("Y", never, never, sim.Rejected), out("B", 100, 200, done, 0)},
		},
		{
			// Three nodes. A takes n0 [0,100); B 4 GPUs of n1 [0,300).
			// C needs 2 whole nodes: at 1 only n2 is whole; at A's end
			// 100, n0 and n2 (EASY's shadow time and reserved nodes).
			// D (4 GPUs, limit 500) fits n1's free half and leaves n0
			// and n2 alone: EASY backfills it at 2. E (2 GPUs, limit
			// 500) would land on n2 and break C's reservation: it
			// waits; at 100 C takes n0 and n2, n1 is full, so E starts
			// when C ends at 200, on n0. FIFO holds D and E behind C:
			// D starts at 100 on n1, E at 200 on n0.
			name: "multi-node head with reserved nodes",
			c:    three,
			jobs: []workload.Job{
				job("A", 0, 100, 100, workload.Request{Nodes: 1, GPUs: 8}),
				job("B", 0, 300, 300, g(4)),
				job("C", 1, 100, 100, workload.Request{Nodes: 2, GPUs: 16}),
				job("D", 2, 500, 500, g(4)),
				job("E", 3, 500, 20, g(2)),
			},
			fifo: []outcome{out("A", 0, 100, done, 0), out("B", 0, 300, done, 1), out("C", 100, 200, done, 0, 2), out("D", 100, 600, done, 1), out("E", 200, 220, done, 0)},
			easy: []outcome{out("A", 0, 100, done, 0), out("B", 0, 300, done, 1), out("C", 100, 200, done, 0, 2), out("D", 2, 502, done, 1), out("E", 200, 220, done, 0)},
		},
		{
			// h0 has h100s, a0 a100s. A takes h0 [0,100). B (4 h100)
			// blocks at 1, shadow time 100 on h0. C (8 a100, limit 1000)
			// can only use a0, which B does not need: EASY starts it at
			// 2. D (1 GPU, any type) fits nowhere until 100, when B and
			// D share h0. FIFO holds C behind B until 100.
			name: "GPU type restrictions",
			c:    typed,
			jobs: []workload.Job{
				job("A", 0, 100, 100, workload.Request{GPUs: 8, GPUType: "h100"}),
				job("B", 1, 100, 10, workload.Request{GPUs: 4, GPUType: "h100"}),
				job("C", 2, 1000, 1000, workload.Request{GPUs: 8, GPUType: "a100"}),
				job("D", 3, 100, 50, g(1)),
			},
			fifo: []outcome{out("A", 0, 100, done, 0), out("B", 100, 110, done, 0), out("C", 100, 1100, done, 1), out("D", 100, 150, done, 0)},
			easy: []outcome{out("A", 0, 100, done, 0), out("B", 100, 110, done, 0), out("C", 2, 1002, done, 1), out("D", 100, 150, done, 0)},
		},
		{
			// A (6 GPUs) [0,100); B (8 GPUs, same instant) blocks with
			// shadow time 100. C (2 GPUs, limit 90) submitted at 10 ends
			// by 100 exactly: it may backfill. It runs past its limit and
			// is killed at 100, the instant A ends, so B starts at 100.
			// FIFO runs C after B: [150,240), killed at its limit.
			name: "backfill whose limit ends exactly at the shadow time",
			c:    one,
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(6)),
				job("B", 0, 50, 50, g(8)),
				job("C", 10, 90, 200, g(2)),
			},
			fifo: []outcome{out("A", 0, 100, done, 0), out("B", 100, 150, done, 0), out("C", 150, 240, timeout, 0)},
			easy: []outcome{out("A", 0, 100, done, 0), out("B", 100, 150, done, 0), out("C", 10, 100, timeout, 0)},
		},
		{
			// A (8 GPUs) [0,100). B (8 GPUs) is queued at 1 and
			// cancelled at 50 (CancelAfter 49), before it could start.
			// C (8 GPUs) then becomes the head and starts at 100.
			name: "job cancelled in the queue",
			c:    one,
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(8)),
				func() workload.Job { j := job("B", 1, 100, 100, g(8)); j.CancelAfter = 49; return j }(),
				job("C", 2, 100, 100, g(8)),
			},
			fifo: []outcome{out("A", 0, 100, done, 0), out("B", never, 50, sim.Cancelled), out("C", 100, 200, done, 0)},
			easy: []outcome{out("A", 0, 100, done, 0), out("B", never, 50, sim.Cancelled), out("C", 100, 200, done, 0)},
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
				rec, err := sim.Run(sim.Config{Cluster: tt.c, Trace: tr, Policy: p, Seed: 1, Check: true})
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
