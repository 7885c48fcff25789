package workload

import (
	"math"
	"slices"
	"time"
)

// Quantiles are the probabilities Summary reports quantiles at.
var Quantiles = []float64{0, 0.25, 0.5, 0.75, 0.9, 0.99, 1}

// Quantile returns the q-quantile of sorted (ascending) by the
// nearest-rank rule: the smallest value with at least q of the values at
// or below it (element ceil(q*n)-1, the first for q = 0). It returns 0 for
// no values.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(n))) - 1
	return sorted[min(max(i, 0), n-1)]
}

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
}

// Summarize computes the Summary of t.
func Summarize(t *Trace) Summary {
	s := Summary{Jobs: len(t.Jobs), TimeZone: t.TimeZone, States: map[string]int{}}
	loc := time.UTC
	if t.TimeZone != "" {
		if l, err := time.LoadLocation(t.TimeZone); err == nil {
			loc = l
		}
	}
	users, parts := map[string]bool{}, map[string]bool{}
	var gpus, nodes, cpus, run, acc []float64
	for i := range t.Jobs {
		j := &t.Jobs[i]
		sub := t.Epoch + int64(j.Submit)
		if i == 0 || sub < s.First {
			s.First = sub
		}
		if i == 0 || sub > s.Last {
			s.Last = sub
		}
		users[j.User] = true
		parts[j.Partition] = true
		g := float64(j.Request.GPUs)
		gpus = append(gpus, g)
		nodes = append(nodes, float64(j.Request.Nodes))
		cpus = append(cpus, float64(j.Request.CPUs))
		run = append(run, float64(j.Runtime))
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
			acc = append(acc, float64(j.Runtime)/float64(j.TimeLimit))
		}
		lt := time.Unix(sub, 0).In(loc)
		s.ArrivalsByHour[lt.Hour()]++
		s.ArrivalsByWeekday[(int(lt.Weekday())+6)%7]++
		s.States[j.TraceState]++
	}
	s.SpanS = s.Last - s.First
	delete(users, "")
	delete(parts, "")
	s.Users, s.Partitions = len(users), len(parts)
	q := func(v []float64) []float64 {
		slices.Sort(v)
		out := make([]float64, len(Quantiles))
		for i, p := range Quantiles {
			out[i] = Quantile(v, p)
		}
		return out
	}
	s.GPUs, s.Nodes, s.CPUs, s.Runtime, s.Accuracy = q(gpus), q(nodes), q(cpus), q(run), q(acc)
	if s.WithLimit > 0 {
		s.FracHitLimit = float64(s.HitLimit) / float64(s.WithLimit)
		var sum float64
		for _, a := range acc {
			sum += a
		}
		s.AccuracyMean = sum / float64(len(acc))
	}
	return s
}
