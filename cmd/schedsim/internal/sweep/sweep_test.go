package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/reports"
)

func loadSmall(t testing.TB) *Sweep {
	t.Helper()
	sw, err := Load(filepath.Join("testdata", "small.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

// TestExpandOrder checks the expansion order (clusters, then policies,
// then load scales, seeds fastest), names, directories and axes.
func TestExpandOrder(t *testing.T) {
	sw := loadSmall(t)
	if len(sw.Points) != 24 {
		t.Fatalf("%d points, want 2 × 3 × 2 × 2 = 24", len(sw.Points))
	}
	var got []string
	for _, p := range sw.Points[:7] {
		got = append(got, p.Name)
	}
	want := []string{
		"cluster=example/policy=fifo/load=1/seed=1",
		"cluster=example/policy=fifo/load=1/seed=2",
		"cluster=example/policy=fifo/load=1.5/seed=1",
		"cluster=example/policy=fifo/load=1.5/seed=2",
		"cluster=example/policy=easy/load=1/seed=1",
		"cluster=example/policy=easy/load=1/seed=2",
		"cluster=example/policy=easy/load=1.5/seed=1",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	last := sw.Points[23]
	if last.Name != "cluster=half/policy=slurm 'bf' $(touch pwned)/load=1.5/seed=2" ||
		last.Dir != filepath.Join("cluster=half", "policy=slurm__bf____touch_pwned_", "load=1.5", "seed=2") {
		t.Errorf("last point %q in %q", last.Name, last.Dir)
	}
	if last.Cluster != "half" || last.PolicyName != "slurm" || last.LoadScale != 1.5 || last.Seed != 2 {
		t.Errorf("last point %+v", last)
	}
	if s := last.Scenario; s.Policy.Name != "slurm" || s.Seed != 2 || s.Trace.Transforms.ScaleLoad != 1.5 || s.Cluster.Inline.IsZero() {
		t.Errorf("last scenario: policy %s seed %d load %v", s.Policy.Name, s.Seed, s.Trace.Transforms.ScaleLoad)
	}
	if d := cmp.Diff([]string{ParamCluster, ParamPolicy, ParamLoad}, sw.Axes); d != "" {
		t.Errorf("axes (-want +got):\n%s", d)
	}
	seen := map[string]bool{}
	for _, p := range sw.Points {
		if seen[p.Hash] {
			t.Errorf("%s: config hash %s shared with another point", p.Name, p.Hash)
		}
		seen[p.Hash] = true
	}
	// The same file expands the same way.
	again := loadSmall(t)
	for i := range sw.Points {
		if sw.Points[i].Hash != again.Points[i].Hash {
			t.Fatalf("point %d: hash differs between two loads", i)
		}
	}
}

// TestValidationErrors checks that bad sweep files are rejected with the
// file, the line and the field.
func TestValidationErrors(t *testing.T) {
	const base = `version: 1
base:
  cluster: {builtin: example}
  trace: {builtin: llnl-thunder-slice}
  policy: {name: easy}
`
	tests := []struct {
		name, text, want string
	}{
		{"version", "version: 2\nbase: {}\n", "s.yaml:1: version: must be 1, got 2"},
		{"no base", "version: 1\n", "s.yaml:1: base: missing"},
		{"unknown top key", base + "grd: {}\n", `s.yaml:6: unknown key "grd"`},
		{"unknown base key", "version: 1\nbase:\n  sed: 3\n", `s.yaml:3: base: unknown key "sed"`},
		{"unknown nested base key", "version: 1\nbase:\n  trace:\n    fil: x\n", `s.yaml:4: base.trace: unknown key "fil"`},
		{"base invalid", "version: 1\nbase:\n  cluster: {builtin: big}\n  trace: {builtin: llnl-thunder-slice}\n  policy: {name: easy}\n",
			`s.yaml:3: cluster.builtin: unknown builtin "big"`},
		{"base output dir", base + "  output: {dir: x}\n", "s.yaml:6: base.output.dir: set the sweep's output.dir"},
		{"unknown policy", base + "grid:\n  policies:\n    - {name: nosuch}\n", `s.yaml:8: policy: unknown policy "nosuch"`},
		{"bad policy args", base + "grid:\n  policies:\n    - name: slurm\n      args:\n        bf_windo: 5\n", `s.yaml:10: unknown key "bf_windo"`},
		{"duplicate label", base + "grid:\n  policies:\n    - {name: easy}\n    - {name: easy}\n", `s.yaml:9: grid.policies[1]: duplicate label "easy"`},
		{"cluster without name", base + "grid:\n  clusters:\n    - {builtin: example}\n", "s.yaml:8: grid.clusters[0]: missing name"},
		{"cluster bad builtin", base + "grid:\n  clusters:\n    - {name: a, builtin: big}\n", `s.yaml:8: cluster.builtin: unknown builtin "big"`},
		{"cluster two kinds", base + "grid:\n  clusters:\n    - {name: a, builtin: example, file: c.yaml}\n", "s.yaml:8: cluster: give only one of file, builtin or inline"},
		{"unknown cluster key", base + "grid:\n  clusters:\n    - {name: a, bultin: example}\n", `s.yaml:8: grid.clusters[0]: unknown key "bultin" (want name, file, builtin, inline)`},
		{"empty clusters", base + "grid:\n  clusters: []\n", "s.yaml:7: grid.clusters: empty list"},
		{"bad load", base + "grid:\n  load_scales: [1, 0]\n", "s.yaml:7: grid.load_scales: load_scales[1]: 0: must be in (0, 1000]"},
		{"duplicate load", base + "grid:\n  load_scales: [1, 1]\n", "listed twice"},
		{"bad seeds", base + "grid:\n  seeds: {from: 1, cnt: 3}\n", `s.yaml:7: grid.seeds: unknown key "cnt" (want from, count)`},
		{"seed count", base + "grid:\n  seeds: {from: 1, count: 0}\n", "s.yaml:7: grid.seeds: count must be in [1, 100000], got 0"},
		{"duplicate seed", base + "grid:\n  seeds: [3, 3]\n", "seed 3 listed twice"},
		{"unknown metric", base + "output:\n  plots: [wait]\n", `s.yaml:7: output.plots: unknown metric "wait"`},
		{"type error", base + "grid:\n  load_scales: [fast]\n", `s.yaml:7: grid.load_scales[0]: want a number, got "fast"`},
		{"dir collision", base + "grid:\n  policies:\n    - {label: a/b, name: easy}\n    - {label: a_b, name: fifo}\n", "would share the output directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text), "s.yaml")
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func readParquetFile(t *testing.T, path string) ([]byte, []Row) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadParquet(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return data, rows
}

// runLocal runs every point of sw into dir and writes the results.
func runLocal(t *testing.T, sw *Sweep, dir string, workers int) []Result {
	t.Helper()
	results := Run(sw, sw.PointsOf(0, len(sw.Points)), dir, Options{Workers: workers})
	var rows []Row
	for i := range results {
		if results[i].Err != nil {
			t.Fatal(results[i].Err)
		}
		rows = append(rows, RowOf(&results[i]))
	}
	if err := WriteResults(dir, sw, rows); err != nil {
		t.Fatal(err)
	}
	return results
}

// TestWorkersIdentical runs the 24 scenarios on one and on two workers and
// checks that the merged results and every run's summary are identical,
// then that a second run skips every scenario (resume) and that changing
// one policy's parameters re-runs exactly its scenarios.
func TestWorkersIdentical(t *testing.T) {
	sw := loadSmall(t)
	one, two := t.TempDir(), t.TempDir()
	runLocal(t, sw, one, 1)
	runLocal(t, sw, two, 2)
	b1, rows := readParquetFile(t, filepath.Join(one, ParquetFile))
	b2, _ := readParquetFile(t, filepath.Join(two, ParquetFile))
	if !bytes.Equal(b1, b2) {
		t.Fatal("sweep.parquet differs between 1 and 2 workers")
	}
	if len(rows) != 24 {
		t.Fatalf("%d rows, want 24", len(rows))
	}
	for i, r := range rows {
		p := sw.Points[i]
		if r.Index != int64(i) || r.Name != p.Name || r.ConfigHash != p.Hash || r.Seed != p.Seed || r.LoadScale != p.LoadScale {
			t.Fatalf("row %d: %+v, want point %+v", i, r, p)
		}
		if r.Values[metricIndex("jobs")] == 0 || r.Values[metricIndex("util_gpu")] <= 0 {
			t.Fatalf("row %d (%s): no jobs or no utilization: %v", i, r.Name, r.Values)
		}
		s1, err1 := os.ReadFile(filepath.Join(one, RunsDir, p.Dir, "summary.json"))
		s2, err2 := os.ReadFile(filepath.Join(two, RunsDir, p.Dir, "summary.json"))
		if err1 != nil || err2 != nil || !bytes.Equal(s1, s2) {
			t.Fatalf("%s: summary.json differs or is missing (%v, %v)", p.Name, err1, err2)
		}
	}
	// The swept parameters matter: at load 1.5 under FIFO (same seed) the
	// half cluster rejects the jobs wider than its 192 GPUs and makes the
	// others wait longer on average than the example cluster.
	wm, rej := metricIndex("wait_mean_s"), metricIndex("rejected")
	if !(rows[14].Values[wm] > rows[2].Values[wm]) || rows[14].Values[rej] == 0 || rows[2].Values[rej] != 0 {
		t.Errorf("%s: mean wait %v, %v rejected; %s: %v, %v: want the half cluster slower and rejecting",
			rows[14].Name, rows[14].Values[wm], rows[14].Values[rej], rows[2].Name, rows[2].Values[wm], rows[2].Values[rej])
	}
	for _, f := range []string{"wait_p95_s_vs_cluster.png", "util_gpu_vs_load_scale.svg", "wait_p95_s_vs_policy.png"} {
		if _, err := os.Stat(filepath.Join(one, PlotsDir, f)); err != nil {
			t.Error(err)
		}
	}
	// sweep.html: the 6 figures (2 metrics × 3 parameters), the 12
	// configurations (2 clusters × 3 policies × 2 load scales) of 2 seeds.
	if page, err := os.ReadFile(filepath.Join(one, reports.SweepPageFile)); err != nil {
		t.Error(err)
	} else {
		if n := strings.Count(string(page), "<svg"); n != 6 {
			t.Errorf("sweep.html has %d plots, want 6", n)
		}
		if !strings.Contains(string(page), "12 configurations of up to 2 seeds each, 24 scenarios in all.") {
			t.Errorf("sweep.html lacks the headline's counts")
		}
	}

	// Resume: nothing changed, nothing runs, same result.
	res := runLocal(t, sw, one, 2)
	for _, r := range res {
		if !r.Skipped {
			t.Fatalf("%s ran again with unchanged outputs", r.Point.Name)
		}
	}
	if b, _ := readParquetFile(t, filepath.Join(one, ParquetFile)); !bytes.Equal(b, b1) {
		t.Fatal("sweep.parquet changed on resume")
	}

	// Change the slurm variant's bf_window: its 8 scenarios run again,
	// the other 16 are skipped.
	text, err := os.ReadFile(filepath.Join("testdata", "small.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(text, []byte("bf_window: 120"), []byte("bf_window: 60"), 1)
	sw2, err := Parse(changed, filepath.Join("testdata", "small.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res = runLocal(t, sw2, one, 2)
	ran := 0
	for _, r := range res {
		if !r.Skipped {
			ran++
			if r.Point.PolicyName != "slurm" {
				t.Errorf("%s ran again but did not change", r.Point.Name)
			}
		}
	}
	if ran != 8 {
		t.Errorf("%d scenarios ran after the change, want the 8 slurm ones", ran)
	}
}
