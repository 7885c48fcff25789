package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSet(t *testing.T) {
	for name, want := range map[string]string{
		"tier-order": "hand", "gen-1": "dev", "gen-99": "dev", "gen-100": "other",
		"gen-101": "validation", "gen-106": "validation", "gen-107": "other", "gen-x": "hand",
	} {
		if got := Set(name); got != want {
			t.Errorf("Set(%q) = %q, want %q", name, got, want)
		}
	}
}

// figs makes figures of n starts, k within ±5 s, with KS distance ks.
func figs(n, k int, ks float64) Figures { return Figures{N: n, Within5: k, Within2: k, KS: ks} }

// scen is a scenario result with one simulated run per real run (its
// record holding jobs jobs) and, with two runs, a real pair.
func scen(name string, jobs int, sim Figures, real *Figures) ScenarioResult {
	rec := &Record{Scenario: name, Run: "run1", Jobs: make([]Job, jobs)}
	s := ScenarioResult{Name: name, Runs: []RunResult{{Record: rec, Fig: sim}}, Sim: sim}
	if real != nil {
		rec2 := &Record{Scenario: name, Run: "run2", Jobs: make([]Job, jobs)}
		s.Runs = append(s.Runs, RunResult{Record: rec2, Fig: sim})
		s.Pairs = []PairResult{{A: "run1", B: "run2", Fig: *real}}
		s.Real = *real
	}
	return s
}

// TestClass: stable at 95 % of real starts within ±5 s (19 of 20), loaded
// below; the marks are 90 % for stable, Slurm's KS + 0.05 for loaded.
func TestClass(t *testing.T) {
	r19, r18 := figs(20, 19, 0.05), figs(20, 18, 0.20)
	for _, tc := range []struct {
		s         ScenarioResult
		class     string
		meets, ok bool
	}{
		{scen("a", 20, figs(40, 36, 0.1), &r19), "stable", true, true}, // 36/40 = 90 %
		{scen("b", 20, figs(40, 35, 0.1), &r19), "stable", false, true},
		{scen("c", 20, figs(40, 10, 0.25), &r18), "loaded", true, true}, // 0.25 ≤ 0.20 + 0.05
		{scen("d", 20, figs(40, 40, 0.26), &r18), "loaded", false, true},
		{scen("e", 20, figs(20, 20, 0), nil), "", false, false},
	} {
		met, ok := tc.s.Meets()
		if c := tc.s.Class(); c != tc.class || met != tc.meets || ok != tc.ok {
			t.Errorf("%s: class %q, meets %v %v; want %q, %v %v", tc.s.Name, c, met, ok, tc.class, tc.meets, tc.ok)
		}
	}
}

func TestLookupThreshold(t *testing.T) {
	th := map[string]Threshold{
		"gen-*":   {Scenario: "gen-*", MinWithin5: 0.2},
		"gen-1*":  {Scenario: "gen-1*", MinWithin5: 0.3},
		"gen-2":   {Scenario: "gen-2", MinWithin5: 0.9},
		"mixed-*": {Scenario: "mixed-*", MinWithin5: 0.1},
	}
	for name, want := range map[string]float64{"gen-2": 0.9, "gen-101": 0.3, "gen-3": 0.2, "gen-1": 0.3} {
		if got, ok := LookupThreshold(th, name); !ok || got.MinWithin5 != want {
			t.Errorf("%s: %+v %v, want %.1f", name, got, ok, want)
		}
	}
	if _, ok := LookupThreshold(th, "tier-order"); ok {
		t.Error("tier-order matched a pattern")
	}
	p := filepath.Join(t.TempDir(), "t.tsv")
	if err := os.WriteFile(p, []byte("scenario\tmin_within5\tmax_ks\ngen-[\t0.2\t-\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadThresholds(p); err == nil || !strings.Contains(err.Error(), `t.tsv:2: scenario: "gen-["`) {
		t.Errorf("err = %v", err)
	}
}

// TestGenBlock: the sets apart, by seed; the pooled row over the
// scenarios with two runs, and its check against Slurm's own share.
func TestGenBlock(t *testing.T) {
	rs, rl := figs(20, 20, 0.05), figs(20, 8, 0.10)
	res := []ScenarioResult{
		scen("gen-101", 20, figs(40, 38, 0.08), &rs),
		scen("gen-11", 10, figs(10, 4, 0.30), nil),
		scen("gen-2", 20, figs(40, 12, 0.12), &rl),
		scen("tier-order", 7, figs(14, 14, 0.07), &rs),
	}
	got := GenBlock(res)
	for _, want := range []string{
		"Records: gen-2/run1, gen-2/run2, gen-11/run1, gen-101/run1, gen-101/run2.\n",
		"| gen-2 | 20 | 2 | loaded | 30% | 30% | 0.0 s | 0.12 | 40% | 40% | 0.0 s | 0.10 | KS ≤ 0.15 | yes |\n| gen-11 | 10 | 1 | one run |",
		// Pooled over gen-2: 12/40 against 8/20, 30 % vs 40 %: −10 points.
		"| pooled, the 1 with two runs | | | | 30% | 30% | 0.0 s | 0.12 | 40% | 40% | 0.0 s | 0.10 | ±5 s ≥ 37% | **no** |",
		"| pooled, all 2 | | | | 32% | 32% | 0.0 s | 0.16 |", // 16/50; KS (0.12·40 + 0.30·10)/50
		"- not classified yet (one run recorded): gen-11\n",
		"| gen-101 | 20 | 2 | stable | 95% | 95% | 0.0 s | 0.08 | 100% | 100% | 0.0 s | 0.05 | ±5 s ≥ 90% | yes |",
		"- stable scenarios with ≥ 90% of starts within ±5 s: 1 of 1\n",
		"(-5.0 points; the mark is −3)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("block lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "tier-order") {
		t.Errorf("block lists a hand-written scenario:\n%s", got)
	}
	want := []string{filepath.Join("recs", "gen-2", "run1"), filepath.Join("recs", "gen-2", "run2"), filepath.Join("recs", "gen-11", "run1"),
		filepath.Join("recs", "gen-101", "run1"), filepath.Join("recs", "gen-101", "run2")}
	if d := cmp.Diff(want, GenRuns(got, "recs")); d != "" {
		t.Errorf("GenRuns (-want +got):\n%s", d)
	}
	if runs := GenRuns(GenBlock(nil), "recs"); runs != nil {
		t.Errorf("GenRuns of an empty block = %q", runs)
	}
}
