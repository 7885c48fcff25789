package slurm

import (
	"testing"
	"unsafe"
)

// TestSlurmJobSize: the per-job state is 80 bytes, one per job of a run
// (10 M jobs in 4 GB allow 376 bytes a job for everything, issue 16); a
// field added where padding was grows it, and this says so.
func TestSlurmJobSize(t *testing.T) {
	if got := unsafe.Sizeof(slurmJob{}); got > 80 {
		t.Errorf("slurmJob is %d bytes, want at most 80: order its fields to leave no padding", got)
	}
}
