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

// TestTopologyBlock places jobs on two NVL72-style blocks of 18 nodes
// (4 GPUs each) as eval_nodes_block does. nvl1 (gb01-gb18) has gb01-gb08
// busy, so 10 free nodes; nvl2 (gb19-gb36) 18 free; gb37, in no block,
// is free but never used.
func TestTopologyBlock(t *testing.T) {
	c, err := hwmodels.ParseCluster([]byte(`version: 1
name: nvl
node_groups:
  - {name: "gb[01-37]", gpu: {model: h100-sxm-80gb, count: 4}, cpus: 72, memory: 512G}
fabric:
  kind: fat-tree
  leaf_size: 18
  blocks:
    - {name: nvl1, nodes: "gb[01-18]"}
    - {name: nvl2, nodes: "gb[19-36]"}
`), "nvl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	idle := sim.NodeState{FreeGPUs: 4, FreeCPUs: 72, FreeMemMB: 524288}
	fr := make([]sim.NodeState, 37)
	for i := range fr {
		fr[i] = idle
		if i < 8 {
			fr[i].FreeGPUs = 0
		}
	}
	seq := func(lo, hi int32) []int32 {
		var out []int32
		for i := lo; i <= hi; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		nodes int32
		want  []int32
	}{
		// Both blocks hold 8 nodes; nvl1 has fewer usable (10 < 18):
		// the tightest block, gb09-gb16 (best fit, lowest index).
		{"8 nodes: the tightest block", 8, seq(8, 15)},
		// Only nvl2 holds 12.
		{"12 nodes: the block that holds it", 12, seq(18, 29)},
		// 20 nodes fit no block: base blocks fewest first, the largest
		// (nvl2, 18) then the one that holds the rest (nvl1, 2).
		{"20 nodes: two base blocks, largest first", 20, append(seq(8, 9), seq(18, 35)...)},
		// 29 > 28 usable nodes in blocks: gb37 is not in a block.
		{"29 nodes do not fit", 29, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			job := &sim.PendingJob{Parts: 1, Req: workload.Request{Nodes: tt.nodes, GPUs: 4 * tt.nodes, CPUs: tt.nodes}}
			got, ok := (&policies.TopologyBlock{}).Place(c.Nodes, fr, job, nil)
			if ok != (tt.want != nil) {
				t.Fatalf("ok = %v (%v)", ok, got)
			}
			if !ok {
				return
			}
			var nodes []int32
			for _, a := range got {
				nodes = append(nodes, a.Node)
			}
			if d := cmp.Diff(tt.want, nodes); d != "" {
				t.Errorf("nodes (-want +got):\n%s", d)
			}
			if err := policytest.Satisfies(c.Nodes, 0, &job.Req, got); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSlurmTopologyBlock: under TopologyPlugin=topology/block with blocks
// declared, the slurm policy places with topology-block, as Slurm 23.11+
// calls eval_nodes_block; without blocks it keeps first-fit.
func TestSlurmTopologyBlock(t *testing.T) {
	spec := `version: 1
name: nvl
node_groups:
  - {name: "gb[01-36]", gpu: {model: h100-sxm-80gb, count: 4}, cpus: 72, memory: 512G}
slurm: {settings: {TopologyPlugin: topology/block}}
fabric:
  kind: fat-tree
  leaf_size: 18
`
	for _, tc := range []struct {
		name, blocks, want string
	}{
		{"blocks", "  blocks: [{name: nvl1, nodes: \"gb[01-18]\"}, {name: nvl2, nodes: \"gb[19-36]\"}]\n", policies.PlacementTopologyBlock},
		{"no blocks", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := hwmodels.ParseCluster([]byte(spec+tc.blocks), "nvl.yaml")
			if err != nil {
				t.Fatal(err)
			}
			p, err := policies.Builtin().New("slurm", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Begin(sim.RunInfo{Cluster: c, Jobs: 1}); err != nil {
				t.Fatal(err)
			}
			if got := p.(*policies.Slurm).Args().Placement; got != tc.want {
				t.Errorf("placement %q, want %q", got, tc.want)
			}
		})
	}
}
