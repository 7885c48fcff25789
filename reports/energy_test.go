package reports

import (
	"bytes"
	"math"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// energyRecord is two nodes of 2 GPUs and 4 CPUs, each drawing 100 W base,
// 10 W per idle GPU and 100 W per busy GPU (idle node 120 W), with PUE 1.5
// and 0.20 EUR/kWh, and three jobs submitted at 0:
//
//	A  n0  2 GPUs 4 CPUs  [0, 3600)
//	B  n1  1 GPU  2 CPUs  [0, 1800)
//	C  n1  1 GPU  2 CPUs  [3000, 3600)
//
// The window is [0, 3600). With suspend, nodes power down after 600 s
// idle, draw 20 W, and resume 300 s before their next job.
func energyRecord(suspend bool) *sim.Record {
	gpu := hwmodels.GPUSpec{Name: "g", IdleW: 10, BusyW: 100}
	cl := &hwmodels.Cluster{
		Name: "e",
		Nodes: []hwmodels.Node{
			{Name: "n0", GPUs: 2, GPUModel: "g", CPUs: 4, MemMB: 1024, Partitions: 1},
			{Name: "n1", GPUs: 2, GPUModel: "g", CPUs: 4, MemMB: 1024, Partitions: 1, Group: 0},
		},
		Partitions: []hwmodels.Partition{{Name: "p", Nodes: []int32{0, 1}, Default: true}},
		Groups:     []hwmodels.NodeGroup{{Name: "n[0-1]", First: 0, End: 2, GPU: &gpu, BasePowerW: 100, Weight: 1}},
		Power:      hwmodels.PowerModel{PUE: 1.5, PricePerKWh: 0.2, Currency: "EUR", ResumeTimeout: 300},
	}
	if suspend {
		cl.Power.SuspendTime, cl.Power.SuspendedW = 600, 20
	}
	tr := &workload.Trace{}
	rec := &sim.Record{Cluster: cl, Trace: tr, Policy: "hand", End: 3600}
	for k, j := range []struct {
		id         string
		node, gpus int32
		start, end sim.Time
	}{{"A", 0, 2, 0, 3600}, {"B", 1, 1, 0, 1800}, {"C", 1, 1, 3000, 3600}} {
		wj := workload.NewJob(j.id)
		wj.Runtime = j.end - j.start
		wj.Request = workload.Request{Nodes: 1, GPUs: j.gpus, CPUs: 2 * j.gpus}
		tr.Jobs = append(tr.Jobs, wj)
		rec.Jobs = append(rec.Jobs, sim.JobRecord{Ref: sim.JobRef(k), Eligible: 0, Start: j.start, End: j.end,
			State: sim.Completed, Alloc: sim.AllocsOf([]sim.NodeAlloc{{Node: j.node, GPUs: j.gpus, CPUs: 2 * j.gpus}})})
	}
	return rec
}

// TestEnergyHandWorked checks Energy, per-job kWh and per-bin kWh
// against figures worked by hand (1 kWh = 3.6e6 J):
//
//   - n0: 120 W idle + 2 × 90 W extra busy for 3600 s = 1,080,000 J;
//     n1: 120 W × 3600 + 90 W × (1800 + 600) s = 648,000 J; IT 1,728,000 J
//     = 0.48 kWh; facility × 1.5 = 0.72; cost × 0.2 = 0.144.
//   - jobs (JobKWh: busy GPUs + GPU share of base): A (200 + 100) W × 1 h
//     = 0.3; B (100 + 50) W × 0.5 h = 0.075; C 150 W × 600 s = 0.025;
//     0.4 in all. Idle: n1's gap [1800, 3000) at 120 W = 0.04 kWh.
//   - with suspend: n1 is down [2400, 2700) (600 s after going idle, until
//     300 s before C): −100 W × 300 s = −30,000 J, so IT 1,698,000 J and
//     idle 114,000 J.
//   - bins of 1800 s: [0, 1800) n0 540,000 J + n1 210 W × 1800 = 378,000
//     J; [1800, 3600) n0 540,000 + n1 216,000 + 54,000 (C) − 30,000 (with
//     suspend).
func TestEnergyHandWorked(t *testing.T) {
	const j = 3.6e6
	for _, tc := range []struct {
		name                  string
		suspend               bool
		it, idle, bin0, bin1  float64
		suspends, suspendedNS int
	}{
		{"always on", false, 1728000 / j, 144000 / j, 918000 / j, 810000 / j, 0, 0},
		{"suspend", true, 1698000 / j, 114000 / j, 918000 / j, 780000 / j, 1, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Analyze(energyRecord(tc.suspend), SummaryOptions{SampleInterval: 1800})
			e := a.Summary.Energy
			near := func(what string, got, want float64) {
				t.Helper()
				if math.Abs(got-want) > 1e-9 {
					t.Errorf("%s = %.9f, want %.9f", what, got, want)
				}
			}
			if !e.Modeled {
				t.Fatal("energy not modeled")
			}
			near("IT kWh", e.ITKWh, tc.it)
			near("facility kWh", e.FacilityKWh, 1.5*tc.it)
			near("cost", e.Cost, 0.2*1.5*tc.it)
			near("jobs kWh", e.JobsKWh, 0.4)
			near("idle kWh", e.IdleKWh, tc.idle)
			near("mean kW", e.MeanPowerKW, tc.it)
			if e.Suspends != tc.suspends || e.SuspendedNodeSeconds != int64(tc.suspendedNS) {
				t.Errorf("suspends %d for %d s, want %d for %d s", e.Suspends, e.SuspendedNodeSeconds, tc.suspends, tc.suspendedNS)
			}
			for k, want := range []float64{0.3, 0.075, 0.025} {
				near("job "+a.Jobs[k].ID+" kWh", a.Jobs[k].EnergyKWh, want)
			}
			if !a.Timeline.Power || len(a.Timeline.Samples) != 2 {
				t.Fatalf("timeline power %v with %d samples, want true with 2", a.Timeline.Power, len(a.Timeline.Samples))
			}
			near("bin 0 kWh", a.Timeline.Samples[0].EnergyKWh, tc.bin0)
			near("bin 1 kWh", a.Timeline.Samples[1].EnergyKWh, tc.bin1)
		})
	}
}

// TestEnergyNoPowerModel: a cluster without power figures has no energy
// section and no energy figure.
func TestEnergyNoPowerModel(t *testing.T) {
	a := Analyze(fixtureRecord(), fixtureOptions)
	if a.Summary.Energy != (Energy{}) || a.Timeline.Power {
		t.Errorf("energy %+v, timeline power %v; want none", a.Summary.Energy, a.Timeline.Power)
	}
	for _, f := range Figures(a.Jobs, &a.Timeline, "") {
		if f.Name == "energy" {
			t.Error("energy figure drawn without a power model")
		}
	}
}

// TestEnergyParquetRoundTrip: jobs.parquet and timeline.parquet carry
// the energy columns and metadata with a power model, and the summary
// header gives the compare inputs.
func TestEnergyParquetRoundTrip(t *testing.T) {
	a := Analyze(energyRecord(true), SummaryOptions{SampleInterval: 1800})
	var jb, tb, sb bytes.Buffer
	if err := WriteJobsParquet(&jb, a); err != nil {
		t.Fatal(err)
	}
	if err := WriteTimelineParquet(&tb, a); err != nil {
		t.Fatal(err)
	}
	if err := WriteSummaryJSON(&sb, a.Summary); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadJobsParquet("jobs.parquet", jb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if rows[i].EnergyKWh != a.Jobs[i].EnergyKWh {
			t.Errorf("job %s: read %v kWh, wrote %v", rows[i].ID, rows[i].EnergyKWh, a.Jobs[i].EnergyKWh)
		}
	}
	tl, err := ReadTimelineParquet("timeline.parquet", tb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !tl.Power || tl.Samples[1].EnergyKWh != a.Timeline.Samples[1].EnergyKWh {
		t.Errorf("timeline read back: power %v, bin 1 %v kWh; want true, %v", tl.Power, tl.Samples[1].EnergyKWh, a.Timeline.Samples[1].EnergyKWh)
	}
	h, err := ParseSummaryHeader(sb.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(h.EnergyITKWh-a.Summary.Energy.ITKWh) > 1e-6 || h.EnergyPUE != 1.5 {
		t.Errorf("summary header energy %v kWh PUE %v, want %v and 1.5", h.EnergyITKWh, h.EnergyPUE, a.Summary.Energy.ITKWh)
	}
	// Compare: the same run against itself has equal energy; a run with
	// a lower PUE uses less.
	ra := &CompareRun{Label: "A", Jobs: a.Jobs, GPUs: 4, CPUs: 8, Timeline: &a.Timeline, EnergyITKWh: a.Summary.Energy.ITKWh, PUE: 1.5}
	rb := *ra
	rb.PUE = 1.2
	c := Compare(ra, &rb, CompareOptions{Resamples: 20, Seed: 1})
	m := c.Metrics[metricIndex("energy_kwh")]
	if math.Abs(m.A-1.5*a.Summary.Energy.ITKWh) > 1e-9 || math.Abs(m.B-1.2*a.Summary.Energy.ITKWh) > 1e-9 || m.Verdict != Better {
		t.Errorf("energy_kwh: A %v B %v verdict %q; want PUE × IT and better", m.A, m.B, m.Verdict)
	}
}

// TestEnergyControllerSuspends charges the controller's own suspensions
// (Record.PowerSaving): energyRecord with suspend, as the controller
// would have run it: n1 idle from 1800 is down from 2400 until C's pass
// at 3000 wakes it, and C begins after the 300 s resume, at 3300.
//
//   - n0: 120 W × 3600 s + 2 × 90 W × 3600 s = 1,080,000 J
//   - n1: 120 W × 3600 s + 90 W × (1800 + 300) s + (20 − 120) W × 600 s
//     = 432,000 + 189,000 − 60,000 = 561,000 J
//   - IT 1,641,000 J = 0.455833 kWh; one suspend of 600 node-seconds;
//     idle: n1's gap [1800, 3300) at 120 W less 60,000 J = 120,000 J.
func TestEnergyControllerSuspends(t *testing.T) {
	rec := energyRecord(true)
	rec.Jobs[2].Start = 3300
	rec.PowerSaving = true
	rec.Suspends = []sim.NodeSuspend{{Node: 1, From: 2400, To: 3000, Woken: true}}
	e := Analyze(rec, SummaryOptions{}).Summary.Energy
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(e.ITKWh, 1641000/3.6e6) || e.Suspends != 1 || e.SuspendedNodeSeconds != 600 || !near(e.IdleKWh, 120000/3.6e6) {
		t.Errorf("energy = IT %v kWh, %d suspends, %d s down, idle %v kWh; want %v, 1, 600, %v",
			e.ITKWh, e.Suspends, e.SuspendedNodeSeconds, e.IdleKWh, 1641000/3.6e6, 120000/3.6e6)
	}
}
