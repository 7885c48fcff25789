package hwmodels

import (
	"fmt"
	"slices"
)

// Block is a multi-node NVLink domain (a GB200 NVL72 rack: 18 nodes of 4
// GPUs on one NVLink switch fabric), Slurm's topology/block base block
// (topology.conf BlockName=, Slurm 23.11 and later). Jobs inside one
// block communicate over NVLink instead of the InfiniBand fabric.
type Block struct {
	Name string
	// Nodes are cluster node indices, ascending.
	Nodes []int32
}

// BlockSpec is a block before resolution: a name and a hostlist of nodes;
// Line is where it was defined (0 if unknown).
type BlockSpec struct {
	Name, Nodes string
	Line        int
}

// SetBlocks resolves blocks against the cluster's node names and attaches
// them to f. Errors (naming the block): no name, a duplicate, no nodes, an
// unknown node, a node in two blocks.
func (f *Fabric) SetBlocks(bs []BlockSpec, nodeIndex func(string) (int32, bool), total int) error {
	f.Blocks = nil
	f.blockOf = make([]int32, total)
	for i := range f.blockOf {
		f.blockOf[i] = -1
	}
	seen := map[string]bool{}
	for i, b := range bs {
		if b.Name == "" {
			return fmt.Errorf("block %d has no name", i)
		}
		if seen[b.Name] {
			return fmt.Errorf("block %q defined twice", b.Name)
		}
		seen[b.Name] = true
		if b.Nodes == "" {
			return fmt.Errorf("block %q: has no nodes", b.Name)
		}
		names, err := ExpandHostlist(b.Nodes)
		if err != nil {
			return fmt.Errorf("block %q: nodes: %w", b.Name, err)
		}
		blk := Block{Name: b.Name}
		for _, nm := range names {
			ni, ok := nodeIndex(nm)
			if !ok {
				return fmt.Errorf("block %q: unknown node %q", b.Name, nm)
			}
			if o := f.blockOf[ni]; o >= 0 && o != int32(len(f.Blocks)) {
				return fmt.Errorf("block %q: node %q is already in block %q", b.Name, nm, f.Blocks[o].Name)
			}
			if f.blockOf[ni] < 0 {
				f.blockOf[ni] = int32(len(f.Blocks))
				blk.Nodes = append(blk.Nodes, ni)
			}
		}
		slices.Sort(blk.Nodes)
		f.Blocks = append(f.Blocks, blk)
	}
	return nil
}

// BlockOf returns the index into Blocks of node's block, -1 for none.
func (f *Fabric) BlockOf(node int32) int32 {
	if f == nil || node < 0 || int(node) >= len(f.blockOf) {
		return -1
	}
	return f.blockOf[node]
}

// SameBlock reports whether all nodes (at least one) are in one block.
func (f *Fabric) SameBlock(nodes []int32) bool {
	if len(nodes) == 0 {
		return false
	}
	b := f.BlockOf(nodes[0])
	if b < 0 {
		return false
	}
	for _, n := range nodes[1:] {
		if f.BlockOf(n) != b {
			return false
		}
	}
	return true
}
