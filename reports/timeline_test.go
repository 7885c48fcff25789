package reports

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestTimelineFixture checks the fixture's timeline, one-hour bins over
// the window [0, 9500), against numbers worked out by hand from the table
// in fixtureRecord's comment. The last bin is cut at 9500, and jobs that
// overlap a bin partly count for the overlap only.
func TestTimelineFixture(t *testing.T) {
	tl := Analyze(fixtureRecord(), fixtureOptions).Timeline
	reasons := func(resources int32) []int32 {
		r := make([]int32, numReasons)
		r[sim.ReasonResources] = resources
		return r
	}
	want := []Sample{
		{
			// [0,3600): 100 4 GPUs·3600 + 102 1·5 + 105 2·2400 + 106 4·[1800,3600)
			// = 14400 + 5 + 4800 + 7200; CPUs 16·3600 + 2·5 + 8·2400 + 16·1800.
			// Nodes busy: gpu001 3600, gpu002 [600,3000) 2400, gpu003 5 + 1800.
			// Queued: 101 [60,3600) 3540 s, 102 30, 103 [300,900) 600 (until
			// cancelled), 106 [1000,1800) 800: 4970 job-s; GPUs asked 8·3540 +
			// 1·30 + 2·600 + 4·800 = 32750. Started 100, 102, 105, 106; ended 102,
			// 105 (100 ends at 3600, in the next bin). At 0: only 100 runs (on
			// gpu001) and nothing is queued: gpu002 and gpu003's 8 GPUs are
			// free, and none is unusable, since no job waits.
			Start: 0, End: 3600,
			GPUSeconds: 26405, EffectiveGPUSeconds: 26405, NodeSeconds: 7805, CPUSeconds: 105610,
			PartGPUSeconds: []int64{26400, 5},
			QueueSeconds:   4970, PendingGPUSeconds: 32750,
			Started: 4, Ended: 2,
			Queued: 0, PendingByReason: reasons(0), FreeGPUs: 8, UnusableFreeGPUs: 0,
		},
		{
			// [3600,7200): 101 on 8 GPUs, 106 on 4: the whole cluster. 107
			// queued from 7000: 200 s, 2 GPUs. Started 101; ended 100. At 3600
			// (after 100's end and 101's start): nothing free, nothing queued.
			Start: 3600, End: 7200,
			GPUSeconds: 43200, EffectiveGPUSeconds: 43200, NodeSeconds: 10800, CPUSeconds: 115200,
			PartGPUSeconds: []int64{43200, 0},
			QueueSeconds:   200, PendingGPUSeconds: 400,
			Started: 1, Ended: 1,
			Queued: 0, PendingByReason: reasons(0), FreeGPUs: 0, UnusableFreeGPUs: 0,
		},
		{
			// [7200,9500), 2300 s: 106 4 GPUs·1800 + 107 2·500 = 8200 (0.297101
			// of 12·2300); CPUs 16·1800 + 4·500. gpu003 busy throughout. 107
			// queued [7200,9000). Started 107; ended 101 (at 7200) and 106. At
			// 7200: 101 has freed gpu001 and gpu002, 107 waits (Resources) but
			// may only use the debug partition, gpu003: all 8 free GPUs are
			// unusable.
			Start: 7200, End: 9500,
			GPUSeconds: 8200, EffectiveGPUSeconds: 8200, NodeSeconds: 2300, CPUSeconds: 30800,
			PartGPUSeconds: []int64{7200, 1000},
			QueueSeconds:   1800, PendingGPUSeconds: 3600,
			Started: 1, Ended: 2,
			Queued: 1, PendingByReason: reasons(1), FreeGPUs: 8, UnusableFreeGPUs: 8,
		},
	}
	if diff := cmp.Diff(want, tl.Samples); diff != "" {
		t.Errorf("timeline mismatch (-want +got):\n%s", diff)
	}
	if got := tl.GPUUtil(&tl.Samples[2]); math.Abs(got-8200.0/27600) > 1e-15 {
		t.Errorf("GPU utilization of the last bin = %v, want 8200/27600", got)
	}
	// The bins add up to the run's totals.
	s := Summarize(fixtureRecord(), fixtureOptions)
	var gpu, node int64
	for _, b := range tl.Samples {
		gpu += b.GPUSeconds
		node += b.NodeSeconds
	}
	if gpu != s.GPU.Allocated || node != s.Node.Allocated {
		t.Errorf("bins sum to %d GPU-s and %d node-s, summary says %d and %d", gpu, node, s.GPU.Allocated, s.Node.Allocated)
	}

	// A 1000 s interval: bin [3000,4000) holds 100's [3000,3600) 4·600,
	// 101's [3600,4000) 8·400 and 106's 4·1000 = 9600 (105 ended at 3000).
	fine := Analyze(fixtureRecord(), SummaryOptions{SampleInterval: 1000}).Timeline
	if len(fine.Samples) != 10 || fine.Samples[9].Len() != 500 {
		t.Fatalf("1000 s bins: %d bins, last of %d s; want 10, the last 500 s", len(fine.Samples), fine.Samples[9].Len())
	}
	if got := fine.Samples[3].GPUSeconds; got != 9600 {
		t.Errorf("bin [3000,4000): %d GPU-s, want 9600", got)
	}
}

func TestSampleInterval(t *testing.T) {
	tests := []struct{ opt, span, want sim.Time }{
		{0, 9500, 3600},
		{0, 3600 * 2000, 3600},
		{0, 3600*2000 + 1, 7200},
		{0, 3600 * 4001, 3 * 3600},
		{900, 3600 * 5000, 900},
	}
	for _, tt := range tests {
		if got := sampleInterval(tt.opt, tt.span); got != tt.want {
			t.Errorf("sampleInterval(%d, %d) = %d, want %d", tt.opt, tt.span, got, tt.want)
		}
	}
}

// fixtureParquet returns the fixture's analysis and its jobs.parquet and
// timeline.parquet.
func fixtureParquet(t *testing.T) (a *Analysis, jobs, tl *bytes.Buffer) {
	t.Helper()
	a = Analyze(fixtureRecord(), fixtureOptions)
	jobs, tl = new(bytes.Buffer), new(bytes.Buffer)
	if err := WriteJobsParquet(jobs, a); err != nil {
		t.Fatal(err)
	}
	if err := WriteTimelineParquet(tl, a); err != nil {
		t.Fatal(err)
	}
	return a, jobs, tl
}

// TestParquetRoundTrip writes the fixture's jobs.parquet and
// timeline.parquet and reads them back unchanged, with the seed and
// config hash in the metadata.
func TestParquetRoundTrip(t *testing.T) {
	a, jobs, tl := fixtureParquet(t)
	rows, meta, err := ReadJobsParquet("jobs.parquet", jobs.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a.Jobs, rows); diff != "" {
		t.Errorf("jobs round trip (-wrote +read):\n%s", diff)
	}
	for k, v := range map[string]string{"schedsim.seed": "42", "schedsim.config_hash": "sha256:fixture",
		"schedsim.policy": "fifo", "schedsim.epoch": "1704067200", "schedsim.schema_version": "1"} {
		if meta[k] != v {
			t.Errorf("metadata %s = %q, want %q", k, meta[k], v)
		}
	}
	if meta["ARROW:schema"] == "" {
		t.Errorf("no stored Arrow schema")
	}
	got, err := ReadTimelineParquet("timeline.parquet", tl.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&a.Timeline, got); diff != "" {
		t.Errorf("timeline round trip (-wrote +read):\n%s", diff)
	}
	if _, _, err := ReadJobsParquet("bad.parquet", []byte("not parquet")); err == nil || !strings.Contains(err.Error(), "bad.parquet") {
		t.Errorf("reading garbage: error %v, want one naming the file", err)
	}
}

// TestTimelineReasonsOutOfOrder checks the sweep's two ways of taking
// reason changes: merged from a log in time order (the engine's) and
// sorted with the other events when the log is not in time order. The
// fixture's changes, logged backwards, give the same timeline and
// pending-reason times.
func TestTimelineReasonsOutOfOrder(t *testing.T) {
	rec := fixtureRecord()
	want := Analyze(rec, fixtureOptions)
	changes := rec.Reasons.Changes()
	if len(changes) < 2 {
		t.Fatal("the fixture needs reason changes at distinct times")
	}
	var back []sim.ReasonChange
	for i := len(changes) - 1; i >= 0; i-- {
		back = append(back, changes[i])
	}
	rec.Reasons = sim.ReasonLogOf(back...)
	got := Analyze(rec, fixtureOptions)
	if d := cmp.Diff(want.Timeline, got.Timeline); d != "" {
		t.Errorf("timeline (-in order +backwards):\n%s", d)
	}
	if d := cmp.Diff(want.Summary.PendingReasons, got.Summary.PendingReasons); d != "" || len(want.Summary.PendingReasons) == 0 {
		t.Errorf("pending reasons (-in order +backwards):\n%s", d)
	}
}

// TestTimelineEligibleLater checks when a queued job counts as able to
// use free GPUs. In the fixture, job 106 (4 GPUs on one node) is queued
// over [1000,1800) while 6 GPUs are free: gpu002's 2 (105 holds the other
// 2) and gpu003's 4. Job 101 (4 GPUs on each of 2 nodes), queued too, is
// made never eligible here. While 106 is eligible, gpu003's 4 are usable
// and only gpu002's 2 are not; before it is (a dependency, say), all 6
// are unusable. In 100 s bins, the snapshot at a bin's start sees every event
// at or before it.
func TestTimelineEligibleLater(t *testing.T) {
	for _, tc := range []struct {
		eligible sim.Time
		want     map[sim.Time]int32 // bin start: unusable free GPUs
	}{
		// Free in [1000,1800): gpu002's 2 (105 holds 2) and gpu003's 4.
		// Job 106, 4 GPUs on one node, can use gpu003 while it is eligible;
		// no other job is eligible then (101's eligibility is unknown), so
		// before that nothing waits and no free GPU is unusable.
		{1000, map[sim.Time]int32{1000: 2, 1200: 2, 1700: 2}},             // eligible as it is queued
		{1250, map[sim.Time]int32{1000: 0, 1200: 0, 1300: 2, 1700: 2}},    // from 1250
		{2000, map[sim.Time]int32{1000: 0, 1200: 0, 1300: 0, 1700: 0}},    // only after it started
		{workload.Unknown, map[sim.Time]int32{1000: 0, 1300: 0, 1700: 0}}, // never known
	} {
		rec := fixtureRecord()
		rec.Jobs[1].Eligible = workload.Unknown
		rec.Jobs[6].Eligible = tc.eligible
		opts := fixtureOptions
		opts.SampleInterval = 100
		tl := Analyze(rec, opts).Timeline
		seen := 0
		for _, s := range tl.Samples {
			if want, ok := tc.want[s.Start]; ok {
				seen++
				if s.FreeGPUs != 6 || s.UnusableFreeGPUs != want {
					t.Errorf("eligible %d: bin %d: %d free, %d unusable; want 6, %d", tc.eligible, s.Start, s.FreeGPUs, s.UnusableFreeGPUs, want)
				}
			}
		}
		if seen != len(tc.want) {
			t.Errorf("eligible %d: %d of the %d bins checked", tc.eligible, seen, len(tc.want))
		}
	}
}

// TestSortEvents checks the radix sort of the sweep's events against a
// comparison sort by compareEvents: events made in job order (the radix
// order is the answer), in shuffled order (the check must fall back), with
// negative and far-apart times, and a list too short for the radix.
func TestSortEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 18))
	for _, tc := range []struct {
		name      string
		n         int
		shuffle   bool
		lo, width sim.Time
	}{
		{"made-order", 5000, false, 0, 1000},
		{"shuffled", 5000, true, 0, 1000},
		{"negative-wide", 3000, false, -1 << 40, 1 << 41},
		{"short", 100, true, 0, 50},
	} {
		var ev []timelineEvent
		for j := range sim.JobRef(tc.n / 4) {
			for arg := range int32(4) {
				at := tc.lo + sim.Time(rng.Int64N(int64(tc.width)))
				ev = append(ev, newEvent(at, uint8(rng.IntN(9)), j, arg))
			}
		}
		if tc.shuffle {
			rng.Shuffle(len(ev), func(i, k int) { ev[i], ev[k] = ev[k], ev[i] })
		}
		want := slices.Clone(ev)
		slices.SortFunc(want, compareEvents)
		sortEvents(ev)
		if !slices.Equal(ev, want) {
			t.Errorf("%s: sortEvents differs from a comparison sort", tc.name)
		}
	}
}
