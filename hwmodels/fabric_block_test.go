package hwmodels

import (
	"strings"
	"testing"
)

// TestFabricBlocks: fabric.blocks declares NVL72-style NVLink domains on
// any fabric kind; bad blocks fail with the block's line.
func TestFabricBlocks(t *testing.T) {
	head := "version: 1\nname: c\nnode_groups:\n  - name: \"gb[01-36]\"\n    gpu: {model: h100-sxm-80gb, count: 4}\n    cpus: 72\n    memory: 512G\n"
	ok := head + "fabric:\n  kind: fat-tree\n  leaf_size: 18\n  blocks:\n    - {name: nvl1, nodes: \"gb[01-18]\"}\n    - {name: nvl2, nodes: \"gb[19-36]\"}\n"
	c, err := ParseCluster([]byte(ok), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := c.Fabric
	if len(f.Blocks) != 2 || len(f.Blocks[1].Nodes) != 18 || f.BlockOf(0) != 0 || f.BlockOf(18) != 1 || !f.SameBlock([]int32{0, 17}) || f.SameBlock([]int32{17, 18}) {
		t.Errorf("blocks %+v: want nvl1 = nodes 0-17, nvl2 = 18-35", f.Blocks)
	}
	for _, tc := range []struct{ name, src, want string }{
		{"unknown node", head + "fabric:\n  kind: fat-tree\n  leaf_size: 18\n  blocks:\n    - {name: nvl1, nodes: \"gb[30-40]\"}\n",
			`c.yaml:12: fabric.blocks: block "nvl1": unknown node "gb37"`},
		{"node twice", head + "fabric:\n  kind: fat-tree\n  leaf_size: 18\n  blocks:\n    - {name: a, nodes: \"gb[01-18]\"}\n    - {name: b, nodes: \"gb[18-20]\"}\n",
			`c.yaml:13: fabric.blocks: block "b": node "gb18" is already in block "a"`},
		{"no nodes", head + "fabric:\n  kind: fat-tree\n  leaf_size: 18\n  blocks:\n    - {name: a}\n",
			`c.yaml:12: fabric.blocks[0].nodes: required (a hostlist of the block's nodes)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCluster([]byte(tc.src), "c.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
