package hwmodels

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestImportTopologyBlock imports testdata/topoblock: four base blocks of
// four nodes (r1..r4, n01-n16), BlockSizes=4,8, two nodes in no block and
// an unknown name in r4. topology.conf is found beside slurm.conf under
// TopologyPlugin=topology/block.
func TestImportTopologyBlock(t *testing.T) {
	files := memFiles{}
	for _, f := range []string{"slurm.conf", "topology.conf"} {
		data, err := os.ReadFile("testdata/topoblock/" + f)
		if err != nil {
			t.Fatal(err)
		}
		files["/etc/slurm/"+f] = string(data)
	}
	c, warns, err := importMem(t, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"/etc/slurm/topology.conf: 1 node name(s) in BlockName lines are not defined in slurm.conf (x99); dropped, as Slurm does",
		"/etc/slurm/topology.conf: 2 node(s) are in no block (n[17-18]): topology/block never places jobs on them",
	} {
		if !slices.Contains(warns, want) {
			t.Errorf("warnings %q lack %q", warns, want)
		}
	}
	f := c.Fabric
	if f == nil || len(f.Blocks) != 4 {
		t.Fatalf("fabric %+v", f)
	}
	// Block k (1-based) holds n[4k-3 .. 4k]; n17, n18 (indices 16, 17)
	// none.
	for i, n := range c.Nodes {
		want := int32(0)
		if i < 16 {
			want = int32(i/4 + 1)
		}
		if n.Block != want {
			t.Errorf("%s in block %d, want %d", n.Name, n.Block, want)
		}
		if (n.BlockLevels != nil) != (want > 0) {
			t.Errorf("%s BlockLevels %v", n.Name, n.BlockLevels)
		}
	}
	// BlockSizes=4,8: base 4 nodes, levels 1 and 2 base blocks (bits 0, 1).
	if f.Levels != (BlockLevels{Base: 4, Levels: 0b11}) {
		t.Errorf("levels %+v, want base 4, levels 0b11", f.Levels)
	}
	// The synthesized tree: switches r1..r4 (0..3) under top (4).
	if got := f.LowestCommonSwitch([]int32{0, 3}); got != 0 {
		t.Errorf("n01,n04 meet at switch %d, want 0 (r1)", got)
	}
	if got := f.LowestCommonSwitch([]int32{0, 4}); got != 4 {
		t.Errorf("n01,n05 meet at switch %d, want 4 (top)", got)
	}
	if v, _ := c.Slurm.Get("TopologyPlugin"); v != "topology/block" {
		t.Errorf("TopologyPlugin kept as %q", v)
	}
}

// TestImportTopologyBlockDefaults: without BlockSizes the base is the
// first block's node count and the levels are 1 to 16 base blocks;
// SwitchName lines, when there are some, are the fabric the blocks hang
// off.
func TestImportTopologyBlockDefaults(t *testing.T) {
	files := memFiles{
		"/etc/slurm/slurm.conf":    "TopologyPlugin=topology/block\nNodeName=g[1-6] CPUs=8 RealMemory=1000\n",
		"/etc/slurm/topology.conf": "BlockName=b1 Nodes=g[1-2]\nBlockName=b2 Nodes=g[3-5]\nSwitchName=l1 Nodes=g[1-3]\nSwitchName=l2 Nodes=g[4-6]\nSwitchName=s Switches=l[1-2]\n",
	}
	c, warns, err := importMem(t, files)
	if err != nil {
		t.Fatal(err)
	}
	if c.Fabric.Levels != (BlockLevels{Base: 2, Levels: DefaultBlockLevels}) {
		t.Errorf("levels %+v", c.Fabric.Levels)
	}
	if c.Fabric.LowestCommonSwitch([]int32{0, 2}) != 0 || c.Nodes[4].Block != 2 || c.Nodes[5].Block != 0 {
		t.Errorf("fabric %+v, nodes %+v", c.Fabric, c.Nodes)
	}
	want := "/etc/slurm/topology.conf:3: SwitchName lines are topology/tree's (topology/block rejects them); imported as the fabric the blocks hang off"
	if !slices.Contains(warns, want) {
		t.Errorf("warnings %q lack %q", warns, want)
	}
}

// TestImportTopologyBlockErrors: each check of block_record.c's
// _read_topo_file and block_record_validate (and a node in two blocks,
// which schedsim cannot model) is one line naming file, line and key.
func TestImportTopologyBlockErrors(t *testing.T) {
	const slurm = "NodeName=n[1-8] CPUs=1\n"
	for _, tt := range []struct {
		name, topo, want string
		kind             error
	}{
		{"node in two blocks", "BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[2-3]\n",
			"topology.conf:2: BlockName: block b2: node n2 is already in block b1 (line 1)", ErrRange},
		{"duplicate block", "BlockName=b1 Nodes=n[1-2]\nBlockName=b1 Nodes=n[3-4]\n",
			"topology.conf:2: BlockName: block b1 is already defined on line 1", ErrDuplicate},
		{"no nodes", "BlockName=b1\n", `topology.conf:1: BlockName: block "b1" has no Nodes=`, ErrMissing},
		{"bad hostlist", "BlockName=b1 Nodes=n[1-\n", `topology.conf:1: BlockName: block b1: Nodes: hostlist "n[1-"`, ErrSyntax},
		{"bad name", "BlockName=b[1] Nodes=n1\n", `topology.conf:1: BlockName: "b[1]": want a name`, ErrSyntax},
		// 12/4 = 3 is not a power of two (_read_topo_file: log2 not whole).
		{"size not a power-of-two multiple", "BlockSizes=4,12\nBlockName=b1 Nodes=n[1-4]\n",
			"topology.conf:1: BlockSizes: size 12 is not a power-of-two multiple (1 to 32768 times) of the base block size 4", ErrRange},
		{"size not a multiple", "BlockSizes=4,6\n", "topology.conf:1: BlockSizes: size 6 is not a power-of-two multiple", ErrRange},
		{"size not a number", "BlockSizes=4,x\n", `topology.conf:1: BlockSizes: "4,x": want node counts`, ErrSyntax},
		{"size zero", "BlockSizes=0\n", "topology.conf:1: BlockSizes: size 0: want a positive node count", ErrRange},
		{"sizes twice", "BlockSizes=4\nBlockSizes=8\n", "topology.conf:2: BlockSizes: BlockSizes is already given on line 1", ErrDuplicate},
		// block_record_validate: "children count lower than bblock_node_cnt".
		{"block below the base", "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-6]\n",
			"topology.conf:2: BlockName: block b2 has 2 known node(s), fewer than the base block size 4 (the first block's node count)", ErrRange},
		{"block below BlockSizes' base", "BlockSizes=4\nBlockName=b1 Nodes=n[1-2]\n",
			"topology.conf:2: BlockName: block b1 has 2 known node(s), fewer than the base block size 4 (BlockSizes' first value)", ErrRange},
		{"first block unknown", "BlockName=b1 Nodes=x[1-2]\n", "topology.conf:1: BlockName: block b1 has no node slurm.conf defines", ErrRange},
		{"other line", "Frob=1\n", "topology.conf:1: Frob: want SwitchName=, BlockName= or BlockSizes= first on the line", ErrSyntax},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ImportSlurm(SlurmFiles{SlurmConf: []byte("TopologyPlugin=topology/block\n" + slurm), TopologyConf: []byte(tt.topo)})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, tt.kind) {
				t.Errorf("error %T does not wrap %v", err, tt.kind)
			}
		})
	}
}

// TestParseBlockSizes: levels are log2(size/base).
func TestParseBlockSizes(t *testing.T) {
	l, err := ParseBlockSizes([]int64{18, 36, 72, 288})
	// 18·1, 18·2, 18·4, 18·16: bits 0, 1, 2, 4.
	if err != nil || l != (BlockLevels{Base: 18, Levels: 0b10111}) {
		t.Errorf("ParseBlockSizes = %+v, %v", l, err)
	}
	if _, err := ParseBlockSizes([]int64{1, 1 << 16}); err == nil {
		t.Error("2^16 base blocks accepted; Slurm's limit is level 15")
	}
}
