package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunJobsLimit checks that --jobs N replays the first N jobs, says so,
// and gives the outputs another config hash than the whole trace.
func TestRunJobsLimit(t *testing.T) {
	dir := t.TempDir()
	read := func(sub string) (total int, hash string) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, sub, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			ConfigHash string `json:"config_hash"`
			Jobs       struct {
				Total int `json:"total"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		return s.Jobs.Total, s.ConfigHash
	}
	out, err := schedsim(t, "run", "--jobs", "300", "--quiet", "--out", filepath.Join(dir, "cut"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "trace.transforms.head 300 (run --jobs): replayed the first 300 of 5303 jobs") {
		t.Errorf("no note of the cut in:\n%s", out)
	}
	if out, err := schedsim(t, "run", "--jobs", "6000", "--quiet", "--out", filepath.Join(dir, "all")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n, h := read("cut")
	nAll, hAll := read("all")
	if n != 300 || nAll != 5303 || h == hAll {
		t.Errorf("cut: %d jobs, %s; all (--jobs above the trace's count): %d jobs, %s", n, h, nAll, hAll)
	}
	if code, stderr := exitCode(t, "run", "--jobs", "-1"); code != 2 || !strings.Contains(stderr, "--jobs must be >= 0") {
		t.Errorf("--jobs -1: exit %d, %q", code, stderr)
	}
}
