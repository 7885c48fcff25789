package scenario

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
)

// thunderSlurmGolden is the decision hash of the embedded default
// scenario (the Thunder slice on the example cluster) under the slurm
// policy with its defaults. Part of the slurm policy's decision-equality
// harness (policies/slurm_golden_test.go): an optimization of the policy
// must leave it unchanged.
const thunderSlurmGolden = "cb2c14b36b150fda"

// TestSlurmGoldenThunder replays the embedded default scenario under the
// slurm policy and compares every job's start, end, state, partition and
// allocation, every earlier run and every pending-reason change with the
// recorded hash.
func TestSlurmGoldenThunder(t *testing.T) {
	s := Default()
	s.Policy.Name = "slurm"
	run, err := s.Build(policies.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sim.Run(run.Config())
	if err != nil {
		t.Fatal(err)
	}
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
		}
	}
	started := 0
	for i := range rec.Jobs {
		r := &rec.Jobs[i]
		if r.Start >= 0 {
			started++
		}
		b = b[:0]
		u64(uint64(r.Start))
		u64(uint64(r.End))
		u64(uint64(r.State))
		u64(uint64(r.Part))
		allocs(r.Alloc)
		h.Write(b)
	}
	for _, r := range rec.Runs {
		b = b[:0]
		u64(uint64(r.Job))
		u64(uint64(r.Start))
		u64(uint64(r.End))
		allocs(r.Alloc)
		h.Write(b)
	}
	for _, r := range rec.Reasons {
		b = b[:0]
		u64(uint64(r.Job))
		u64(uint64(r.At))
		u64(uint64(r.Reason))
		h.Write(b)
	}
	got := fmt.Sprintf("%016x", h.Sum64())
	t.Logf("%d jobs, %d started, %d reason changes", len(rec.Jobs), started, len(rec.Reasons))
	if got != thunderSlurmGolden {
		t.Errorf("decisions hash %s, golden %s", got, thunderSlurmGolden)
	}
}
