package hwmodels

import (
	"fmt"
	"math"
)

// Runtime model: how long a job recorded on one GPU model runs on another,
// and how much longer a multi-node job runs when its nodes span leaf
// switches. Pure functions of the model's parameters; the simulator applies
// them when a job starts (sim.RuntimeScaling, see docs/hardware.md).
//
// Speed ratio. A job of class k recorded on GPU model A takes
//
//	T_B = ceil(T_A / s(A→B, k))
//
// on model B, where s is, in order of precedence: a ratio given for (A, B,
// k) in the spec (runtime.ratios, calibrated from measurements); the
// inverse of one given for (B, A, k); the same two for class "" (any
// class); the datasheet ratio of the class's basis, BF16TFLOPS(B) /
// BF16TFLOPS(A) for basis "tflops" (compute-bound training) or MemBWGBs(B)
// / MemBWGBs(A) for basis "bandwidth" (memory-bound inference, stencils).
// Datasheet ratios overstate real gaps: a real H200 reaches about 80 % of
// its datasheet BF16 rate (../shared/reference/h200-observed.md), so
// measured ratios should replace them where they exist.
//
// Communication stretch. A multi-node job whose traffic crosses switch
// uplinks with oversubscription o (Fabric.PathOversubscription: 1 inside
// one leaf or on a non-blocking fabric) spends fraction f of its time
// communicating; that part slows by o, the rest does not:
//
//	T' = ceil(T × (1 + f × (o − 1)))
//
// f is the job class's CommFraction, DefaultCommFraction (0.2) unless the
// spec says otherwise. So a training job (f = 0.2) spread over two leaves of
// a 2:1 tree runs 20 % longer than under one leaf.

// Bases of a job class's default speed ratio.
const (
	BasisTFLOPS    = "tflops"
	BasisBandwidth = "bandwidth"
)

// DefaultCommFraction is the share of a multi-node job's time spent in
// communication when its class says nothing: an assumption (data-parallel
// training typically spends 10–30 % in collectives), to be calibrated.
const DefaultCommFraction = 0.2

// JobClass is a kind of job for the runtime model.
type JobClass struct {
	Name string
	// Basis is BasisTFLOPS or BasisBandwidth.
	Basis string
	// CommFraction is the share of time in inter-node communication, 0 to 1.
	CommFraction float64
}

// SpeedRatio is an explicit speed ratio: a job of Class ("" for any) runs
// Ratio times as fast on To as on From (GPU model names).
type SpeedRatio struct {
	From, To, Class string
	Ratio           float64
}

// RuntimeModel holds the runtime model's parameters. The zero value is not
// usable; start from DefaultRuntimeModel.
type RuntimeModel struct {
	// DefaultClass is the class of jobs that name none.
	DefaultClass string
	// Classes, by name; DefaultRuntimeModel has training (tflops, 0.2),
	// inference (bandwidth, 0) and hpc (bandwidth, 0.2).
	Classes []JobClass
	// Ratios override datasheet ratios.
	Ratios []SpeedRatio
}

// DefaultRuntimeModel returns the documented defaults: classes training
// (basis tflops, comm fraction 0.2), inference (bandwidth, 0) and hpc
// (bandwidth, 0.2); default class training; no explicit ratios.
func DefaultRuntimeModel() RuntimeModel {
	return RuntimeModel{
		DefaultClass: "training",
		Classes: []JobClass{
			{Name: "training", Basis: BasisTFLOPS, CommFraction: DefaultCommFraction},
			{Name: "inference", Basis: BasisBandwidth, CommFraction: 0},
			{Name: "hpc", Basis: BasisBandwidth, CommFraction: DefaultCommFraction},
		},
	}
}

// Class returns the class called name ("" for DefaultClass).
func (m *RuntimeModel) Class(name string) (JobClass, bool) {
	if name == "" {
		name = m.DefaultClass
	}
	for _, c := range m.Classes {
		if c.Name == name {
			return c, true
		}
	}
	return JobClass{}, false
}

// Speedup returns how many times faster a job of class (""= default) runs
// on GPU model to than on from, by the precedence in the package comment.
// It errors when the class is unknown or neither an explicit ratio nor the
// two models' datasheet figures for the basis are available.
func (m *RuntimeModel) Speedup(from, to *GPUSpec, class string) (float64, error) {
	c, ok := m.Class(class)
	if !ok {
		return 0, fmt.Errorf("unknown job class %q", class)
	}
	if from.Name == to.Name {
		return 1, nil
	}
	for _, k := range []string{c.Name, ""} {
		for _, r := range m.Ratios {
			if r.Class != k {
				continue
			}
			if r.From == from.Name && r.To == to.Name {
				return r.Ratio, nil
			}
			if r.From == to.Name && r.To == from.Name {
				return 1 / r.Ratio, nil
			}
		}
	}
	var a, b int32
	switch c.Basis {
	case BasisBandwidth:
		a, b = from.MemBWGBs, to.MemBWGBs
	default:
		a, b = from.BF16TFLOPS, to.BF16TFLOPS
	}
	if a <= 0 || b <= 0 {
		return 0, fmt.Errorf("no %s figure for %s or %s and no runtime.ratios entry for them", c.Basis, from.Name, to.Name)
	}
	return float64(b) / float64(a), nil
}

// ScaleRuntime returns ceil(seconds / speedup): the runtime of a job that
// took seconds on the recorded hardware, on hardware speedup times as
// fast. A positive runtime stays at least 1 s; speedup must be > 0.
func ScaleRuntime(seconds int64, speedup float64) int64 {
	if seconds <= 0 {
		return seconds
	}
	return ceilSeconds(float64(seconds) / speedup)
}

// CommStretch returns 1 + f × (o − 1), the factor a job with communication
// fraction f is stretched by when its traffic crosses uplinks of
// oversubscription o (o < 1 is taken as 1).
func CommStretch(commFraction, oversubscription float64) float64 {
	return 1 + commFraction*max(oversubscription-1, 0)
}

// StretchRuntime returns ceil(seconds × stretch).
func StretchRuntime(seconds int64, stretch float64) int64 {
	if seconds <= 0 {
		return seconds
	}
	return ceilSeconds(float64(seconds) * stretch)
}

func ceilSeconds(v float64) int64 {
	if v >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return max(int64(math.Ceil(v-1e-9)), 1)
}

// GuessGPUModel returns the catalog GPU model a GRES type most likely
// stands for, as `cluster import` guesses it: the SXM part for the
// families whose type does not say the form factor (h100 → h100-sxm-80gb,
// a100 → a100-sxm-80gb, h200 → h200-141gb, b200 → b200-180gb), else the
// one catalog model whose default type it is. ok is false when no model
// fits (the result is then CustomGPUModel).
func GuessGPUModel(gresType string) (model string, ok bool) { return guessGPUModel(gresType) }
