package slurm

import (
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// bfReq is what placement sees of a record: the request, its partitions
// and, for a --switches job, its eligible time (switchKey).
type bfReq struct {
	req   workload.Request
	part  int32
	parts uint64
	elig  workload.Time
}

// bfClass is a request class of backfill: the records asking for the same
// thing, which share a demand shape (and so a will-run profile) and, with
// the same limit, every outcome of reserve and startNow in a cycle.
type bfClass struct {
	key   bfReq
	shape policies.Demand // count 0
	count int32
	// slot and gen cache the profile of the shape: valid while
	// profs[slot] is in use and was made as gen.
	slot int32
	gen  uint64
}

// is reports whether job belongs to the class.
func (c *bfClass) is(job *sim.PendingJob) bool {
	return c.key == bfReq{req: job.Req, part: job.Part, parts: job.Parts, elig: policies.SwitchKey(job)}
}

// classOf returns the class of job, adding it when new. Classes are kept
// for the policy's life: a trace has few distinct requests.
func (b *backfillState) classOf(job *sim.PendingJob) int32 {
	k := bfReq{req: job.Req, part: job.Part, parts: job.Parts, elig: policies.SwitchKey(job)}
	if i, ok := b.clsIdx[k]; ok {
		return i
	}
	if b.clsIdx == nil {
		b.clsIdx = map[bfReq]int32{}
	}
	d := policies.NewDemand(job)
	c := bfClass{key: k, shape: d, count: d.Count, slot: -1}
	c.shape.Count = 0
	i := int32(len(b.classes))
	b.classes = append(b.classes, c)
	b.clsIdx[k] = i
	return i
}

// outcomeKey is what an outcome of reserve or startNow depends on besides
// the cycle's state: the record's class and its limit.
type outcomeKey struct {
	cls   int32
	limit sim.Time
}

func (k outcomeKey) hash() uint64 {
	h := uint64(k.limit)*0x9e3779b97f4a7c15 ^ uint64(uint32(k.cls))
	return (h ^ h>>29) * 0xbf58476d1ce4e5b9
}

// outcomeSet is a set of outcomeKey, emptied in O(1): a slot belongs to
// the set when its generation is the set's. Open addressing, linear
// probing.
type outcomeSet struct {
	slots []outcomeSlot
	gen   uint32
	n     int
}

type outcomeSlot struct {
	key outcomeKey
	gen uint32
}

// reset empties the set.
func (s *outcomeSet) reset() {
	s.n = 0
	if s.gen++; s.gen == 0 {
		clear(s.slots)
		s.gen = 1
	}
}

// has reports whether k is in the set.
func (s *outcomeSet) has(k outcomeKey) bool {
	if s.n == 0 {
		return false
	}
	m := uint64(len(s.slots) - 1)
	for i := k.hash() >> 32 & m; ; i = (i + 1) & m {
		sl := &s.slots[i]
		if sl.gen != s.gen {
			return false
		}
		if sl.key == k {
			return true
		}
	}
}

// add puts k in the set; k must not be in it.
func (s *outcomeSet) add(k outcomeKey) {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	m := uint64(len(s.slots) - 1)
	i := k.hash() >> 32 & m
	for s.slots[i].gen == s.gen {
		i = (i + 1) & m
	}
	s.slots[i] = outcomeSlot{key: k, gen: s.gen}
	s.n++
}

func (s *outcomeSet) grow() {
	old, gen := s.slots, s.gen
	s.slots = make([]outcomeSlot, max(16, 2*len(old)))
	s.gen, s.n = 1, 0
	for i := range old {
		if old[i].gen == gen {
			s.add(old[i].key)
		}
	}
}
