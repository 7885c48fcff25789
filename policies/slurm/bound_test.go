package slurm_test

import (
	"testing"

	"github.com/schedsim/schedsim/policies/slurm"
)

// TestSlurmReserveBound compares the bound by which reserve skips
// TRY_LATER retries (Slurm.unitsBound: kept across the retries of one
// reservation, following the mask's change log and the releases its time
// passes) with the same sum made from scratch, on every call over the
// random workloads of TestSlurmBackfillReference; and every bound on
// skipping cycles that nowMask finds in the kept reservation orders with
// the one made over every reservation.
func TestSlurmReserveBound(t *testing.T) {
	slurm.CheckBounds(true)
	defer slurm.CheckBounds(false)
	slurm.BoundChecks()
	n := 0
	for seed := uint64(1); seed <= uint64(*referenceRuns); seed++ {
		c := randomBackfillCase(seed)
		c.run(t, false, func(s *slurm.Policy) {})
		k, err := slurm.BoundChecks()
		if err != nil {
			t.Fatalf("seed %d (%s): %v", seed, c, err)
		}
		n += k
	}
	if n == 0 {
		t.Fatal("no bound was computed: the workloads test nothing")
	}
	nows := slurm.NowChecks()
	if nows == 0 {
		t.Fatal("no nowMask bound was compared")
	}
	kept := slurm.FinChecks()
	if kept == 0 {
		t.Fatal("no final free state was kept across passes: finKeep is not tested")
	}
	t.Logf("%d bounds compared, %d nowMask bounds, %d kept final free states", n, nows, kept)
}

// TestSlurmQueueOrder compares the queue order buildOrder keeps across
// passes (records dropped and merged in, the pass left alone when no job
// came or left) with one made from each pass's pending jobs, over the
// random workloads of TestSlurmBackfillReference.
func TestSlurmQueueOrder(t *testing.T) {
	slurm.CheckOrder(true)
	defer slurm.CheckOrder(false)
	slurm.OrderChecks()
	n := 0
	for seed := uint64(1); seed <= uint64(*referenceRuns); seed++ {
		c := randomBackfillCase(seed)
		c.run(t, false, func(s *slurm.Policy) {})
		k, err := slurm.OrderChecks()
		if err != nil {
			t.Fatalf("seed %d (%s): %v", seed, c, err)
		}
		n += k
	}
	if n == 0 {
		t.Fatal("no order was checked: the workloads test nothing")
	}
	t.Logf("%d orders compared", n)
}
