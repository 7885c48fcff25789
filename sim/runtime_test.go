package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

// modelNodes is two nodes of 4 GPUs: n1 H100 SXM, n2 A100 SXM 80GB, both
// in partition a (MaxTime 10000 s).
func modelNodes() *hwmodels.Cluster {
	c := &hwmodels.Cluster{
		Name: "m",
		Nodes: []hwmodels.Node{
			{Name: "n1", GPUs: 4, GPUType: "h100", GPUModel: "h100-sxm-80gb", CPUs: 32, MemMB: 262144, Partitions: 1},
			{Name: "n2", GPUs: 4, GPUType: "a100", GPUModel: "a100-sxm-80gb", CPUs: 32, MemMB: 262144, Partitions: 1},
		},
		Partitions: []hwmodels.Partition{{Name: "a", Nodes: []int32{0, 1}, MaxTime: 10000, Default: true}},
		Runtime:    hwmodels.DefaultRuntimeModel(),
	}
	return c
}

// TestRuntimeSpeedRatio: a training job recorded on an A100 SXM 80GB (312
// dense BF16 TFLOPS) runs ceil(T × 312 / 989) on an H100 SXM (989), and
// unchanged on an A100; an inference job scales by HBM bandwidth (2,039 →
// 3,350 GB/s); a job typed h100 was recorded on an H100 and does not
// change there; without Speed nothing changes.
func TestRuntimeSpeedRatio(t *testing.T) {
	mk := func(id string, gtype string, gpus int32) workload.Job {
		j := job(id, 0, 3600, 7200, gpus)
		j.Request.GPUType = gtype
		return j
	}
	tr := &workload.Trace{Jobs: []workload.Job{
		mk("train-h100", "", 4), // greedy: n1 (H100)
		mk("train-a100", "", 4), // n2 (A100)
		mk("typed", "h100", 4),  // after train-h100
		mk("infer", "", 4),      // class inference
	}}
	class := func(j *workload.Job) string {
		if j.ID == "infer" {
			return "inference"
		}
		return ""
	}
	rs := &RuntimeScaling{Speed: true, RecordedGPU: "a100-sxm-80gb", Class: class}
	rec, err := Run(Config{Cluster: modelNodes(), Trace: tr, Policy: &greedy{}, Seed: 1, Check: true, Runtime: rs})
	if err != nil {
		t.Fatal(err)
	}
	// train-h100 on n1 [0, 1136); train-a100 on n2 [0, 3600); typed (h100,
	// so recorded on an H100) on n1 [1136, 4736); infer on n2 when it frees
	// at 3600, an A100: unchanged.
	trainH := (3600*312 + 988) / 989 // 1136
	want := []outcome{
		{"train-h100", 0, Time(trainH), "COMPLETED", "n1", "4", ""},
		{"train-a100", 0, 3600, "COMPLETED", "n2", "4", ""},
		{"typed", Time(trainH), Time(trainH + 3600), "COMPLETED", "n1", "4", ""},
		{"infer", 3600, 7200, "COMPLETED", "n2", "4", ""},
	}
	if d := cmp.Diff(want, outcomes(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	if len(rec.RuntimeChanges) != 1 || rec.RuntimeChanges[0].Work != 3600 || rec.RuntimeChanges[0].Actual != Time(trainH) ||
		rec.RuntimeChanges[0].From != "a100-sxm-80gb" || rec.RuntimeChanges[0].To != "h100-sxm-80gb" {
		t.Errorf("RuntimeChanges = %+v, want one a100-sxm-80gb → h100-sxm-80gb 3600 → %d", rec.RuntimeChanges, trainH)
	}

	// Inference on an H100: bandwidth ratio 3350/2039.
	tr2 := &workload.Trace{Jobs: []workload.Job{mk("infer", "", 4)}}
	rec, err = Run(Config{Cluster: modelNodes(), Trace: tr2, Policy: &greedy{}, Seed: 1, Runtime: rs})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rec.Jobs[0].End, Time((3600*2039+3349)/3350); got != want {
		t.Errorf("inference job on H100 ended at %d, want ceil(3600 × 2039 / 3350) = %d", got, want)
	}

	// Off: the recorded runtime.
	rec, err = Run(Config{Cluster: modelNodes(), Trace: tr2, Policy: &greedy{}, Seed: 1, Runtime: &RuntimeScaling{RecordedGPU: "a100-sxm-80gb"}})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Jobs[0].End != 3600 || rec.RuntimeChanges != nil {
		t.Errorf("without Speed: end %d, changes %v; want 3600 and none", rec.Jobs[0].End, rec.RuntimeChanges)
	}
}

// TestRuntimeRequeueCheckpoint: a scaled run cut short converts its saved
// wall seconds into recorded work. 3600 s recorded on an A100 takes 1136 s
// on an H100; the node fails at t=568 with checkpoints every 100 s: 500
// wall seconds saved = floor(3600 × 500 / 1136) = 1584 s of work, 2016 left,
// which the rerun on the other H100 does in ceil(2016 × 312 / 989) = 636 s.
func TestRuntimeRequeueCheckpoint(t *testing.T) {
	c := modelNodes()
	c.Nodes[1].GPUType, c.Nodes[1].GPUModel = "h100", "h100-sxm-80gb"
	j := job("ck", 0, 3600, 7200, 4)
	j.CheckpointInterval = 100
	j.Requeue = true
	tr := &workload.Trace{Jobs: []workload.Job{j}}
	rec, err := Run(Config{Cluster: c, Trace: tr, Policy: &greedy{}, Seed: 1, Check: true, RequeueDelay: -1,
		NodeEvents: []NodeEvent{{At: 568, Node: 0, Down: true}},
		Runtime:    &RuntimeScaling{Speed: true, RecordedGPU: "a100-sxm-80gb"}})
	if err != nil {
		t.Fatal(err)
	}
	r := rec.Jobs[0]
	if r.Start != 568 || r.End != 568+636 || r.State != Completed || r.Requeues != 1 {
		t.Errorf("rerun [%d, %d) %v requeues %d, want [568, 1204) COMPLETED requeues 1", r.Start, r.End, r.State, r.Requeues)
	}
	if len(rec.RuntimeChanges) != 2 || rec.RuntimeChanges[1].Work != 2016 || rec.RuntimeChanges[1].Actual != 636 {
		t.Errorf("RuntimeChanges = %+v, want the rerun's 2016 → 636", rec.RuntimeChanges)
	}
}

// TestRuntimeUnknownRecordedGPU: a recorded model outside the catalog is
// an input error.
func TestRuntimeUnknownRecordedGPU(t *testing.T) {
	tr := &workload.Trace{Jobs: []workload.Job{job("a", 0, 10, 10, 1)}}
	_, err := Run(Config{Cluster: modelNodes(), Trace: tr, Policy: &greedy{}, Runtime: &RuntimeScaling{Speed: true, RecordedGPU: "a100-xl"}})
	if err == nil {
		t.Fatal("no error for an unknown recorded GPU model")
	}
}
