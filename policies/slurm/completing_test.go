package slurm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestSlurmCompletingNodes: nodes completing a job killed at its time
// limit (gen-95 on Slurm 22.05). Four nodes of 8 GPUs, bf_interval =
// sched_interval = 1, KillWait 3. K1 (n0) and K2 (n1-n3), limit 100,
// run from 0 and are killed at 100: n0 and n1 (K2's batch host) are held
// until 103, n2 and n3 free at 100. A (1 node, limit 50), B (4 nodes,
// limit 100) and S (4 GPUs, limit 30) wait, in that order.
//
//   - 100, main pass: n2 and n3 are still completing (no main scheduler
//     runs between the kill and the backfill cycle): A does not fit, and
//     the partition is blocked.
//   - 100, backfill: A's will-run test sees the killed jobs' resources
//     free and places it on n0, completing: planned at 101, n0 reserved
//     [101, 151). B is planned after it, [151, 251). S: n0 is reserved
//     over its window, n1 is completing: planned at 101 on n1. Nothing
//     starts.
//   - 101: the main pass starts A on n2 [101, 151) (select_nodes uses a
//     node that is done); the cycles of 101 and 102 plan S on n0, still
//     completing, at the next second.
//   - 103: K1 and K2 are gone; the cycle starts S on n0 [103, 133), its
//     window before B's start. B [151, 251).
//
// Without the completing nodes the main pass of 100 started A on n2
// [100, 150) and the cycle S on n3 [100, 130); B [150, 250).
func TestSlurmCompletingNodes(t *testing.T) {
	node := func(n int32) workload.Request { return workload.Request{Nodes: n, GPUs: 8 * n} }
	jobs := []workload.Job{
		job("K1", 0, 100, 200, node(1)),
		job("K2", 0, 100, 200, node(3)),
		job("A", 10, 50, 50, node(1)),
		job("B", 11, 100, 100, node(4)),
		job("S", 12, 30, 30, workload.Request{GPUs: 4}),
	}
	want := []life{{"K1", 0, 100, "TIMEOUT", []int32{0}}, {"K2", 0, 100, "TIMEOUT", []int32{1, 2, 3}},
		{"A", 101, 151, "COMPLETED", []int32{2}}, {"B", 151, 251, "COMPLETED", []int32{0, 1, 2, 3}},
		{"S", 103, 133, "COMPLETED", []int32{0}}}
	for _, ref := range []bool{false, true} {
		a := fast()
		a.BfInterval, a.SchedInterval = 1, 1
		p, err := slurm.New(a, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Reference = ref
		rec, err := sim.Run(sim.Config{Cluster: policytest.GPUNodes(4, 8), Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true, KillWait: 3})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, lifeRuns(rec)); d != "" {
			t.Errorf("reference %v: runs (-want +got):\n%s", ref, d)
		}
	}
}
