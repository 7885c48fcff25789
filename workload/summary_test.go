package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantileType7: hand-worked type 7 quantiles. For x = 10, 20, 30, 40
// (n = 4): h = 3q, so q = 0.5 gives h = 1.5, Q = 20 + 0.5·(30 − 20) = 25;
// q = 0.9 gives h = 2.7, Q = 30 + 0.7·10 = 37; q = 0 and 1 give the
// minimum and maximum.
func TestQuantileType7(t *testing.T) {
	x := []float64{10, 20, 30, 40}
	for _, tc := range []struct{ q, want float64 }{{0, 10}, {0.25, 17.5}, {0.5, 25}, {0.9, 37}, {1, 40}} {
		if got := Quantile(x, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Quantile(%v, %g) = %g, want %g", x, tc.q, got, tc.want)
		}
	}
	if Quantile(nil, 0.5) != 0 || Quantile([]float64{7}, 0.3) != 7 {
		t.Error("empty or single sample")
	}
}

// TestSummarizerExact: quantiles from counts per distinct value equal the
// type 7 quantiles of the sorted sample, on samples with many repeats.
func TestSummarizerExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		n := 1 + rng.IntN(500)
		h := newHist()
		var all []float64
		for range n {
			v := float64(rng.IntN(1 + trial*10))
			h.add(v)
			all = append(all, v)
		}
		slices.Sort(all)
		got := h.quantiles()
		for i, q := range Quantiles {
			if want := Quantile(all, q); got[i] != want {
				t.Fatalf("trial %d, q %g: %g, want %g", trial, q, got[i], want)
			}
		}
		if h.sketch != nil {
			t.Fatal("small sample went to the sketch")
		}
	}
}

// TestSummarizerSketch: beyond maxExact distinct values the figure
// switches to the sketch, whose quantiles stay within its relative error
// of the exact ones, and the Summary says it is approximate.
func TestSummarizerSketch(t *testing.T) {
	sm := NewSummarizer("")
	var run []float64
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range maxExact + 1000 {
		j := NewJob("x")
		j.Runtime = Time(1 + 3*i + rng.IntN(3)) // all distinct
		j.TimeLimit = j.Runtime * 2
		sm.Add(&j, 0)
		run = append(run, float64(j.Runtime))
	}
	s := sm.Summary()
	if !slices.Contains(s.Approximate, "runtime") || slices.Contains(s.Approximate, "gpus") {
		t.Fatalf("approximate %v, want runtime and not gpus", s.Approximate)
	}
	slices.Sort(run)
	for i, q := range Quantiles {
		want := Quantile(run, q)
		// Within the bucket width around the interpolated value.
		if d := math.Abs(s.Runtime[i]-want) / want; d > 2*sketchAlpha {
			t.Errorf("q %g: %g, exact %g (relative error %.4f)", q, s.Runtime[i], want, d)
		}
	}
	// Every job has runtime/limit exactly 0.5: one distinct value, exact.
	if s.Accuracy[3] != 0.5 || s.AccuracyMean != 0.5 || s.WithLimit != maxExact+1000 {
		t.Errorf("accuracy %v mean %g with limit %d", s.Accuracy, s.AccuracyMean, s.WithLimit)
	}
}

// TestSummarizeSameAsSummarizer: Summarize of a trace equals adding its
// jobs one by one with its epoch.
func TestSummarizeSameAsSummarizer(t *testing.T) {
	tr := &Trace{Epoch: 1_700_000_000, TimeZone: "Europe/Amsterdam"}
	for i := range 50 {
		j := NewJob("j")
		j.Submit, j.Runtime, j.TimeLimit = Time(i*3600), Time(60*(i%7)), 600
		j.User, j.Partition, j.TraceState = []string{"a", "b", ""}[i%3], "p", "COMPLETED"
		j.Request.GPUs = int32(i % 4)
		tr.Jobs = append(tr.Jobs, j)
	}
	a := Summarize(tr)
	sm := NewSummarizer(tr.TimeZone)
	for i := range tr.Jobs {
		j := tr.Jobs[i]
		j.Submit += Time(tr.Epoch)
		sm.Add(&j, 0)
	}
	b := sm.Summary()
	if a.Users != 2 || a.First != tr.Epoch || a.Jobs != 50 {
		t.Errorf("users %d first %d jobs %d", a.Users, a.First, a.Jobs)
	}
	if a.Jobs != b.Jobs || a.First != b.First || a.Last != b.Last || a.ArrivalsByHour != b.ArrivalsByHour ||
		!slices.Equal(a.Runtime, b.Runtime) || !slices.Equal(a.GPUs, b.GPUs) || a.GPUHours != b.GPUHours {
		t.Errorf("Summarize %+v\nSummarizer %+v", a, b)
	}
}
