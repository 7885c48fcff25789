package main

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/schedsim/schedsim/cmd/schedsim/internal/scenario"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
)

// yearGolden is the decision hash (decisionHash) of the first 20,000 jobs
// of the benchmark trace under bench/year-1024x8.yaml's slurm policy. The
// policy's golden tests (policies/slurm_golden_test.go) run small
// clusters; this one holds its optimizations to the same decisions in the
// regime they target: 1,024 nodes and a queue hundreds of jobs deep.
const (
	yearGoldenJobs = 20_000
	yearGolden     = "1e693960569c28b7"
)

// decisionHash hashes every job's start, end, state, partition and
// allocation, every earlier run and every pending-reason change of rec,
// as TestSlurmGoldenThunder does.
func decisionHash(rec *sim.Record) string {
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
	for i := range rec.Jobs {
		r := &rec.Jobs[i]
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
	return fmt.Sprintf("%016x", h.Sum64())
}

// TestYearGolden replays the first yearGoldenJobs jobs of the benchmark
// trace under the slurm policy and compares the decision hash with
// yearGolden. It skips without the trace (make bench-data) and in -short
// mode (it takes a few seconds).
func TestYearGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of simulation")
	}
	s, err := scenario.Load(filepath.Join(benchDir, "year-1024x8.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Resolve(s.Trace.File)); err != nil {
		t.Skipf("no benchmark trace (%v): run make bench-data", err)
	}
	run, err := s.Build(policies.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	run.Trace.Jobs = slices.Clone(run.Trace.Jobs[:yearGoldenJobs])
	rec, err := simulate(run)
	if err != nil {
		t.Fatal(err)
	}
	got := decisionHash(rec)
	t.Logf("%d jobs, %d reason changes, %d events: hash %s", len(rec.Jobs), len(rec.Reasons), rec.Events, got)
	if got != yearGolden {
		t.Errorf("decisions hash %s, golden %s", got, yearGolden)
	}
}
