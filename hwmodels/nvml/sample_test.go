package nvml_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/hwmodels/nvml"
	"github.com/schedsim/schedsim/hwmodels/nvml/nvmltest"
)

var t0 = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)

func TestSamplerRun(t *testing.T) {
	src := nvmltest.NewFake(nvmltest.H100Node())
	clk := nvmltest.NewClock(t0)
	s := &nvml.Sampler{Source: src, Clock: clk, Interval: time.Second}
	ser, err := s.Run(10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Instants 0 … 9 s, 8 GPUs each; the clock stops at the last instant.
	if len(ser.Points) != 10*8 || ser.Points[79].At != 9*time.Second || ser.Points[79].GPU != 7 {
		t.Fatalf("points = %d, last %+v", len(ser.Points), ser.Points[len(ser.Points)-1])
	}
	if !clk.Now().Equal(t0.Add(9 * time.Second)) {
		t.Errorf("clock at %v", clk.Now())
	}
	if ser.Points[0].PowerW != 69 || ser.Points[8].PowerW != 690 || ser.Points[8].UtilizationPct != 98 {
		t.Errorf("first points %+v %+v", ser.Points[0], ser.Points[8])
	}
	if _, err := (&nvml.Sampler{Source: src, Clock: clk}).Run(time.Second, nil); err == nil {
		t.Error("zero interval: no error")
	}
}

// TestMeasure runs a fake 6 s job on the H200 fixture with 1 s sampling:
// idle baseline (76 W), then 640 W at 97 % from the first sample on.
func TestMeasure(t *testing.T) {
	src := nvmltest.NewFake(nvmltest.H200Node())
	clk := nvmltest.NewClock(t0)
	p := &nvmltest.Process{Clock: clk, Runtime: 6 * time.Second, Code: 3}
	s := &nvml.Sampler{Source: src, Clock: clk, Interval: time.Second}
	ser, idle, wall, code, err := s.Measure(p)
	if err != nil {
		t.Fatal(err)
	}
	if wall != 6*time.Second || code != 3 || len(idle) != 1 {
		t.Fatalf("wall %v code %d idle %v", wall, code, idle)
	}
	// Samples at 0, 1, … 5 s, and at exit (6 s).
	var at []time.Duration
	for _, pt := range ser.Points {
		at = append(at, pt.At)
	}
	if d := cmp.Diff([]time.Duration{0, 1e9, 2e9, 3e9, 4e9, 5e9, 6e9}, at); d != "" {
		t.Fatalf("sample times (-want +got):\n%s", d)
	}
	prof := nvml.ProfileOf(ser, idle, nil, wall)
	want := nvml.Profile{Version: 1, GPUs: 1, WallS: 6, Samples: 7, IntervalS: 1, IdlePowerW: 76, MeanPowerW: 640, PeakPowerW: 640,
		// The fixture's energy counter grows by 640 J per reading: 6 readings
		// after the first = 3,840 J, the same as 640 W × 6 s.
		EnergyJ: 3840, MeanUtilPct: 97, PeakMemoryMiB: 98304}
	if d := cmp.Diff(want, prof); d != "" {
		t.Errorf("profile (-want +got):\n%s", d)
	}
	// Without energy counters: trapezoids over the samples, the same here.
	for i := range ser.Points {
		ser.Points[i].EnergyMJ = 0
	}
	if p2 := nvml.ProfileOf(ser, idle, []int{0}, wall); p2.EnergyJ != 3840 {
		t.Errorf("trapezoid energy = %v, want 3840", p2.EnergyJ)
	}
}

// TestMeasureMIG: in MIG mode NVML gives no utilization: the profile says
// -1 and has no idle power (the baseline is not known to be idle).
func TestMeasureMIG(t *testing.T) {
	src := nvmltest.NewFake(nvmltest.A100MIGNode())
	clk := nvmltest.NewClock(t0)
	s := &nvml.Sampler{Source: src, Clock: clk, Interval: 2 * time.Second}
	ser, idle, wall, _, err := s.Measure(&nvmltest.Process{Clock: clk, Runtime: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p := nvml.ProfileOf(ser, idle, []int{0, 1}, wall)
	if p.MeanUtilPct != -1 || p.IdlePowerW != 0 || p.GPUs != 2 || p.WallS != 5 || p.MeanPowerW != 330 || p.Samples != 4 {
		t.Errorf("profile %+v", p)
	}
}

func TestSeriesWriters(t *testing.T) {
	src := nvmltest.NewFake(nvmltest.H200Node())
	clk := nvmltest.NewClock(t0)
	ser, err := (&nvml.Sampler{Source: src, Clock: clk, Interval: 500 * time.Millisecond}).Run(1500*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ser.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	want := `t_s,gpu,util_pct,mem_util_pct,mem_used_mib,power_w,energy_mj,sm_clock_mhz,mem_clock_mhz,temp_c
0.000,0,0,0,0,76.00,1000000000,345,3201,30
0.500,0,97,48,98304,640.00,1000076000,1980,3201,55
1.000,0,97,48,98304,640.00,1000716000,1980,3201,55
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("CSV (-want +got):\n%s", d)
	}
	b.Reset()
	if err := ser.WriteParquet(&b); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != 3 || tbl.NumCols() != int64(len(nvml.SeriesColumns)) || tbl.Schema().Field(5).Name != "power_w" {
		t.Errorf("parquet: %d rows, schema %v", tbl.NumRows(), tbl.Schema())
	}
}

func TestParseProfile(t *testing.T) {
	good := "version: 1\nworkload: bert\nclass: inference\ngpu_model: h100-sxm-80gb\ngpus: 1\nwall_s: 10\nmean_power_w: 500\nmean_util_pct: -1\n"
	p, err := nvml.ParseProfile([]byte(good), "p.yaml")
	if err != nil || p.Workload != "bert" || p.WallS != 10 || p.Class != "inference" {
		t.Fatalf("%+v %v", p, err)
	}
	// JSON works too; class defaults to training.
	p, err = nvml.ParseProfile([]byte(`{"version":1,"workload":"w","gpu_model":"a100-sxm-80gb","gpus":8,"wall_s":1.5}`), "p.json")
	if err != nil || p.Class != "training" || p.GPUs != 8 {
		t.Fatalf("%+v %v", p, err)
	}
	for _, c := range []struct{ src, want string }{
		{"version: 2\n", "p.yaml:1: version: bad job profile: must be 1, got 2"},
		{strings.Replace(good, "wall_s: 10", "wall_s: -1", 1), "p.yaml:6: wall_s: bad job profile: must be > 0, got -1"},
		{strings.Replace(good, "gpus: 1", "gpus: 0", 1), "p.yaml:5: gpus: bad job profile: must be 1 to 65536, got 0"},
		{strings.Replace(good, "mean_util_pct: -1", "mean_util_pct: 101", 1), "p.yaml:8: mean_util_pct: bad job profile: must be 0 to 100, or -1 (not measured), got 101"},
		{good + "colour: red\n", `p.yaml:9: bad job profile: unknown key "colour" (want version, workload, class, gpu_model, gpu_name, gpus, command, exit_code, wall_s, samples, interval_s, idle_power_w, mean_power_w, peak_power_w, energy_j, mean_util_pct, peak_memory_mib, source)`},
		{good + "---\nversion: 1\n", "p.yaml:9: bad job profile: a second YAML document (want one document)"},
		{strings.Replace(good, "workload: bert", "workload: ''", 1), "p.yaml:2: workload: bad job profile: missing (the name that matches runs of the same job on other GPU models)"},
		{strings.Replace(good, "mean_power_w: 500", "mean_power_w: .nan", 1), "p.yaml:7: mean_power_w: bad job profile: must be 0 to 1e15, got NaN"},
		{strings.Replace(good, "gpus: 1", "gpus: one", 1), `p.yaml:5: gpus: bad job profile: want an integer, got "one"`},
		{"version: 1\nwall_s: [\n", "p.yaml:2: bad job profile: did not find expected node content"},
	} {
		_, err := nvml.ParseProfile([]byte(c.src), "p.yaml")
		if err == nil || err.Error() != c.want || !errors.Is(err, nvml.ErrProfile) {
			t.Errorf("ParseProfile(%q):\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}

// FuzzParseProfile: any input parses or gives an ErrProfile naming the
// path; a parsed profile marshals and parses back to itself.
func FuzzParseProfile(f *testing.F) {
	for _, name := range []string{"testdata/profile-h200.yaml"} {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("version: 1\nworkload: x\ngpu_model: y\ngpus: 1\nwall_s: 1e-9\n"))
	f.Add([]byte("{}"))
	f.Add([]byte("version: 1\nworkload: [a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := nvml.ParseProfile(data, "f.yaml")
		if err != nil {
			if !errors.Is(err, nvml.ErrProfile) || !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error %v", err)
			}
			return
		}
		out, err := p.YAML()
		if err != nil {
			t.Fatal(err)
		}
		q, err := nvml.ParseProfile(out, "g.yaml")
		if err != nil {
			t.Fatalf("round trip: %v\n%s", err, out)
		}
		if !cmp.Equal(p, q, cmp.Comparer(func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })) {
			t.Fatalf("round trip differs:\n%+v\n%+v", p, q)
		}
	})
}
