package policies

import (
	"math/bits"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// bfReq is what reserve and startNow look at of a record: the request,
// its partitions and its limit (placers see nothing else of the job).
type bfReq struct {
	req   workload.Request
	part  int32
	parts uint64
	limit sim.Time
}

func reqOf(job *sim.PendingJob) bfReq {
	return bfReq{req: job.Req, part: job.Part, parts: job.Parts, limit: job.Limit}
}

// hash mixes the numeric fields; the GPU type enters by its length only
// (equality compares it whole). A Go map would hash the string on every
// lookup, which cost more than the tests it saved.
func (k *bfReq) hash() uint64 {
	r := &k.req
	h := uint64(k.limit)
	h = bits.RotateLeft64(h*0x9e3779b97f4a7c15, 31) ^ (uint64(uint32(r.GPUs))<<32 | uint64(uint32(r.CPUs)))
	h = bits.RotateLeft64(h*0x9e3779b97f4a7c15, 31) ^ uint64(r.MemMB)
	h = bits.RotateLeft64(h*0x9e3779b97f4a7c15, 31) ^ (uint64(uint32(r.Nodes))<<32 | uint64(uint32(k.part)))
	h = bits.RotateLeft64(h*0x9e3779b97f4a7c15, 31) ^ (k.parts + uint64(len(r.GPUType)) + uint64(r.MIGProfile)<<40 + uint64(uint32(r.MPSShare))<<48)
	return (h ^ h>>29) * 0xbf58476d1ce4e5b9
}

// reqSet is a set of bfReq, emptied in O(1): a slot belongs to the set
// when its generation is the set's. Open addressing, linear probing.
type reqSet struct {
	slots []reqSlot
	gen   uint32
	n     int
}

type reqSlot struct {
	key bfReq
	gen uint32
}

// reset empties the set.
func (s *reqSet) reset() {
	s.n = 0
	if s.gen++; s.gen == 0 {
		clear(s.slots)
		s.gen = 1
	}
}

// has reports whether k is in the set.
func (s *reqSet) has(k *bfReq) bool {
	if s.n == 0 {
		return false
	}
	m := uint64(len(s.slots) - 1)
	for i := k.hash() & m; ; i = (i + 1) & m {
		sl := &s.slots[i]
		if sl.gen != s.gen {
			return false
		}
		if sl.key == *k {
			return true
		}
	}
}

// add puts k in the set; k must not be in it.
func (s *reqSet) add(k *bfReq) {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	m := uint64(len(s.slots) - 1)
	i := k.hash() & m
	for s.slots[i].gen == s.gen {
		i = (i + 1) & m
	}
	s.slots[i] = reqSlot{key: *k, gen: s.gen}
	s.n++
}

func (s *reqSet) grow() {
	old, gen := s.slots, s.gen
	s.slots = make([]reqSlot, max(16, 2*len(old)))
	s.gen, s.n = 1, 0
	for i := range old {
		if old[i].gen == gen {
			s.add(&old[i].key)
		}
	}
}
