package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeScenario writes the embedded default scenario (the LLNL Thunder
// slice on the example cluster) with the given policy to dir.
func writeScenario(t *testing.T, dir, policy string) string {
	t.Helper()
	data, err := os.ReadFile("../../defaults/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "name: easy", "name: "+policy, 1)
	path := filepath.Join(dir, policy+".yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type compareJSON struct {
	Paired  bool `json:"paired"`
	Metrics []struct {
		Name    string  `json:"name"`
		A       float64 `json:"a"`
		B       float64 `json:"b"`
		Diff    float64 `json:"diff"`
		CILow   float64 `json:"ci_low"`
		CIHigh  float64 `json:"ci_high"`
		Verdict string  `json:"verdict"`
	} `json:"metrics"`
	Gates []struct {
		Gate   string `json:"gate"`
		Broken bool   `json:"broken"`
	} `json:"gates"`
}

// TestCompareFIFOvsEASY compares FIFO (B) against EASY (A) on the real
// Thunder trace: both replay the same jobs, so the bootstrap is paired,
// and FIFO, which cannot backfill, waits longer at p95 with an interval
// that excludes zero.
func TestCompareFIFOvsEASY(t *testing.T) {
	dir := t.TempDir()
	easy, fifo := writeScenario(t, dir, "easy"), writeScenario(t, dir, "fifo")
	out, err := schedsim(t, "compare", easy, fifo, "--format", "json", "--resamples", "200", "--out", filepath.Join(dir, "cmp"))
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	var c compareJSON
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !c.Paired {
		t.Errorf("comparison of two runs of the same trace is not paired")
	}
	found := false
	for _, m := range c.Metrics {
		if m.Name != "p95_wait" {
			continue
		}
		found = true
		t.Logf("p95 wait: easy %.0f s, fifo %.0f s, difference %.0f s, 95%% CI [%.0f, %.0f]", m.A, m.B, m.Diff, m.CILow, m.CIHigh)
		if !(m.CILow <= m.Diff && m.Diff <= m.CIHigh) {
			t.Errorf("p95 difference %v outside its interval [%v, %v]", m.Diff, m.CILow, m.CIHigh)
		}
		if !(m.CILow > 0) || m.Verdict != "worse" {
			t.Errorf("p95_wait: interval [%v, %v], verdict %q; want FIFO significantly worse", m.CILow, m.CIHigh, m.Verdict)
		}
	}
	if !found {
		t.Fatalf("no p95_wait in %s", out)
	}
	for _, name := range []string{"wait_cdf.png", "wait_cdf.svg", "gpu_utilization.png", "gpu_utilization.svg", "comparison.json", "compare.html"} {
		if st, err := os.Stat(filepath.Join(dir, "cmp", name)); err != nil || st.Size() == 0 {
			t.Errorf("compare --out: %s missing or empty (%v)", name, err)
		}
	}
	if page, err := os.ReadFile(filepath.Join(dir, "cmp", "compare.html")); err != nil || bytes.Count(page, []byte("<svg")) != 2 ||
		!bytes.Contains(page, []byte(`id="headline"`)) {
		t.Errorf("compare.html: %v; want a headline and the 2 overlay plots", err)
	}

	// The markdown table fits a pull-request comment.
	md, err := schedsim(t, "compare", easy, fifo, "--format", "markdown", "--resamples", "50")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "| `p95_wait` |") || !strings.Contains(md, "❌ worse") {
		t.Errorf("markdown output lacks the p95 row or a verdict:\n%s", md)
	}
}

// TestCompareSelf compares a run directory with itself: every difference
// and interval is zero, no metric differs significantly, gates pass and
// the exit status is 0.
func TestCompareSelf(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := schedsim(t, "run", "--out", dir); err != nil {
		t.Fatal(err)
	}
	out, err := schedsim(t, "compare", dir, dir, "--format", "json", "--resamples", "100", "--gate", "p95_wait:+0%", "--gate", "gpu_util:-0pp")
	if err != nil {
		t.Fatalf("compare a run with itself: %v\n%s", err, out)
	}
	var c compareJSON
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Metrics {
		if m.Diff != 0 || m.CILow != 0 || m.CIHigh != 0 || m.Verdict != "no significant difference" {
			t.Errorf("%s: diff %v, CI [%v, %v], verdict %q; want 0, [0, 0], no significant difference", m.Name, m.Diff, m.CILow, m.CIHigh, m.Verdict)
		}
	}
	if code, stderr := exitCode(t, "compare", dir, dir, "--resamples", "20"); code != 0 {
		t.Errorf("exit status %d, want 0; stderr: %s", code, stderr)
	}
}

// TestCompareGates: B is a made-worse configuration (FIFO instead of
// EASY); the p95 gate breaks and the command exits 1 naming it, while a
// gate it meets passes. A malformed gate exits 2.
func TestCompareGates(t *testing.T) {
	dir := t.TempDir()
	easy, fifo := writeScenario(t, dir, "easy"), writeScenario(t, dir, "fifo")
	code, stderr := exitCode(t, "compare", easy, fifo, "--resamples", "20", "--gate", "p95_wait:+5%", "--gate", "gpu_util:-1pp")
	if code != 1 {
		t.Errorf("exit status %d, want 1; stderr: %s", code, stderr)
	}
	if !strings.Contains(stderr, "1 gate(s) broken: p95_wait:+5%") {
		t.Errorf("stderr does not list the broken gate: %s", stderr)
	}
	for _, bad := range []string{"p95_wait", "p95_wait:5x", "nosuch:+5%", "mean_wait:+1pp"} {
		if code, stderr := exitCode(t, "compare", easy, fifo, "--gate", bad); code != 2 {
			t.Errorf("gate %q: exit status %d, want 2; stderr: %s", bad, code, stderr)
		}
	}
}

// TestRunOutputsAndPlot runs the default scenario twice into separate
// directories: every output file (plots included) must be byte-identical.
// Then schedsim plot re-draws the plots and report from the saved
// outputs, again byte for byte.
func TestRunOutputsAndPlot(t *testing.T) {
	base := t.TempDir()
	dirs := []string{filepath.Join(base, "a"), filepath.Join(base, "b")}
	for _, d := range dirs {
		if _, err := schedsim(t, "run", "--out", d); err != nil {
			t.Fatal(err)
		}
	}
	files := listFiles(t, dirs[0])
	for _, want := range []string{"summary.json", "jobs.csv", "jobs.parquet", "timeline.parquet", "jobs.sacct",
		"scenario.yaml", "report.html", "plots/gpu_utilization.png", "plots/gpu_utilization.svg", "plots/queue.png",
		"plots/wait_cdf.svg", "plots/wait_by_size.png", "plots/fragmentation.svg"} {
		if _, ok := files[want]; !ok {
			t.Errorf("run --out did not write %s", want)
		}
	}
	other := listFiles(t, dirs[1])
	for name, data := range files {
		if !bytes.Equal(data, other[name]) {
			t.Errorf("%s differs between two runs of the same scenario", name)
		}
	}
	// Re-draw from the saved outputs after removing the drawings.
	if err := os.RemoveAll(filepath.Join(dirs[1], "plots")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dirs[1], "report.html")); err != nil {
		t.Fatal(err)
	}
	if _, err := schedsim(t, "plot", dirs[1]); err != nil {
		t.Fatal(err)
	}
	redrawn := listFiles(t, dirs[1])
	for name, data := range files {
		if !bytes.Equal(data, redrawn[name]) {
			t.Errorf("%s differs after schedsim plot", name)
		}
	}
	if code, _ := exitCode(t, "plot", filepath.Join(base, "missing")); code != 2 {
		t.Errorf("plot of a missing directory: exit status %d, want 2", code)
	}
}

// listFiles reads every file under dir, by slash-separated relative path.
func listFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
