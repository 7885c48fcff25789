package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/workload"
)

// TestPartitionDefaultTime: a job without a time limit gets its
// partition's DefaultTime, before MaxTime (Slurm's order). twoNodes'
// partition a has MaxTime 1000; with DefaultTime 300:
//
//	j1  no limit, runs 500 s, 4 GPUs: n1, limit 300: TIMEOUT at 300
//	j2  limit 800, runs 500 s, 4 GPUs: n2, its own limit: ends 500
//
// Without DefaultTime, j1's limit is MaxTime 1000 and it ends at 500.
func TestPartitionDefaultTime(t *testing.T) {
	cl := twoNodes()
	cl.Partitions[0].DefaultTime = 300
	tr := &workload.Trace{Jobs: []workload.Job{
		job("j1", 0, 500, workload.Unknown, 4),
		job("j2", 0, 500, 800, 4),
	}}
	rec, err := Run(Config{Cluster: cl, Trace: tr, Policy: &greedy{}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []outcome{
		{"j1", 0, 300, "TIMEOUT", "n1", "4", ""},
		{"j2", 0, 500, "COMPLETED", "n2", "4", ""},
	}
	if diff := cmp.Diff(want, outcomes(rec)); diff != "" {
		t.Errorf("with DefaultTime 300 (-want +got):\n%s", diff)
	}
	cl.Partitions[0].DefaultTime = 0
	rec, err = Run(Config{Cluster: cl, Trace: tr, Policy: &greedy{}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	want[0] = outcome{"j1", 0, 500, "COMPLETED", "n1", "4", ""}
	if diff := cmp.Diff(want, outcomes(rec)); diff != "" {
		t.Errorf("without DefaultTime (-want +got):\n%s", diff)
	}
}
