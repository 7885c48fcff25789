package workload

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"
)

// Quantiles are the probabilities Summary reports quantiles at.
var Quantiles = []float64{0, 0.25, 0.5, 0.75, 0.9, 0.99, 1}

// Summary holds the figures `schedsim trace inspect` prints for a trace.
// Times are Unix seconds; local-time figures use the trace's TimeZone (UTC
// when it is empty or unknown).
type Summary struct {
	Jobs       int    `json:"jobs"`
	First      int64  `json:"first_submit"` // Unix seconds
	Last       int64  `json:"last_submit"`
	SpanS      int64  `json:"span_s"` // last submit - first submit
	TimeZone   string `json:"time_zone"`
	Users      int    `json:"users"`
	Partitions int    `json:"partitions"`
	// GPUHours is Σ GPUs × runtime; GPUHoursLimit Σ GPUs × time limit
	// over jobs with a known limit.
	GPUHours      float64 `json:"gpu_hours"`
	GPUHoursLimit float64 `json:"gpu_hours_limit"`
	GPUJobs       int     `json:"gpu_jobs"`
	// Quantiles (at Quantiles) of GPUs, nodes, CPUs and runtime (s).
	GPUs    []float64 `json:"gpus_quantiles"`
	Nodes   []float64 `json:"nodes_quantiles"`
	CPUs    []float64 `json:"cpus_quantiles"`
	Runtime []float64 `json:"runtime_quantiles_s"`
	// ArrivalsByHour counts submits by local hour of day (0-23);
	// ArrivalsByWeekday by local day of week, Monday first.
	ArrivalsByHour    [24]int `json:"arrivals_by_hour"`
	ArrivalsByWeekday [7]int  `json:"arrivals_by_weekday"`
	// WithLimit counts jobs with a known time limit; HitLimit those whose
	// runtime reached it (runtime >= limit); FracHitLimit their ratio.
	WithLimit    int     `json:"jobs_with_limit"`
	HitLimit     int     `json:"jobs_hitting_limit"`
	FracHitLimit float64 `json:"frac_hitting_limit"`
	// Accuracy are quantiles (at Quantiles) of runtime / limit over jobs
	// with a known limit; AccuracyMean their mean.
	Accuracy     []float64      `json:"accuracy_quantiles"`
	AccuracyMean float64        `json:"accuracy_mean"`
	States       map[string]int `json:"states"`
	// Approximate names the figures whose quantiles come from a sketch
	// (within 0.5 % of the exact values; see Summarizer): gpus, nodes,
	// cpus, runtime, accuracy. Empty when every quantile is exact.
	Approximate []string `json:"approximate_quantiles,omitempty"`
}

// Summarize computes the Summary of t.
func Summarize(t *Trace) Summary {
	sm := NewSummarizer(t.TimeZone)
	for i := range t.Jobs {
		sm.Add(&t.Jobs[i], t.Epoch)
	}
	return sm.Summary()
}

// Summarizer computes a Summary one job at a time, in memory that grows
// with the distinct values of the figures, not with the jobs: quantiles
// come from counts per distinct value, exact, until a figure has more
// than maxExact distinct values; from then on that figure's quantiles
// come from a log-bucket sketch within 0.5 % of the exact value, and
// Summary.Approximate names it.
type Summarizer struct {
	s             Summary
	loc           *time.Location
	users, parts  map[string]struct{}
	accSum        float64
	gpus, nodes   *hist
	cpus, runtime *hist
	acc           *hist
}

// NewSummarizer returns a Summarizer for a trace recorded in zone (an IANA
// name; "" or unknown: UTC), which local-time figures use.
func NewSummarizer(zone string) *Summarizer {
	sm := &Summarizer{s: Summary{TimeZone: zone, States: map[string]int{}}, loc: time.UTC,
		users: map[string]struct{}{}, parts: map[string]struct{}{},
		gpus: newHist(), nodes: newHist(), cpus: newHist(), runtime: newHist(), acc: newHist()}
	if zone != "" {
		if l, err := time.LoadLocation(zone); err == nil {
			sm.loc = l
		}
	}
	return sm
}

// Add counts job j, whose times are relative to epoch (Unix seconds).
func (sm *Summarizer) Add(j *Job, epoch int64) {
	s := &sm.s
	sub := epoch + int64(j.Submit)
	if s.Jobs == 0 || sub < s.First {
		s.First = sub
	}
	if s.Jobs == 0 || sub > s.Last {
		s.Last = sub
	}
	s.Jobs++
	if j.User != "" {
		if _, ok := sm.users[j.User]; !ok {
			sm.users[j.User] = struct{}{}
		}
	}
	if j.Partition != "" {
		if _, ok := sm.parts[j.Partition]; !ok {
			sm.parts[j.Partition] = struct{}{}
		}
	}
	g := float64(j.Request.GPUs)
	sm.gpus.add(g)
	sm.nodes.add(float64(j.Request.Nodes))
	sm.cpus.add(float64(j.Request.CPUs))
	sm.runtime.add(float64(j.Runtime))
	if j.Request.GPUs > 0 {
		s.GPUJobs++
	}
	s.GPUHours += g * float64(j.Runtime) / 3600
	if j.TimeLimit > 0 {
		s.GPUHoursLimit += g * float64(j.TimeLimit) / 3600
		s.WithLimit++
		if j.Runtime >= j.TimeLimit {
			s.HitLimit++
		}
		a := float64(j.Runtime) / float64(j.TimeLimit)
		sm.acc.add(a)
		sm.accSum += a
	}
	lt := time.Unix(sub, 0).In(sm.loc)
	s.ArrivalsByHour[lt.Hour()]++
	s.ArrivalsByWeekday[(int(lt.Weekday())+6)%7]++
	s.States[j.TraceState]++
}

// Summary returns the figures of the jobs added so far.
func (sm *Summarizer) Summary() Summary {
	s := sm.s
	s.States = maps.Clone(sm.s.States)
	s.SpanS = s.Last - s.First
	s.Users, s.Partitions = len(sm.users), len(sm.parts)
	s.Approximate = nil
	for _, f := range []struct {
		h    *hist
		name string
		dst  *[]float64
	}{{sm.gpus, "gpus", &s.GPUs}, {sm.nodes, "nodes", &s.Nodes}, {sm.cpus, "cpus", &s.CPUs}, {sm.runtime, "runtime", &s.Runtime}, {sm.acc, "accuracy", &s.Accuracy}} {
		*f.dst = f.h.quantiles()
		if f.h.sketch != nil {
			s.Approximate = append(s.Approximate, f.name)
		}
	}
	if s.WithLimit > 0 {
		s.FracHitLimit = float64(s.HitLimit) / float64(s.WithLimit)
		s.AccuracyMean = sm.accSum / float64(s.WithLimit)
	}
	return s
}

// maxExact bounds the distinct values a figure's quantiles are kept exact
// for (a count per value, about 40 bytes each).
const maxExact = 1 << 18

// hist counts values: exactly per distinct value while there are at most
// maxExact, else in a sketch.
type hist struct {
	n      int64
	exact  map[float64]int64
	sketch *sketch
}

func newHist() *hist { return &hist{exact: map[float64]int64{}} }

func (h *hist) add(v float64) {
	h.n++
	if h.sketch != nil {
		h.sketch.add(v, 1)
		return
	}
	h.exact[v]++
	if len(h.exact) > maxExact {
		h.sketch = newSketch()
		for x, c := range h.exact {
			h.sketch.add(x, c)
		}
		h.exact = nil
	}
}

// quantiles returns the type 7 quantiles at Quantiles.
func (h *hist) quantiles() []float64 {
	var vals []float64
	var cum []int64 // cum[k]: values <= vals[k]
	if h.sketch != nil {
		vals, cum = h.sketch.cumulative()
	} else {
		vals = slices.Sorted(maps.Keys(h.exact))
		cum = make([]int64, len(vals))
		var c int64
		for k, v := range vals {
			c += h.exact[v]
			cum[k] = c
		}
	}
	// The i-th smallest value (0-based): the first with more than i at
	// or below it.
	at := func(i int64) float64 {
		k, _ := slices.BinarySearchFunc(cum, i+1, func(c, t int64) int { return cmp.Compare(c, t) })
		return vals[min(k, len(vals)-1)]
	}
	out := make([]float64, len(Quantiles))
	for i, q := range Quantiles {
		out[i] = QuantileFunc(h.n, q, at)
	}
	return out
}

// sketch counts values in logarithmic buckets of relative width 1 %
// (DDSketch, Masson, Rim and Lee, VLDB 2019): a value is reported as its
// bucket's centre, within sketchAlpha of the value. Zero and negative
// values have buckets of their own sign.
type sketch struct {
	pos, neg map[int32]int64
	zero     int64
}

const sketchAlpha = 0.005

var sketchLogGamma = math.Log((1 + sketchAlpha) / (1 - sketchAlpha))

func newSketch() *sketch { return &sketch{pos: map[int32]int64{}, neg: map[int32]int64{}} }

func (s *sketch) add(v float64, c int64) {
	switch {
	case v > 0:
		s.pos[int32(math.Ceil(math.Log(v)/sketchLogGamma))] += c
	case v < 0:
		s.neg[int32(math.Ceil(math.Log(-v)/sketchLogGamma))] += c
	default:
		s.zero += c
	}
}

func bucketValue(k int32) float64 {
	g := math.Exp(sketchLogGamma)
	return 2 * math.Pow(g, float64(k)) / (g + 1)
}

// cumulative returns the bucket values in ascending order and the count
// of values at or below each.
func (s *sketch) cumulative() ([]float64, []int64) {
	var vals []float64
	var cum []int64
	var c int64
	neg := slices.Sorted(maps.Keys(s.neg))
	for i := len(neg) - 1; i >= 0; i-- {
		c += s.neg[neg[i]]
		vals, cum = append(vals, -bucketValue(neg[i])), append(cum, c)
	}
	if s.zero > 0 {
		c += s.zero
		vals, cum = append(vals, 0), append(cum, c)
	}
	for _, k := range slices.Sorted(maps.Keys(s.pos)) {
		c += s.pos[k]
		vals, cum = append(vals, bucketValue(k)), append(cum, c)
	}
	return vals, cum
}
