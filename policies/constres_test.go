package policies_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestConsTres: select/cons_tres's _eval_nodes on four nodes of 8 GPUs
// and 32 CPUs, worked by hand from its consecutive sets (the nodes the
// job fits on, in order) and their available CPUs.
func TestConsTres(t *testing.T) {
	nodes := []hwmodels.Node{
		policytest.Node("n0", 8, "h100", 32, 256000, 0b01),
		policytest.Node("n1", 8, "h100", 32, 256000, 0b01),
		policytest.Node("n2", 8, "h100", 32, 256000, 0b01),
		policytest.Node("n3", 8, "h100", 32, 256000, 0b11),
	}
	const mem = 256000
	tests := []struct {
		name  string
		free  []sim.NodeState
		part  int32
		parts uint64
		req   workload.Request
		want  []sim.NodeAlloc
	}{
		{
			// gen-77/run1 at 08:02:01 (job 19_2): n0 holds a 2-GPU job
			// (24 CPUs free), n1 is idle, n2 full, n3 idle. Sets {n0,n1}
			// with 24 + 32 = 56 CPUs and {n3} with 32: both hold the 4
			// CPUs, {n3} is tighter. Best fit would take n0.
			name: "one node: the tightest set, not the fullest node",
			free: free(6, 24, mem-64000, 8, 32, mem, 0, 0, 0, 8, 32, mem),
			req:  workload.Request{Nodes: 1, GPUs: 1, CPUs: 4},
			want: []sim.NodeAlloc{{Node: 3, GPUs: 1, CPUs: 4}},
		},
		{
			// One set {n0..n3}; in it the node with the fewest free CPUs
			// that holds 4: n1 (8), not n0 (12) or the idle ones.
			name: "one node: in the set, the fewest available CPUs",
			free: free(8, 12, mem, 8, 8, mem, 8, 32, mem, 8, 32, mem),
			req:  workload.Request{Nodes: 1, GPUs: 1, CPUs: 4},
			want: []sim.NodeAlloc{{Node: 1, GPUs: 1, CPUs: 4}},
		},
		{
			// Sets {n0,n1} (64 CPUs, 2 nodes) and {n3} (32, 1 node).
			// Two nodes of 8 CPUs: {n3} cannot hold it (one node), so
			// {n0,n1} is the only sufficient set: its first two nodes.
			name: "two nodes: the sufficient set, from its first node",
			free: free(8, 32, mem, 8, 32, mem, 0, 0, 0, 8, 32, mem),
			req:  workload.Request{Nodes: 2, GPUs: 16, CPUs: 16},
			want: []sim.NodeAlloc{{Node: 0, GPUs: 8, CPUs: 8}, {Node: 1, GPUs: 8, CPUs: 8}},
		},
		{
			// Sets {n0,n1} with 4 + 4 = 8 CPUs (sufficient for 2 x 4)
			// and {n3} with 32 (one node: not sufficient). The source's
			// test takes {n3} because it has more CPUs, though it cannot
			// hold the job; then {n0,n1} for the second node: n3 and n0.
			name: "two nodes: a bigger insufficient set first, as written",
			free: free(8, 4, mem, 8, 4, mem, 0, 0, 0, 8, 32, mem),
			req:  workload.Request{Nodes: 2, GPUs: 2, CPUs: 8},
			want: []sim.NodeAlloc{{Node: 0, GPUs: 1, CPUs: 4}, {Node: 3, GPUs: 1, CPUs: 4}},
		},
		{
			// No set of two consecutive nodes: {n0} and {n2} hold one
			// node each. The bigger first ({n2}: 32 CPUs), then {n0}.
			name: "sets that each hold part",
			free: free(8, 16, mem, 0, 0, 0, 8, 32, mem, 0, 0, 0),
			req:  workload.Request{Nodes: 2, GPUs: 16, CPUs: 16},
			want: []sim.NodeAlloc{{Node: 0, GPUs: 8, CPUs: 8}, {Node: 2, GPUs: 8, CPUs: 8}},
		},
		{
			name: "does not fit",
			free: free(8, 32, mem, 0, 0, 0, 0, 0, 0, 0, 0, 0),
			req:  workload.Request{Nodes: 2, GPUs: 16, CPUs: 16},
		},
		{
			name: "other partition of the job when its first has no room",
			free: free(0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 32, mem),
			part: 1, parts: 0b11,
			req:  workload.Request{Nodes: 1, GPUs: 8, CPUs: 8},
			want: []sim.NodeAlloc{{Node: 3, GPUs: 8, CPUs: 8}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := &sim.PendingJob{Part: tt.part, Parts: tt.parts | 1<<uint(tt.part), Req: tt.req}
			p, err := policies.NewPlacer(policies.PlacementConsTres)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := p.Place(nodes, tt.free, job, nil)
			if ok != (tt.want != nil) {
				t.Fatalf("ok = %v, got %v", ok, got)
			}
			if d := cmp.Diff(tt.want, got); ok && d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
