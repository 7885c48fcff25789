package reports

import (
	"math/bits"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// EffectiveGPU is GPU utilization less the GPU time jobs lost to the
// runtime model's communication stretch (sim.RuntimeScaling.CommStretch).
// A run stretched by x > 1 that held G GPU-equivalents for d seconds
// would have needed ceil(d / x) seconds under one leaf switch on the same
// GPUs (hwmodels.ScaleRuntime(d, x)); the rest, G × (d − ceil(d / x)), is
// lost to stretch. d is the time the run held its allocation (the
// RuntimeChange's Actual for a run that completed; less for one cut short
// by its time limit, preemption, a node failure or the run's end). Speed
// ratios lose nothing: a faster or slower GPU is busy for the whole run.
type EffectiveGPU struct {
	// StretchedRuns counts the runs the runtime model stretched (a
	// sim.RuntimeChange with Stretch > 1). With none, Effective is
	// GPU.Allocated, LostToStretch 0 and Fraction GPU.Fraction.
	StretchedRuns int
	// LostToStretch is the GPU-seconds lost to stretch inside the window,
	// summed exactly in 700ths of a GPU and rounded half up; Effective is
	// GPU.Allocated − LostToStretch.
	Effective, LostToStretch int64
	// Fraction is the effective GPU-seconds over GPU.Available, computed
	// before rounding; zero when Available is zero.
	Fraction float64
}

// runStretches returns the communication stretch of every run of runs
// (indexed like it; 0 for a run the model did not stretch), and the
// number of stretched runs. It returns nil and 0 when no run was
// stretched. A sim.RuntimeChange belongs to the first run of its job
// that starts at or after its Start: the change is made when the policy
// starts the job, and the run may begin later (a MIG reconfiguration, a
// node powering up).
func runStretches(rec *sim.Record, runs *runTable) ([][]float64, int) {
	var out [][]float64
	n := 0
	for _, ch := range rec.RuntimeChanges {
		if !(ch.Stretch > 1) || int(ch.Job) < 0 || int(ch.Job) >= len(rec.Jobs) {
			continue
		}
		for k, c := 0, runs.count(int(ch.Job)); k < c; k++ {
			if runs.at(int(ch.Job), k).start < ch.Start {
				continue
			}
			if out == nil {
				out = make([][]float64, len(rec.Jobs))
			}
			if out[ch.Job] == nil {
				out[ch.Job] = make([]float64, c)
			}
			if out[ch.Job][k] == 0 {
				n++
			}
			out[ch.Job][k] = ch.Stretch
			break
		}
	}
	return out, n
}

// stretchOf returns the stretch of run k of job i (0: none).
func stretchOf(st [][]float64, i, k int) float64 {
	if st == nil || st[i] == nil {
		return 0
	}
	return st[i][k]
}

// stretchLost returns the part of g×d (g in 700ths of a GPU, d seconds)
// a run stretched by x lost: g × (d − ceil(d / x)); 0 when x ≤ 1.
func stretchLost(g, d int64, x float64) int64 {
	if !(x > 1) || d <= 0 {
		return 0
	}
	return g * (d - hwmodels.ScaleRuntime(d, x))
}

// mulDiv returns a × b / c rounded down, for a, b ≥ 0, c > 0 and b ≤ c
// (so the result fits), without overflowing the product.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}
