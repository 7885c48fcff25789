package policies_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
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
			p, err := slurm.New(fast(), nil)
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
		p, err := slurm.New(fast(), nil)
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

// TestPartitionLimitsEveryPolicy: the controller holds jobs over a
// partition's limits for every builtin policy, so fifo, easy and
// conservative admit jobs as slurm does (EnforcePartLimits=NO). Nodes n0
// (partition a), n1 (a and b), n2 (b), 8 GPUs each; a has MaxTime 100 s
// and MaxNodes 1. Every job takes a whole node:
//
//	long   t=0 -p a   limit 500 > MaxTime 100: never starts, PartitionTimeLimit
//	wide   t=0 -p a   2 nodes > MaxNodes 1: never starts, PartitionNodeLimit
//	short  t=1 -p a   limit 100, runs 40: n0 [1,41) (fifo does not stop at
//	                  long or wide: they are not in its queue)
//	either t=2 -p a,b limit 500, runs 30: over a's MaxTime, runs in b on
//	                  its first free node n1 [2,32)
//	after  t=3 -p a   limit 100, runs 10: n0 busy to 41, n1 to 32: n1 [32,42)
//
// The slurm policy runs with bf_interval = sched_interval = 10 s and a
// pass at every submit and end, so it starts after at 32 as well.
func TestPartitionLimitsEveryPolicy(t *testing.T) {
	c := policytest.Cluster([]hwmodels.Node{
		policytest.Node("n0", 8, "h100", 64, 524288, 1),
		policytest.Node("n1", 8, "h100", 64, 524288, 3),
		policytest.Node("n2", 8, "h100", 64, 524288, 2),
	}, "a", "b")
	c.Partitions[0].MaxTime, c.Partitions[0].MaxNodes = 100, 1
	whole := workload.Request{Nodes: 1, GPUs: 8}
	jobs := []workload.Job{
		inPart(job("long", 0, 500, 50, whole), "a"),
		inPart(job("wide", 0, 50, 50, workload.Request{Nodes: 2, GPUs: 16}), "a"),
		inPart(job("short", 1, 100, 40, whole), "a"),
		inPart(job("either", 2, 500, 30, whole), "a,b"),
		inPart(job("after", 3, 100, 10, whole), "a"),
	}
	type res struct {
		ID         string
		Start, End sim.Time
		State      sim.State
		Part       int32
		Reason     string
		Nodes      []int32
	}
	want := []res{
		{"long", never, never, sim.Unfinished, 0, "PartitionTimeLimit", nil},
		{"wide", never, never, sim.Unfinished, 0, "PartitionNodeLimit", nil},
		{"short", 1, 41, sim.Completed, 0, "", []int32{0}},
		{"either", 2, 32, sim.Completed, 1, "", []int32{1}},
		{"after", 32, 42, sim.Completed, 0, "", []int32{1}},
	}
	reg := catalog.Builtin()
	for _, name := range reg.Names() {
		t.Run(name, func(t *testing.T) {
			var p sim.Policy
			var err error
			if name == "slurm" {
				p, err = slurm.New(fast(), nil)
			} else {
				p, err = reg.New(name, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: slices.Clone(jobs)}, Policy: p, Seed: 1, Check: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []res
			for i, r := range rec.Jobs {
				var nodes []int32
				for _, a := range r.Alloc.All() {
					nodes = append(nodes, a.Node)
				}
				got = append(got, res{jobs[i].ID, r.Start, r.End, r.State, r.Part, r.Reason, nodes})
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("outcomes (-want +got):\n%s", d)
			}
		})
	}
}
