package policies_test

import (
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
			p, err := catalog.Builtin().New("slurm", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Begin(sim.RunInfo{Cluster: c, Jobs: 1}); err != nil {
				t.Fatal(err)
			}
			if got := p.(*slurm.Policy).Args().Placement; got != tc.want {
				t.Errorf("placement %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTopologyBlockLevels: BlockSizes confine a job to one block of the
// level its size needs (eval_nodes_block, _get_block_level). Four base
// blocks of 18 nodes, b1 gb01-18 .. b4 gb55-72 (indices 0-17, 18-35,
// 36-53, 54-71). Free nodes: b1 all 18; b2 5 (gb32-36); b3 16 (gb39-54);
// b4 16 (gb57-72).
func TestTopologyBlockLevels(t *testing.T) {
	seq := func(lo, hi int32) []int32 {
		var out []int32
		for i := lo; i <= hi; i++ {
			out = append(out, i)
		}
		return out
	}
	busy := func(i int) bool { return i >= 18 && i < 31 || i >= 36 && i < 38 || i >= 54 && i < 56 }
	for _, tt := range []struct {
		name, sizes string
		nodes       int32
		busy        func(int) bool
		want        []int32
	}{
		// 30 nodes need ceil(30/18) = 2 base blocks: level 1, the
		// 36-node blocks {b1,b2} (18+5 = 23 free, short) and {b3,b4}
		// (16+16 = 32). In {b3,b4} neither holds 30: the larger, later
		// b4 (16), then b3 holds the other 14 (gb39-52). Without levels
		// the job would take b1's 18 and 12 of b4, two racks that form
		// no 36-node block.
		{"30 nodes in one 36-node block", "  block_sizes: [18, 36]\n", 30, busy, append(seq(38, 51), seq(56, 71)...)},
		// Slurm's default levels (1 to 16 base blocks) give the same.
		{"default levels: the same", "", 30, busy, append(seq(38, 51), seq(56, 71)...)},
		// BlockSizes=18: no level holds 30, so the whole topology is one
		// block, within at most ceil(30/18) = 2 base blocks (the
		// llblocks): the two fullest hold 18+16 = 34 >= 30. b1 (18, the
		// largest) first; 12 left: b3 and b4 (16) both hold it, equal,
		// the later b4 (gb57-68).
		{"no level: the two fullest base blocks", "  block_sizes: [18]\n", 30, busy, append(seq(0, 17), seq(56, 67)...)},
		// 10 free in every base block: 40 free, but the two fullest hold
		// 20 < 30, so the job does not fit (Slurm's fewest base blocks).
		{"no level: not within two base blocks", "  block_sizes: [18]\n", 30, func(i int) bool { return i%18 >= 10 }, nil},
		// Same free nodes, default levels: level 1, each 36-node block
		// has 20 < 30 free: no fit either.
		{"default levels: no 36-node block holds it", "", 30, func(i int) bool { return i%18 >= 10 }, nil},
		// 20 nodes with 10 free per block, BlockSizes=18,72: level 1 is
		// not configured, so level 2 (all four, one block) with llblock
		// level 0: at most 2 base blocks, 10+10 = 20 >= 20. None holds
		// 20 alone; of equals the later wins (nodes >= best): b4. Then
		// 10 left: b1..b3 each hold exactly 10, again the later: b3.
		{"level 2 with base-block llblocks", "  block_sizes: [18, 72]\n", 20, func(i int) bool { return i%18 >= 10 }, append(seq(36, 45), seq(54, 63)...)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := hwmodels.ParseCluster([]byte(`version: 1
name: nvl
node_groups:
  - {name: "gb[01-72]", gpu: {model: h100-sxm-80gb, count: 4}, cpus: 72, memory: 512G}
fabric:
  kind: fat-tree
  leaf_size: 18
  blocks:
    - {name: b1, nodes: "gb[01-18]"}
    - {name: b2, nodes: "gb[19-36]"}
    - {name: b3, nodes: "gb[37-54]"}
    - {name: b4, nodes: "gb[55-72]"}
`+tt.sizes), "nvl.yaml")
			if err != nil {
				t.Fatal(err)
			}
			fr := make([]sim.NodeState, 72)
			for i := range fr {
				fr[i] = sim.NodeState{FreeGPUs: 4, FreeCPUs: 72, FreeMemMB: 524288}
				if tt.busy(i) {
					fr[i].FreeGPUs = 0
				}
			}
			job := &sim.PendingJob{Parts: 1, Req: workload.Request{Nodes: tt.nodes, GPUs: 4 * tt.nodes, CPUs: tt.nodes}}
			got, ok := (&policies.TopologyBlock{}).Place(c.Nodes, fr, job, nil)
			if ok != (tt.want != nil) {
				t.Fatalf("ok = %v (%v)", ok, got)
			}
			var nodes []int32
			for _, a := range got {
				nodes = append(nodes, a.Node)
			}
			if d := cmp.Diff(tt.want, nodes); d != "" {
				t.Errorf("nodes (-want +got):\n%s", d)
			}
		})
	}
}
