package policies_test

import (
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestEnforcePartLimits runs the slurm policy (bf_interval =
// sched_interval = 10) on two nodes, n0 in partition a (MaxTime 100 s,
// MaxNodes 1) and n1 in b (no limits), under each EnforcePartLimits. J
// asks for 500 s. With NO it is queued and held (PartitionTimeLimit) in a:
// -p a leaves it UNFINISHED; -p a,b runs in b at once. ANY rejects a job
// over the limits of every partition it lists (-p a) but not one that b
// can take (-p a,b: it runs in b). ALL rejects both. W (2 nodes of 1 GPU)
// is over a's MaxNodes the same way.
func TestEnforcePartLimits(t *testing.T) {
	cluster := func() *hwmodels.Cluster {
		c := policytest.Cluster([]hwmodels.Node{
			policytest.Node("n0", 8, "h100", 64, 524288, 1),
			policytest.Node("n1", 8, "h100", 64, 524288, 2),
		}, "a", "b")
		c.Partitions[0].MaxTime, c.Partitions[0].MaxNodes = 100, 1
		return c
	}
	J := job("J", 0, 500, 50, workload.Request{GPUs: 1})
	Wide := job("W", 0, 50, 50, workload.Request{Nodes: 2, GPUs: 2})
	type want struct {
		state  sim.State
		reason string
		start  sim.Time
	}
	const overTime = "time limit 500 s exceeds partition a's MaxTime 100 s"
	tests := []struct {
		mode sim.PartLimits
		job  workload.Job
		want want
	}{
		{sim.PartLimitsNo, inPart(J, "a"), want{sim.Unfinished, "PartitionTimeLimit", never}},
		{sim.PartLimitsNo, inPart(J, "a,b"), want{sim.Completed, "", 0}},
		{sim.PartLimitsAny, inPart(J, "a"), want{sim.Rejected, overTime + " (EnforcePartLimits=ANY)", never}},
		{sim.PartLimitsAny, inPart(J, "a,b"), want{sim.Completed, "", 0}},
		{sim.PartLimitsAll, inPart(J, "a"), want{sim.Rejected, overTime + " (EnforcePartLimits=ALL)", never}},
		{sim.PartLimitsAll, inPart(J, "a,b"), want{sim.Rejected, overTime + " (EnforcePartLimits=ALL)", never}},
		{sim.PartLimitsNo, inPart(Wide, "a"), want{sim.Rejected, "request (nodes=2 gpus=2 cpus=0 mem=0M) exceeds every node set of partition a", never}},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String()+"/"+tt.job.ID+"/"+tt.job.Partition, func(t *testing.T) {
			p, err := policies.NewSlurm(fast(), nil)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := sim.Run(sim.Config{Cluster: cluster(), Trace: &workload.Trace{Jobs: []workload.Job{tt.job}}, Policy: p,
				Seed: 1, Check: true, EnforcePartLimits: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			r := rec.Jobs[0]
			if got := (want{r.State, r.Reason, r.Start}); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestEnforcePartMaxNodes: a job over a's MaxNodes on a cluster where a
// has two nodes: held (PartitionNodeLimit) with NO, rejected with ALL.
func TestEnforcePartMaxNodes(t *testing.T) {
	c := policytest.GPUNodes(2, 8)
	c.Partitions[0].MaxNodes = 1
	W := job("W", 0, 50, 50, workload.Request{Nodes: 2, GPUs: 2})
	for _, tc := range []struct {
		mode   sim.PartLimits
		state  sim.State
		reason string
	}{
		{sim.PartLimitsNo, sim.Unfinished, "PartitionNodeLimit"},
		{sim.PartLimitsAll, sim.Rejected, "2 nodes exceed partition main's MaxNodes 1 (EnforcePartLimits=ALL)"},
	} {
		p, err := policies.NewSlurm(fast(), nil)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: []workload.Job{W}}, Policy: p,
			Seed: 1, Check: true, EnforcePartLimits: tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		if r := rec.Jobs[0]; r.State != tc.state || r.Reason != tc.reason {
			t.Errorf("%v: got %v %q, want %v %q", tc.mode, r.State, r.Reason, tc.state, tc.reason)
		}
	}
}
