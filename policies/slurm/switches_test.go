package slurm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestSlurmSwitches replays --switches=N@T under TopologyPlugin=topology/tree
// on two leaf switches of two nodes (leaf0 n1,n2; leaf1 n3,n4; top above).
// A (1 node) takes n1, B (1 node, runtime 50) the tightest leaf, n2, C (1
// node) n3. At 50 B ends: n2 and n4 are free, one per leaf. X (2 nodes)
// arrives at 60. Without --switches it starts at once on n2, n4. With
// --switches=1@T it waits while it has waited less than min(T,
// max_switch_wait) since it became eligible (60), unless one leaf frees
// both its nodes first. Passes (bf_interval = sched_interval = 10) run at
// every multiple of 10.
func TestSlurmSwitches(t *testing.T) {
	c, err := hwmodels.ParseCluster([]byte(`version: 1
name: two-leaves
node_groups:
  - {name: "n[1-4]", gpu: {model: h100-sxm-80gb, count: 8}, cpus: 64, memory: 512G}
partitions: [{name: p, nodes: "n[1-4]", default: true}]
slurm: {settings: {TopologyPlugin: topology/tree}}
fabric:
  kind: tree
  switches:
    - {name: leaf0, nodes: "n[1-2]"}
    - {name: leaf1, nodes: "n[3-4]"}
    - {name: top, switches: "leaf[0-1]"}
`), "two-leaves.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nodes := func(n int32) workload.Request { return workload.Request{Nodes: n, GPUs: 8 * n} }
	mk := func(id string, submit, run workload.Time, r workload.Request) workload.Job {
		return job(id, submit, run, run, r)
	}
	x := func(n uint8, wait uint16) workload.Request {
		r := nodes(2)
		r.Switches, r.SwitchWait = n, wait
		return r
	}
	for _, tt := range []struct {
		name  string
		aRun  workload.Time
		x     workload.Request
		maxSW int64 // max_switch_wait; 0: Slurm's default, 300
		want  map[string]sim.Time
		wantX []int32 // X's nodes
	}{
		// No --switches: X spreads over n2 (leaf0) and n4 (leaf1) at 60.
		{"no switches", 1000, nodes(2), 0, map[string]sim.Time{"A": 0, "B": 0, "C": 0, "X": 60}, []int32{1, 3}},
		// --switches=1@5: T = 5 min = 300 s, max_switch_wait 300: wait
		// min(300, 300) = 300; A and C run to 1000, so no leaf frees up:
		// X waits until 60 + 300 = 360, then spreads.
		{"1@5 waits 300 s, then spreads", 1000, x(1, 300), 0, map[string]sim.Time{"A": 0, "B": 0, "C": 0, "X": 360}, []int32{1, 3}},
		// Same request, max_switch_wait=120 caps the wait: 60 + 120 = 180.
		{"max_switch_wait caps it", 1000, x(1, 300), 120, map[string]sim.Time{"A": 0, "B": 0, "C": 0, "X": 180}, []int32{1, 3}},
		// No @T: the wait is max_switch_wait, 300 s: X starts at 360.
		{"no @T: max_switch_wait", 1000, x(1, 0), 0, map[string]sim.Time{"A": 0, "B": 0, "C": 0, "X": 360}, []int32{1, 3}},
		// A ends at 200 < 360: leaf0 has n1 and n2 free, X takes them at
		// 200, on one leaf.
		{"a leaf frees up first", 200, x(1, 300), 0, map[string]sim.Time{"A": 0, "B": 0, "C": 0, "X": 200}, []int32{0, 1}},
		// --switches=2 allows two leaves: X starts at 60.
		{"2 switches allow the spread", 1000, x(2, 300), 0, map[string]sim.Time{"A": 0, "B": 0, "C": 0, "X": 60}, []int32{1, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := fast()
			if tt.maxSW != 0 {
				a.MaxSwitchWait = tt.maxSW
			}
			rec := runSlurm(t, c, []workload.Job{
				mk("A", 0, tt.aRun, nodes(1)),
				mk("B", 0, 50, nodes(1)),
				mk("C", 0, 1000, nodes(1)),
				mk("X", 60, 100, tt.x),
			}, a)
			if d := cmp.Diff(tt.want, starts(rec)); d != "" {
				t.Errorf("starts (-want +got):\n%s", d)
			}
			var got []int32
			for _, n := range rec.Jobs[3].Alloc.All() {
				got = append(got, n.Node)
			}
			if d := cmp.Diff(tt.wantX, got); d != "" {
				t.Errorf("X's nodes (-want +got):\n%s", d)
			}
		})
	}
}

// TestSlurmSwitchesSameRequest: two jobs with one request, one still
// held by its --switches wait and one past it, in one pass: what is
// remembered of the held one's refusal must not hold back the other
// (pass.noPlace, backfill's request classes: switchKey). The cluster of
// TestSlurmSwitches plus n5 in partition aux, under no switch. E runs on
// n5 [0,100); X2 (submitted at 0, after E) becomes eligible at 100, X1
// (submitted at 60) at 60. Equal priorities: X2 is tried first. At 360
// X2 has waited 260 < 300 and is refused; X1 has waited 300 and spreads
// over n2, n4 [360,460). At 460 X2 (waited 360) takes them.
func TestSlurmSwitchesSameRequest(t *testing.T) {
	c, err := hwmodels.ParseCluster([]byte(`version: 1
name: two-leaves
node_groups:
  - {name: "n[1-5]", gpu: {model: h100-sxm-80gb, count: 8}, cpus: 64, memory: 512G}
partitions:
  - {name: p, nodes: "n[1-4]", default: true}
  - {name: aux, nodes: "n5"}
slurm: {settings: {TopologyPlugin: topology/tree}}
fabric:
  kind: tree
  switches:
    - {name: leaf0, nodes: "n[1-2]"}
    - {name: leaf1, nodes: "n[3-4]"}
    - {name: top, switches: "leaf[0-1]"}
`), "two-leaves.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nodes := func(n int32) workload.Request { return workload.Request{Nodes: n, GPUs: 8 * n} }
	sw := nodes(2)
	sw.Switches, sw.SwitchWait = 1, 300
	e := job("E", 0, 100, 100, nodes(1))
	e.Partition = "aux"
	x2 := job("X2", 0, 100, 100, sw)
	x2.Deps = []workload.Dependency{{Type: workload.DepAfterAny, JobID: "E"}}
	rec := runSlurm(t, c, []workload.Job{
		job("A", 0, 1000, 1000, nodes(1)),
		job("B", 0, 50, 50, nodes(1)),
		job("C", 0, 1000, 1000, nodes(1)),
		e, x2,
		job("X1", 60, 100, 100, sw),
	}, fast())
	want := map[string]sim.Time{"A": 0, "B": 0, "C": 0, "E": 0, "X1": 360, "X2": 460}
	if d := cmp.Diff(want, starts(rec)); d != "" {
		t.Errorf("starts (-want +got):\n%s", d)
	}
}
