package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

// pinned starts each pending job on the nodes its ID is mapped to, whole
// nodes, once they are all free; jobs in submit order.
type pinned map[string][]int32

func (p pinned) Name() string                              { return "pinned" }
func (p pinned) Begin(RunInfo) (Timing, error)             { return onEvents, nil }
func (p pinned) JobStarted(JobRef, Time, []NodeAlloc)      {}
func (p pinned) JobEnded(JobRef, Time, []NodeAlloc, State) {}
func (p pinned) Schedule(_ PassSet, v View, _ *rand.Rand) Plan {
	free := slices.Clone(v.Nodes())
	nodes := v.Cluster().Nodes
	var plan Plan
	for _, pj := range v.Pending() {
		want := p[v.Job(pj.Ref).ID]
		ok := true
		for _, n := range want {
			ok = ok && free[n].FreeGPUs == nodes[n].GPUs
		}
		if !ok {
			continue
		}
		var alloc []NodeAlloc
		for _, n := range want {
			alloc = append(alloc, NodeAlloc{Node: n, GPUs: nodes[n].GPUs, CPUs: nodes[n].GPUs})
			free[n].FreeGPUs = 0
		}
		plan.Starts = append(plan.Starts, Start{Job: pj.Ref, Alloc: alloc})
	}
	return plan
}

// commCluster is four 8-GPU H100 SXM nodes (NVLink 900 GB/s both ways,
// 450 one way per GPU) on a two-level fat-tree of NDR (400 Gb/s = 50 GB/s
// per GPU, one NIC per GPU) with two nodes per leaf at oversub:1: leaf01
// {n0, n1}, leaf02 {n2, n3}, each leaf's uplink 2 / oversub node
// bandwidths.
func commCluster(t *testing.T, oversub float64) *hwmodels.Cluster {
	t.Helper()
	c := &hwmodels.Cluster{Name: "comm", Runtime: hwmodels.DefaultRuntimeModel()}
	for i := range 4 {
		c.Nodes = append(c.Nodes, hwmodels.Node{Name: "n" + string(rune('0'+i)), GPUs: 8, GPUType: "h100", GPUModel: "h100-sxm-80gb",
			CPUs: 64, MemMB: 1 << 20, Partitions: 1})
	}
	c.Partitions = []hwmodels.Partition{{Name: "a", Nodes: []int32{0, 1, 2, 3}, Default: true}}
	f, err := hwmodels.BuildFatTree(hwmodels.FatTreeParams{LeafSize: 2, LeafOversubscription: oversub, LinkGbps: 400}, []int32{0, 1, 2, 3}, 4)
	if err != nil {
		t.Fatal(err)
	}
	c.Fabric = f
	for i := range c.Nodes {
		c.Nodes[i].Switches = f.NodeChain(int32(i))
	}
	return c
}

func commJobs(specs ...[3]workload.Time) *workload.Trace {
	tr := &workload.Trace{}
	for i, s := range specs {
		j := workload.NewJob(string(rune('A' + i)))
		j.Submit, j.Runtime, j.TimeLimit = s[0], s[1], s[2]
		j.Request = workload.Request{Nodes: 2, GPUs: 16, CPUs: 16}
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

// TestCommSharedSpine works the contention model by hand (training class,
// f = 0.2, ring all-reduce).
func TestCommSharedSpine(t *testing.T) {
	type span struct {
		ID         string
		Start, End Time
	}
	run := func(t *testing.T, oversub float64, pattern string, pins pinned, tr *workload.Trace) ([]span, *Record) {
		t.Helper()
		rec, err := Run(Config{Cluster: commCluster(t, oversub), Trace: tr, Policy: pins, Seed: 1, Check: true,
			Runtime: &RuntimeScaling{Comm: pattern}})
		if err != nil {
			t.Fatal(err)
		}
		var out []span
		for i, r := range rec.Jobs {
			out = append(out, span{tr.Jobs[i].ID, r.Start, r.End})
		}
		return out, rec
	}
	cross := pinned{"A": {0, 2}, "B": {1, 3}}
	cases := []struct {
		name    string
		oversub float64
		pattern string
		pins    pinned
		tr      *workload.Trace
		want    []span
		changes int
	}{
		{
			// 2:1 leaves of 2 nodes: each uplink carries 2 / 2 = 1 node
			// bandwidth. A on {n0, n2} alone: its ring n0 → n2 → n0 puts
			// 1 on each leaf's uplink, which has 1: r = 1, no stretch;
			// A runs its 1,000 s. B on {n1, n3} from t=500 puts another 1
			// on both: max-min gives each r = 1/2, so each gets
			// min(450, 50 × 1/2) = 25 GB/s per GPU of the 50 recorded:
			// x = 1 + 0.2 × (50/25 − 1) = 1.2.
			// A at 500 has 1000 − 500 = 500 s of work left: ends at
			// 500 + ceil(500 × 1.2) = 1,100.
			// B from 500 to 1,100 does 600 / 1.2 = 500 s of work; alone
			// again (x = 1) it does the other 500 by 1,600.
			name: "two jobs share the 2:1 uplinks", oversub: 2, pattern: CommRing, pins: cross,
			tr:      commJobs([3]workload.Time{0, 1000, 5000}, [3]workload.Time{500, 1000, 5000}),
			want:    []span{{"A", 0, 1100}, {"B", 500, 1600}},
			changes: 2,
		},
		{
			// Non-blocking (1:1): each uplink has 2, the two rings need 2:
			// r = 1 for both, nothing changes.
			name: "non-blocking uplinks do not slow", oversub: 1, pattern: CommRing, pins: cross,
			tr:   commJobs([3]workload.Time{0, 1000, 5000}, [3]workload.Time{500, 1000, 5000}),
			want: []span{{"A", 0, 1000}, {"B", 500, 1500}},
		},
		{
			// A alone on an idle 2:1 spine needs 1 of the 1 its uplinks
			// have: full speed, exactly its 1,000 s.
			name: "alone on an idle spine", oversub: 2, pattern: CommRing, pins: cross,
			tr:   commJobs([3]workload.Time{0, 1000, 5000}),
			want: []span{{"A", 0, 1000}},
		},
		{
			// Each job inside one leaf: no uplink traffic at all, even at
			// 4:1.
			name: "one leaf each", oversub: 4, pattern: CommRing, pins: pinned{"A": {0, 1}, "B": {2, 3}},
			tr:   commJobs([3]workload.Time{0, 1000, 5000}, [3]workload.Time{500, 1000, 5000}),
			want: []span{{"A", 0, 1000}, {"B", 500, 1500}},
		},
		{
			// Tree with two nodes: k (n − k) / (n − 1) = 1 × 1 / 1 = 1 per
			// uplink, as the ring; at 4:1 each uplink has 2 / 4 = 1/2, so
			// A alone already gets r = 1/2: x = 1.2, ceil(1000 × 1.2) =
			// 1,200. B joins at 500: r = 1/4, b = 12.5 GB/s, x = 1 + 0.2 ×
			// (50/12.5 − 1) = 1.6. A has 1000 − 500/1.2 = 583.33 s left:
			// ends at 500 + ceil(583.33 × 1.6) = 500 + 934 = 1,434. B did
			// 934 / 1.6 = 583.75 s by then (it started at 500 with x = 1.6
			// too), 416.25 left at x = 1.2: ends at 1434 + ceil(499.5) =
			// 1,934.
			name: "tree at 4:1", oversub: 4, pattern: CommTree, pins: cross,
			tr:      commJobs([3]workload.Time{0, 1000, 5000}, [3]workload.Time{500, 1000, 5000}),
			want:    []span{{"A", 0, 1434}, {"B", 500, 1934}},
			changes: 2,
		},
		{
			// A time limit still kills: A's 1,100 s (first case) is past
			// its 1,050 s limit, so it ends TIMEOUT at 1,050 and B, alone
			// from then, has 1000 − 550/1.2 = 541.67 s left: 1050 +
			// ceil(541.67) = 1,592.
			name: "time limit", oversub: 2, pattern: CommRing, pins: cross,
			tr:      commJobs([3]workload.Time{0, 1000, 1050}, [3]workload.Time{500, 1000, 5000}),
			want:    []span{{"A", 0, 1050}, {"B", 500, 1592}},
			changes: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rec := run(t, tc.oversub, tc.pattern, tc.pins, tc.tr)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("runs (-want +got):\n%s", d)
			}
			if len(rec.RuntimeChanges) != tc.changes {
				t.Errorf("RuntimeChanges = %+v, want %d", rec.RuntimeChanges, tc.changes)
			}
		})
	}
}

// TestCommNoFabric: without a fabric the model changes nothing.
func TestCommNoFabric(t *testing.T) {
	c := commCluster(t, 2)
	c.Fabric = nil
	for i := range c.Nodes {
		c.Nodes[i].Switches = nil
	}
	tr := commJobs([3]workload.Time{0, 1000, 5000}, [3]workload.Time{500, 1000, 5000})
	rec, err := Run(Config{Cluster: c, Trace: tr, Policy: pinned{"A": {0, 2}, "B": {1, 3}}, Seed: 1, Runtime: &RuntimeScaling{Comm: CommRing}})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Jobs[0].End != 1000 || rec.Jobs[1].End != 1500 || len(rec.RuntimeChanges) != 0 {
		t.Errorf("ends %d, %d, changes %v; want 1000, 1500, none", rec.Jobs[0].End, rec.Jobs[1].End, rec.RuntimeChanges)
	}
}

// TestCommBadPattern: an unknown pattern is an input error.
func TestCommBadPattern(t *testing.T) {
	_, err := Run(Config{Cluster: commCluster(t, 2), Trace: commJobs([3]workload.Time{0, 10, 10}), Policy: pinned{}, Runtime: &RuntimeScaling{Comm: "mesh"}})
	if err == nil {
		t.Fatal("no error for comm mesh")
	}
}

// TestCommNVLinkBlock: n0 and n2 form one multi-node NVLink domain (an
// NVL72-style block). A 2-node training job inside it talks over NVLink
// (450 GB/s per GPU one way on H100 SXM) instead of NDR (50 GB/s): x = 1 +
// 0.2 × (50/450 − 1) = 0.8222…, 1,000 s → ceil(822.22) = 823 s, and it
// takes no uplink, so B on {n1, n3} beside it at 2:1 does not slow (its
// ring alone fits the uplinks: 1,000 s).
func TestCommNVLinkBlock(t *testing.T) {
	c := commCluster(t, 2)
	names := map[string]int32{"n0": 0, "n1": 1, "n2": 2, "n3": 3}
	if err := c.Fabric.SetBlocks([]hwmodels.BlockSpec{{Name: "nvl1", Nodes: "n[0,2]"}}, func(s string) (int32, bool) { i, ok := names[s]; return i, ok }, 4); err != nil {
		t.Fatal(err)
	}
	tr := commJobs([3]workload.Time{0, 1000, 5000}, [3]workload.Time{0, 1000, 5000})
	rec, err := Run(Config{Cluster: c, Trace: tr, Policy: pinned{"A": {0, 2}, "B": {1, 3}}, Seed: 1, Check: true, Runtime: &RuntimeScaling{Comm: CommRing}})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Jobs[0].End != 823 || rec.Jobs[1].End != 1000 {
		t.Errorf("ends %d, %d; want 823 (inside the NVLink block) and 1000", rec.Jobs[0].End, rec.Jobs[1].End)
	}
}
