package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunHeadline checks report.html's headline against the fixture's
// summary (testdata/summary.json.golden), each figure worked by hand:
// makespan 9500 s = 2 h 38 min 20 s → 2 h 38 min; GPU utilization
// 0.6825 → 68.25 rounds half to even → 68.2 %; waits mean 1061.67 s →
// 18 min, p50 415 s → 7 min, p95 3155 s → 52.6 min → 53 min; of the size
// classes 1 (p95 30 s), 2-4 (1820 s) and 5-8 (3540 s), 5-8 waited longest
// at 59 min over its 1 started job; unusable fraction 0.5.
func TestRunHeadline(t *testing.T) {
	rec := fixtureRecord()
	var sum bytes.Buffer
	if err := WriteSummaryJSON(&sum, Analyze(rec, fixtureOptions).Summary); err != nil {
		t.Fatal(err)
	}
	var s jsonSummary
	if err := json.Unmarshal(sum.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	want := "fifo replayed 8 jobs on tiny (12 GPUs) over 2 h 38 min; 6 started and 4 completed. " +
		"GPUs were 68.2 % allocated; jobs waited 18 min on average, 7 min at the median and 53 min at the 95th percentile. " +
		"Jobs asking for 5-8 GPUs waited longest (p95 59 min over 1 job), and 50.0 % of free GPU time was on nodes no eligible queued job could use."
	if got := runHeadline(&s); got != want {
		t.Errorf("headline\n got %s\nwant %s", got, want)
	}
}

func TestHumanDuration(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{
		{0, "0 s"}, {59.4, "59 s"}, {59.6, "1 min"}, {89, "1 min"}, {90, "2 min"}, {3569, "59 min"},
		{3570, "1 h 00 min"}, {9500, "2 h 38 min"}, {86399, "1 d 0 h"}, {86400 + 5399, "1 d 1 h"}, {-600, "−10 min"},
		{math.NaN(), "-"},
	} {
		if got := HumanDuration(c.s); got != c.want {
			t.Errorf("HumanDuration(%g) = %q, want %q", c.s, got, c.want)
		}
	}
}

// externalRef matches anything a browser would fetch from elsewhere.
var externalRef = regexp.MustCompile(`(?i)((src|href|xlink:href)\s*=\s*["']?(https?:|//|ftp:))|url\(\s*["']?(https?:|//)|<script|<link|@import`)

// checkPage checks a page's structure without a browser: self-contained
// (no script, no stylesheet link, nothing fetched; the SVG namespace
// URIs are names, not fetches), a non-empty headline, wantSVG inline
// SVG figures and each id present.
func checkPage(t *testing.T, name string, page []byte, wantSVG int, ids ...string) {
	t.Helper()
	if m := externalRef.Find(page); m != nil {
		t.Errorf("%s refers outside itself: %s", name, m)
	}
	if m := regexp.MustCompile(`<p class="headline" id="headline">([^<]+)</p>`).FindSubmatch(page); m == nil || len(bytes.TrimSpace(m[1])) < 40 {
		t.Errorf("%s has no headline", name)
	}
	if n := bytes.Count(page, []byte("<svg")); n != wantSVG {
		t.Errorf("%s has %d inline SVGs, want %d", name, n, wantSVG)
	}
	if n := len(regexp.MustCompile(`(?s)<figure class="plot" id="plot-[a-z0-9_]+">\s*<svg .*?</svg>\s*<figcaption>`).FindAll(page, -1)); n != wantSVG {
		t.Errorf("%s has %d complete figures, want %d", name, n, wantSVG)
	}
	for _, id := range ids {
		if !bytes.Contains(page, []byte(`id="`+id+`"`)) {
			t.Errorf("%s lacks id=%q", name, id)
		}
	}
}

// testPages writes the four pages from fixtures; the map gives each
// file's expected SVG count.
func testPages(t *testing.T, dir string) map[string]int {
	t.Helper()
	pages := map[string]int{}
	write := func(name string, svgs int, f func(w *bytes.Buffer) error) {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		pages[name] = svgs
	}
	rec := fixtureRecord()
	an := Analyze(rec, fixtureOptions)
	var sum bytes.Buffer
	if err := WriteSummaryJSON(&sum, an.Summary); err != nil {
		t.Fatal(err)
	}
	figs := Figures(an.Jobs, &an.Timeline, "fifo")
	write(ReportFile, len(figs), func(w *bytes.Buffer) error {
		return WriteReport(w, ReportInput{Summary: sum.Bytes(), Figures: figs, Scenario: []byte("version: 1\nname: fixture\n")})
	})
	a, b := fixtureCompareRun("A: fifo"), fixtureCompareRun("B: fifo")
	c := Compare(a, b, CompareOptions{Resamples: 50, Seed: 3})
	g, err := ParseGate("p95_wait:+5%")
	if err != nil {
		t.Fatal(err)
	}
	write(ComparePageFile, len(OverlayFigures(a, b)), func(w *bytes.Buffer) error {
		return WriteComparePage(w, ComparePageInput{A: a, B: b, Comparison: c, Gates: CheckGates(c, []Gate{g})})
	})
	v := Validate(rec, ValidateOptions{})
	write(ValidatePageFile, len(ValidationFigures(v)), func(w *bytes.Buffer) error {
		return WriteValidatePage(w, ValidatePageInput{Validation: v, Trace: "fixture.sacct", Cluster: "tiny"})
	})
	write("validate-bundle.html", len(ValidationFigures(v)), func(w *bytes.Buffer) error {
		return WriteValidatePage(w, ValidatePageInput{Validation: v, Trace: "records bundle fixture", Cluster: "tiny", Breakdown: breakdownFixture()})
	})
	in := sweepFixture()
	write(SweepPageFile, len(in.Figures), func(w *bytes.Buffer) error { return WriteSweepPage(w, in) })
	return pages
}

// breakdownFixture is a records bundle's breakdown as the bundle package
// gives it to the page: two of three starts within ±5 s, one 40 s late
// put down to priority.
func breakdownFixture() *PageBreakdown {
	return &PageBreakdown{
		Headline: "Replayed from the records bundle alone under slurm, 2 of 3 starts (67 %) are within ±5 s of the recorded ones.",
		Meaning:  "3 jobs replayed, 3 starts compared.",
		Tables: []PageTable{
			{ID: "bundle-partitions", Title: "Per partition", Header: []string{"partition", "starts", "within ±5 s"}, Num: []bool{false, true, true},
				Rows: [][]string{{"batch", "3", "2 (67%)"}}},
			{ID: "bundle-causes", Title: "Per cause", Header: []string{"cause", "starts", "mean Δ"}, Num: []bool{false, true, true},
				Rows: [][]string{{"within ±5 s", "2", "+0.0 s"}, {"later: simulated priority ranked it lower", "1", "+40.0 s"}}},
		},
		Notes: []string{"assoc.txt: 1 accounts, 3 user associations"},
	}
}

// TestValidatePageBreakdown: a bundle's breakdown replaces the headline,
// its tables follow the agreement table with numeric cells right-aligned,
// its notes are collapsed, and its own list of the worst starts stands
// for the page's.
func TestValidatePageBreakdown(t *testing.T) {
	v := Validate(fixtureRecord(), ValidateOptions{})
	var buf bytes.Buffer
	if err := WriteValidatePage(&buf, ValidatePageInput{Validation: v, Breakdown: breakdownFixture()}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkPage(t, ValidatePageFile, buf.Bytes(), len(ValidationFigures(v)), "agreement-table", "breakdown", "bundle-partitions", "bundle-causes", "bundle-notes")
	for _, want := range []string{
		`<p class="headline" id="headline">Replayed from the records bundle alone under slurm, 2 of 3 starts (67 %) are within ±5 s of the recorded ones.</p>`,
		`<tr><td>later: simulated priority ranked it lower</td><td class="num">1</td><td class="num">&#43;40.0 s</td></tr>`,
		`<li>assoc.txt: 1 accounts, 3 user associations</li>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("validate.html lacks %s", want)
		}
	}
	if strings.Contains(page, `id="worst-table"`) {
		t.Errorf("validate.html of a bundle has the trace's worst-job table besides the breakdown's")
	}
	bad := breakdownFixture()
	bad.Tables[0].Rows[0] = bad.Tables[0].Rows[0][:2]
	if err := WriteValidatePage(&bytes.Buffer{}, ValidatePageInput{Validation: v, Breakdown: bad}); err == nil || !strings.Contains(err.Error(), "bundle-partitions: a row of 2 cells under 3 columns") {
		t.Errorf("a short row: %v", err)
	}
}

// sweepFixture is a sweep of three policies by hand: wait means 3600,
// 1800 and 7200 s (best: the second, worst: the third), utilization 0.5,
// 0.5 and 0.4 (best: the first, by the tie rule; worst: the third), and
// events, which have no direction.
func sweepFixture() SweepPageInput {
	cfg := func(label string, wait, util float64) SweepConfig {
		return SweepConfig{Label: label, Seeds: 2, Mean: []float64{wait, util, 100}, Lo: []float64{wait - 60, util, 90}, Hi: []float64{wait + 60, util, 110}}
	}
	series := []BandSeries{{Label: "wait", X: []float64{0, 1, 2}, Mean: []float64{1, 0.5, 2}, Lo: []float64{0.9, 0.4, 1.9}, Hi: []float64{1.1, 0.6, 2.1}, Replications: 2}}
	return SweepPageInput{
		Name: "policies", Params: []string{"policy"}, Scenarios: 6,
		Metrics: []SweepMetric{{Name: "wait_mean_s", Seconds: true, Better: -1}, {Name: "util_gpu", Fraction: true, Better: 1}, {Name: "events"}},
		Configs: []SweepConfig{cfg("policy=fifo", 3600, 0.5), cfg("policy=easy", 1800, 0.5), cfg("policy=slurm", 7200, 0.4)},
		Figures: []Figure{
			BandFigure("wait_mean_s_vs_policy", "wait vs policy", "policy", "wait, h", []string{"fifo", "easy", "slurm"}, series),
			BandFigure("util_gpu_vs_policy", "util vs policy", "policy", "util, %", []string{"fifo", "easy", "slurm"}, series),
		},
	}
}

// TestPagesStructure checks all four pages without a browser.
func TestPagesStructure(t *testing.T) {
	dir := t.TempDir()
	ids := map[string][]string{
		ReportFile:       {"summary-table", "partition-table", "scenario-details", "scenario-text"},
		ComparePageFile:  {"sides", "compare-table", "gate-table"},
		ValidatePageFile: {"agreement-table"},
		SweepPageFile:    {"best-table", "sweep-table"},
	}
	for name, svgs := range testPages(t, dir) {
		page, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		checkPage(t, name, page, svgs, ids[name]...)
	}
	report, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	// The scenario is folded away.
	if !regexp.MustCompile(`(?s)<details id="scenario-details">.*<pre id="scenario-text">version: 1`).Match(report) {
		t.Errorf("the scenario is not inside <details>")
	}
	// bigmem has a job but none started: no zero waits for it.
	if !strings.Contains(string(report), `<td>bigmem</td><td class="num">1</td><td class="num">0</td><td class="num" colspan="6">no job started</td>`) {
		t.Errorf("report.html does not mark bigmem as having no started job")
	}
}

// TestReportLeavesOutIdlePartitions adds a partition without jobs to the
// fixture's summary: it is named below the table, not listed in it.
func TestReportLeavesOutIdlePartitions(t *testing.T) {
	var sum bytes.Buffer
	if err := WriteSummaryJSON(&sum, Analyze(fixtureRecord(), fixtureOptions).Summary); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(sum.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	doc["partitions"] = append(doc["partitions"].([]any), map[string]any{"name": "idle", "in_cluster": true, "jobs": 0, "started": 0})
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteReport(&b, ReportInput{Summary: data}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<td>idle</td>") {
		t.Errorf("the idle partition has a row")
	}
	if !strings.Contains(b.String(), `<p class="note" id="idle-partitions">No job went to idle.</p>`) {
		t.Errorf("the idle partition is not named")
	}
}

// TestComparePageHeadline builds a comparison by hand: p95 wait 3600 →
// 5400 s, worse; GPU utilization 0.50 → 0.55, better; mean wait better;
// every other metric not significant. Of two gates one is broken.
func TestComparePageHeadline(t *testing.T) {
	c := &Comparison{A: "A: easy", B: "B: fifo", Paired: true, Resamples: 100, Seed: 1}
	for _, m := range Metrics {
		r := MetricResult{MetricSpec: m, Verdict: NoSignificant}
		switch m.Name {
		case "p95_wait":
			r.A, r.B, r.Diff, r.CILow, r.CIHigh, r.Verdict = 3600, 5400, 1800, 1200, 2400, Worse
		case "gpu_util":
			r.A, r.B, r.Diff, r.CILow, r.CIHigh, r.Verdict = 0.5, 0.55, 0.05, 0.01, 0.09, Better
		case "mean_wait":
			r.A, r.B, r.Diff, r.CILow, r.CIHigh, r.Verdict = 600, 300, -300, -400, -200, Better
		}
		c.Metrics = append(c.Metrics, r)
	}
	gates := []GateResult{{Gate: Gate{Spec: "p95_wait:+5%"}, Change: 50, Broken: true}, {Gate: Gate{Spec: "gpu_util:-1pp"}, Change: 5}}
	a, b := fixtureCompareRun("A: easy"), fixtureCompareRun("B: fifo")
	var buf bytes.Buffer
	if err := WriteComparePage(&buf, ComparePageInput{A: a, B: b, Comparison: c, Gates: gates}); err != nil {
		t.Fatal(err)
	}
	want := "B: fifo against A: easy: better on 2 of 14 metrics, worse on 1, no significant difference on the rest. " +
		"The 95th-percentile wait went from 1 h 00 min to 1 h 30 min (worse) and GPU utilization from 50.0 % to 55.0 % (better). " +
		"1 of 2 gates broken: p95_wait:&#43;5%."
	if !strings.Contains(buf.String(), want) {
		t.Errorf("compare.html lacks the headline %q", want)
	}
	// html/template writes "+" as &#43;.
	for _, cell := range []string{
		// p95 wait: B − A = 1800 s = 30 min, interval 1200–2400 s.
		`<td class="num">&#43;30 min</td><td class="num">[&#43;20 min, &#43;40 min]</td>`,
		`<td class="verdict worse">worse</td>`,
		// Mean wait: −300 s = −5 min; −400 s = 6.67 min → 7; −200 s = 3.33 min → 3.
		`<td class="num">−5 min</td><td class="num">[−7 min, −3 min]</td>`,
	} {
		if !strings.Contains(buf.String(), cell) {
			t.Errorf("compare.html lacks %s", cell)
		}
	}
}

// TestValidatePageHeadline builds a validation by hand: 4 jobs compared,
// half within bf_interval, partition b worse than a.
func TestValidatePageHeadline(t *testing.T) {
	v := &Validation{Policy: "slurm", BfInterval: 30, Compared: 4,
		Agreement:  Agreement{Jobs: 4, WithinBfInterval: 0.5, Within5Min: 0.5, Within1Hour: 0.75, MedianAbsDelta: 150, P95AbsDelta: 5400},
		KendallTau: 0.5, TauJobs: 4,
		Partitions: []PartitionAgreement{
			{Partition: "a", Agreement: Agreement{Jobs: 2, WithinBfInterval: 1, Within5Min: 1, Within1Hour: 1, MedianAbsDelta: 10, P95AbsDelta: 20}},
			{Partition: "b", Agreement: Agreement{Jobs: 2, Within1Hour: 0.5, MedianAbsDelta: 3000, P95AbsDelta: 5400}},
		},
		points: []waitPoint{{0, 10}, {100, 110}, {60, 3000}, {0, 5400}},
		Worst:  []WorstJob{{ID: "7", Partition: "b", Submit: 100, Recorded: 100, Simulated: 5500, Delta: 5400, Reasons: []string{"Resources@0"}}},
	}
	var buf bytes.Buffer
	if err := WriteValidatePage(&buf, ValidatePageInput{Validation: v}); err != nil {
		t.Fatal(err)
	}
	want := "Of 4 jobs compared, 50.0 % started within ±30 s (bf_interval) of their recorded start, 50.0 % within 5 min and 75.0 % within 1 h; " +
		"the median |Δstart| is 3 min, the 95th percentile 1 h 30 min. The simulated start order agrees with the recorded one at Kendall&#39;s tau 0.500. " +
		"Partition b agrees least: 0.0 % of its 2 jobs within 5 min."
	if !strings.Contains(buf.String(), want) {
		t.Errorf("validate.html lacks the headline %q\n%s", want, buf.String())
	}
	checkPage(t, ValidatePageFile, buf.Bytes(), 2, "agreement-table", "worst-table")
	// Recorded wait 0, simulated 5400 s = 1 h 30 min.
	if want := `<tr><td>7</td><td>b</td><td class="num">0 s</td><td class="num">1 h 30 min</td><td class="num">&#43;1 h 30 min</td><td class="note">Resources@0</td></tr>`; !strings.Contains(buf.String(), want) {
		t.Errorf("validate.html lacks the worst job row %s", want)
	}
}

// TestSweepPageBest checks the best and worst configurations of the
// hand-made sweep (sweepFixture).
func TestSweepPageBest(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSweepPage(&buf, sweepFixture()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		// 1800 s = 30 min, seeds 1740–1860 s = 29–31 min; 7200 s = 2 h 00 min.
		`<td title=""><code>wait_mean_s</code></td><td>policy=easy</td><td class="num">30 min (29 min – 31 min)</td><td>policy=slurm</td><td class="num">2 h 00 min (1 h 59 min – 2 h 01 min)</td>`,
		`<td title=""><code>util_gpu</code></td><td>policy=fifo</td><td class="num">50.0 % (50.0 % – 50.0 %)</td><td>policy=slurm</td>`,
		"policies swept policy: 3 configurations of up to 2 seeds each, 6 scenarios in all. Lowest wait_mean_s: policy=easy (30 min; worst policy=slurm, 2 h 00 min). Highest util_gpu: policy=fifo (50.0 %; worst policy=slurm, 40.0 %).",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("sweep.html lacks %s", want)
		}
	}
	if strings.Contains(page, "<code>events</code></td><td>") {
		t.Errorf("events, which has no direction, got a best configuration")
	}
}

// TestPagesDeterministic writes the pages twice: the same bytes.
func TestPagesDeterministic(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	testPages(t, d1)
	for name := range testPages(t, d2) {
		a, _ := os.ReadFile(filepath.Join(d1, name))
		b, _ := os.ReadFile(filepath.Join(d2, name))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two writes", name)
		}
	}
}

// TestPagesInBrowser renders the four pages in headless Chromium: no
// console message, and as many SVG elements in the DOM as figures.
func TestPagesInBrowser(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	for name, svgs := range testPages(t, dir) {
		dom, console := renderPage(t, browser, filepath.Join(dir, name))
		if len(console) > 0 {
			t.Errorf("%s: console messages:\n%s", name, strings.Join(console, "\n"))
		}
		if n := strings.Count(dom, "<svg"); n != svgs {
			t.Errorf("%s: rendered DOM has %d SVG elements, want %d", name, n, svgs)
		}
		if !strings.Contains(dom, `id="headline"`) {
			t.Errorf("%s: rendered DOM has no headline", name)
		}
	}
}
