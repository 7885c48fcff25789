package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// migRecord is a hand-made run on one H100 node with 2 GPUs, GPU 0 in MIG
// mode with the fixed layout [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb] (placed
// by geometry as 2g@0, 1g@2, 1g@3, 3g@4), GPU 1 whole; 32 CPUs. The run
// stopped at 1400 s.
//
//	job  request       submit  start  end   holds
//	A    2 × 1g.10gb        0      0   701  1g@2, 1g@3
//	B    1 whole GPU        0      0  1400  -
//	C    1 × 3g.40gb        0      0  1400  3g@4
//	D    2 × 1g.10gb      300    701  1400  1g@2, 1g@3 (waited for A)
//	E    1 × 2g.20gb     1000      -     -  (still pending at the end)
func migRecord(t *testing.T) *sim.Record {
	t.Helper()
	geo, ok := hwmodels.LookupMIG("h100-80gb")
	if !ok {
		t.Fatal("no h100-80gb MIG table")
	}
	profiles, err := geo.ParseLayout([]string{"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"})
	if err != nil {
		t.Fatal(err)
	}
	layout, err := geo.Layout(profiles)
	if err != nil {
		t.Fatal(err)
	}
	cl := &hwmodels.Cluster{
		Name: "mig",
		Nodes: []hwmodels.Node{{Name: "gpu001", GPUs: 2, GPUModel: "h100-sxm-80gb", GPUType: "h100", CPUs: 32,
			MemMB: 512 << 10, Partitions: 1, MIG: &hwmodels.MIGConfig{Geometry: geo, GPUs: 1, Layout: layout}}},
		Partitions: []hwmodels.Partition{{Name: "gpu", Nodes: []int32{0}, Default: true}},
	}
	prof := func(name string) (workload.MIGProfile, int32) {
		p, err := workload.ParseMIGProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		pi, ok := geo.Profile(name)
		if !ok {
			t.Fatal(name)
		}
		return p, pi
	}
	p1, i1 := prof("1g.10gb")
	p2, _ := prof("2g.20gb")
	p3, i3 := prof("3g.40gb")
	job := func(id string, submit sim.Time, gpus int32, p workload.MIGProfile) workload.Job {
		j := workload.NewJob(id)
		j.Submit, j.Runtime, j.TimeLimit = submit, 700, 1400
		j.User, j.Partition = "u", "gpu"
		j.Request = workload.Request{Nodes: 1, GPUs: gpus, CPUs: 1, MIGProfile: p}
		return j
	}
	tr := &workload.Trace{Jobs: []workload.Job{
		job("A", 0, 2, p1), job("B", 0, 1, 0), job("C", 0, 1, p3), job("D", 300, 2, p1), job("E", 1000, 1, p2),
	}}
	alloc := func(gpus int32, m sim.MIGInstances) []sim.NodeAlloc {
		return []sim.NodeAlloc{{Node: 0, GPUs: gpus, CPUs: 1, MIG: m}}
	}
	rec := &sim.Record{Cluster: cl, Trace: tr, Policy: "hand", End: 1400, Jobs: []sim.JobRecord{
		{Ref: 0, Submit: 0, Eligible: 0, Start: 0, End: 701, State: sim.Completed, Alloc: sim.AllocsOf(alloc(0, sim.MIGInstances{Profile: p1, Count: 2}))},
		{Ref: 1, Submit: 0, Eligible: 0, Start: 0, End: 1400, State: sim.Completed, Alloc: sim.AllocsOf(alloc(1, sim.MIGInstances{}))},
		{Ref: 2, Submit: 0, Eligible: 0, Start: 0, End: 1400, State: sim.Completed, Alloc: sim.AllocsOf(alloc(0, sim.MIGInstances{Profile: p3, Count: 1}))},
		{Ref: 3, Submit: 300, Eligible: 300, Start: 701, End: 1400, State: sim.Completed, Alloc: sim.AllocsOf(alloc(0, sim.MIGInstances{Profile: p1, Count: 2}))},
		{Ref: 4, Submit: 1000, Eligible: 1000, Start: U, End: U, State: sim.Unfinished},
	}}
	start := func(pi int32, nth int) int32 {
		for _, in := range layout {
			if in.Profile == pi {
				if nth == 0 {
					return in.Start
				}
				nth--
			}
		}
		t.Fatalf("layout has no instance %d of profile %d", nth, pi)
		return 0
	}
	rec.MIG = []sim.MIGHold{
		{Job: 0, At: 0, Node: 0, GPU: 0, Profile: i1, Start: start(i1, 0)},
		{Job: 0, At: 0, Node: 0, GPU: 0, Profile: i1, Start: start(i1, 1)},
		{Job: 2, At: 0, Node: 0, GPU: 0, Profile: i3, Start: start(i3, 0)},
		{Job: 3, At: 701, Node: 0, GPU: 0, Profile: i1, Start: start(i1, 0)},
		{Job: 3, At: 701, Node: 0, GPU: 0, Profile: i1, Start: start(i1, 1)},
	}
	return rec
}

// TestMIGReports checks how MIG instances count (a 1g instance is 1/7
// GPU, a 3g 3/7) in every GPU-second figure, the mig column, AllocTRES
// and the MIG fragmentation snapshots of migRecord. Worked in sevenths of
// a GPU-second:
//
//	A  2 × 1 × 701  = 1402  → 200.29 → 200 GPU-s
//	B  7 × 1400     = 9800  → 1400
//	C  3 × 1400     = 4200  → 600
//	D  2 × 1 × 699  = 1398  → 199.71 → 200
//	total 16800 = 2400 GPU-s of 2 GPUs × 1400 s = 2800: 6/7 utilization
//
// Bins of 350 s: every bin holds 4200 sevenths = 600 GPU-s (bin 2 = [700,
// 1050): A 2·1 + B 2450 + C 1050 + D 2·349). Pending (sevenths): D queued
// [300, 701) asks 2/7, E [1000, 1400) asks 2/7: bin 0 2·50 = 100 → 14;
// bin 1 2·350 = 700 → 100; bin 2 2·1 + 2·50 = 102 → 15; bin 3 700 → 100.
//
// Free MIG slices (the free 2g instance, 2 compute slices, in every
// snapshot; no whole GPU is free: B holds GPU 1): at 0 nothing is queued
// (unusable 0: nothing waits); at 350 and 700 D waits for two 1g
// instances, none free (unusable 2); at 1050 E waits for a 2g, which is
// free (unusable 0). Mean free 2, mean unusable 1, fraction 4/8.
func TestMIGReports(t *testing.T) {
	rec := migRecord(t)
	a := Analyze(rec, SummaryOptions{SampleInterval: 350})

	type jobFig struct {
		ID, MIG     string
		GPUs        int32
		GPUSeconds  int64
		WholeCSVGPU int64
	}
	var got []jobFig
	for i, r := range a.Jobs {
		got = append(got, jobFig{r.ID, r.MIG, r.AllocGPUs, r.GPUSeconds, rec.Jobs[i].GPUs()})
	}
	want := []jobFig{
		{"A", "1g.10gb:2", 0, 200, 0},
		{"B", "", 1, 1400, 1},
		{"C", "3g.40gb:1", 0, 600, 0},
		{"D", "1g.10gb:2", 0, 200, 0},
		{"E", "", 0, 0, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("job rows (-want +got):\n%s", diff)
	}

	s := a.Summary
	if s.GPU.Allocated != 2400 || s.GPU.Available != 2800 || s.GPU.Fraction != 16800.0/19600 {
		t.Errorf("GPU utilization = %+v, want 2400 of 2800 s, 6/7", s.GPU)
	}
	if s.Throughput.GPUHours != 2400.0/3600 {
		t.Errorf("GPU-hours = %v, want 2400/3600", s.Throughput.GPUHours)
	}

	type binFig struct {
		GPU, Pending                 int64
		Free, Unusable, MIGFree, MIG int32
	}
	var bins []binFig
	for _, b := range a.Timeline.Samples {
		bins = append(bins, binFig{b.GPUSeconds, b.PendingGPUSeconds, b.FreeGPUs, b.UnusableFreeGPUs, b.FreeMIGSlices, b.UnusableMIGSlices})
	}
	wantBins := []binFig{
		{600, 14, 0, 0, 2, 0},
		{600, 100, 0, 0, 2, 2},
		{600, 15, 0, 0, 2, 2},
		{600, 100, 0, 0, 2, 0},
	}
	if diff := cmp.Diff(wantBins, bins); diff != "" {
		t.Errorf("timeline bins (-want +got):\n%s", diff)
	}
	f := s.Fragmentation
	if !f.MIG || f.MeanFreeMIGSlices != 2 || f.MeanUnusableMIGSlices != 1 || f.MIGUnusableFraction != 0.5 {
		t.Errorf("MIG fragmentation = %+v, want free 2, unusable 1, fraction 0.5", f)
	}

	var buf bytes.Buffer
	if err := WriteJobsSacct(&buf, rec); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	for _, w := range []struct {
		line int
		tres string
	}{
		{1, "|billing=1,cpu=1,gres/gpu:1g.10gb=2,gres/gpu=2,node=1|"},
		{2, "|billing=1,cpu=1,gres/gpu=1,node=1|"},
		{3, "|billing=1,cpu=1,gres/gpu:3g.40gb=1,gres/gpu=1,node=1|"},
	} {
		if !strings.Contains(lines[w.line], w.tres) {
			t.Errorf("sacct line %d = %q, want AllocTRES %q", w.line, lines[w.line], w.tres)
		}
	}

	// jobs.parquet and timeline.parquet carry the MIG columns and read
	// back.
	var jb, tb bytes.Buffer
	if err := WriteJobsParquet(&jb, a); err != nil {
		t.Fatal(err)
	}
	if err := WriteTimelineParquet(&tb, a); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadJobsParquet("jobs.parquet", jb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].MIG != "1g.10gb:2" || rows[2].MIG != "3g.40gb:1" {
		t.Errorf("jobs.parquet mig = %q, %q", rows[0].MIG, rows[2].MIG)
	}
	tl, err := ReadTimelineParquet("timeline.parquet", tb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !tl.MIG || tl.Samples[3].FreeMIGSlices != 2 || tl.Samples[2].UnusableMIGSlices != 2 {
		t.Errorf("timeline.parquet MIG columns did not read back: %+v", tl.Samples)
	}
}

// TestTextOnlySummary checks that SummaryOptions.TextOnly changes only
// the Summary fields it names, and not the text summary: on energyRecord
// (a power model, suspended nodes) the full analysis less Response,
// Throughput, WaitBy, Fairness, Disruption, Samples, Fragmentation and
// PendingReasons is the TextOnly one; on migRecord (MIG fragmentation,
// which WriteTable prints) the timeline's fields are kept; WriteTable
// writes the same bytes for both.
func TestTextOnlySummary(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  *sim.Record
	}{{"mig", migRecord(t)}, {"energy", energyRecord(true)}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := SummaryOptions{SampleInterval: 350}
			full := Analyze(tc.rec, opts)
			opts.TextOnly = true
			short := Analyze(tc.rec, opts)
			f := full.Summary
			if f.Samples == 0 || !(f.Fragmentation.MIG || f.Energy.Modeled) || len(f.WaitBy.Users) == 0 || f.Response.Count == 0 {
				t.Fatalf("the full summary lacks samples, group waits, responses, or both MIG fragmentation and energy: %+v", f)
			}
			if short.Jobs != nil || short.JobCount() != 0 {
				t.Errorf("TextOnly: %d job rows, want none", short.JobCount())
			}
			want := f
			want.Response, want.Throughput, want.WaitBy, want.Fairness, want.Disruption = Stats{}, Throughput{}, WaitBy{}, Fairness{}, Disruption{}
			if !f.Fragmentation.MIG {
				want.Samples = 0
				want.Fragmentation = Fragmentation{}
				want.PendingReasons = nil
				if n := len(short.Timeline.Samples); n != 0 {
					t.Errorf("TextOnly: %d samples, want none", n)
				}
			}
			if diff := cmp.Diff(want, short.Summary); diff != "" {
				t.Errorf("TextOnly summary (-full less the fields it leaves +TextOnly):\n%s", diff)
			}
			var a, b bytes.Buffer
			if err := WriteTable(&a, f); err != nil {
				t.Fatal(err)
			}
			if err := WriteTable(&b, short.Summary); err != nil {
				t.Fatal(err)
			}
			if a.String() != b.String() {
				t.Errorf("WriteTable differs with TextOnly:\n%s\nwant\n%s", b.String(), a.String())
			}
		})
	}
}
