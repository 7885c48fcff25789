package reports_test

import (
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestEffectiveGPUSpreadOverLeaves runs policies' TestRuntimeSpreadOverLeaves
// case through the engine and Analyze: 128 DGX H100 (1,024 GPUs) under
// 64-node leaves with 2:1 oversubscription; a one-node job holds gpu001
// for 20000 s, then a 64-node training job (512 GPUs, 2 h recorded)
// arrives at 1.
//
//   - first-fit spreads it over gpu002–gpu065, two leaves: stretch 1.2,
//     it runs 8640 s. Lost: 512 × (8640 − ceil(8640 / 1.2) = 7200) =
//     737280 GPU-s. Allocated 8 × 20000 + 512 × 8640 = 4583680 over
//     1024 × 20000 = 20480000 (0.223813); effective 3846400 (0.187813).
//   - topology-tree keeps it under one leaf: 7200 s, nothing stretched,
//     no gpu_effective (effective = allocated = 8 × 20000 + 512 × 7200 =
//     3846400, the same useful work).
func TestEffectiveGPUSpreadOverLeaves(t *testing.T) {
	c, err := hwmodels.ParseCluster([]byte(`version: 1
name: tree
node_groups:
  - {name: gpu, count: 128, model: dgx-h100}
fabric: {kind: fat-tree, leaf_size: 64, oversubscription: "2:1"}
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	small := workload.NewJob("small")
	small.Runtime, small.TimeLimit = 20000, 20000
	small.Request = workload.Request{Nodes: 1, GPUs: 8, CPUs: 8}
	big := workload.NewJob("big")
	big.Submit, big.Runtime, big.TimeLimit = 1, 7200, 10000
	big.Request = workload.Request{Nodes: 64, GPUs: 512, CPUs: 64}
	tr := &workload.Trace{Jobs: []workload.Job{small, big}}
	for _, tc := range []struct {
		placement       string
		allocated, lost int64
		stretched       int
		jobLost         int64
		available       int64
	}{
		{"first-fit", 4583680, 737280, 1, 737280, 20480000},
		{"topology-tree", 3846400, 0, 0, 0, 20480000},
	} {
		t.Run(tc.placement, func(t *testing.T) {
			pl, err := policies.NewPlacer(tc.placement)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: policies.NewFIFO(pl), Seed: 1, Check: true,
				Runtime: &sim.RuntimeScaling{CommStretch: true}})
			if err != nil {
				t.Fatal(err)
			}
			a := reports.Analyze(rec, reports.SummaryOptions{})
			s := a.Summary
			if s.GPU.Allocated != tc.allocated || s.GPU.Available != tc.available {
				t.Errorf("GPU = %+v, want allocated %d of %d", s.GPU, tc.allocated, tc.available)
			}
			e := s.GPUEffective
			if e.StretchedRuns != tc.stretched || e.LostToStretch != tc.lost || e.Effective != 3846400 {
				t.Errorf("GPUEffective = %+v, want %d stretched runs, %d lost, 3846400 effective", e, tc.stretched, tc.lost)
			}
			if want := 3846400.0 / 20480000; e.Fraction != want {
				t.Errorf("effective fraction = %v, want %v", e.Fraction, want)
			}
			if got := a.Jobs[1].StretchLostGPUSeconds; got != tc.jobLost {
				t.Errorf("big job: StretchLostGPUSeconds = %d, want %d", got, tc.jobLost)
			}
			var sum int64
			for _, b := range a.Timeline.Samples {
				sum += b.EffectiveGPUSeconds
			}
			if sum != 3846400 || a.Timeline.Stretch != (tc.stretched > 0) {
				t.Errorf("timeline: effective GPU-seconds sum to %d, want 3846400; Stretch %v", sum, a.Timeline.Stretch)
			}
		})
	}
}
