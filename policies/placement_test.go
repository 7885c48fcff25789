package policies_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

func TestBestFit(t *testing.T) {
	// Four 8-GPU h100 nodes in partition 0; n3 also in partition 1.
	nodes := []hwmodels.Node{
		policytest.Node("n0", 8, "h100", 64, 524288, 0b01),
		policytest.Node("n1", 8, "h100", 64, 524288, 0b01),
		policytest.Node("n2", 8, "h100", 64, 524288, 0b01),
		policytest.Node("n3", 8, "h100", 64, 524288, 0b11),
	}
	tests := []struct {
		name  string
		free  []sim.NodeState
		part  int32
		parts uint64
		req   workload.Request
		want  []sim.NodeAlloc
	}{
		{
			name: "one node: the one left with the fewest free GPUs",
			free: free(8, 64, 524288, 3, 64, 524288, 5, 64, 524288, 4, 64, 524288),
			req:  workload.Request{Nodes: 1, GPUs: 3, CPUs: 8},
			want: []sim.NodeAlloc{{Node: 1, GPUs: 3, CPUs: 8}},
		},
		{
			name: "two nodes: the two tightest, in node order",
			free: free(8, 64, 524288, 3, 64, 524288, 5, 64, 524288, 4, 64, 524288),
			req:  workload.Request{Nodes: 2, GPUs: 8, CPUs: 8},
			// Shares of 4: n3 is left with 0, n2 with 1, n0 with 4; n1
			// cannot hold one.
			want: []sim.NodeAlloc{{Node: 2, GPUs: 4, CPUs: 4}, {Node: 3, GPUs: 4, CPUs: 4}},
		},
		{
			name: "spread: one node holding all units, the tightest",
			free: free(8, 64, 524288, 3, 64, 524288, 5, 64, 524288, 6, 64, 524288),
			req:  workload.Request{GPUs: 5, CPUs: 5},
			want: []sim.NodeAlloc{{Node: 2, GPUs: 5, CPUs: 5}},
		},
		{
			name: "spread: no node holds all: the biggest first",
			free: free(2, 64, 524288, 3, 64, 524288, 5, 64, 524288, 1, 64, 524288),
			req:  workload.Request{GPUs: 7, CPUs: 7},
			// n2 (5) first, then the rest (2) on the tightest that holds
			// it: n0 (2 free, 0 left).
			want: []sim.NodeAlloc{{Node: 0, GPUs: 2, CPUs: 2}, {Node: 2, GPUs: 5, CPUs: 5}},
		},
		{
			name: "does not fit",
			free: free(2, 64, 524288, 3, 64, 524288, 5, 64, 524288, 1, 64, 524288),
			req:  workload.Request{GPUs: 12, CPUs: 12},
		},
		{
			name: "other partition of the job when its first has no room",
			free: free(0, 64, 524288, 0, 64, 524288, 0, 64, 524288, 8, 64, 524288),
			part: 1, parts: 0b11,
			req:  workload.Request{Nodes: 1, GPUs: 8, CPUs: 8},
			want: []sim.NodeAlloc{{Node: 3, GPUs: 8, CPUs: 8}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := &sim.PendingJob{Part: tt.part, Parts: tt.parts | 1<<uint(tt.part), Req: tt.req}
			got, ok := (&policies.BestFit{}).Place(nodes, tt.free, job, nil)
			if ok != (tt.want != nil) {
				t.Fatalf("ok = %v, got %v", ok, got)
			}
			if d := cmp.Diff(tt.want, got); ok && d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// fatTree is 8 one-GPU-type nodes of 8 GPUs, 4 per leaf on a 2:1 tree.
func fatTree(t *testing.T) *hwmodels.Cluster {
	t.Helper()
	c, err := hwmodels.ParseCluster([]byte(`version: 1
name: tree
node_groups:
  - {name: "n[0-7]", gpu: {model: h100-sxm-80gb, count: 8}, cpus: 64, memory: 512G}
fabric: {kind: fat-tree, leaf_size: 4, oversubscription: "2:1"}
`), "tree.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTopologyTree(t *testing.T) {
	c := fatTree(t)
	// leaf01 (n0-n3): n0, n1 free, n2, n3 busy; leaf02 (n4-n7): all free.
	busy := sim.NodeState{FreeCPUs: 64, FreeMemMB: 524288}
	idle := sim.NodeState{FreeGPUs: 8, FreeCPUs: 64, FreeMemMB: 524288}
	fr := []sim.NodeState{idle, idle, busy, busy, idle, idle, idle, idle}
	nodesOf := func(a []sim.NodeAlloc) []int32 {
		var out []int32
		for _, x := range a {
			out = append(out, x.Node)
		}
		return out
	}
	for _, tt := range []struct {
		name      string
		nodes     int32
		maxLeaves int32
		want      []int32
		oversub   float64
	}{
		// First fit would take n0, n1, n4 over two leaves; the tree placer
		// keeps the job under leaf02, the tightest leaf that holds it.
		{"3 nodes under one leaf", 3, 0, []int32{4, 5, 6}, 1},
		{"2 nodes: the tightest leaf is leaf01", 2, 0, []int32{0, 1}, 1},
		{"5 nodes span two leaves, the fullest first", 5, 0, []int32{0, 4, 5, 6, 7}, 2},
		{"--switches=1 refuses a spread", 5, 1, nil, 0},
		{"7 nodes do not fit", 7, 0, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			job := &sim.PendingJob{Part: 0, Parts: 1, Req: workload.Request{Nodes: tt.nodes, GPUs: 8 * tt.nodes, CPUs: tt.nodes}}
			p := &policies.TopologyTree{MaxLeaves: tt.maxLeaves}
			got, ok := p.Place(c.Nodes, fr, job, nil)
			if ok != (tt.want != nil) {
				t.Fatalf("ok = %v (%v)", ok, got)
			}
			if !ok {
				return
			}
			if d := cmp.Diff(tt.want, nodesOf(got)); d != "" {
				t.Errorf("nodes (-want +got):\n%s", d)
			}
			if err := policytest.Satisfies(c.Nodes, 0, &job.Req, got); err != nil {
				t.Error(err)
			}
			if o := c.Fabric.PathOversubscription(nodesOf(got)); o != tt.oversub {
				t.Errorf("oversubscription %v, want %v", o, tt.oversub)
			}
		})
	}
	// Spread jobs: 12 GPUs fit in leaf02 alone (32 free) — not n0+n1 (16).
	job := &sim.PendingJob{Parts: 1, Req: workload.Request{GPUs: 20, CPUs: 20}}
	got, ok := (&policies.TopologyTree{}).Place(c.Nodes, fr, job, nil)
	if !ok || c.Fabric.Leaves(nodesOf(got)) != 1 || got[0].Node < 4 {
		t.Errorf("spread job: %v %v", got, ok)
	}
	// Without a fabric it is best fit.
	u := hwmodels.UniformCluster("u", 3, 64, 8, 524288)
	got, ok = (&policies.TopologyTree{}).Place(u.Nodes, []sim.NodeState{idle, {FreeGPUs: 2, FreeCPUs: 64, FreeMemMB: 524288}, idle}, &sim.PendingJob{Parts: 1, Req: workload.Request{Nodes: 1, GPUs: 2, CPUs: 1}}, nil)
	if !ok || got[0].Node != 1 {
		t.Errorf("no fabric: %v %v", got, ok)
	}
}

// strictDecode decodes YAML args strictly, as a scenario's policy args are.
func strictDecode(src string) func(any) error {
	return func(into any) error {
		dec := yaml.NewDecoder(bytes.NewReader([]byte(src)))
		dec.KnownFields(true)
		return dec.Decode(into)
	}
}

func TestPlacementArg(t *testing.T) {
	reg := catalog.Builtin()
	for _, name := range []string{"fifo", "easy"} {
		for _, pl := range []string{"first-fit", "best-fit", "cons-tres", "topology-tree", "mig-packing"} {
			if _, err := reg.New(name, strictDecode("placement: "+pl+"\n")); err != nil {
				t.Errorf("%s placement %s: %v", name, pl, err)
			}
		}
		if _, err := reg.New(name, nil); err != nil {
			t.Errorf("%s without args: %v", name, err)
		}
		_, err := reg.New(name, strictDecode("placement: worst-fit\n"))
		if err == nil || !strings.Contains(err.Error(), `unknown placement "worst-fit" (want first-fit, best-fit, cons-tres, topology-tree, topology-block, mig-packing)`) {
			t.Errorf("%s unknown placement: %v", name, err)
		}
		if _, err := reg.New(name, strictDecode("bf_window: 3\n")); err == nil {
			t.Errorf("%s accepted an unknown argument", name)
		}
	}
}

// TestPlacementConformance runs the policy conformance harness with the
// new placers behind EASY and FIFO.
func TestPlacementConformance(t *testing.T) {
	for _, pl := range []string{"best-fit", "topology-tree"} {
		t.Run("easy/"+pl, func(t *testing.T) {
			policytest.Run(t, func(func(any) error) (sim.Policy, error) {
				return policies.EASYFactory(strictDecode("placement: " + pl + "\n"))
			})
		})
		t.Run("fifo/"+pl, func(t *testing.T) {
			policytest.Run(t, func(func(any) error) (sim.Policy, error) {
				return policies.FIFOFactory(strictDecode("placement: " + pl + "\n"))
			})
		})
	}
}

func TestFragmentation(t *testing.T) {
	nodes := []hwmodels.Node{
		policytest.Node("n0", 8, "h100", 64, 524288, 1),
		policytest.Node("n1", 8, "h100", 64, 524288, 1),
		policytest.Node("n2", 8, "a100", 64, 524288, 1),
	}
	fr := free(3, 64, 524288, 3, 64, 524288, 8, 64, 524288)
	pend := func(reqs ...workload.Request) []sim.PendingJob {
		var out []sim.PendingJob
		for _, r := range reqs {
			out = append(out, sim.PendingJob{Parts: 1, Req: r})
		}
		return out
	}
	for _, tt := range []struct {
		name string
		jobs []sim.PendingJob
		want policies.FragStats
	}{
		// Nothing waits: nothing is denied.
		{"no pending", nil, policies.FragStats{FreeGPUs: 14}},
		// 4-GPU shares fit only n2 (8 free: two shares): n0 and n1's 6 are stranded.
		{"4 per node", pend(workload.Request{Nodes: 1, GPUs: 4, CPUs: 4}), policies.FragStats{FreeGPUs: 14, UsableGPUs: 8, StrandedGPUs: 6}},
		// A 1-GPU job can use every free GPU.
		{"1 GPU", pend(workload.Request{Nodes: 1, GPUs: 4, CPUs: 4}, workload.Request{GPUs: 1, CPUs: 1}), policies.FragStats{FreeGPUs: 14, UsableGPUs: 14}},
		// h100-only 4-GPU jobs: n2 is a100, the h100s have 3 free each.
		{"typed", pend(workload.Request{Nodes: 1, GPUs: 4, CPUs: 4, GPUType: "h100"}), policies.FragStats{FreeGPUs: 14, StrandedGPUs: 14}},
		// CPU-only jobs do not count.
		{"cpu only", pend(workload.Request{CPUs: 4}), policies.FragStats{FreeGPUs: 14}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := policies.Fragmentation(nodes, fr, tt.jobs)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
