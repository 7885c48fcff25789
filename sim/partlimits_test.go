package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

// limited is n1 in partition a, n2 in a and b, n3 in b, 4 GPUs each; a has
// MaxTime 100 s and MaxNodes 1, b no limits.
func limited() *hwmodels.Cluster {
	return &hwmodels.Cluster{
		Name: "limited",
		Nodes: []hwmodels.Node{
			{Name: "n1", GPUs: 4, GPUType: "h100", CPUs: 32, MemMB: 262144, Partitions: 1},
			{Name: "n2", GPUs: 4, GPUType: "h100", CPUs: 32, MemMB: 262144, Partitions: 3},
			{Name: "n3", GPUs: 4, GPUType: "h100", CPUs: 32, MemMB: 262144, Partitions: 2},
		},
		Partitions: []hwmodels.Partition{
			{Name: "a", Nodes: []int32{0, 1}, MaxTime: 100, MaxNodes: 1, Default: true},
			{Name: "b", Nodes: []int32{1, 2}},
		},
	}
}

// TestPartitionLimitsHeldByController runs lgreedy, a policy that knows
// nothing of partition limits, on limited(): the controller keeps jobs
// over a partition's limits out of that partition for every policy.
// Every job takes one whole node (4 GPUs):
//
//	long   t=0 -p a   limit 500 > a's MaxTime 100: never offered,
//	                  UNFINISHED, reason PartitionTimeLimit
//	wide   t=0 -p a   2 nodes > a's MaxNodes 1 (a has 2 nodes, so it fits
//	                  by size): UNFINISHED, PartitionNodeLimit
//	short  t=1 -p a   limit 100: n1 [1,41), not blocked behind long/wide
//	either t=2 -p a,b limit 500: over a's MaxTime, so only b: its first
//	                  free node n2 [2,32), recorded in b
//	after  t=3 -p a   n1 busy to 41, n2 to 32: n2 [32,42)
//
// Without the controller's check lgreedy starts long on n1 at 0 and wide
// on n2 + n1 later, and either may run in a. Under EnforcePartLimits=ANY
// long and wide are rejected at submit (over the limits of their only
// partition) and either is accepted (b takes it) and runs as above.
func TestPartitionLimitsHeldByController(t *testing.T) {
	long := job("long", 0, 50, 500, 4)
	long.Partition = "a"
	wide := job("wide", 0, 50, 50, 8)
	wide.Request.Nodes, wide.Partition = 2, "a"
	short := job("short", 1, 40, 100, 4)
	short.Partition = "a"
	either := job("either", 2, 30, 500, 4)
	either.Partition = "a,b"
	after := job("after", 3, 10, 100, 4)
	after.Partition = "a"
	trace := func() *workload.Trace {
		return &workload.Trace{Jobs: []workload.Job{long, wide, short, either, after}}
	}
	running := []life{
		{"short", 1, 1, 41, "COMPLETED", "n1", 0},
		{"either", 2, 2, 32, "COMPLETED", "n2", 0},
		{"after", 3, 32, 42, "COMPLETED", "n2", 0},
	}
	for _, tc := range []struct {
		mode PartLimits
		held []life
	}{
		{PartLimitsNo, []life{
			{"long", U, U, U, "UNFINISHED", "", 0},
			{"wide", U, U, U, "UNFINISHED", "", 0},
		}},
		{PartLimitsAny, []life{
			{"long", U, U, U, "REJECTED", "", 0},
			{"wide", U, U, U, "REJECTED", "", 0},
		}},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			rec := run(t, Config{Cluster: limited(), Trace: trace(), EnforcePartLimits: tc.mode})
			if d := cmp.Diff(append(tc.held, running...), lives(rec)); d != "" {
				t.Errorf("outcomes (-want +got):\n%s", d)
			}
			wantReason := []string{"PartitionTimeLimit", "PartitionNodeLimit"}
			if tc.mode == PartLimitsAny {
				wantReason = []string{
					"time limit 500 s exceeds partition a's MaxTime 100 s (EnforcePartLimits=ANY)",
					"2 nodes exceed partition a's MaxNodes 1 (EnforcePartLimits=ANY)",
				}
			}
			if got := []string{rec.Jobs[0].Reason, rec.Jobs[1].Reason}; !cmp.Equal(got, wantReason) {
				t.Errorf("reasons of long, wide = %q, want %q", got, wantReason)
			}
			if p := rec.Jobs[3].Part; p != 1 {
				t.Errorf("either ran in partition %d, want b (1)", p)
			}
		})
	}
}

// TestPartitionLimitsNeverOffered: a job over its only partition's limit
// is never in View.Pending, so a policy cannot start it (the controller
// would refuse it: it is not pending).
func TestPartitionLimitsNeverOffered(t *testing.T) {
	long := job("long", 0, 50, 500, 4)
	long.Partition = "a"
	seen := false
	spy := &greedy{bad: func(v View) Plan {
		if len(v.Pending()) > 0 {
			seen = true
		}
		return Plan{}
	}}
	rec, err := Run(Config{Cluster: limited(), Trace: &workload.Trace{Jobs: []workload.Job{long}}, Policy: spy, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if seen {
		t.Error("the policy was offered a job over its partition's MaxTime")
	}
	if r := rec.Jobs[0]; r.State != Unfinished || r.Reason != "PartitionTimeLimit" {
		t.Errorf("long: %v %q, want UNFINISHED PartitionTimeLimit", r.State, r.Reason)
	}
}

// TestPartitionMaxNodesFromSpec: max_nodes in a cluster spec is the field
// the controller reads (hwmodels.Partition.MaxNodes). gpu-short has
// MaxNodes 2 and MaxTime 4 h, like the seed guide's partition: a 3-node
// job waits (PartitionNodeLimit) while a 2-node job behind it runs at once
// on gpu1-gpu2 [0,60).
func TestPartitionMaxNodesFromSpec(t *testing.T) {
	spec := `version: 1
name: guide
node_groups:
  - name: gpu
    count: 4
    gpu: {model: custom, count: 2}
    cpus: 32
    memory: 262144
partitions:
  - name: gpu-short
    nodes: ALL
    max_time: "4:00:00"
    max_nodes: 2
    default: true
`
	c, err := hwmodels.ParseCluster([]byte(spec), "guide.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if mn := c.Partitions[0].MaxNodes; mn != 2 {
		t.Fatalf("MaxNodes = %d, want 2", mn)
	}
	three := job("three", 0, 60, 3600, 6)
	three.Request.Nodes = 3
	two := job("two", 0, 60, 3600, 4)
	two.Request.Nodes = 2
	rec := run(t, Config{Cluster: c, Trace: &workload.Trace{Jobs: []workload.Job{three, two}}})
	want := []life{
		{"three", U, U, U, "UNFINISHED", "", 0},
		{"two", 0, 0, 60, "COMPLETED", "gpu1,gpu2", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	if r := rec.Jobs[0].Reason; r != "PartitionNodeLimit" {
		t.Errorf("three: reason %q, want PartitionNodeLimit", r)
	}
}
