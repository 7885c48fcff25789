package traces

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/workload"
)

// TestSacctMIGRequests reads GPU types that name MIG profiles: a bare
// profile (gres/gpu:1g.10gb=2), a gres.conf-style type with the GPU type
// before the last "_" (gres/gpu:h100_1g.20gb=3), the old ReqGRES form
// (gpu:3g.40gb:1, per node) and a plain type (gres/gpu:a100=4), which
// stays a whole-GPU request.
func TestSacctMIGRequests(t *testing.T) {
	in := "JobID|Submit|Start|End|State|NNodes|NCPUS|ReqTRES|ReqGRES|Timelimit\n" +
		"1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|1|2|billing=2,cpu=2,gres/gpu:1g.10gb=2,gres/gpu=2,node=1||01:00:00\n" +
		"2|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|1|3|billing=3,cpu=3,gres/gpu:h100_1g.20gb=3,gres/gpu=3,node=1||01:00:00\n" +
		"3|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|2|2|billing=2,cpu=2,node=2|gpu:3g.40gb:1|01:00:00\n" +
		"4|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|1|4|billing=4,cpu=4,gres/gpu:a100=4,gres/gpu=4,node=1||01:00:00\n"
	jobs, _, err := readSacct(t, in, "mig.sacct", SacctOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mp := func(s string) workload.MIGProfile {
		p, err := workload.ParseMIGProfile(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := []workload.Request{
		{Nodes: 1, GPUs: 2, CPUs: 2, MIGProfile: mp("1g.10gb")},
		{Nodes: 1, GPUs: 3, CPUs: 3, GPUType: "h100", MIGProfile: mp("1g.20gb")},
		{Nodes: 2, GPUs: 2, CPUs: 2, MIGProfile: mp("3g.40gb")},
		{Nodes: 1, GPUs: 4, CPUs: 4, GPUType: "a100"},
	}
	var got []workload.Request
	for _, j := range jobs {
		got = append(got, j.Request)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
