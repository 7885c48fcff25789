package policytest

import (
	"encoding/binary"
	"hash/fnv"

	"github.com/schedsim/schedsim/sim"
)

// DecisionHash hashes every decision a run's record shows: each job's
// start, end, state, partition, requeues, reason and allocation (nodes and
// resources), every earlier run of a requeued job, every pending-reason
// change, and the end of the run. The decision-equality goldens of the
// slurm policy (policies, the scenario package, cmd/schedsim) all use it,
// so an optimization is held to one definition of "the same decisions".
func DecisionHash(rec *sim.Record) uint64 {
	h := fnv.New64a()
	var b []byte
	u64 := func(x uint64) { b = binary.LittleEndian.AppendUint64(b, x) }
	allocs := func(as []sim.NodeAlloc) {
		u64(uint64(len(as)))
		for _, a := range as {
			u64(uint64(a.Node))
			u64(uint64(a.GPUs))
			u64(uint64(a.CPUs))
			u64(uint64(a.MemMB))
			u64(uint64(a.MIG))
		}
	}
	for i := range rec.Jobs {
		r := &rec.Jobs[i]
		b = b[:0]
		u64(uint64(r.Start))
		u64(uint64(r.End))
		u64(uint64(r.State))
		u64(uint64(r.Part))
		u64(uint64(r.Requeues))
		b = append(b, r.Reason...)
		allocs(r.Alloc)
		h.Write(b)
	}
	for _, r := range rec.Runs {
		b = b[:0]
		u64(uint64(r.Job))
		u64(uint64(r.Start))
		u64(uint64(r.End))
		u64(uint64(r.State))
		allocs(r.Alloc)
		h.Write(b)
	}
	for r := range rec.Reasons.All() {
		b = b[:0]
		u64(uint64(r.Job))
		u64(uint64(r.At))
		u64(uint64(r.Reason))
		h.Write(b)
	}
	b = b[:0]
	u64(uint64(rec.End))
	h.Write(b)
	return h.Sum64()
}
