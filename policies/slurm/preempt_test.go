package slurm_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// life is one run of a job: a run segment of the record (a preempted run)
// or the job's final run.
type life struct {
	ID         string
	Start, End sim.Time
	State      string
	Nodes      []int32
}

// lives lists every run of every job: earlier runs (Record.Runs) first, in
// the order they ended, then each job's final record in job order.
func lifeRuns(rec *sim.Record) []life {
	var out []life
	nodes := func(a []sim.NodeAlloc) []int32 {
		var n []int32
		for _, x := range a {
			n = append(n, x.Node)
		}
		return n
	}
	for _, r := range rec.Runs {
		out = append(out, life{rec.Trace.Jobs[r.Job].ID, r.Start, r.End, r.State.String(), nodes(r.Alloc.Append(nil))})
	}
	for i, r := range rec.Jobs {
		out = append(out, life{rec.Trace.Jobs[i].ID, r.Start, r.End, r.State.String(), nodes(r.Alloc.Append(nil))})
	}
	return out
}

// TestSlurmPreemption replays hand-worked preemption cases. Unless said
// otherwise: one node n0 of 8 GPUs in partitions lo (PriorityTier 1) and
// hi (PriorityTier 2), PreemptType=preempt/partition_prio, bf_interval =
// sched_interval = 10, runtimes equal limits, JobRequeue=1 and the
// controller's requeue delay (120 s, as observed on Slurm). L (lo, 8 GPUs,
// 1000 s) runs from 0; H (hi, 8 GPUs, 300 s) comes at 100.
func TestSlurmPreemption(t *testing.T) {
	g8 := workload.Request{GPUs: 8}
	L := inPart(job("L", 0, 1000, 1000, g8), "lo")
	H := inPart(job("H", 100, 300, 300, g8), "hi")
	withCkpt := func(j workload.Job, c sim.Time) workload.Job { j.CheckpointInterval = int32(c); return j }
	tests := []struct {
		name  string
		c     *hwmodels.Cluster
		args  func(*slurm.Args)
		cfg   func(*sim.Config)
		jobs  []workload.Job
		want  []life
		preem map[string]bool // jobs that must not have been preempted are absent
	}{
		{
			// REQUEUE: H's pass at 100 preempts L (lower tier, shares
			// n0); L's run [0,100) ends PREEMPTED and L is requeued, held
			// until 220; the pass the freed node triggers at 100 starts H
			// [100,400). L waits for n0 and reruns its whole 1000 s (no
			// checkpoint): [400,1400).
			name: "partition_prio requeue",
			args: func(a *slurm.Args) { a.PreemptMode = "REQUEUE" },
			jobs: []workload.Job{L, H},
			want: []life{{"L", 0, 100, "PREEMPTED", []int32{0}},
				{"L", 400, 1400, "COMPLETED", []int32{0}}, {"H", 100, 400, "COMPLETED", []int32{0}}},
		},
		{
			// CANCEL: L ends PREEMPTED at 100; H [100,400).
			name: "partition_prio cancel",
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL" },
			jobs: []workload.Job{L, H},
			want: []life{{"L", 0, 100, "PREEMPTED", []int32{0}}, {"H", 100, 400, "COMPLETED", []int32{0}}},
		},
		{
			// REQUEUE of a job without --requeue when JobRequeue=0: it is
			// cancelled (PREEMPTED), as PreemptMode=REQUEUE does.
			name: "requeue of a job that may not be requeued",
			args: func(a *slurm.Args) { a.PreemptMode = "REQUEUE" },
			cfg:  func(c *sim.Config) { c.JobRequeue = false },
			jobs: []workload.Job{L, H},
			want: []life{{"L", 0, 100, "PREEMPTED", []int32{0}}, {"H", 100, 400, "COMPLETED", []int32{0}}},
		},
		{
			// L checkpoints every 30 s: preempted at 100 it saved 90 s of
			// work (3 checkpoints) and loses 10; its rerun needs 910 s:
			// [400,1310).
			name: "checkpointed job loses the work since its last checkpoint",
			args: func(a *slurm.Args) { a.PreemptMode = "REQUEUE" },
			jobs: []workload.Job{withCkpt(L, 30), H},
			want: []life{{"L", 0, 100, "PREEMPTED", []int32{0}},
				{"L", 400, 1310, "COMPLETED", []int32{0}}, {"H", 100, 400, "COMPLETED", []int32{0}}},
		},
		{
			// GraceTime 50 s: L keeps n0 until 150, then is requeued; H
			// starts when it is gone, [150,450); L, held until 270,
			// reruns [450,1450).
			name: "grace time",
			args: func(a *slurm.Args) { a.PreemptMode = "REQUEUE" },
			cfg:  func(c *sim.Config) { c.PreemptGraceTime = 50 },
			jobs: []workload.Job{L, H},
			want: []life{{"L", 0, 150, "PREEMPTED", []int32{0}},
				{"L", 450, 1450, "COMPLETED", []int32{0}}, {"H", 150, 450, "COMPLETED", []int32{0}}},
		},
		{
			// PreemptMode OFF (the default): no preemption, H waits for
			// L: [1000,1300).
			name: "mode off",
			jobs: []workload.Job{L, H},
			want: []life{{"L", 0, 1000, "COMPLETED", []int32{0}}, {"H", 1000, 1300, "COMPLETED", []int32{0}}},
		},
		{
			// PreemptExemptTime 5 minutes: L may be preempted only from
			// 300. H's passes at 100 ... 290 find no candidate; the full
			// pass at 300 preempts L (CANCEL); H [300,600).
			name: "exempt time",
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL"; a.PreemptExemptTime = "5" },
			jobs: []workload.Job{L, H},
			want: []life{{"L", 0, 300, "PREEMPTED", []int32{0}}, {"H", 300, 600, "COMPLETED", []int32{0}}},
		},
		{
			// Equal tiers never preempt: H in lo waits for L.
			name: "equal tiers",
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL" },
			jobs: []workload.Job{L, inPart(job("H", 100, 300, 300, g8), "lo")},
			want: []life{{"L", 0, 1000, "COMPLETED", []int32{0}}, {"H", 1000, 1300, "COMPLETED", []int32{0}}},
		},
		{
			// Victim choice, two nodes in both partitions. A and B (4
			// GPUs each, lo) share n0, A from 0 and B from 10; C (8 GPUs,
			// lo) holds n1 from 20. H (hi, one node of 8 GPUs) at 100.
			// All priorities are equal, so the smaller jobs go first, in
			// job order: A (alone not enough), then B: n0 is free with
			// both gone, H is placed there, and both hold n0: they are the
			// victims and C keeps n1. H [100,400) on n0.
			name: "smaller victims first",
			c:    policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3), policytest.Node("n1", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL" },
			jobs: []workload.Job{
				inPart(job("A", 0, 1000, 1000, workload.Request{GPUs: 4}), "lo"),
				inPart(job("B", 10, 1000, 1000, workload.Request{GPUs: 4}), "lo"),
				inPart(job("C", 20, 1000, 1000, g8), "lo"),
				inPart(job("H", 100, 300, 300, workload.Request{Nodes: 1, GPUs: 8}), "hi"),
			},
			want: []life{{"A", 0, 100, "PREEMPTED", []int32{0}}, {"B", 10, 100, "PREEMPTED", []int32{0}},
				{"C", 20, 1020, "COMPLETED", []int32{1}}, {"H", 100, 400, "COMPLETED", []int32{0}}},
		},
		{
			// Job order, not youngest first: A holds n0 from 0, B n1
			// from 10 (8 GPUs each, lo). H (hi, one node) at 100: A,
			// first in Slurm's job list, is removed, H fits on n0, and A
			// is the victim; B completes. (A real Slurm 22.05 preempted
			// the two oldest of four equal jobs: conformance/records/
			// preempt-requeue.) H [100,400) on n0.
			name: "oldest victim first",
			c:    policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3), policytest.Node("n1", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL" },
			jobs: []workload.Job{
				inPart(job("A", 0, 1000, 1000, g8), "lo"),
				inPart(job("B", 10, 1000, 1000, g8), "lo"),
				inPart(job("H", 100, 300, 300, workload.Request{Nodes: 1, GPUs: 8}), "hi"),
			},
			want: []life{{"A", 0, 100, "PREEMPTED", []int32{0}}, {"B", 10, 1010, "COMPLETED", []int32{1}},
				{"H", 100, 400, "COMPLETED", []int32{0}}},
		},
		{
			// No unneeded victim: n0 holds A (2 GPUs, lo) and X (6 GPUs,
			// hi: not preemptable), n1 holds C (8 GPUs, lo). H (hi, one
			// node of 8) at 100. In job order (both have one node): A is
			// removed, which is not enough (X keeps 6 GPUs of n0), then C,
			// which frees n1. H is
			// placed on n1; A does not hold it and is not preempted: C is
			// the only victim. H [100,400) on n1.
			name: "no unneeded victim",
			c:    policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3), policytest.Node("n1", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL" },
			jobs: []workload.Job{
				inPart(job("A", 0, 1000, 1000, workload.Request{GPUs: 2}), "lo"),
				inPart(job("X", 0, 1000, 1000, workload.Request{GPUs: 6}), "hi"),
				inPart(job("C", 0, 1000, 1000, g8), "lo"),
				inPart(job("H", 100, 300, 300, workload.Request{Nodes: 1, GPUs: 8}), "hi"),
			},
			want: []life{{"A", 0, 1000, "COMPLETED", []int32{0}}, {"X", 0, 1000, "COMPLETED", []int32{0}},
				{"C", 0, 100, "PREEMPTED", []int32{1}}, {"H", 100, 400, "COMPLETED", []int32{1}}},
		},
		{
			// The job's priority does not order the victims: C is in QOS
			// "cheap" (priority 0 against normal's 10, PriorityWeightQOS
			// 1000), the lowest job priority, and alone would free a
			// node. Slurm sorts the candidates by _gen_job_prio (tier <<
			// 16 plus the node count: equal here), then in job order: A
			// (n0, 4 GPUs) is removed, not enough; B (n0, 4 GPUs) too,
			// and H fits on n0. Both are preempted; C runs on. H
			// [100,400) on n0.
			name: "job priority does not order the victims",
			c:    policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3), policytest.Node("n1", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) {
				a.PreemptMode = "CANCEL"
				a.PriorityWeightQOS = 1000
				a.QOS = []slurm.QOSArgs{{Name: "normal", Priority: 10}, {Name: "cheap"}}
			},
			jobs: []workload.Job{
				inPart(job("A", 0, 1000, 1000, workload.Request{GPUs: 4}), "lo"),
				inPart(job("B", 10, 1000, 1000, workload.Request{GPUs: 4}), "lo"),
				withQOS(inPart(job("C", 20, 1000, 1000, g8), "lo"), "cheap"),
				inPart(job("H", 100, 300, 300, workload.Request{Nodes: 1, GPUs: 8}), "hi"),
			},
			want: []life{{"A", 0, 100, "PREEMPTED", []int32{0}}, {"B", 10, 100, "PREEMPTED", []int32{0}},
				{"C", 20, 1020, "COMPLETED", []int32{1}}, {"H", 100, 400, "COMPLETED", []int32{0}}},
		},
		{
			// Equal candidates: A (lo, n0, from 0) and B (lo, n1, from
			// 10), 8 GPUs each; H (hi, 8 GPUs) at 100. In job order the
			// older A goes: H [100,400) on n0.
			name: "equal candidates: the oldest first",
			c:    policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3), policytest.Node("n1", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL" },
			jobs: youngestJobs(),
			want: []life{{"A", 0, 100, "PREEMPTED", []int32{0}}, {"B", 10, 1010, "COMPLETED", []int32{1}},
				{"H", 100, 400, "COMPLETED", []int32{0}}},
		},
		{
			// The same with PreemptParameters=youngest_first: the latest
			// start goes first (_sort_by_youngest): B. H [100,400) on n1.
			name: "PreemptParameters=youngest_first",
			c:    policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3), policytest.Node("n1", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) {
				a.PreemptMode, a.PreemptParameters = "CANCEL", "strict_order,youngest_first"
			},
			jobs: youngestJobs(),
			want: []life{{"A", 0, 1000, "COMPLETED", []int32{0}}, {"B", 10, 100, "PREEMPTED", []int32{1}},
				{"H", 100, 400, "COMPLETED", []int32{1}}},
		},
		{
			// SchedulerParameters' preempt_youngest_first does the same.
			name: "preempt_youngest_first",
			c:    policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3), policytest.Node("n1", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode, a.PreemptYoungestFirst = "CANCEL", true },
			jobs: youngestJobs(),
			want: []life{{"A", 0, 1000, "COMPLETED", []int32{0}}, {"B", 10, 100, "PREEMPTED", []int32{1}},
				{"H", 100, 400, "COMPLETED", []int32{1}}},
		},
		{
			// The candidates are reordered to preempt fewer jobs
			// (cons_tres _run_now, preempt_reorder_count 1): A (lo, one
			// node) holds n0, B (lo, two nodes) n1 and n2; n3 is free. H
			// (hi, 3 nodes) at 100: in Slurm's order A (one node) goes
			// first, which is not enough, then B, and H fits on n0-n2.
			// B, which made it fit, moves first, then A (one of the
			// placement's nodes); with B alone gone H fits on n1-n3: B
			// is the only victim, A runs to its end. H [100, 400) on
			// n1-n3. (Without the reorder A and B are both preempted
			// and H runs on n0-n2. On Slurm 22.05, conformance/records/
			// gen-64/run1: G05 (3 nodes) preempted G02 (2 nodes) and
			// left G01 (one node) running.)
			name: "candidates reordered to preempt fewer jobs",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3), policytest.Node("n1", 8, "h100", 64, 524288, 3),
				policytest.Node("n2", 8, "h100", 64, 524288, 3), policytest.Node("n3", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL" },
			jobs: []workload.Job{
				inPart(job("A", 0, 1000, 1000, g8), "lo"),
				inPart(job("B", 10, 1000, 1000, workload.Request{Nodes: 2, GPUs: 16}), "lo"),
				inPart(job("H", 100, 300, 300, workload.Request{Nodes: 3, GPUs: 24}), "hi"),
			},
			want: []life{{"A", 0, 1000, "COMPLETED", []int32{0}}, {"B", 10, 100, "PREEMPTED", []int32{1, 2}},
				{"H", 100, 400, "COMPLETED", []int32{1, 2, 3}}},
		},
		{
			// The second reorder sorts by the placement's nodes: P (hi,
			// 3 nodes, 5 s) fills n0-n2 at 0, so X (lo, one node) goes
			// to n3; then Y (lo, one node) holds n0 from 10 and Z (lo,
			// two nodes) n1 and n2 from 20. H (hi, 3 nodes) at 100.
			// Slurm's order X, Y, Z; pass 1: all three gone, H on
			// n0-n2. Reordered: Z (made it fit), Y (holds n0 of the
			// placement), X (none). Pass 2: Z, then Y: n0-n2 again;
			// reordered Y, Z, X; pass 3: Y, Z. Victims Y and Z; X runs
			// on. H [100, 400) on n0-n2.
			name: "reorder by the placement's nodes",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3), policytest.Node("n1", 8, "h100", 64, 524288, 3),
				policytest.Node("n2", 8, "h100", 64, 524288, 3), policytest.Node("n3", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL" },
			jobs: strictJobs(),
			want: []life{{"P", 0, 5, "COMPLETED", []int32{0, 1, 2}}, {"X", 0, 1000, "COMPLETED", []int32{3}},
				{"Y", 10, 100, "PREEMPTED", []int32{0}}, {"Z", 20, 100, "PREEMPTED", []int32{1, 2}},
				{"H", 100, 400, "COMPLETED", []int32{0, 1, 2}}},
		},
		{
			// The same with preempt_strict_order: the job that made it
			// fit moves to the front, the others keep their order. Pass
			// 2's order is Z, X, Y: Z, then X: n1-n3 are free, H fits
			// there; reordered X, Z, Y; pass 3: X, Z. Victims X and Z; Y
			// runs on. H [100, 400) on n1-n3.
			name: "preempt_strict_order",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3), policytest.Node("n1", 8, "h100", 64, 524288, 3),
				policytest.Node("n2", 8, "h100", 64, 524288, 3), policytest.Node("n3", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode, a.PreemptStrictOrder = "CANCEL", true },
			jobs: strictJobs(),
			want: []life{{"P", 0, 5, "COMPLETED", []int32{0, 1, 2}}, {"X", 0, 100, "PREEMPTED", []int32{3}},
				{"Y", 10, 1010, "COMPLETED", []int32{0}}, {"Z", 20, 100, "PREEMPTED", []int32{1, 2}},
				{"H", 100, 400, "COMPLETED", []int32{1, 2, 3}}},
		},
		{
			// Fewer nodes first: W (lo, 2 nodes of 8 GPUs, n0 and n1,
			// the older) and S (lo, 8 GPUs, n2). H (hi, one node of 8) at
			// 100: S (one node) sorts before W (two) and alone frees a
			// node: the only victim. H [100,400) on n2.
			name: "fewer nodes first",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3),
				policytest.Node("n1", 8, "h100", 64, 524288, 3), policytest.Node("n2", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL" },
			jobs: []workload.Job{
				inPart(job("W", 0, 1000, 1000, workload.Request{Nodes: 2, GPUs: 16}), "lo"),
				inPart(job("S", 10, 1000, 1000, g8), "lo"),
				inPart(job("H", 100, 300, 300, workload.Request{Nodes: 1, GPUs: 8}), "hi"),
			},
			want: []life{{"W", 0, 1000, "COMPLETED", []int32{0, 1}}, {"S", 10, 100, "PREEMPTED", []int32{2}},
				{"H", 100, 400, "COMPLETED", []int32{2}}},
		},
		{
			// KillWait 3 (the controller's): W (lo, 3 nodes of 8 GPUs)
			// runs from 0; B (lo, 2 nodes) waits for it from 50; H (hi,
			// one node) at 100 preempts W (CANCEL) for n0, the lowest
			// node W frees. W's batch host, n0, is held until 103; n1
			// and n2 are free at 100, when the plan's preemption is
			// applied. The backfill cycle of 100 sees the kill (Slurm's
			// select plugin frees a killed job's resources at once): it
			// does not start H, whose preemption is in progress, but
			// holds n0 for it from 100, and starts B on n1 and n2
			// [100, 300) (gen-23/run1 on Slurm 22.05: G04, G05 and G07_0
			// started on gn3-4 in the cycle that preempted G03 on
			// gn[2-4]). The main pass of W's release at 103 starts H on
			// n0 [103, 403). Before, B waited for the next cycle, 101.
			name: "kill wait: lower jobs take the victim's other nodes at once",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3),
				policytest.Node("n1", 8, "h100", 64, 524288, 3), policytest.Node("n2", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode, a.BfInterval = "CANCEL", 1 },
			cfg:  func(c *sim.Config) { c.KillWait = 3 },
			jobs: []workload.Job{
				inPart(job("W", 0, 1000, 1000, workload.Request{Nodes: 3, GPUs: 24}), "lo"),
				inPart(job("B", 50, 200, 200, workload.Request{Nodes: 2, GPUs: 16}), "lo"),
				inPart(job("H", 100, 300, 300, g8), "hi"),
			},
			want: []life{{"W", 0, 100, "PREEMPTED", []int32{0, 1, 2}}, {"B", 100, 300, "COMPLETED", []int32{1, 2}},
				{"H", 103, 403, "COMPLETED", []int32{0}}},
		},
		{
			// The same with sched_interval 1, as in gen-23's slurm.conf:
			// the main pass of 100 preempts W for n0 and the backfill
			// cycle after it starts B on n1 and n2 [100, 300), so the
			// main passes of 101 and 102 find no node for H; W's batch
			// host is free at 103: H [103, 403) on n0.
			name: "kill wait: the preemptor waits for its node",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3),
				policytest.Node("n1", 8, "h100", 64, 524288, 3), policytest.Node("n2", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode, a.BfInterval, a.SchedInterval = "CANCEL", 1, 1 },
			cfg:  func(c *sim.Config) { c.KillWait = 3 },
			jobs: []workload.Job{
				inPart(job("W", 0, 1000, 1000, workload.Request{Nodes: 3, GPUs: 24}), "lo"),
				inPart(job("B", 50, 200, 200, workload.Request{Nodes: 2, GPUs: 16}), "lo"),
				inPart(job("H", 100, 300, 300, g8), "hi"),
			},
			want: []life{{"W", 0, 100, "PREEMPTED", []int32{0, 1, 2}}, {"B", 100, 300, "COMPLETED", []int32{1, 2}},
				{"H", 103, 403, "COMPLETED", []int32{0}}},
		},
		{
			// Without B: the backfill cycle of 100 holds n0 for H, n1 and
			// n2 stay free, and the main pass of 101 starts H on n1, free
			// since the kill [101, 401) (gen-7/run1: the main scheduler
			// started job 4 on its victim's free node one second after
			// the preemption).
			name: "kill wait: the main scheduler starts the preemptor on a free node",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3),
				policytest.Node("n1", 8, "h100", 64, 524288, 3), policytest.Node("n2", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode, a.BfInterval, a.SchedInterval = "CANCEL", 1, 1 },
			cfg:  func(c *sim.Config) { c.KillWait = 3 },
			jobs: []workload.Job{
				inPart(job("W", 0, 1000, 1000, workload.Request{Nodes: 3, GPUs: 24}), "lo"),
				inPart(job("H", 100, 300, 300, g8), "hi"),
			},
			want: []life{{"W", 0, 100, "PREEMPTED", []int32{0, 1, 2}}, {"H", 101, 401, "COMPLETED", []int32{1}}},
		},
		{
			// The preemptor holds its nodes from now + 1: they are
			// completing when the cycle tests it (backfill.c plans a job
			// on completing nodes at now + 1). W (3 nodes) runs from 0;
			// R (lo, 3 nodes, limit 100) waits from 50, S (lo, 1 node,
			// limit 300) from 60; H (hi) at 100 preempts W for n0 (W's
			// batch host, held until 103). The cycle of 100 holds n0 for
			// H over [101, 401); R, needing every node, is planned at
			// 401; S fits n1 now, its window [100, 400] ends before 401:
			// S [100, 400) on n1. H [103, 403) on n0; R starts when H is
			// gone [403, 503). Holding n0 from 100 would have planned R
			// at 400, which S's window meets (begin_time <= end_time): S
			// would have waited for the cycle of 101.
			name: "kill wait: the preemptor holds its node from the next second",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3),
				policytest.Node("n1", 8, "h100", 64, 524288, 3), policytest.Node("n2", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode, a.BfInterval = "CANCEL", 1 },
			cfg:  func(c *sim.Config) { c.KillWait = 3 },
			jobs: []workload.Job{
				inPart(job("W", 0, 1000, 1000, workload.Request{Nodes: 3, GPUs: 24}), "lo"),
				inPart(job("R", 50, 100, 100, workload.Request{Nodes: 3, GPUs: 24}), "lo"),
				inPart(job("S", 60, 300, 300, g8), "lo"),
				inPart(job("H", 100, 300, 300, g8), "hi"),
			},
			want: []life{{"W", 0, 100, "PREEMPTED", []int32{0, 1, 2}}, {"R", 403, 503, "COMPLETED", []int32{0, 1, 2}},
				{"S", 100, 400, "COMPLETED", []int32{1}}, {"H", 103, 403, "COMPLETED", []int32{0}}},
		},
		{
			// A killed job is not preempted again: it is completing, not
			// running (Slurm's preemptable jobs are running ones). Three
			// tiers lo < hi < top. At 100 H (hi) preempts W for n0 and B
			// starts on n1 and n2 [100, 300) as above; W keeps n0 until
			// 103. T (top, one node) at 101 finds nothing free; of the
			// lower jobs only B is running, so T preempts B (CANCEL) for
			// n1, the lowest node B frees; B's batch host n1 is held
			// until 104, n2 is free at once, and the main pass of 102
			// starts T there [102, 402). H gets n0 at 103 [103, 403).
			// Were W a candidate still, holding only n0 (one node: it
			// sorts before B), T would "preempt" it again and take n0 at
			// 103, and B would run on.
			name: "kill wait: a killed job is not preempted again",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 7),
				policytest.Node("n1", 8, "h100", 64, 524288, 7), policytest.Node("n2", 8, "h100", 64, 524288, 7)}, "lo", "hi", "top"),
			args: func(a *slurm.Args) { a.PreemptMode, a.BfInterval, a.SchedInterval = "CANCEL", 1, 1 },
			cfg:  func(c *sim.Config) { c.KillWait = 3 },
			jobs: []workload.Job{
				inPart(job("W", 0, 1000, 1000, workload.Request{Nodes: 3, GPUs: 24}), "lo"),
				inPart(job("B", 50, 200, 200, workload.Request{Nodes: 2, GPUs: 16}), "lo"),
				inPart(job("H", 100, 300, 300, g8), "hi"),
				inPart(job("T", 101, 300, 300, g8), "top"),
			},
			want: []life{{"W", 0, 100, "PREEMPTED", []int32{0, 1, 2}}, {"B", 100, 101, "PREEMPTED", []int32{1, 2}},
				{"H", 103, 403, "COMPLETED", []int32{0}}, {"T", 102, 402, "COMPLETED", []int32{2}}},
		},
		{
			// A job killed at its time limit is completing, not running,
			// so it is no preemption candidate either. L (lo) on n0 has a
			// 100 s limit and runs on: the time-limit check kills it at
			// 100 and it holds n0 until 103 (KillWait 3). B (lo) holds n1.
			// H (hi, one node) at 101 finds nothing free; the only running
			// lower job is B, which it preempts (CANCEL) for n1, held by
			// B's kill until 104; n0 comes free at 103 and H, whose
			// preemption is in progress, starts there [103, 403). Were L
			// a candidate still (it sorts before B: its ref is lower), H
			// would "preempt" L, which ends at 103 either way, and B
			// would run on.
			name: "kill wait: a job killed at its time limit is not preempted",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3),
				policytest.Node("n1", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode, a.BfInterval, a.SchedInterval = "CANCEL", 1, 1 },
			cfg:  func(c *sim.Config) { c.KillWait = 3 },
			jobs: []workload.Job{
				inPart(job("L", 0, 100, 1000, g8), "lo"),
				inPart(job("B", 0, 1000, 1000, g8), "lo"),
				inPart(job("H", 101, 300, 300, g8), "hi"),
			},
			want: []life{{"L", 0, 100, "TIMEOUT", []int32{0}}, {"B", 0, 101, "PREEMPTED", []int32{1}},
				{"H", 103, 403, "COMPLETED", []int32{0}}},
		},
		{
			// A preemptor preempts no more for KillWait + MessageTimeout
			// after its preemption began (select_nodes' preempt_start_time;
			// 30 + 10 s by default), even once its victims are gone. L1,
			// L2, L3 (lo) hold n0, n1, n2 from 0. H (hi) at 100 preempts
			// L1 for n0, held until 103. H0 (hi, QOS priority above H)
			// at 101 preempts L2 (L1, killed, is no candidate) for n1,
			// held until 104. At 103 n0 is free: H0, first, takes it
			// [103, 403); H, its victim gone, finds no node but may not
			// preempt L3 before 140; n1 comes free at 104: H [104, 404).
			// L3 runs to its end. (Without the guard H would preempt L3
			// at 103 and still start on n1 at 104.)
			name: "a preemptor preempts no more for KillWait + MessageTimeout",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3),
				policytest.Node("n1", 8, "h100", 64, 524288, 3), policytest.Node("n2", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) {
				a.PreemptMode, a.BfInterval, a.PriorityWeightQOS = "CANCEL", 1, 1000
				a.QOS = []slurm.QOSArgs{{Name: "normal"}, {Name: "top", Priority: 1}}
			},
			cfg: func(c *sim.Config) { c.KillWait = 3 },
			jobs: []workload.Job{
				inPart(job("L1", 0, 1000, 1000, g8), "lo"),
				inPart(job("L2", 0, 1000, 1000, g8), "lo"),
				inPart(job("L3", 0, 1000, 1000, g8), "lo"),
				inPart(job("H", 100, 300, 300, g8), "hi"),
				withQOS(inPart(job("H0", 101, 300, 300, g8), "hi"), "top"),
			},
			want: []life{{"L1", 0, 100, "PREEMPTED", []int32{0}}, {"L2", 0, 101, "PREEMPTED", []int32{1}},
				{"L3", 0, 1000, "COMPLETED", []int32{2}}, {"H", 104, 404, "COMPLETED", []int32{1}},
				{"H0", 103, 403, "COMPLETED", []int32{0}}},
		},
		{
			// The backfill cycle preempts for a record that the main
			// pass does not reach: the main scheduler stops at a
			// partition's first record that does not start (fail_by_part
			// in _schedule), but _attempt_backfill tests the next ones
			// with their preemptable jobs (conformance/records/gen-71/
			// run2: G10 preempted G05 in the backfill cycle at 51.153
			// while G09 waited for its victim G04). L1, L2, L3 (lo) hold
			// n0, n1, n2 from 0; KillWait 3. H1 (hi) at 100 preempts L1
			// for n0 (held until 103). H2 (hi) at 101: the main pass
			// tests H1 first, which waits for n0 and ends hi's turn; the
			// backfill cycle holds n0 for H1 and tests H2, which does not
			// fit: without L2 and L3 (L1, killed, is no candidate) it
			// fits, and L2, first in job order, is the victim for n1,
			// held until 104. H1 [103, 403) on n0, H2 [104, 404) on n1;
			// L3 runs to its end. (Preempting in the main pass only, H2
			// would preempt L2 at 103, once H1 started, and start at
			// 106.)
			name: "the backfill cycle preempts behind a waiting preemptor",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3),
				policytest.Node("n1", 8, "h100", 64, 524288, 3), policytest.Node("n2", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode, a.BfInterval, a.SchedInterval = "CANCEL", 1, 1 },
			cfg:  func(c *sim.Config) { c.KillWait = 3 },
			jobs: []workload.Job{
				inPart(job("L1", 0, 1000, 1000, g8), "lo"),
				inPart(job("L2", 0, 1000, 1000, g8), "lo"),
				inPart(job("L3", 0, 1000, 1000, g8), "lo"),
				inPart(job("H1", 100, 300, 300, g8), "hi"),
				inPart(job("H2", 101, 300, 300, g8), "hi"),
			},
			want: []life{{"L1", 0, 100, "PREEMPTED", []int32{0}}, {"L2", 0, 101, "PREEMPTED", []int32{1}},
				{"L3", 0, 1000, "COMPLETED", []int32{2}}, {"H1", 103, 403, "COMPLETED", []int32{0}},
				{"H2", 104, 404, "COMPLETED", []int32{1}}},
		},
		{
			// A preemptor's reservation is planned with its preemptable
			// jobs gone (cons_tres _will_run_test removes them before
			// releasing the others by end time). X (hi) holds n0 and L
			// (lo) n1 from 0; n2 is free. H (hi, 3 nodes) at 10 does not
			// fit even without L (X is not preemptable): the backfill
			// cycle plans it at X's end, 100, on n0-n2. S (lo, limit
			// 200) at 20 fits n2 now, but its window [20, 220] meets
			// H's reservation: it waits (the main pass gives it no node
			// of hi's, whose first record failed). At 100 X ends; H
			// preempts L (CANCEL) and runs [100, 200); S follows
			// [200, 400) on n0. (Planned behind L's limit, 1000, H's
			// reservation would let S start at 20 on n2, and H would
			// preempt both L and S at 100.)
			name: "a preemptor is reserved with its preemptable jobs gone",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3),
				policytest.Node("n1", 8, "h100", 64, 524288, 3), policytest.Node("n2", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode, a.BfInterval, a.SchedInterval = "CANCEL", 1, 1 },
			jobs: []workload.Job{
				inPart(job("X", 0, 100, 100, g8), "hi"),
				inPart(job("L", 0, 1000, 1000, g8), "lo"),
				inPart(job("H", 10, 100, 100, workload.Request{Nodes: 3, GPUs: 24}), "hi"),
				inPart(job("S", 20, 200, 200, g8), "lo"),
			},
			want: []life{{"X", 0, 100, "COMPLETED", []int32{0}}, {"L", 0, 100, "PREEMPTED", []int32{1}},
				{"H", 100, 200, "COMPLETED", []int32{0, 1, 2}}, {"S", 200, 400, "COMPLETED", []int32{0}}},
		},
		{
			// A preempted job is charged no more from its kill: it is
			// completing, and Slurm's decay thread charges running jobs
			// only (decay_apply_new_usage: IS_JOB_COMPLETING), though
			// its batch host is held for KillWait. Fair Tree,
			// PriorityWeightFairshare 1000, usage in GPU seconds, no
			// decay, calculations at 0, 60, 120; KillWait 3. L (u1, lo)
			// runs from 0; H (u2, hi) at 58 preempts it (CANCEL), and L
			// holds n0 until 61, past the calculation at 60, which
			// charges it nothing: its usage since 0 is lost (no
			// AccountingStorageEnforce=limits). H runs [61, 161). B (u1)
			// at 59 and C (u2) at 62 (lo, 8 GPUs) wait for H. At 120 u1
			// has 0, u2 8·59 = 472: in lab u1 ranks 2 (0.667), u2 1
			// (0.333): B 666, C 333. B [161, 261), C [261, 361). (Charged
			// to 60, u1 would have 480 against u2's 472: C first.)
			name: "a preempted job is not charged after its kill",
			args: func(a *slurm.Args) {
				a.PreemptMode = "CANCEL"
				a.PriorityWeightFairshare = 1000
				a.TRESBillingWeights = "GRES/gpu=1"
				a.PriorityDecayHalfLife, a.PriorityCalcPeriod = "0", "1"
			},
			cfg: func(c *sim.Config) { c.KillWait = 3 },
			jobs: []workload.Job{
				withUser(inPart(job("L", 0, 1000, 1000, g8), "lo"), "u1", "lab"),
				withUser(inPart(job("H", 58, 100, 100, g8), "hi"), "u2", "lab"),
				withUser(inPart(job("B", 59, 100, 100, g8), "lo"), "u1", "lab"),
				withUser(inPart(job("C", 62, 100, 100, g8), "lo"), "u2", "lab"),
			},
			want: []life{{"L", 0, 58, "PREEMPTED", []int32{0}}, {"H", 61, 161, "COMPLETED", []int32{0}},
				{"B", 161, 261, "COMPLETED", []int32{0}}, {"C", 261, 361, "COMPLETED", []int32{0}}},
		},
		{
			// A job needing more nodes than its partition has up neither
			// blocks its partition nor preempts (select_nodes fails with
			// ESLURM_NODE_NOT_AVAIL, and _schedule blocks a partition for
			// ESLURM_NODES_BUSY only). n1 is down [0,500). L (lo) holds
			// n0 from 0. X (hi, 2 nodes) at 10 cannot run with n1 down;
			// H (hi, 1 node) at 20, behind it, preempts L (CANCEL) and
			// runs [20, 320). n1 is back at 500: X [500, 600). (Had X
			// blocked hi, H would have waited until X preempted L at 500,
			// then run [600, 900).)
			name: "a job needing more nodes than are up does not block",
			c: policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "h100", 64, 524288, 3),
				policytest.Node("n1", 8, "h100", 64, 524288, 3)}, "lo", "hi"),
			args: func(a *slurm.Args) { a.PreemptMode = "CANCEL" },
			cfg: func(c *sim.Config) {
				c.NodeEvents = []sim.NodeEvent{{At: 0, Node: 1, Down: true}, {At: 500, Node: 1}}
			},
			jobs: []workload.Job{
				inPart(job("L", 0, 1000, 1000, g8), "lo"),
				inPart(job("X", 10, 100, 100, workload.Request{Nodes: 2, GPUs: 16}), "hi"),
				inPart(job("H", 20, 300, 300, g8), "hi"),
			},
			want: []life{{"L", 0, 20, "PREEMPTED", []int32{0}}, {"X", 500, 600, "COMPLETED", []int32{0, 1}},
				{"H", 20, 320, "COMPLETED", []int32{0}}},
		},
		{
			// preempt/qos on one partition: QOS high lists scavenger in
			// Preempt. S (scavenger) runs from 0; N (normal) at 50 may not
			// preempt it and waits; H (high) at 100 preempts S
			// (requeue) and runs [100,400) — it sorts before N, as a job
			// that can preempt does. N follows [400,700); S, held until
			// 220, reruns [700,1700).
			name: "qos",
			c:    policytest.GPUNodes(1, 8),
			args: func(a *slurm.Args) {
				a.PreemptType, a.PreemptMode = "preempt/qos", "REQUEUE"
				a.QOS = []slurm.QOSArgs{{Name: "high", Preempt: "scavenger"}, {Name: "scavenger"}, {Name: "normal"}}
			},
			jobs: []workload.Job{
				withQOS(job("S", 0, 1000, 1000, g8), "scavenger"),
				job("N", 50, 300, 300, g8),
				withQOS(job("H", 100, 300, 300, g8), "high"),
			},
			want: []life{{"S", 0, 100, "PREEMPTED", []int32{0}},
				{"S", 700, 1700, "COMPLETED", []int32{0}}, {"N", 400, 700, "COMPLETED", []int32{0}}, {"H", 100, 400, "COMPLETED", []int32{0}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := fast()
			a.PreemptType = "preempt/partition_prio"
			if tt.args != nil {
				tt.args(&a)
			}
			p, err := slurm.New(a, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := tt.c
			if c == nil {
				c = tiered()
			}
			for i := range c.Partitions {
				c.Partitions[i].PriorityTier = int32(i + 1)
			}
			cfg := sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: tt.jobs}, Policy: p, Seed: 1, Check: true, JobRequeue: true}
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			rec, err := sim.Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, lifeRuns(rec)); d != "" {
				t.Errorf("runs (-want +got):\n%s", d)
			}
		})
	}
}

// TestSlurmPreemptArgs checks the validation of the preemption arguments.
func TestSlurmPreemptArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*slurm.Args)
	}{
		{"type", func(a *slurm.Args) { a.PreemptType = "preempt/bogus" }},
		{"mode", func(a *slurm.Args) { a.PreemptMode = "SUSPEND,GANG" }},
		{"exempt", func(a *slurm.Args) { a.PreemptExemptTime = "soon" }},
		{"qos list", func(a *slurm.Args) { a.QOS = []slurm.QOSArgs{{Name: "high", Preempt: "nosuch"}} }},
		{"qos mode", func(a *slurm.Args) { a.QOS = []slurm.QOSArgs{{Name: "high", PreemptMode: "sometimes"}} }},
		{"reorder count", func(a *slurm.Args) { a.PreemptReorderCount = -1 }},
		{"reorder_count", func(a *slurm.Args) { a.PreemptParameters = "reorder_count=many" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := slurm.DefaultArgs()
			tc.mod(&a)
			if _, err := slurm.New(a, nil); err == nil {
				t.Errorf("no error")
			}
		})
	}
}

// TestSlurmPreemptConformance runs the conformance workloads with p1 in a
// higher PriorityTier than p0 under preempt/partition_prio (REQUEUE or
// CANCEL, with and without grace time and JobRequeue) and with a
// maintenance window: no invalid decision, no oversubscription (Check),
// every job that may run ends (none left UNFINISHED), and the same seed
// gives the same record.
func TestSlurmPreemptConformance(t *testing.T) {
	for _, seed := range policytest.Seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c, tr := policytest.Workload(seed)
			c.Partitions[1].PriorityTier = 2
			last := tr.Jobs[len(tr.Jobs)-1].Submit
			cfg := sim.Config{Cluster: c, Trace: tr, Seed: seed, Check: true, JobRequeue: seed%2 == 0,
				Reservations: []sim.AdvanceReservation{{Name: "maint", Start: last / 3, End: last/3 + 3600, Nodes: []int32{0}}}}
			if seed%3 == 0 {
				cfg.PreemptGraceTime = 45
			}
			runOnce := func() *sim.Record {
				a := slurm.DefaultArgs()
				a.PreemptType, a.PreemptMode = "preempt/partition_prio", []string{"REQUEUE", "CANCEL"}[seed%2]
				p, err := slurm.New(a, nil)
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
			preempted := 0
			for i := range rec.Jobs {
				if rec.Jobs[i].State == sim.Unfinished {
					t.Errorf("job %s never finished", tr.Jobs[i].ID)
				}
				if rec.Jobs[i].State == sim.Preempted {
					preempted++
				}
			}
			for _, r := range rec.Runs {
				if r.State == sim.Preempted {
					preempted++
				}
			}
			t.Logf("seed %d: %d preemptions", seed, preempted)
		})
	}
}

// youngestJobs is the trace of the youngest-first cases of
// TestSlurmPreemption.
// strictJobs is the trace of the reorder cases of TestSlurmPreemption.
func strictJobs() []workload.Job {
	g8 := workload.Request{GPUs: 8}
	return []workload.Job{
		inPart(job("P", 0, 5, 5, workload.Request{Nodes: 3, GPUs: 24}), "hi"),
		inPart(job("X", 0, 1000, 1000, g8), "lo"),
		inPart(job("Y", 10, 1000, 1000, g8), "lo"),
		inPart(job("Z", 20, 1000, 1000, workload.Request{Nodes: 2, GPUs: 16}), "lo"),
		inPart(job("H", 100, 300, 300, workload.Request{Nodes: 3, GPUs: 24}), "hi"),
	}
}

func youngestJobs() []workload.Job {
	g8 := workload.Request{GPUs: 8}
	return []workload.Job{
		inPart(job("A", 0, 1000, 1000, g8), "lo"),
		inPart(job("B", 10, 1000, 1000, g8), "lo"),
		inPart(job("H", 100, 300, 300, workload.Request{Nodes: 1, GPUs: 8}), "hi"),
	}
}
