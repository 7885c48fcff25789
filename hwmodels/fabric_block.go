package hwmodels

import (
	"fmt"
	"math/bits"
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
// Path and Line are where it was defined ("" and 0 if unknown).
type BlockSpec struct {
	Name, Nodes string
	Path        string
	Line        int
}

// BlockLevels are Slurm's topology/block aggregation levels: Levels has
// bit k set when 2^k consecutive base blocks (in definition order) form a
// block a job may be confined to; Base is bblock_node_cnt, the nodes of a
// base block. block_record.c _read_topo_file: the first BlockSizes value
// is the base, each value a power-of-two multiple of it (at most 2^15);
// without BlockSizes the levels are 0 to 4 (1 to 16 base blocks) and the
// base is the first block's node count.
type BlockLevels struct {
	Base   int32
	Levels uint16
}

// DefaultBlockLevels is Slurm's level set without BlockSizes: 1, 2, 4,
// 8 and 16 base blocks (bit_nset(block_levels, 0, 4)).
const DefaultBlockLevels = 0x1f

// ParseBlockSizes checks Slurm's BlockSizes (node counts, the first the
// base block) and returns its levels, as _read_topo_file does: each a
// positive multiple of the first, the quotient a power of two, at most
// 2^15.
func ParseBlockSizes(sizes []int64) (BlockLevels, error) {
	var l BlockLevels
	if len(sizes) == 0 {
		return l, fmt.Errorf("no sizes (want node counts such as 18,36,72)")
	}
	for _, s := range sizes {
		if s <= 0 || s > 1<<31-1 {
			return l, fmt.Errorf("size %d: want a positive node count", s)
		}
		if l.Base == 0 {
			l.Base = int32(s)
		}
		q := s / int64(l.Base)
		if s%int64(l.Base) != 0 || q&(q-1) != 0 || q > 1<<15 {
			return l, fmt.Errorf("size %d is not a power-of-two multiple (1 to 32768 times) of the base block size %d, the first value", s, l.Base)
		}
		l.Levels |= 1 << bits.TrailingZeros64(uint64(q))
	}
	return l, nil
}

// SetBlockSizes sets f's block levels from BlockSizes (nil: Slurm's
// default) after SetBlocks, and checks every block against the base size
// as block_record_validate does ("children count lower than
// bblock_node_cnt" is fatal there). Errors name the block.
func (f *Fabric) SetBlockSizes(sizes []int64) error {
	if len(f.Blocks) == 0 {
		if len(sizes) > 0 {
			return fmt.Errorf("block sizes given but there are no blocks")
		}
		return nil
	}
	l := BlockLevels{Base: int32(len(f.Blocks[0].Nodes)), Levels: DefaultBlockLevels}
	if len(sizes) > 0 {
		var err error
		if l, err = ParseBlockSizes(sizes); err != nil {
			return err
		}
	}
	for _, b := range f.Blocks {
		if int32(len(b.Nodes)) < l.Base {
			return fmt.Errorf("block %q has %d nodes, fewer than the base block size %d", b.Name, len(b.Nodes), l.Base)
		}
	}
	f.Levels = l
	return nil
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
