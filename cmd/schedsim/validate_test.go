package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/traces"
)

// TestValidateHabrok runs validate on the Hábrók sacct fixture (100
// hand-picked jobs, not a contiguous trace: the figures say little) on an
// approximate cluster, as a table, as JSON and with a plot, and checks the
// counts that do not depend on the policy.
func TestValidateHabrok(t *testing.T) {
	dir := traceShared()
	if dir == "" {
		t.Skip("../shared/traces absent")
	}
	trace := filepath.Join(dir, "sacct-parsable_habrok-rug.txt")
	args := []string{"validate", "--trace", trace, "--cluster", filepath.Join("testdata", "habrok-approx.yaml"),
		"--fields", strings.Join(traces.JobinfoFields, ",")}
	out, err := schedsim(t, args...)
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	for _, want := range []string{"policy                       slurm", "jobs compared", "Kendall's tau", "regularshort", "worst job"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	plot := filepath.Join(t.TempDir(), "wait.svg")
	outDir := filepath.Join(t.TempDir(), "val")
	out, err = schedsim(t, append(args, "--json", "--plot", plot, "--out", outDir)...)
	if err != nil {
		t.Fatalf("validate --json: %v\n%s", err, out)
	}
	var v struct {
		Policy          string  `json:"policy"`
		Compared        int     `json:"compared"`
		NoRecordedStart int     `json:"no_recorded_start"`
		BfInterval      int     `json:"bf_interval_s"`
		Tau             float64 `json:"kendall_tau"`
		Partitions      []struct {
			Partition string `json:"partition"`
			Jobs      int    `json:"jobs"`
		} `json:"partitions"`
		Worst []struct {
			ID string `json:"id"`
		} `json:"worst"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	// 100 jobs, 10 of them never started (cancelled pending).
	if v.Policy != "slurm" || v.Compared != 90 || v.NoRecordedStart != 10 || v.BfInterval != 30 || len(v.Worst) != 10 {
		t.Errorf("got policy %s, compared %d, no recorded start %d, bf_interval %d, %d worst; want slurm, 90, 10, 30, 10",
			v.Policy, v.Compared, v.NoRecordedStart, v.BfInterval, len(v.Worst))
	}
	var n int
	for _, p := range v.Partitions {
		n += p.Jobs
	}
	if n != v.Compared || !(v.Tau >= -1 && v.Tau <= 1) {
		t.Errorf("partitions hold %d jobs (want %d), tau %v", n, v.Compared, v.Tau)
	}
	if b, err := os.ReadFile(plot); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("plot: %v (%d bytes)", err, len(b))
	}
	for _, name := range []string{"validate.html", "validation.json", "validate_wait.svg", "validate_wait.png", "validate_delta.svg", "validate_delta.png"} {
		if st, err := os.Stat(filepath.Join(outDir, name)); err != nil || st.Size() == 0 {
			t.Errorf("validate --out: %s missing or empty (%v)", name, err)
		}
	}
	if page, err := os.ReadFile(filepath.Join(outDir, "validate.html")); err != nil || strings.Count(string(page), "<svg") != 2 ||
		!strings.Contains(string(page), "Of 90 jobs compared") {
		t.Errorf("validate.html: %v; want the headline over the 90 compared jobs and 2 plots", err)
	}

	// The ±bf_interval window is the policy's declared backfill pass, not
	// a default: bf_interval 45 in the scenario gives 45.
	cluster, err := filepath.Abs(filepath.Join("testdata", "habrok-approx.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join(t.TempDir(), "s.yaml")
	body := fmt.Sprintf("version: 1\ncluster:\n  file: %q\ntrace:\n  file: %q\npolicy:\n  name: slurm\n  args: {bf_interval: 45}\n", cluster, trace)
	if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = schedsim(t, "validate", "--scenario", scen, "--trace", trace, "--fields", strings.Join(traces.JobinfoFields, ","), "--json")
	if err != nil {
		t.Fatalf("validate --scenario (bf_interval 45): %v\n%s", err, out)
	}
	v.BfInterval = 0
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.BfInterval != 45 {
		t.Errorf("bf_interval_s = %d (%v), want 45 from the scenario's policy args", v.BfInterval, err)
	}
}

func TestValidateBadInput(t *testing.T) {
	if code, msg := exitCode(t, "validate", "--plot", "x.gif"); code != 2 || !strings.Contains(msg, "want a .png or .svg file") {
		t.Errorf("exit %d, %q", code, msg)
	}
}

// TestValidateSaysWhatItMeans: validate's text report of a trace states
// what its figures are (Δstart, the three windows, the bf_interval of
// the policy: 30 s for the slurm policy's default) and what a trace
// cannot tell the replay.
func TestValidateSaysWhatItMeans(t *testing.T) {
	out, err := schedsim(t, "validate", "--trace", filepath.Join("..", "..", "examples", "jobs.sacct"), "--cluster", filepath.Join("..", "..", "examples", "cluster.yaml"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"Δstart = simulated − recorded", "within ±30 s (one bf_interval), ±5 min and ±1 h", "Kendall's tau compares the two", "validate BUNDLE"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate's report lacks %q:\n%s", want, out)
		}
	}
}
