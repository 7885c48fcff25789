package sim

import (
	"encoding/binary"
	"iter"
	"math/bits"
	"unsafe"

	"github.com/schedsim/schedsim/workload"
)

// Allocs is a run's allocation as the Record keeps it (JobRecord.Alloc,
// RunSegment.Alloc): one NodeAlloc per node, in the order the plan gave
// them. A run of a million jobs keeps about five million, mostly runs of
// consecutive nodes with equal shares, so they are stored as a canonical
// byte encoding (below), about 3 bytes a node past the first, where a
// NodeAlloc is 40; the handle is a 16-byte string header instead of a
// 24-byte slice. Read it with Len, At, All and Append; the zero value is
// no allocation (a job that never started).
//
// The encoding is a sequence of items, each a tag byte whose low two bits
// say what follows:
//   - allocFull: zigzag varints node, GPUs, CPUs, MemMB: a node without
//     MIG or MPS;
//   - allocRun: nothing; the tag's upper six bits are k, and the item is
//     k+1 nodes, each the previous node + 1 with the previous node's GPUs,
//     CPUs and memory;
//   - allocJump: a zigzag varint d: node previous + 1 + d with the
//     previous node's GPUs, CPUs and memory;
//   - allocExt: the fields of allocFull, then the MIG profile, count and
//     eight PerGPU bytes, the MPS GPU and share: a node with MIG or MPS.
//
// Run and jump items follow only a full, run or jump item. The encoder
// always takes the shortest of these choices in the same order, so two
// allocations are equal exactly when their bytes are.
type Allocs struct {
	p string
}

const (
	allocFull = iota
	allocRun
	allocJump
	allocExt

	allocKind   = 3
	allocRunMax = 63 // k of a run item: six bits
)

// AllocsOf returns a packed into an Allocs, for code that builds a
// Record (the controller, tests).
func AllocsOf(a []NodeAlloc) Allocs {
	if len(a) == 0 {
		return Allocs{}
	}
	return Allocs{string(appendAllocs(nil, a))}
}

// plainAlloc reports whether x has neither MIG instances nor an MPS share.
func plainAlloc(x *NodeAlloc) bool {
	return x.MIG == (MIGInstances{}) && x.MPS == (MPSShare{})
}

// appendAllocs appends a, encoded, to p.
func appendAllocs(p []byte, a []NodeAlloc) []byte {
	prevPlain := false
	for i := 0; i < len(a); i++ {
		x := &a[i]
		plain := plainAlloc(x)
		wasPlain := prevPlain
		prevPlain = plain
		if i > 0 && plain && wasPlain {
			prev := &a[i-1]
			if x.GPUs == prev.GPUs && x.CPUs == prev.CPUs && x.MemMB == prev.MemMB {
				if int64(x.Node) == int64(prev.Node)+1 {
					// x and the m-1 nodes after it that go on the same way
					// make run items of up to allocRunMax+1 nodes each.
					m := 1
					for ; i+m < len(a); m++ {
						y, q := &a[i+m], &a[i+m-1]
						if int64(y.Node) != int64(q.Node)+1 || y.GPUs != x.GPUs || y.CPUs != x.CPUs || y.MemMB != x.MemMB || !plainAlloc(y) {
							break
						}
					}
					i += m - 1
					for ; m > 0; m -= min(m, allocRunMax+1) {
						p = append(p, allocRun|byte(min(m, allocRunMax+1)-1)<<2)
					}
					continue
				}
				p = append(p, allocJump)
				p = binary.AppendVarint(p, int64(x.Node)-int64(prev.Node)-1)
				continue
			}
		}
		if plain {
			p = append(p, allocFull)
		} else {
			p = append(p, allocExt)
		}
		p = binary.AppendVarint(p, int64(x.Node))
		p = binary.AppendVarint(p, int64(x.GPUs))
		p = binary.AppendVarint(p, int64(x.CPUs))
		p = binary.AppendVarint(p, x.MemMB)
		if plain {
			continue
		}
		p = binary.AppendUvarint(p, uint64(x.MIG.Profile))
		p = binary.AppendVarint(p, int64(x.MIG.Count))
		p = append(p, x.MIG.PerGPU[:]...)
		p = binary.AppendVarint(p, int64(x.MPS.GPU))
		p = binary.AppendVarint(p, int64(x.MPS.Share))
	}
	return p
}

// Len returns how many nodes the allocation spans.
func (a Allocs) Len() int {
	n := 0
	for _, k := range a.Spans() {
		n += k
	}
	return n
}

// Equal reports whether a and b are the same allocation, node by node.
func (a Allocs) Equal(b Allocs) bool { return a.p == b.p }

// At returns node i's NodeAlloc (0 ≤ i < Len()).
func (a Allocs) At(i int) NodeAlloc {
	for k, x := range a.All() {
		if k == i {
			return x
		}
	}
	panic("sim: Allocs.At index out of range")
}

// All yields each node's NodeAlloc with its index, in order.
func (a Allocs) All() iter.Seq2[int, NodeAlloc] {
	return func(yield func(int, NodeAlloc) bool) {
		var x NodeAlloc
		k := 0
		for i := 0; i < len(a.p); {
			tag := a.p[i]
			i++
			switch tag & allocKind {
			case allocRun:
				for range int(tag>>2) + 1 {
					x.Node++
					if !yield(k, x) {
						return
					}
					k++
				}
				continue
			case allocJump:
				var d int64
				d, i = varintAt(a.p, i)
				x.Node = int32(int64(x.Node) + d + 1)
			default:
				x = NodeAlloc{}
				i = a.fields(i, &x, tag&allocKind == allocExt)
			}
			if !yield(k, x) {
				return
			}
			k++
		}
	}
}

// Spans yields the allocation as spans of consecutive nodes: x, then n ≥
// 1, for the nodes x.Node, x.Node+1, ..., x.Node+n-1, each holding x's
// GPUs, CPUs and memory (a span of more than one node never has MIG
// instances or an MPS share). The spans come in the order All yields the
// nodes, so that a sum over them is a sum over All's nodes at a cost per
// span: a job on many one-CPU nodes is mostly one or a few spans.
func (a Allocs) Spans() iter.Seq2[NodeAlloc, int] {
	return func(yield func(NodeAlloc, int) bool) {
		var x NodeAlloc
		n := 0
		for i := 0; i < len(a.p); {
			tag := a.p[i]
			i++
			if tag&allocKind == allocRun {
				n += int(tag>>2) + 1
				continue
			}
			if n > 0 && !yield(x, n) {
				return
			}
			if tag&allocKind == allocJump {
				var d int64
				d, i = varintAt(a.p, i)
				x.Node = int32(int64(x.Node) + int64(n) + d)
			} else {
				x = NodeAlloc{}
				i = a.fields(i, &x, tag&allocKind == allocExt)
			}
			n = 1
		}
		if n > 0 {
			yield(x, n)
		}
	}
}

// fields decodes a full or ext item's fields from byte i into x and
// returns the next item's byte.
func (a Allocs) fields(i int, x *NodeAlloc, ext bool) int {
	v := func() (d int64) {
		d, i = varintAt(a.p, i)
		return d
	}
	x.Node, x.GPUs, x.CPUs, x.MemMB = int32(v()), int32(v()), int32(v()), v()
	if !ext {
		return i
	}
	var u uint64
	u, i = uvarintAt(a.p, i)
	x.MIG.Profile = workload.MIGProfile(u)
	x.MIG.Count = int32(v())
	i += copy(x.MIG.PerGPU[:], a.p[i:])
	x.MPS.GPU, x.MPS.Share = int16(v()), int16(v())
	return i
}

// uvarintAt decodes the unsigned varint at byte i of s (binary.Uvarint's
// format, written by appendAllocs) and returns it and the next byte.
func uvarintAt(s string, i int) (uint64, int) {
	var u uint64
	for shift := 0; ; shift += 7 {
		b := s[i]
		i++
		u |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return u, i
		}
	}
}

// varintAt decodes the zigzag varint at byte i of s (binary.Varint's
// format).
func varintAt(s string, i int) (int64, int) {
	u, i := uvarintAt(s, i)
	return int64(u>>1) ^ -int64(u&1), i
}

// Append appends the allocation's NodeAllocs to dst and returns it.
func (a Allocs) Append(dst []NodeAlloc) []NodeAlloc {
	for _, x := range a.All() {
		dst = append(dst, x)
	}
	return dst
}

// allocPool is the record's allocation store: blocks of bytes that
// Allocs values point into. Blocks are filled and never grown or written
// again where a value points (unsafe.String's contract), so growing never
// leaves copies alive.
type allocPool struct {
	block   []byte
	scratch []byte
}

// allocChunk is the size of one block of the pool.
const allocChunk = 64 << 10

// maxAllocItem bounds the bytes appendAllocs writes for one node: an ext
// item's tag, six varints of at most 10 bytes, a uvarint and eight PerGPU
// bytes.
const maxAllocItem = 1 + 7*binary.MaxVarintLen64 + 8

// keep encodes a into the pool.
func (pl *allocPool) keep(a []NodeAlloc) Allocs {
	if len(a) == 0 {
		return Allocs{}
	}
	if bound := len(a) * maxAllocItem; bound <= allocChunk/8 && cap(pl.block)-len(pl.block) >= bound {
		// Room for any encoding of a: written in place, where the copy
		// below would put it.
		off := len(pl.block)
		pl.block = appendAllocs(pl.block, a)
		return Allocs{unsafe.String(&pl.block[off], len(pl.block)-off)}
	}
	pl.scratch = appendAllocs(pl.scratch[:0], a)
	n := len(pl.scratch)
	if n > allocChunk/8 {
		return Allocs{string(pl.scratch)}
	}
	if cap(pl.block)-len(pl.block) < n {
		pl.block = make([]byte, 0, allocChunk)
	}
	off := len(pl.block)
	pl.block = append(pl.block, pl.scratch...)
	return Allocs{unsafe.String(&pl.block[off], n)}
}

// runAllocs holds the slices of ended runs' allocations for the next
// starts: a running job's allocation is a []NodeAlloc the view and the
// policy's JobStarted and JobEnded are shown, which neither may keep, so
// once the run has ended and the policy has been told, its slice is free.
// A replay of 20,000 jobs on one-CPU nodes otherwise allocated 9 MB of
// them, each page a fault. Class k holds slices of capacity 1<<k.
type runAllocs struct {
	free [bits.UintSize + 1][][]NodeAlloc
}

// get returns a copy of a (nil when empty) in a slice of the free list, or a
// new one of capacity the power of two at or above len(a).
func (r *runAllocs) get(a []NodeAlloc) []NodeAlloc {
	if len(a) == 0 {
		return nil
	}
	k := bits.Len(uint(len(a) - 1))
	var s []NodeAlloc
	if l := r.free[k]; len(l) > 0 {
		s, r.free[k] = l[len(l)-1][:0], l[:len(l)-1]
	} else {
		s = make([]NodeAlloc, 0, 1<<k)
	}
	return append(s, a...)
}

// put returns s to the free list when get made it (its capacity a power
// of two); the caller holds no other reference to it.
func (r *runAllocs) put(s []NodeAlloc) {
	n := cap(s)
	if n == 0 || n&(n-1) != 0 {
		return
	}
	k := bits.Len(uint(n - 1))
	r.free[k] = append(r.free[k], s[:0])
}
