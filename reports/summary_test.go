package reports

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// approx compares floats to 1e-12 relative: the expected values below are
// written as fractions and need not round the same way as the code's sums.
var approx = cmpopts.EquateApprox(1e-12, 0)

func TestSummarizeFixture(t *testing.T) {
	// fixtureRecord's doc comment works these numbers out by hand.
	want := Summary{
		Policy: "fifo",
		Seed:   42,
		Cluster: ClusterInfo{
			Name: "tiny", Nodes: 3, GPUs: 12, CPUs: 96, Partitions: 2,
		},
		Trace: TraceInfo{
			Source: "testdata/fixture.sacct", Epoch: 1704067200, Jobs: 8,
			Notes: []string{"hand-made fixture"},
		},
		Notes:       []string{`partition "bigmem" does not exist: 1 job rejected`},
		RunEnd:      9500,
		Events:      123,
		Jobs:        8,
		Started:     6,
		States:      StateCounts{Completed: 4, Timeout: 1, Cancelled: 1, Rejected: 1, Unfinished: 1},
		NotStarted:  NotStarted{Cancelled: 1, Rejected: 1, Pending: 0},
		TraceStates: []TraceStateCount{{"CANCELLED", 1}, {"COMPLETED", 4}, {"FAILED", 2}, {"TIMEOUT", 1}},
		FirstSubmit: 0,
		LastEnd:     9500,
		Makespan:    9500,
		GPU:         Utilization{Allocated: 77805, Available: 114000, Fraction: 0.6825},
		Node:        Utilization{Allocated: 20905, Available: 28500, Fraction: 20905.0 / 28500},
		CPU:         Utilization{Allocated: 251610, Available: 912000, Fraction: 251610.0 / 912000},
		Wait:        Stats{Count: 6, Mean: 6370.0 / 6, P50: 415, P95: 3155, P99: 3463, Max: 3540},
		Slowdown:    Slowdown{Tau: 10, Count: 5, Mean: 1547.0 / 900, Max: 3.5},
		Partitions: []PartitionSummary{
			{
				Name: "gpu", InCluster: true, Jobs: 5, Started: 4,
				States: StateCounts{Completed: 3, Timeout: 1, Cancelled: 1},
				Wait:   Stats{Count: 4, Mean: 1085, P50: 400, P95: 3129, P99: 3457.8, Max: 3540},
			},
			{
				Name: "debug", InCluster: true, Jobs: 2, Started: 2,
				States: StateCounts{Completed: 1, Unfinished: 1},
				Wait:   Stats{Count: 2, Mean: 1015, P50: 1015, P95: 1901.5, P99: 1980.3, Max: 2000},
			},
			{
				Name: "bigmem", InCluster: false, Jobs: 1, Started: 0,
				States: StateCounts{Rejected: 1},
			},
		},
	}
	rec := fixtureRecord()
	got := Summarize(rec, SummaryOptions{})
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("Summarize mismatch (-want +got):\n%s", diff)
	}

	// The summary shares no memory with the record.
	rec.Notes[0] = "changed"
	rec.Trace.Notes[0] = "changed"
	if got.Notes[0] == "changed" || got.Trace.Notes[0] == "changed" {
		t.Errorf("Summary aliases the record's notes")
	}
}

func TestSummarizeSlowdownTau(t *testing.T) {
	// With τ = 100 s only job 102 (run 5 s) changes: (30+5)/100 = 0.35,
	// bounded to 1. Sum 1 + 119/60 + 1 + 1 + 10/9 = (540 + 357 + 200)/180
	// = 1097/180, mean 1097/900;
	// max 119/60 (job 101).
	got := Summarize(fixtureRecord(), SummaryOptions{SlowdownTau: 100}).Slowdown
	want := Slowdown{Tau: 100, Count: 5, Mean: 1097.0 / 900, Max: 119.0 / 60}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("Slowdown mismatch (-want +got):\n%s", diff)
	}
}

func TestSummarizeEdgeCases(t *testing.T) {
	one := &hwmodels.Cluster{
		Name:       "one",
		Nodes:      []hwmodels.Node{{Name: "n1", GPUs: 8, CPUs: 64, Partitions: 1}},
		Partitions: []hwmodels.Partition{{Name: "all", Nodes: []int32{0}}},
	}
	full := []sim.NodeAlloc{{Node: 0, GPUs: 8, CPUs: 64}}
	tests := []struct {
		name string
		rows []fixtureJob
		end  sim.Time
		// want holds the fields this case checks; the test copies the
		// rest from got.
		want Summary
	}{
		{
			name: "no jobs",
			want: Summary{FirstSubmit: U, LastEnd: U},
		},
		{
			// Nothing started: the window is empty, so no utilization, and
			// the rejected job's own partition string names a cluster
			// partition, so it is counted there.
			name: "only rejected",
			rows: []fixtureJob{
				{id: "1", part: "all", submit: 5, start: U, end: U, state: sim.Rejected, partIdx: -1},
				{id: "2", part: "", submit: 7, start: U, end: U, state: sim.Rejected, partIdx: -1},
			},
			end: 7,
			want: Summary{
				Jobs: 2, FirstSubmit: 5, LastEnd: U,
				States:     StateCounts{Rejected: 2},
				NotStarted: NotStarted{Rejected: 2},
				Partitions: []PartitionSummary{
					{Name: "all", InCluster: true, Jobs: 1, States: StateCounts{Rejected: 1}},
					{Name: "", Jobs: 1, States: StateCounts{Rejected: 1}},
				},
			},
		},
		{
			// Job 1 runs [10,110) on the whole node; job 2 is still
			// pending at 200 and is left out of the waits. The window is
			// [10,110): job 2's submit at 20 does not move its start.
			// Utilization is 100%. One wait of 0: every quantile is 0.
			// Slowdown of job 1: (0+100)/100 = 1.
			name: "pending at end",
			rows: []fixtureJob{
				{id: "1", part: "all", submit: 10, start: 10, end: 110, state: sim.Completed, alloc: full},
				{id: "2", part: "all", submit: 20, start: U, end: U, state: sim.Unfinished},
			},
			end: 200,
			want: Summary{
				Jobs: 2, Started: 1, FirstSubmit: 10, LastEnd: 110, Makespan: 100,
				States:     StateCounts{Completed: 1, Unfinished: 1},
				NotStarted: NotStarted{Pending: 1},
				GPU:        Utilization{Allocated: 800, Available: 800, Fraction: 1},
				Node:       Utilization{Allocated: 100, Available: 100, Fraction: 1},
				CPU:        Utilization{Allocated: 6400, Available: 6400, Fraction: 1},
				Wait:       Stats{Count: 1},
				Slowdown:   Slowdown{Tau: 10, Count: 1, Mean: 1, Max: 1},
				Partitions: []PartitionSummary{
					{Name: "all", InCluster: true, Jobs: 2, Started: 1,
						States: StateCounts{Completed: 1, Unfinished: 1}, Wait: Stats{Count: 1}},
				},
			},
		},
		{
			// Running at the end with End unknown: it holds the node until
			// the run's end, 50. Window [0,50), half the GPUs: 50%. Wait
			// 20, no finished job, so no slowdown.
			name: "running at end",
			rows: []fixtureJob{
				{id: "1", part: "all", submit: 0, start: 20, end: U, state: sim.Unfinished,
					alloc: []sim.NodeAlloc{{Node: 0, GPUs: 8, CPUs: 64}}},
			},
			end: 50,
			want: Summary{
				Jobs: 1, Started: 1, FirstSubmit: 0, LastEnd: 50, Makespan: 50,
				States: StateCounts{Unfinished: 1},
				GPU:    Utilization{Allocated: 240, Available: 400, Fraction: 0.6},
				Node:   Utilization{Allocated: 30, Available: 50, Fraction: 0.6},
				CPU:    Utilization{Allocated: 1920, Available: 3200, Fraction: 0.6},
				Wait:   Stats{Count: 1, Mean: 20, P50: 20, P95: 20, P99: 20, Max: 20},
				Partitions: []PartitionSummary{
					{Name: "all", InCluster: true, Jobs: 1, Started: 1,
						States: StateCounts{Unfinished: 1},
						Wait:   Stats{Count: 1, Mean: 20, P50: 20, P95: 20, P99: 20, Max: 20}},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := buildRecord(one, tt.rows, tt.end)
			got := Summarize(rec, SummaryOptions{})
			want := tt.want
			// Identity fields are covered by TestSummarizeFixture.
			want.Policy, want.Seed, want.Cluster, want.Trace = got.Policy, got.Seed, got.Cluster, got.Trace
			want.Notes, want.RunEnd, want.Events = got.Notes, got.RunEnd, got.Events
			want.TraceStates = got.TraceStates
			if want.Slowdown.Tau == 0 {
				want.Slowdown.Tau = DefaultSlowdownTau
			}
			if want.Partitions == nil {
				want.Partitions = []PartitionSummary{{Name: "all", InCluster: true}}
			}
			if diff := cmp.Diff(want, got, approx); diff != "" {
				t.Errorf("Summarize mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	// Hand-computed type 7 values: h = (n−1)·p, interpolate between
	// x[⌊h⌋] and x[⌊h⌋+1]. They agree with Python's
	// statistics.quantiles(xs, n=100, method="inclusive").
	tests := []struct {
		name string
		xs   []int64 // sorted
		pct  int
		want float64
	}{
		{"empty", nil, 50, 0},
		{"one", []int64{7}, 99, 7},
		{"min", []int64{1, 3, 7}, 0, 1},
		{"max", []int64{1, 3, 7}, 100, 7},
		{"p1 of 3", []int64{1, 3, 7}, 1, 1.04},                        // h=0.02: 1 + 0.02·2
		{"p33 of 3", []int64{1, 3, 7}, 33, 2.32},                      // h=0.66: 1 + 0.66·2
		{"median odd", []int64{1, 3, 7}, 50, 3},                       // h=1
		{"median even", []int64{1, 2, 3, 4}, 50, 2.5},                 // h=1.5
		{"p25 of 1..10", seq(1, 10), 25, 3.25},                        // h=2.25: 3 + 0.25
		{"p90 of 1..10", seq(1, 10), 90, 9.1},                         // h=8.1: 9 + 0.1
		{"p95 of 1..10", seq(1, 10), 95, 9.55},                        // h=8.55
		{"p99 of 1..10", seq(1, 10), 99, 9.91},                        // h=8.91
		{"p95 of 21", seq(0, 20), 95, 19},                             // h=19 exactly, no float error
		{"p95 fixture", []int64{0, 0, 30, 800, 2000, 3540}, 95, 3155}, // h=4.75
		{"ties", []int64{5, 5, 5, 5}, 95, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quantile(tt.xs, tt.pct)
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("quantile(%v, %d) mismatch (-want +got):\n%s", tt.xs, tt.pct, diff)
			}
		})
	}
}

func seq(from, to int64) []int64 {
	var xs []int64
	for x := from; x <= to; x++ {
		xs = append(xs, x)
	}
	return xs
}

func TestCheckRecord(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(r *sim.Record)
		wantErr string // substring; "" means valid
	}{
		{"valid", func(r *sim.Record) {}, ""},
		{"nil cluster", func(r *sim.Record) { r.Cluster = nil }, "no cluster"},
		{"nil trace", func(r *sim.Record) { r.Trace = nil }, "no trace"},
		{"short", func(r *sim.Record) { r.Jobs = r.Jobs[:3] }, "record has 3 jobs, trace has 8"},
		{"ref", func(r *sim.Record) { r.Jobs[2].Ref = 5 }, `job 2 (id "102"): ref is 5`},
		{"state", func(r *sim.Record) { r.Jobs[0].State = 0 }, "undefined state 0"},
		{"part", func(r *sim.Record) { r.Jobs[0].Part = 2 }, "partition index 2 out of range"},
		{"cancelled before submit", func(r *sim.Record) { r.Jobs[3].End = 5 }, `job 3 (id "103"): cancelled at 5 before submit 300`},
		{"end without start", func(r *sim.Record) { r.Jobs[3].End = 400; r.Jobs[3].State = sim.Unfinished }, `job 3 (id "103"): end 400 without a start`},
		{"completed unstarted", func(r *sim.Record) { r.Jobs[3].State, r.Jobs[3].End = sim.Completed, sim.Time(-1) }, "state COMPLETED without a start"},
		{"rejected started", func(r *sim.Record) { r.Jobs[0].State = sim.Rejected }, "state REJECTED with start 0"},
		{"start before submit", func(r *sim.Record) { r.Jobs[1].Start = 10 }, "start 10 before submit 60"},
		{"timeout no end", func(r *sim.Record) { r.Jobs[1].End = U }, "state TIMEOUT without an end"},
		{"end before start", func(r *sim.Record) { r.Jobs[1].End = 3000 }, "end 3000 before start 3600"},
		{"running past run end", func(r *sim.Record) { r.End = 8000 }, `job 7 (id "107"): end 8000 before start 9000`},
		{"node", func(r *sim.Record) { r.Jobs[0].Alloc[0].Node = 3 }, "alloc[0]: node index 3 out of range [0, 3)"},
		{"negative", func(r *sim.Record) { r.Jobs[1].Alloc[1].GPUs = -1 }, "alloc[1]: negative amount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := fixtureRecord()
			tt.mutate(rec)
			err := CheckRecord(rec)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("CheckRecord: unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("CheckRecord error = %v, want it to contain %q", err, tt.wantErr)
			}
			if tt.wantErr == "" {
				return
			}
			if err := WriteJobsCSV(new(strings.Builder), rec); err == nil {
				t.Errorf("WriteJobsCSV accepted an invalid record")
			}
			defer func() {
				if recover() == nil {
					t.Errorf("Summarize did not panic on an invalid record")
				}
			}()
			Summarize(rec, SummaryOptions{})
		})
	}
	if err := CheckRecord(nil); err == nil {
		t.Errorf("CheckRecord(nil) = nil, want an error")
	}
}
