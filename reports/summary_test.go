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
		// No runtime changes: effective is allocated.
		GPUEffective:   EffectiveGPU{Effective: 77805, Fraction: 0.6825},
		Node:           Utilization{Allocated: 20905, Available: 28500, Fraction: 20905.0 / 28500},
		CPU:            Utilization{Allocated: 251610, Available: 912000, Fraction: 251610.0 / 912000},
		Wait:           Stats{Count: 6, Mean: 6370.0 / 6, P50: 415, P90: 2770, P95: 3155, P99: 3463, Max: 3540},
		WaitDefinition: WaitDefinitionText,
		Slowdown:       Slowdown{Tau: 10, Count: 5, Mean: 1547.0 / 900, Max: 3.5},
		Partitions: []PartitionSummary{
			{
				Name: "gpu", InCluster: true, Jobs: 5, Started: 4,
				States: StateCounts{Completed: 3, Timeout: 1, Cancelled: 1},
				Wait:   Stats{Count: 4, Mean: 1085, P50: 400, P90: 2718, P95: 3129, P99: 3457.8, Max: 3540},
			},
			{
				Name: "debug", InCluster: true, Jobs: 2, Started: 2,
				States: StateCounts{Completed: 1, Unfinished: 1},
				Wait:   Stats{Count: 2, Mean: 1015, P50: 1015, P90: 1803, P95: 1901.5, P99: 1980.3, Max: 2000},
			},
			{
				Name: "bigmem", InCluster: false, Jobs: 1, Started: 0,
				States: StateCounts{Rejected: 1},
			},
		},
		// Responses (end − submit) of the 5 jobs that ended after starting,
		// sorted: 35 (102), 2400 (105), 3600 (100), 7140 (101), 8000 (106).
		// Mean 21175/5; p90 h=3.6: 7140 + 0.6·860; p95 h=3.8; p99 h=3.96.
		Response: Stats{Count: 5, Mean: 4235, P50: 3600, P90: 7656, P95: 7828, P99: 7965.6, Max: 8000},
		WaitBy: WaitBy{
			Users: []GroupStats{
				{"alice", 2, one(0)},
				// bob: waits 0 3540; p90 h=0.9: 0.9·3540.
				{"bob", 2, Stats{Count: 2, Mean: 1770, P50: 1770, P90: 3186, P95: 3363, P99: 3504.6, Max: 3540}},
				{"carol", 1, one(30)},
				{"dave", 1, Stats{}},
				{"erin", 1, one(800)},
				{"frank", 1, one(2000)},
			},
			Accounts: []GroupStats{
				{"bio", 2, one(30)},
				// ml: 800 2000; p90 800 + 0.9·1200.
				{"ml", 2, Stats{Count: 2, Mean: 1400, P50: 1400, P90: 1880, P95: 1940, P99: 1988, Max: 2000}},
				// physics: 0 0 3540; p90 h=1.8: 0.8·3540; p99 h=1.98: 0.98·3540.
				{"physics", 4, Stats{Count: 3, Mean: 1180, P50: 0, P90: 2832, P95: 3186, P99: 3469.2, Max: 3540}},
			},
			SizeClasses: []GroupStats{
				{"1", 1, one(30)},
				// 2-4 GPUs: 100, 103, 105, 106, 107; waits 0 0 800 2000.
				{"2-4", 5, Stats{Count: 4, Mean: 700, P50: 400, P90: 1640, P95: 1820, P99: 1964, Max: 2000}},
				{"5-8", 2, one(3540)},
			},
			GPUTypes: []GroupStats{
				// any: 0 0 30 800 3540; p90 h=3.6: 800 + 0.6·2740.
				{"any", 6, Stats{Count: 5, Mean: 874, P50: 30, P90: 2444, P95: 2992, P99: 3430.4, Max: 3540}},
				{"h100", 2, one(2000)},
			},
		},
		// 5 finished jobs and 77805 GPU-seconds over 9500 s = 0.109954 days.
		Throughput: Throughput{Finished: 5, JobsPerDay: 5 * 86400.0 / 9500,
			GPUHours: 77805.0 / 3600, GPUHoursPerDay: 77805.0 / 3600 * 86400 / 9500},
		// Users' mean slowdowns: alice 1, bob (119/60 + 1)/2 = 179/120,
		// carol 3.5, erin 10/9 (frank's job is unfinished, dave's rejected).
		Fairness: Fairness{Users: 4, JainUserSlowdown: jain(1, 179.0/120, 3.5, 10.0/9),
			Accounts: []AccountShare{
				{"bio", 5, 5.0 / 77805, 1.0 / 3},
				{"ml", 29800, 29800.0 / 77805, 1.0 / 3},
				{"physics", 48000, 48000.0 / 77805, 1.0 / 3},
			}},
		// TestTimelineFixture works out the three snapshots: 8, 0 and 8
		// free GPUs, all unusable.
		// Snapshots (TestTimelineFixture): 8 free, nothing waits (0
		// unusable); 0 free; 8 free, all unusable to 107: 8/3 and 8/16.
		Fragmentation: Fragmentation{Samples: 3, MeanFreeGPUs: 16.0 / 3, MeanUnusableFreeGPUs: 8.0 / 3, UnusableFraction: 0.5},
		// Queued time by reason: None 102 [120,150) + 103 [300,900) = 630;
		// Priority 106 [1000,1500) = 500; Resources 101 [60,3600) + 106
		// [1500,1800) + 107 [7000,9000) = 5840.
		PendingReasons: []ReasonTime{{"None", 630}, {"Priority", 500}, {"Resources", 5840}},
		SampleInterval: 3600,
		Samples:        3,
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
				States:       StateCounts{Completed: 1, Unfinished: 1},
				NotStarted:   NotStarted{Pending: 1},
				GPU:          Utilization{Allocated: 800, Available: 800, Fraction: 1},
				GPUEffective: EffectiveGPU{Effective: 800, Fraction: 1},
				Node:         Utilization{Allocated: 100, Available: 100, Fraction: 1},
				CPU:          Utilization{Allocated: 6400, Available: 6400, Fraction: 1},
				Wait:         Stats{Count: 1},
				Slowdown:     Slowdown{Tau: 10, Count: 1, Mean: 1, Max: 1},
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
				States:       StateCounts{Unfinished: 1},
				GPU:          Utilization{Allocated: 240, Available: 400, Fraction: 0.6},
				GPUEffective: EffectiveGPU{Effective: 240, Fraction: 0.6},
				Node:         Utilization{Allocated: 30, Available: 50, Fraction: 0.6},
				CPU:          Utilization{Allocated: 1920, Available: 3200, Fraction: 0.6},
				Wait:         Stats{Count: 1, Mean: 20, P50: 20, P90: 20, P95: 20, P99: 20, Max: 20},
				Partitions: []PartitionSummary{
					{Name: "all", InCluster: true, Jobs: 1, Started: 1,
						States: StateCounts{Unfinished: 1},
						Wait:   Stats{Count: 1, Mean: 20, P50: 20, P90: 20, P95: 20, P99: 20, Max: 20}},
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
			want.WaitDefinition = WaitDefinitionText
			// The fixture test covers the derived metrics.
			want.Response, want.WaitBy, want.Throughput, want.Fairness = got.Response, got.WaitBy, got.Throughput, got.Fairness
			want.Fragmentation, want.PendingReasons, want.SampleInterval, want.Samples = got.Fragmentation, got.PendingReasons, got.SampleInterval, got.Samples
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
		{"node", func(r *sim.Record) { editAlloc(&r.Jobs[0], 0, func(a *sim.NodeAlloc) { a.Node = 3 }) }, "alloc[0]: node index 3 out of range [0, 3)"},
		{"negative", func(r *sim.Record) { editAlloc(&r.Jobs[1], 1, func(a *sim.NodeAlloc) { a.GPUs = -1 }) }, "alloc[1]: negative amount"},
		{"span past the nodes", func(r *sim.Record) { r.Jobs[0].Alloc = sim.AllocsOf(nodeSpan(1, 4)) }, "alloc[2]: node index 3 out of range [0, 3)"},
		{"span before the nodes", func(r *sim.Record) { r.Jobs[0].Alloc = sim.AllocsOf(nodeSpan(-1, 3)) }, "alloc[0]: node index -1 out of range [0, 3)"},
		{"span of negative amounts", func(r *sim.Record) {
			r.Jobs[0].Alloc = sim.AllocsOf(append(nodeSpan(0, 1), nodeSpan(1, 2)[0], sim.NodeAlloc{Node: 2, CPUs: -1}))
		}, "alloc[2]: negative amount"},
		{"time past the clock", func(r *sim.Record) { r.Jobs[1].End = 1 << 60 }, `job 1 (id "101"): time 1152921504606846976 outside ±288230376151711744 s`},
		{"run end past the clock", func(r *sim.Record) { r.End = -1 << 59 }, "run end -576460752303423488 outside"},
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
			a, aerr := CheckAndAnalyze(rec, SummaryOptions{})
			if (aerr == nil) != (err == nil) || err != nil && aerr.Error() != err.Error() {
				t.Errorf("CheckAndAnalyze error = %v, want CheckRecord's %v", aerr, err)
			}
			if tt.wantErr == "" {
				if d := cmp.Diff(Analyze(rec, SummaryOptions{}), a, cmp.AllowUnexported(Analysis{})); a == nil || d != "" {
					t.Errorf("CheckAndAnalyze differs from Analyze (-Analyze +CheckAndAnalyze):\n%s", d)
				}
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

// one is the Stats of a single wait w.
func one(w float64) Stats {
	return Stats{Count: 1, Mean: w, P50: w, P90: w, P95: w, P99: w, Max: w}
}

// jain is Jain's index (Σx)² / (n·Σx²).
func jain(xs ...float64) float64 {
	var s, q float64
	for _, x := range xs {
		s += x
		q += x * x
	}
	return s * s / (float64(len(xs)) * q)
}

// editAlloc changes node k of j's allocation with edit.
// nodeSpan returns n one-CPU nodes from node first on.
func nodeSpan(first int32, n int) []sim.NodeAlloc {
	a := make([]sim.NodeAlloc, n)
	for k := range a {
		a[k] = sim.NodeAlloc{Node: first + int32(k), CPUs: 1}
	}
	return a
}

func editAlloc(j *sim.JobRecord, k int, edit func(*sim.NodeAlloc)) {
	a := j.Alloc.Append(nil)
	edit(&a[k])
	j.Alloc = sim.AllocsOf(a)
}
