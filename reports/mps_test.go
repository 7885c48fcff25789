package reports

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// shareRecord is two nodes of 2 GPUs and 4 CPUs drawing 100 W base, 10 W
// per idle GPU and 100 W per busy GPU (idle node 120 W), PUE 1, over the
// window [0, 3600):
//
//	M1  n0  MPS 50 % on MPS GPU 0, 1 CPU  [0, 3600)
//	M2  n0  MPS 30 % on MPS GPU 0, 1 CPU  [0, 3600)
//	X   n1  one 3g.40gb MIG instance (3/7 GPU), 1 CPU  [0, 3600)
//
// n0 shares its GPUs by MPS (4 clients); n1 has 1 MIG GPU with the fixed
// layout [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb].
func shareRecord(t *testing.T) *sim.Record {
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
	gpu := hwmodels.GPUSpec{Name: "g", IdleW: 10, BusyW: 100}
	mps := &hwmodels.MPSConfig{MaxClients: 4}
	cl := &hwmodels.Cluster{
		Name: "share",
		Nodes: []hwmodels.Node{
			{Name: "n0", GPUs: 2, GPUModel: "g", CPUs: 4, MemMB: 1024, Partitions: 1, MPS: mps},
			{Name: "n1", GPUs: 2, GPUModel: "g", CPUs: 4, MemMB: 1024, Partitions: 1, Group: 1,
				MIG: &hwmodels.MIGConfig{Geometry: geo, GPUs: 1, Layout: layout}},
		},
		Partitions: []hwmodels.Partition{{Name: "p", Nodes: []int32{0, 1}, Default: true}},
		Groups: []hwmodels.NodeGroup{
			{Name: "n0", First: 0, End: 1, GPU: &gpu, BasePowerW: 100, Weight: 1, MPS: mps},
			{Name: "n1", First: 1, End: 2, GPU: &gpu, BasePowerW: 100, Weight: 1, MIG: &hwmodels.MIGConfig{Geometry: geo, GPUs: 1, Layout: layout}},
		},
		Power: hwmodels.PowerModel{PUE: 1, PricePerKWh: 0.2, Currency: "EUR"},
	}
	p3, err := workload.ParseMIGProfile("3g.40gb")
	if err != nil {
		t.Fatal(err)
	}
	tr := &workload.Trace{}
	rec := &sim.Record{Cluster: cl, Trace: tr, Policy: "hand", End: 3600}
	for k, j := range []struct {
		id    string
		req   workload.Request
		alloc sim.NodeAlloc
	}{
		{"M1", workload.Request{Nodes: 1, CPUs: 1, MPSShare: 50}, sim.NodeAlloc{Node: 0, CPUs: 1, MPS: sim.MPSShare{GPU: 0, Share: 50}}},
		{"M2", workload.Request{Nodes: 1, CPUs: 1, MPSShare: 30}, sim.NodeAlloc{Node: 0, CPUs: 1, MPS: sim.MPSShare{GPU: 0, Share: 30}}},
		{"X", workload.Request{Nodes: 1, CPUs: 1, GPUs: 1, MIGProfile: p3}, sim.NodeAlloc{Node: 1, CPUs: 1, MIG: sim.MIGInstances{Profile: p3, Count: 1}}},
	} {
		wj := workload.NewJob(j.id)
		wj.Runtime, wj.Request = 3600, j.req
		tr.Jobs = append(tr.Jobs, wj)
		rec.Jobs = append(rec.Jobs, sim.JobRecord{Ref: sim.JobRef(k), Start: 0, End: 3600, State: sim.Completed, Alloc: sim.AllocsOf([]sim.NodeAlloc{j.alloc})})
	}
	return rec
}

// TestShareFractions: GPU-seconds and energy of MPS shares and MIG
// instances, worked by hand.
//
//   - GPU-seconds: M1 0.5 × 3600 = 1800, M2 0.3 × 3600 = 1080, X 3/7 ×
//     3600 = 1542.857… → 1543. Utilization: (350 + 210 + 300) 700ths ×
//     3600 s over 4 GPUs × 3600 s = 860/2800 = 0.307142…
//   - job energy (GPU fraction × busy W + its GPU share of base):
//     M1 (50 + 0.25 × 100) W × 1 h = 0.075 kWh; M2 (30 + 15) W = 0.045;
//     X (300/7 + 150/7) W = 450/7 W = 0.0642857… kWh.
//   - IT energy: 2 × 120 W idle + 90 W extra × (0.5 + 0.3 + 3/7) for 3600
//     s = 864,000 + 90 × 8.6/7 × 3600 J = 864,000 + 398,057.142… J =
//     1,262,057.142… J = 0.350571… kWh. Before the fix MIG and MPS jobs
//     drew nothing: 0.24 kWh. GPU 0 of n0 carries 0.8 of one busy GPU,
//     never more than one.
//   - sacct AllocTRES: M1 gres/mps=50 and no gres/gpu; jobs.parquet
//     mps_share 50, 30, 0.
func TestShareFractions(t *testing.T) {
	a := Analyze(shareRecord(t), SummaryOptions{})
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %.9f, want %.9f", what, got, want)
		}
	}
	for k, want := range []int64{1800, 1080, 1543} {
		if got := a.Jobs[k].GPUSeconds; got != want {
			t.Errorf("job %s gpu_seconds = %d, want %d", a.Jobs[k].ID, got, want)
		}
	}
	near("gpu utilization", a.Summary.GPU.Fraction, 860.0/2800)
	for k, want := range []float64{0.075, 0.045, 450.0 / 7 / 1000} {
		near("job "+a.Jobs[k].ID+" kWh", a.Jobs[k].EnergyKWh, want)
	}
	near("IT kWh", a.Summary.Energy.ITKWh, (864000+90*8.6/7*3600)/3.6e6)
	var buf bytes.Buffer
	if err := WriteJobsSacct(&buf, shareRecord(t)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.Contains(lines[1], "gres/mps=50") || strings.Contains(lines[1], "gres/gpu") {
		t.Errorf("M1 sacct row %q, want gres/mps=50 and no gres/gpu", lines[1])
	}
	buf.Reset()
	if err := WriteJobsParquet(&buf, a); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadJobsParquet("jobs.parquet", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []int32{50, 30, 0} {
		if rows[k].MPSShare != want {
			t.Errorf("jobs.parquet mps_share of %s = %d, want %d", rows[k].ID, rows[k].MPSShare, want)
		}
	}
}
