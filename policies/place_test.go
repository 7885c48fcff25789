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

// free builds a free state from (gpus, cpus, memMB) triples.
func free(t ...int64) []sim.NodeState {
	var s []sim.NodeState
	for i := 0; i+2 < len(t); i += 3 {
		s = append(s, sim.NodeState{FreeGPUs: int32(t[i]), FreeCPUs: int32(t[i+1]), FreeMemMB: t[i+2]})
	}
	return s
}

func TestFirstFit(t *testing.T) {
	// Three 8-GPU nodes: n0 and n1 are h100 in partitions 0 and 1, n2 is
	// a100 in partition 0 only. Each has 64 CPUs and 512 GiB.
	nodes := []hwmodels.Node{
		policytest.Node("n0", 8, "h100", 64, 524288, 0b11),
		policytest.Node("n1", 8, "h100", 64, 524288, 0b11),
		policytest.Node("n2", 8, "a100", 64, 524288, 0b01),
	}
	all := free(8, 64, 524288, 8, 64, 524288, 8, 64, 524288)
	prefix := []sim.NodeAlloc{{Node: 99}} // Place appends after what out holds
	tests := []struct {
		name string
		free []sim.NodeState
		part int32
		req  workload.Request
		want []sim.NodeAlloc // nil: does not fit
	}{
		{
			name: "spread GPUs fill the lowest-numbered node first",
			free: all, req: workload.Request{GPUs: 3, CPUs: 6},
			want: []sim.NodeAlloc{{Node: 0, GPUs: 3, CPUs: 6}},
		},
		{
			name: "spread GPUs span nodes, taking what each has",
			free: free(2, 64, 524288, 8, 64, 524288, 8, 64, 524288),
			req:  workload.Request{GPUs: 6, CPUs: 12, MemMB: 6000},
			// 2 CPUs and 1000 MiB per GPU unit.
			want: []sim.NodeAlloc{{Node: 0, GPUs: 2, CPUs: 4, MemMB: 2000}, {Node: 1, GPUs: 4, CPUs: 8, MemMB: 4000}},
		},
		{
			name: "CPUs per unit limit the units a node holds",
			// 4 GPUs with 64 CPUs: 16 CPUs per unit; n0 has 32 CPUs free, so 2 units.
			free: free(8, 32, 524288, 8, 64, 524288, 8, 64, 524288),
			req:  workload.Request{GPUs: 4, CPUs: 64},
			want: []sim.NodeAlloc{{Node: 0, GPUs: 2, CPUs: 32}, {Node: 1, GPUs: 2, CPUs: 32}},
		},
		{
			name: "memory per unit limits the units a node holds",
			// 3 GPUs with 300000 MiB: 100000 per unit; n0 has 150000 free, so 1 unit.
			free: free(8, 64, 150000, 8, 64, 524288, 8, 64, 524288),
			req:  workload.Request{GPUs: 3, MemMB: 300000},
			want: []sim.NodeAlloc{{Node: 0, GPUs: 1, MemMB: 100000}, {Node: 1, GPUs: 2, MemMB: 200000}},
		},
		{
			name: "multi-node job skips nodes without the per-node share",
			// 2 nodes × 4 GPUs; n0 has only 3 free.
			free: free(3, 64, 524288, 8, 64, 524288, 8, 64, 524288),
			req:  workload.Request{Nodes: 2, GPUs: 8, CPUs: 10, MemMB: 3},
			// Per node: 4 GPUs, ceil(10/2)=5 CPUs, ceil(3/2)=2 MiB.
			want: []sim.NodeAlloc{{Node: 1, GPUs: 4, CPUs: 5, MemMB: 2}, {Node: 2, GPUs: 4, CPUs: 5, MemMB: 2}},
		},
		{
			name: "multi-node job needs distinct nodes",
			free: free(8, 64, 524288, 0, 64, 524288, 0, 64, 524288),
			req:  workload.Request{Nodes: 2, GPUs: 2},
		},
		{
			name: "CPU-only spread job counts CPUs",
			free: free(8, 10, 524288, 8, 64, 524288, 8, 64, 524288),
			req:  workload.Request{CPUs: 30, MemMB: 30},
			want: []sim.NodeAlloc{{Node: 0, CPUs: 10, MemMB: 10}, {Node: 1, CPUs: 20, MemMB: 20}},
		},
		{
			name: "GPU type filter",
			free: all, req: workload.Request{GPUs: 1, GPUType: "a100"},
			want: []sim.NodeAlloc{{Node: 2, GPUs: 1}},
		},
		{
			name: "partition filter",
			free: free(8, 64, 524288, 8, 64, 524288, 8, 64, 524288),
			part: 1, req: workload.Request{GPUs: 17},
		},
		{
			name: "partition filter places on partition nodes only",
			free: free(0, 64, 524288, 8, 64, 524288, 8, 64, 524288),
			part: 1, req: workload.Request{GPUs: 1},
			want: []sim.NodeAlloc{{Node: 1, GPUs: 1}},
		},
		{
			name: "empty request takes one node",
			free: all, req: workload.Request{MemMB: 100},
			want: []sim.NodeAlloc{{Node: 0, MemMB: 100}},
		},
		{
			name: "spread job that does not fit leaves out unchanged",
			free: free(8, 64, 524288, 8, 64, 524288, 7, 64, 524288),
			req:  workload.Request{GPUs: 24},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]sim.NodeState(nil), tt.free...)
			job := &sim.PendingJob{Ref: 1, Limit: 60, Part: tt.part, Req: tt.req}
			out := append(make([]sim.NodeAlloc, 0, 8), prefix...)
			got, ok := policies.FirstFit{}.Place(nodes, tt.free, job, out)
			if ok != (tt.want != nil) {
				t.Fatalf("Place ok = %v, want %v (got %v)", ok, tt.want != nil, got)
			}
			if diff := cmp.Diff(append(append([]sim.NodeAlloc(nil), prefix...), tt.want...), got); diff != "" {
				t.Errorf("Place (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.free); diff != "" {
				t.Errorf("Place modified free (-before +after):\n%s", diff)
			}
			if ok {
				if err := policytest.Satisfies(nodes, tt.part, &tt.req, got[len(prefix):]); err != nil {
					t.Errorf("allocation does not satisfy the request: %v", err)
				}
			}
		})
	}
}
