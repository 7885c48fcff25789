package sim

import (
	"iter"
	"slices"

	"github.com/schedsim/schedsim/workload"
)

// Allocs is a run's allocation as the Record keeps it (JobRecord.Alloc,
// RunSegment.Alloc): one NodeAlloc per node, in the order the plan gave
// them. A run of a million jobs keeps about five million, so they are
// stored packed, 24 bytes a node, where a NodeAlloc is 40: a node's
// whole GPUs, CPUs and memory in one entry, and its MIG instances and MPS
// share, which few allocations hold, in a second entry only when it has
// them. Read it with Len, At, All and Append; the zero value is no
// allocation (a job that never started).
type Allocs struct {
	p []allocEntry
}

// allocEntry is a node's entry (w[0]: node and GPUs, w[1]: CPUs and the
// flags, w[2]: memory) or, after an entry with allocExt set, the node's
// MIG and MPS entry (w[0]: profile and count, w[1]: PerGPU, w[2]: MPS GPU
// and share). Each field is kept whole, so packing loses nothing.
type allocEntry [3]uint64

const (
	allocExt    = 1 << 32 // a MIG/MPS entry follows
	allocAnyExt = 1 << 33 // on the first entry: some node has one
)

// AllocsOf returns a packed into an Allocs, for code that builds a
// Record (the controller, tests).
func AllocsOf(a []NodeAlloc) Allocs {
	if len(a) == 0 {
		return Allocs{}
	}
	return Allocs{appendAllocs(make([]allocEntry, 0, allocEntries(a)), a)}
}

// allocEntries returns how many entries a packs into.
func allocEntries(a []NodeAlloc) int {
	n := len(a)
	for i := range a {
		if a[i].MIG != (MIGInstances{}) || a[i].MPS != (MPSShare{}) {
			n++
		}
	}
	return n
}

// appendAllocs appends a, packed, to p.
func appendAllocs(p []allocEntry, a []NodeAlloc) []allocEntry {
	first := len(p)
	for i := range a {
		x := &a[i]
		e := allocEntry{uint64(uint32(x.Node)) | uint64(uint32(x.GPUs))<<32, uint64(uint32(x.CPUs)), uint64(x.MemMB)}
		if x.MIG == (MIGInstances{}) && x.MPS == (MPSShare{}) {
			p = append(p, e)
			continue
		}
		e[1] |= allocExt
		var per uint64
		for g, k := range x.MIG.PerGPU {
			per |= uint64(k) << (8 * g)
		}
		p = append(p, e, allocEntry{
			uint64(x.MIG.Profile) | uint64(uint32(x.MIG.Count))<<32,
			per,
			uint64(uint16(x.MPS.GPU)) | uint64(uint16(x.MPS.Share))<<16,
		})
		p[first][1] |= allocAnyExt
	}
	return p
}

// Len returns how many nodes the allocation spans.
func (a Allocs) Len() int {
	if len(a.p) == 0 || a.p[0][1]&allocAnyExt == 0 {
		return len(a.p)
	}
	n := 0
	for i := 0; i < len(a.p); i++ {
		if a.p[i][1]&allocExt != 0 {
			i++
		}
		n++
	}
	return n
}

// Equal reports whether a and b are the same allocation, node by node.
func (a Allocs) Equal(b Allocs) bool { return slices.Equal(a.p, b.p) }

// At returns node i's NodeAlloc (0 ≤ i < Len()).
func (a Allocs) At(i int) NodeAlloc {
	e := i
	if len(a.p) > 0 && a.p[0][1]&allocAnyExt != 0 {
		e = 0
		for ; i > 0; i-- {
			if a.p[e][1]&allocExt != 0 {
				e++
			}
			e++
		}
	}
	var x NodeAlloc
	a.unpack(e, &x)
	return x
}

// All yields each node's NodeAlloc with its index, in order.
func (a Allocs) All() iter.Seq2[int, NodeAlloc] {
	return func(yield func(int, NodeAlloc) bool) {
		for i, k := 0, 0; i < len(a.p); k++ {
			var x NodeAlloc
			i = a.unpack(i, &x)
			if !yield(k, x) {
				return
			}
		}
	}
}

// Append appends the allocation's NodeAllocs to dst and returns it.
func (a Allocs) Append(dst []NodeAlloc) []NodeAlloc {
	for i := 0; i < len(a.p); {
		var x NodeAlloc
		i = a.unpack(i, &x)
		dst = append(dst, x)
	}
	return dst
}

// unpack reads the node at entry i into x and returns the next node's
// entry.
func (a Allocs) unpack(i int, x *NodeAlloc) int {
	e := &a.p[i]
	x.Node, x.GPUs = int32(uint32(e[0])), int32(uint32(e[0]>>32))
	x.CPUs, x.MemMB = int32(uint32(e[1])), int64(e[2])
	if e[1]&allocExt == 0 {
		return i + 1
	}
	m := &a.p[i+1]
	x.MIG.Profile, x.MIG.Count = workload.MIGProfile(uint32(m[0])), int32(uint32(m[0]>>32))
	for g := range x.MIG.PerGPU {
		x.MIG.PerGPU[g] = uint8(m[1] >> (8 * g))
	}
	x.MPS = MPSShare{GPU: int16(uint16(m[2])), Share: int16(uint16(m[2] >> 16))}
	return i + 2
}
