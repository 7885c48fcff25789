package traces

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/workload"
)

// TestSacctMPSRequests reads MPS shares: gres/mps in ReqTRES is the job's
// total over its nodes (2 nodes × 50 = 100 → 50 per node; 1 node 25 →
// 25), ReqGRES mps:N is per node (30), AllocTRES serves when ReqTRES has
// none (gres/mps=40), and a job without mps has no share.
func TestSacctMPSRequests(t *testing.T) {
	in := "JobID|Submit|Start|End|State|NNodes|NCPUS|ReqTRES|AllocTRES|ReqGRES|Timelimit\n" +
		"1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|1|2|billing=2,cpu=2,gres/mps=25,node=1|||01:00:00\n" +
		"2|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|2|4|billing=4,cpu=4,gres/mps=100,node=2|||01:00:00\n" +
		"3|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|1|1|billing=1,cpu=1,node=1||mps:30|01:00:00\n" +
		"4|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|1|1|billing=1,cpu=1,node=1|billing=1,cpu=1,gres/mps=40,node=1||01:00:00\n" +
		"5|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|1|1|billing=1,cpu=1,gres/gpu=1,node=1|||01:00:00\n"
	jobs, _, err := readSacct(t, in, "mps.sacct", SacctOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []workload.Request{
		{Nodes: 1, CPUs: 2, MPSShare: 25},
		{Nodes: 2, CPUs: 4, MPSShare: 50},
		{Nodes: 1, CPUs: 1, MPSShare: 30},
		{Nodes: 1, CPUs: 1, MPSShare: 40},
		{Nodes: 1, CPUs: 1, GPUs: 1},
	}
	var got []workload.Request
	for _, j := range jobs {
		got = append(got, j.Request)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
