package calibrate_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/hwmodels/calibrate"
	"github.com/schedsim/schedsim/hwmodels/nvml"
)

// truth is a set of known speeds (relative to a100-sxm-80gb) per class,
// and known power lines per GPU model, that synthetic profiles are made
// from.
var truth = struct {
	speed map[string]map[string]float64
	idle  map[string]float64
	full  map[string]float64
}{
	speed: map[string]map[string]float64{
		"training":  {"a100-sxm-80gb": 1, "h100-sxm-80gb": 2.4, "h200-141gb": 2.9},
		"inference": {"a100-sxm-80gb": 1, "h100-sxm-80gb": 1.7, "h200-141gb": 2.3},
	},
	idle: map[string]float64{"a100-sxm-80gb": 52, "h100-sxm-80gb": 69, "h200-141gb": 76},
	full: map[string]float64{"a100-sxm-80gb": 390, "h100-sxm-80gb": 690, "h200-141gb": 700},
}

// synth makes profiles of each workload on each GPU model, reps times,
// with lognormal runtime noise of sd sigma and Gaussian power noise of sd
// powSD watts (0, 0: exact).
func synth(reps int, sigma, powSD float64, seed uint64) []nvml.Profile {
	rng := rand.New(rand.NewPCG(seed, 1))
	work := map[string][]struct {
		name string
		secs float64
		util float64
	}{
		"training":  {{"llama-8b-sft", 7200, 0.97}, {"resnet50", 3000, 0.85}, {"vit-l", 5400, 0.92}},
		"inference": {{"llm-serve-bs8", 1800, 0.55}, {"bert-batch", 600, 0.40}},
	}
	var out []nvml.Profile
	for _, class := range []string{"inference", "training"} {
		for _, w := range work[class] {
			for _, g := range []string{"a100-sxm-80gb", "h100-sxm-80gb", "h200-141gb"} {
				for range reps {
					u := w.util
					p := nvml.Profile{Version: 1, Workload: w.name, Class: class, GPUModel: g, GPUs: 8,
						WallS:       w.secs / truth.speed[class][g] * math.Exp(sigma*rng.NormFloat64()),
						MeanUtilPct: u * 100,
						MeanPowerW:  truth.idle[g] + (truth.full[g]-truth.idle[g])*u + powSD*rng.NormFloat64(),
						IdlePowerW:  truth.idle[g] + powSD*rng.NormFloat64(),
					}
					out = append(out, p)
				}
			}
		}
	}
	return out
}

func ratioOf(t *testing.T, c *calibrate.Calibration, from, to, class string) float64 {
	t.Helper()
	for _, r := range c.Runtime.Ratios {
		if r.From == from && r.To == to && r.Class == class {
			return r.Ratio
		}
	}
	t.Fatalf("no ratio %s→%s %s in %+v", from, to, class, c.Runtime.Ratios)
	return 0
}

func power(t *testing.T, c *calibrate.Calibration, model string) calibrate.GPUPower {
	for _, p := range c.GPUPower {
		if p.Model == model {
			return p
		}
	}
	t.Fatalf("no power for %s", model)
	return calibrate.GPUPower{}
}

// TestExact: from noise-free profiles the fit recovers the known ratios
// and power lines to the 6 significant digits written.
func TestExact(t *testing.T) {
	for _, robust := range []bool{false, true} {
		c, err := calibrate.FitProfiles(synth(1, 0, 0, 1), calibrate.Options{Robust: robust})
		if err != nil {
			t.Fatal(err)
		}
		for class, sp := range truth.speed {
			for _, pair := range [][2]string{{"a100-sxm-80gb", "h100-sxm-80gb"}, {"a100-sxm-80gb", "h200-141gb"}, {"h100-sxm-80gb", "h200-141gb"}} {
				want := sp[pair[1]] / sp[pair[0]]
				if got := ratioOf(t, c, pair[0], pair[1], class); math.Abs(got/want-1) > 1e-5 {
					t.Errorf("robust=%v %s %s→%s = %v, want %v", robust, class, pair[0], pair[1], got, want)
				}
			}
		}
		for g := range truth.idle {
			p := power(t, c, g)
			if math.Abs(p.IdleW-truth.idle[g]) > 1e-3 || math.Abs(p.FullUtilW-truth.full[g]) > 1e-3 {
				t.Errorf("%s power %+v, want idle %v full %v", g, p, truth.idle[g], truth.full[g])
			}
		}
		for _, f := range c.Fit.Runtime {
			if f.RMSLog > 1e-9 || f.MaxRelErr > 1e-9 {
				t.Errorf("exact fit %s: %+v", f.Class, f)
			}
		}
	}
}

// TestNoisy: with 5 % lognormal runtime noise and 15 W power noise, 3
// repeats of each (workload, GPU) pair, the a100→h200 ratio of each class
// is within 10 % of the truth and within 3.5 of the fit's own reported
// standard errors (ratio_rel_se, about 3 % here: 2 inference workloads ×
// 3 repeats per model), over 20 seeds; idle and full power are within
// 15 W. The fit reports its error: rms_log near the 0.05 put in.
func TestNoisy(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		c, err := calibrate.FitProfiles(synth(3, 0.05, 15, seed), calibrate.Options{Robust: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range c.Fit.Runtime {
			want := truth.speed[f.Class]["h200-141gb"] / truth.speed[f.Class]["a100-sxm-80gb"]
			got := ratioOf(t, c, "a100-sxm-80gb", "h200-141gb", f.Class)
			se := f.RatioRelSE["a100-sxm-80gb>h200-141gb"]
			if dev := math.Abs(math.Log(got / want)); dev > 0.10 || dev > 3.5*se {
				t.Errorf("seed %d %s ratio %v, want %v (deviation %.3f, reported se %.3f)", seed, f.Class, got, want, dev, se)
			}
			if f.RMSLog < 0.02 || f.RMSLog > 0.08 || len(f.RatioRelSE) != 3 {
				t.Errorf("seed %d fit %+v", seed, f)
			}
		}
		for g := range truth.idle {
			p := power(t, c, g)
			if math.Abs(p.IdleW-truth.idle[g]) > 15 || math.Abs(p.FullUtilW-truth.full[g]) > 15 {
				t.Errorf("seed %d %s power %+v", seed, g, p)
			}
		}
	}
}

// TestOutlier: one training run on H100 three times too slow (a failed
// node, a throttled GPU) pulls least squares off; the Huber fit stays
// within 5 %.
func TestOutlier(t *testing.T) {
	ps := synth(3, 0.02, 0, 7)
	for i := range ps {
		if ps[i].Workload == "resnet50" && ps[i].GPUModel == "h100-sxm-80gb" {
			ps[i].WallS *= 3
			break
		}
	}
	want := 2.4
	ols, _ := calibrate.FitProfiles(ps, calibrate.Options{})
	rob, _ := calibrate.FitProfiles(ps, calibrate.Options{Robust: true})
	o := ratioOf(t, ols, "a100-sxm-80gb", "h100-sxm-80gb", "training")
	r := ratioOf(t, rob, "a100-sxm-80gb", "h100-sxm-80gb", "training")
	if math.Abs(r/want-1) > 0.05 || math.Abs(o/want-1) < math.Abs(r/want-1) {
		t.Errorf("ols %v robust %v, want robust within 5 %% of %v and closer than ols", o, r, want)
	}
}

func TestNotComparable(t *testing.T) {
	ps := []nvml.Profile{
		{Workload: "a", Class: "training", GPUModel: "a100-sxm-80gb", WallS: 100},
		{Workload: "a", Class: "training", GPUModel: "h100-sxm-80gb", WallS: 40},
		{Workload: "b", Class: "training", GPUModel: "h200-141gb", WallS: 10},
		{Workload: "c", Class: "inference", GPUModel: "h200-141gb", WallS: 10},
	}
	c, err := calibrate.FitProfiles(ps, calibrate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Runtime.Ratios) != 1 || c.Runtime.Ratios[0].Ratio != 2.5 {
		t.Errorf("ratios %+v", c.Runtime.Ratios)
	}
	if got := strings.Join(c.Notes, "\n"); !strings.Contains(got, "[h200-141gb] share no workload") || !strings.Contains(got, "class inference: measured on 1 GPU model") {
		t.Errorf("notes:\n%s", got)
	}
	if _, err := calibrate.FitProfiles(ps[2:], calibrate.Options{}); !errors.Is(err, calibrate.ErrNoData) {
		t.Errorf("err %v, want ErrNoData", err)
	}
}

// TestApply: a calibration's ratios take precedence in the runtime model
// and its power replaces the catalog defaults in the node power.
func TestApply(t *testing.T) {
	c, err := calibrate.FitProfiles(synth(1, 0, 0, 1), calibrate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	c2, err := calibrate.Parse(data, "calibration.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	cl := hwmodels.ExampleCluster() // 32 × 8 H100 SXM and 16 × 8 A100 SXM 80GB
	a100, _ := cl.GPU("a100-sxm-80gb")
	h100, _ := cl.GPU("h100-sxm-80gb")
	before, _ := cl.Runtime.Speedup(&a100, &h100, "training")
	notes, err := calibrate.Apply(cl, c2)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := cl.Runtime.Speedup(&a100, &h100, "training")
	inf, _ := cl.Runtime.Speedup(&h100, &a100, "inference")
	if math.Abs(before-989.0/312) > 1e-9 || math.Abs(after-2.4) > 1e-5 || math.Abs(inf-1/1.7) > 1e-5 {
		t.Errorf("speedup before %v after %v, inference h100→a100 %v", before, after, inf)
	}
	var h100Node int
	for i, n := range cl.Nodes {
		if n.GPUModel == "h100-sxm-80gb" {
			h100Node = i
			break
		}
	}
	np := cl.NodePower(h100Node)
	// busy_w is the wall-weighted mean job power: between idle and full.
	if np.GPUIdleW != 69 || !(np.GPUBusyW > 400 && np.GPUBusyW < 690) {
		t.Errorf("node power %+v", np)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "h200-141gb") {
		t.Errorf("notes %v", notes)
	}
	// The catalog itself is untouched.
	if g, _ := hwmodels.LookupGPU("h100-sxm-80gb"); g.IdleW != 70 || g.BusyW != 700 {
		t.Errorf("catalog changed: %+v", g)
	}
	bad := *c2
	bad.Runtime.Ratios = []calibrate.Ratio{{From: "a100-sxm-80gb", To: "x100", Class: "training", Ratio: 2}}
	if _, err := calibrate.Apply(hwmodels.ExampleCluster(), &bad); err == nil || !strings.Contains(err.Error(), `unknown GPU model "x100"`) {
		t.Errorf("err %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"version: 3\n", "c.yaml:1: version: bad calibration: must be 1, got 3"},
		{"version: 1\nruntime:\n  ratios:\n    - {from: a, to: b, class: training, ratio: 0}\n", "c.yaml:4: runtime.ratios[0].ratio: bad calibration: must be 0.001 to 1000, got 0"},
		{"version: 1\ngpu_power:\n  - {model: a, idle_w: -1, busy_w: 3}\n", "c.yaml:3: gpu_power[0].idle_w: bad calibration: must be 0 to 100000, got -1"},
		{"version: 1\nextra: 1\n", `c.yaml:2: bad calibration: unknown key "extra" (want version, profiles, robust, runtime, gpu_power, comm, fit, notes)`},
	} {
		if _, err := calibrate.Parse([]byte(c.src), "c.yaml"); err == nil || err.Error() != c.want || !errors.Is(err, calibrate.ErrCalibration) {
			t.Errorf("Parse(%q):\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	c, _ := calibrate.FitProfiles(synth(1, 0, 0, 1), calibrate.Options{})
	data, _ := c.YAML()
	f.Add(data)
	f.Add([]byte("version: 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := calibrate.Parse(data, "f.yaml")
		if err != nil {
			if !errors.Is(err, calibrate.ErrCalibration) || !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error %v", err)
			}
			return
		}
		out, err := c.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := calibrate.Parse(out, "g.yaml"); err != nil {
			t.Fatalf("round trip: %v\n%s", err, out)
		}
	})
}
