package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// stretchRecord is two nodes of 8 GPUs (16 GPUs) and three jobs, with the
// runtime changes the model would have recorded for them:
//
//	job  alloc                    run          change (Start, Work, Actual, Speedup, Stretch)
//	A    n0: 4, n1: 4 (8 GPUs)    [0, 1200)    0, 1000, 1200, 1, 1.2     COMPLETED
//	B    n0: 2                    [0, 1800)    0, 3600, 1800, 2, 1       COMPLETED
//	C    n0: 1, n1: 1 (2 GPUs)    [130, 730)   100, 500, 750, 1, 1.5     TIMEOUT
//
// C was started at 100 but its run began at 130 (say, a node powering
// up): the change still belongs to that run. Its time limit cut it at
// 600 s of its 750.
//
// Worked numbers (window [0, 1800), 16 × 1800 = 28800 GPU-s available):
//
//   - Allocated: A 8 × 1200 = 9600, B 2 × 1800 = 3600, C 2 × 600 = 1200;
//     14400 GPU-s, fraction 0.5.
//   - Lost to stretch: A 8 × (1200 − ceil(1200/1.2) = 1000) = 1600; B
//     none (a speed ratio wastes nothing); C, on the 600 s it held, 2 ×
//     (600 − ceil(600/1.5) = 400) = 400. 2000 GPU-s in 2 stretched runs.
//   - Effective: 14400 − 2000 = 12400 GPU-s, fraction 12400/28800 =
//     0.430556 (rounded).
//   - Timeline, 600 s bins: [0,600) holds A 4800 + B 1200 + C 2 × 470 =
//     940: 6940; [600,1200) A 4800 + B 1200 + C 2 × 130 = 260: 6260;
//     [1200,1800) B 1200. A's 1600 lost GPU-s spread evenly: 800 in each
//     of its bins. C's 400 (280000 in 700ths) over its 600 s: up to 600,
//     ⌊280000 × 470 / 600⌋ = 219333 (313.33 GPU-s), the remaining 60667
//     (86.67 GPU-s) in [600,1200). Effective bins: 6940 − 800 − 313.33 =
//     5826.67 → 5827; 6260 − 800 − 86.67 = 5373.33 → 5373; 1200. They
//     sum to 12400.
func stretchRecord() *sim.Record {
	node := func(name string) hwmodels.Node {
		return hwmodels.Node{Name: name, GPUs: 8, GPUModel: "h100-sxm-80gb", GPUType: "h100", CPUs: 64, MemMB: 1 << 20, Partitions: 1}
	}
	cl := &hwmodels.Cluster{
		Name:       "two",
		Nodes:      []hwmodels.Node{node("n0"), node("n1")},
		Partitions: []hwmodels.Partition{{Name: "p", Nodes: []int32{0, 1}, Default: true}},
	}
	a := func(n, g int32) sim.NodeAlloc { return sim.NodeAlloc{Node: n, GPUs: g, CPUs: g} }
	rows := []fixtureJob{
		{"A", "u", "p", "COMPLETED", 0, 0, 1200, sim.Completed, 0, []sim.NodeAlloc{a(0, 4), a(1, 4)}},
		{"B", "u", "p", "COMPLETED", 0, 0, 1800, sim.Completed, 0, []sim.NodeAlloc{a(0, 2)}},
		{"C", "v", "p", "COMPLETED", 100, 130, 730, sim.Timeout, 0, []sim.NodeAlloc{a(0, 1), a(1, 1)}},
	}
	rec := buildRecord(cl, rows, 1800)
	rec.Notes = nil
	for i := range rec.Trace.Jobs {
		tj := &rec.Trace.Jobs[i]
		for _, al := range rows[i].alloc {
			tj.Request.GPUs += al.GPUs
			tj.Request.CPUs += al.CPUs
		}
		tj.Request.Nodes = int32(len(rows[i].alloc))
	}
	rec.Trace.Jobs[0].Runtime, rec.Trace.Jobs[1].Runtime, rec.Trace.Jobs[2].Runtime = 1000, 3600, 500
	rec.Trace.Jobs[2].TimeLimit = 600
	rec.RuntimeChanges = []sim.RuntimeChange{
		{Job: 0, Start: 0, Work: 1000, Actual: 1200, Speedup: 1, Stretch: 1.2},
		{Job: 1, Start: 0, Work: 3600, Actual: 1800, Speedup: 2, Stretch: 1, From: "a100-sxm-80gb", To: "h100-sxm-80gb"},
		{Job: 2, Start: 100, Work: 500, Actual: 750, Speedup: 1, Stretch: 1.5},
	}
	return rec
}

// TestEffectiveGPU checks effective utilization against stretchRecord's
// worked numbers in the summary, the job rows, the timeline, summary.json,
// the table, the Parquet files and Compare.
func TestEffectiveGPU(t *testing.T) {
	an := Analyze(stretchRecord(), SummaryOptions{SampleInterval: 600})
	s := an.Summary
	if want := (Utilization{Allocated: 14400, Available: 28800, Fraction: 0.5}); s.GPU != want {
		t.Errorf("GPU = %+v, want %+v", s.GPU, want)
	}
	want := EffectiveGPU{StretchedRuns: 2, Effective: 12400, LostToStretch: 2000, Fraction: 12400.0 / 28800}
	if diff := cmp.Diff(want, s.GPUEffective, approx); diff != "" {
		t.Errorf("GPUEffective (-want +got):\n%s", diff)
	}
	for i, w := range []int64{1600, 0, 400} {
		if got := an.Jobs[i].StretchLostGPUSeconds; got != w {
			t.Errorf("job %s: StretchLostGPUSeconds = %d, want %d", an.Jobs[i].ID, got, w)
		}
	}
	if !an.Timeline.Stretch {
		t.Errorf("Timeline.Stretch is false")
	}
	var gotBins, gotAlloc []int64
	for _, b := range an.Timeline.Samples {
		gotBins = append(gotBins, b.EffectiveGPUSeconds)
		gotAlloc = append(gotAlloc, b.GPUSeconds)
	}
	if diff := cmp.Diff([]int64{6940, 6260, 1200}, gotAlloc); diff != "" {
		t.Errorf("timeline gpu_seconds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{5827, 5373, 1200}, gotBins); diff != "" {
		t.Errorf("timeline gpu_seconds_effective (-want +got):\n%s", diff)
	}

	// summary.json: the gpu_effective object follows cpu.
	var buf bytes.Buffer
	if err := WriteSummaryJSON(&buf, s); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Utilization struct {
			GPUEffective json.RawMessage `json:"gpu_effective"`
		} `json:"utilization"`
	}
	if err := json.Unmarshal(buf.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	wantJSON := `{
      "fraction": 0.430556,
      "effective_s": 12400,
      "lost_to_stretch_s": 2000,
      "stretched_runs": 2
    }`
	if got := string(js.Utilization.GPUEffective); got != wantJSON {
		t.Errorf("utilization.gpu_effective = %s, want %s", got, wantJSON)
	}
	if i, k := strings.Index(buf.String(), `"cpu": {`), strings.Index(buf.String(), `"gpu_effective": {`); !(i >= 0 && k > i) {
		t.Errorf("gpu_effective is not after cpu:\n%s", buf.String())
	}

	// The table's line.
	buf.Reset()
	if err := WriteTable(&buf, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\n  GPU effective   43.06 %            3.4 GPU-h; 0.6 GPU-h lost to communication stretch in 2 runs\n") {
		t.Errorf("table lacks the effective line:\n%s", buf.String())
	}

	// Parquet: the columns and flag read back.
	var jb, tb bytes.Buffer
	if err := WriteJobsParquet(&jb, an); err != nil {
		t.Fatal(err)
	}
	if err := WriteTimelineParquet(&tb, an); err != nil {
		t.Fatal(err)
	}
	rows, meta, err := ReadJobsParquet("jobs.parquet", jb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(an.Jobs, rows); diff != "" || meta["schedsim.stretch"] != "true" {
		t.Errorf("jobs round trip (meta stretch %q) (-wrote +read):\n%s", meta["schedsim.stretch"], diff)
	}
	tl, err := ReadTimelineParquet("timeline.parquet", tb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&an.Timeline, tl); diff != "" {
		t.Errorf("timeline round trip (-wrote +read):\n%s", diff)
	}

	// Compare: gpu_util_effective over the jobs' effective GPU-seconds.
	run := &CompareRun{Label: "A", Jobs: an.Jobs, GPUs: 16, CPUs: 128, Timeline: &an.Timeline}
	c := Compare(run, run, CompareOptions{Resamples: 20, Seed: 1})
	m := c.Metrics[metricIndex("gpu_util_effective")]
	if math.Abs(m.A-12400.0/28800) > 1e-12 || m.Diff != 0 || m.Verdict != NoSignificant {
		t.Errorf("gpu_util_effective = %+v, want A = 12400/28800 and no difference", m)
	}
	if g := c.Metrics[metricIndex("gpu_util")]; math.Abs(g.A-0.5) > 1e-12 {
		t.Errorf("gpu_util = %v, want 0.5", g.A)
	}
	if _, err := ParseGate("gpu_util_effective:-1pp"); err != nil {
		t.Errorf("gate on gpu_util_effective: %v", err)
	}
}

// TestEffectiveGPUNoStretch: a speed ratio alone stretches nothing; the
// outputs carry no effective keys or columns and effective equals
// allocated.
func TestEffectiveGPUNoStretch(t *testing.T) {
	rec := stretchRecord()
	rec.RuntimeChanges = rec.RuntimeChanges[1:2] // B's speed ratio only
	an := Analyze(rec, SummaryOptions{SampleInterval: 600})
	if want := (EffectiveGPU{Effective: 14400, Fraction: 0.5}); an.Summary.GPUEffective != want {
		t.Errorf("GPUEffective = %+v, want %+v", an.Summary.GPUEffective, want)
	}
	var buf bytes.Buffer
	if err := WriteSummaryJSON(&buf, an.Summary); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "gpu_effective") {
		t.Errorf("summary.json has gpu_effective without stretch")
	}
	for _, b := range an.Timeline.Samples {
		if b.EffectiveGPUSeconds != b.GPUSeconds {
			t.Errorf("bin %d: effective %d ≠ allocated %d", b.Start, b.EffectiveGPUSeconds, b.GPUSeconds)
		}
	}
	if an.Timeline.Stretch {
		t.Errorf("Timeline.Stretch without stretch")
	}
}
