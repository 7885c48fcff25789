package policies_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// catalogCluster is policytest.ParseCluster.
var catalogCluster = policytest.ParseCluster

// loadedTrace is n jobs of 1 to 8 GPUs on one node, runtimes 10 min to 6 h,
// time limits twice the runtime, arriving every 30 min on average: an
// offered load of about 0.9 on 32 A100s.
func loadedTrace(n int) *workload.Trace {
	rng := rand.New(rand.NewPCG(7, 9))
	tr := &workload.Trace{}
	var at workload.Time
	for i := range n {
		j := workload.NewJob(fmt.Sprint(i + 1))
		at += workload.Time(rng.IntN(3600))
		j.Submit = at
		j.Runtime = workload.Time(600 + rng.IntN(6*3600-600))
		j.TimeLimit = 2 * j.Runtime
		g := int32(1 + rng.IntN(8))
		j.Request = workload.Request{Nodes: 1, GPUs: g, CPUs: g}
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

// TestRuntimeA100VersusH100 replays one trace, recorded on A100 SXM 80GB,
// on 4 DGX A100 and on 4 DGX H100 (32 GPUs each) under EASY with the
// runtime model's speed ratio on. On the A100s every job runs its recorded
// time; on the H100s each runs exactly ceil(T × 312 / 989) (dense BF16
// TFLOPS ratio, the training class's basis), and the mean and total waits
// are shorter.
func TestRuntimeA100VersusH100(t *testing.T) {
	tr := loadedTrace(400)
	rs := &sim.RuntimeScaling{Speed: true, RecordedGPU: "a100-sxm-80gb"}
	run := func(model string) *sim.Record {
		c := catalogCluster(t, fmt.Sprintf("version: 1\nname: %s\nnode_groups:\n  - {name: gpu, count: 4, model: %s}\n", model, model))
		if c.TotalGPUs() != 32 {
			t.Fatalf("%s: %d GPUs, want 32", model, c.TotalGPUs())
		}
		p, err := catalog.Builtin().New("easy", nil)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: p, Seed: 1, Check: true, Runtime: rs})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	a, h := run("dgx-a100"), run("dgx-h100")
	var waitA, waitH int64
	for i := range tr.Jobs {
		ra, rh := &a.Jobs[i], &h.Jobs[i]
		if ra.State != sim.Completed || rh.State != sim.Completed {
			t.Fatalf("job %s: states %v and %v, want COMPLETED", tr.Jobs[i].ID, ra.State, rh.State)
		}
		T := int64(tr.Jobs[i].Runtime)
		if got := int64(ra.End - ra.Start); got != T {
			t.Errorf("job %s on A100: ran %d s, want the recorded %d", tr.Jobs[i].ID, got, T)
		}
		if got, want := int64(rh.End-rh.Start), (T*312+988)/989; got != want {
			t.Errorf("job %s on H100: ran %d s, want ceil(%d × 312 / 989) = %d", tr.Jobs[i].ID, got, T, want)
		}
		waitA += int64(ra.Start - ra.Submit)
		waitH += int64(rh.Start - rh.Submit)
	}
	if a.RuntimeChanges != nil {
		t.Errorf("A100 run lists %d runtime changes, want none", len(a.RuntimeChanges))
	}
	if len(h.RuntimeChanges) != len(tr.Jobs) {
		t.Errorf("H100 run lists %d runtime changes, want %d", len(h.RuntimeChanges), len(tr.Jobs))
	}
	if !(waitA > 0 && waitH < waitA) {
		t.Errorf("total wait: A100 %d s, H100 %d s; want the trace to queue on A100 and wait less on H100", waitA, waitH)
	}
	t.Logf("mean wait: A100 %.0f s, H100 %.0f s", float64(waitA)/float64(len(tr.Jobs)), float64(waitH)/float64(len(tr.Jobs)))
}

// TestRuntimeSpreadOverLeaves: 128 DGX H100 under a two-level fat-tree of
// 64-node leaves with 2:1 leaf oversubscription. A one-node job holds
// gpu001, then a 64-node training job (2 h recorded) arrives. First-fit
// gives it gpu002–gpu065, across both leaves: path oversubscription 2, so
// it runs ceil(7200 × (1 + 0.2 × (2 − 1))) = 8640 s. Topology-tree keeps
// it under the second leaf (gpu065–gpu128): 7200 s.
func TestRuntimeSpreadOverLeaves(t *testing.T) {
	c := catalogCluster(t, `version: 1
name: tree
node_groups:
  - {name: gpu, count: 128, model: dgx-h100}
fabric: {kind: fat-tree, leaf_size: 64, oversubscription: "2:1"}
`)
	small := workload.NewJob("small")
	small.Runtime, small.TimeLimit = 20000, 20000
	small.Request = workload.Request{Nodes: 1, GPUs: 8, CPUs: 8}
	big := workload.NewJob("big")
	big.Submit, big.Runtime, big.TimeLimit = 1, 7200, 10000
	big.Request = workload.Request{Nodes: 64, GPUs: 512, CPUs: 64}
	tr := &workload.Trace{Jobs: []workload.Job{small, big}}
	rs := &sim.RuntimeScaling{CommStretch: true}
	for _, tc := range []struct {
		placement string
		leaves    int
		want      sim.Time
	}{
		{"first-fit", 2, 8640},
		{"topology-tree", 1, 7200},
	} {
		t.Run(tc.placement, func(t *testing.T) {
			pl, err := policies.NewPlacer(tc.placement)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: policies.NewFIFO(pl), Seed: 1, Check: true, Runtime: rs})
			if err != nil {
				t.Fatal(err)
			}
			r := rec.Jobs[1]
			nodes := make([]int32, r.Alloc.Len())
			for k, a := range r.Alloc.All() {
				nodes[k] = a.Node
			}
			if got := c.Fabric.Leaves(nodes); got != tc.leaves {
				t.Errorf("big job spans %d leaves, want %d", got, tc.leaves)
			}
			if got := r.End - r.Start; got != tc.want || r.State != sim.Completed {
				t.Errorf("big job ran %d s (%v), want %d COMPLETED", got, r.State, tc.want)
			}
		})
	}
}
