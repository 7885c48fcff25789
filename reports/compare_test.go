package reports

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func fixtureCompareRun(label string) *CompareRun {
	a := Analyze(fixtureRecord(), fixtureOptions)
	return &CompareRun{Label: label, Jobs: a.Jobs, GPUs: a.Summary.Cluster.GPUs, CPUs: a.Summary.Cluster.CPUs, Timeline: &a.Timeline}
}

// TestCompareSelfFixture: a run against itself is paired, every
// difference and interval is exactly zero, and nothing differs.
func TestCompareSelfFixture(t *testing.T) {
	c := Compare(fixtureCompareRun("A"), fixtureCompareRun("B"), CompareOptions{Resamples: 50, Seed: 3})
	if !c.Paired {
		t.Errorf("not paired")
	}
	for _, m := range c.Metrics {
		if m.Diff != 0 || m.CILow != 0 || m.CIHigh != 0 || m.Verdict != NoSignificant {
			t.Errorf("%s: %+v", m.Name, m)
		}
	}
	// Point values equal the summary's.
	s := Summarize(fixtureRecord(), fixtureOptions)
	want := map[string]float64{"mean_wait": s.Wait.Mean, "p95_wait": s.Wait.P95, "p90_wait": s.Wait.P90,
		"mean_bsld": s.Slowdown.Mean, "gpu_util": s.GPU.Fraction, "jain_fairness": s.Fairness.JainUserSlowdown,
		"mean_response": s.Response.Mean, "jobs_per_day": s.Throughput.JobsPerDay, "makespan": float64(s.Makespan)}
	for _, m := range c.Metrics {
		if w, ok := want[m.Name]; ok && math.Abs(m.A-w) > 1e-9*math.Max(1, math.Abs(w)) {
			t.Errorf("%s = %v, summary says %v", m.Name, m.A, w)
		}
	}
}

// TestCompareWorse delays every started job of B by an hour: waits grow
// by 3600 s in every resample, so the interval is [3600, 3600] (up to
// rounding)
// and the verdict is worse. Dropping a job makes the runs unpaired.
func TestCompareWorse(t *testing.T) {
	a, b := fixtureCompareRun("A"), fixtureCompareRun("B")
	for i := range b.Jobs {
		if b.Jobs[i].Wait >= 0 {
			b.Jobs[i].Wait += 3600
		}
	}
	c := Compare(a, b, CompareOptions{Resamples: 200, Seed: 1})
	m := c.Metrics[metricIndex("mean_wait")]
	near := func(x float64) bool { return math.Abs(x-3600) < 1e-9 }
	if !near(m.Diff) || !near(m.CILow) || !near(m.CIHigh) || m.Verdict != Worse {
		t.Errorf("mean_wait: %+v, want diff and interval 3600, worse", m)
	}
	b.Jobs = b.Jobs[1:]
	if Compare(a, b, CompareOptions{Resamples: 10}).Paired {
		t.Errorf("runs of different jobs compared as paired")
	}
	// The same seed gives the same intervals.
	x := Compare(a, b, CompareOptions{Resamples: 30, Seed: 9})
	y := Compare(a, b, CompareOptions{Resamples: 30, Seed: 9})
	if diff := cmp.Diff(x, y); diff != "" {
		t.Errorf("same seed, different results:\n%s", diff)
	}
}

func TestParseGate(t *testing.T) {
	tests := []struct {
		spec    string
		want    Gate
		wantErr string
	}{
		{spec: "p95_wait:+5%", want: Gate{Spec: "p95_wait:+5%", Metric: "p95_wait", Threshold: 5, Unit: "%"}},
		{spec: "gpu_util:-1pp", want: Gate{Spec: "gpu_util:-1pp", Metric: "gpu_util", Threshold: -1, Unit: "pp"}},
		{spec: "mean_wait:+60s", want: Gate{Spec: "mean_wait:+60s", Metric: "mean_wait", Threshold: 60}},
		{spec: "mean_wait:60", want: Gate{Spec: "mean_wait:60", Metric: "mean_wait", Threshold: 60}},
		// No sign: the metric's worse way (down for utilization).
		{spec: "gpu_util:0.5pp", want: Gate{Spec: "gpu_util:0.5pp", Metric: "gpu_util", Threshold: -0.5, Unit: "pp"}},
		{spec: "p95_wait", wantErr: "want METRIC:"},
		{spec: "p95_wait:+5x", wantErr: "want METRIC:"},
		{spec: "nosuch:+5%", wantErr: `unknown metric "nosuch"`},
		{spec: "p95_wait:+5pp", wantErr: "pp applies to fraction metrics"},
		{spec: "gpu_util:+5s", wantErr: "not measured in seconds"},
	}
	for _, tt := range tests {
		got, err := ParseGate(tt.spec)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseGate(%q) error = %v, want %q", tt.spec, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("ParseGate(%q): %v", tt.spec, err)
		default:
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseGate(%q) (-want +got):\n%s", tt.spec, diff)
			}
		}
	}
}

func TestCheckGates(t *testing.T) {
	c := &Comparison{}
	for _, m := range Metrics {
		c.Metrics = append(c.Metrics, MetricResult{MetricSpec: m})
	}
	set := func(name string, a, b float64) {
		r := &c.Metrics[metricIndex(name)]
		r.A, r.B, r.Diff = a, b, b-a
	}
	set("p95_wait", 1000, 1060)    // +6 %
	set("gpu_util", 0.80, 0.795)   // -0.5 pp
	set("mean_wait", 0, 10)        // from zero: +Inf %
	set("jain_fairness", 0.5, 0.4) // -0.1 absolute
	var gates []Gate
	for _, s := range []string{"p95_wait:+5%", "p95_wait:+10%", "gpu_util:-1pp", "gpu_util:-0.25pp", "mean_wait:+50%", "jain_fairness:-0.2"} {
		g, err := ParseGate(s)
		if err != nil {
			t.Fatal(err)
		}
		gates = append(gates, g)
	}
	var broken []string
	for _, r := range CheckGates(c, gates) {
		if r.Broken {
			broken = append(broken, r.Spec)
		}
	}
	if diff := cmp.Diff([]string{"p95_wait:+5%", "gpu_util:-0.25pp", "mean_wait:+50%"}, broken); diff != "" {
		t.Errorf("broken gates (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := WriteComparison(&buf, c, CheckGates(c, gates), "json"); err != nil {
		t.Fatal(err)
	}
	if err := WriteComparison(&buf, c, nil, "yaml"); err == nil {
		t.Errorf("unknown format accepted")
	}
}
