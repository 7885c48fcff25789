package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestConformanceRecords replays every run recorded on a real Slurm 22.05
// by conformance/run.sh (conformance/records/SCENARIO/runN: sacct.txt and
// the exact slurm.conf/gres.conf used) under the slurm policy, on the
// cluster imported from that slurm.conf, and reports per run the share of
// jobs whose simulated start is within ±2 s and ±5 s of the real one. No
// Slurm is needed. It asserts only what is robust: every recorded job is
// compared, and at least minWithin5 of them start within ±5 s (the notes
// put Slurm's own run-to-run agreement at about 97 % within ±5 s on light
// load; the records are tiny, so one job is a large share).
func TestConformanceRecords(t *testing.T) {
	const minWithin5 = 0.5
	runs, _ := filepath.Glob(filepath.Join("..", "..", "conformance", "records", "*", "run*", "sacct.txt"))
	if len(runs) == 0 {
		t.Skip("no conformance records")
	}
	sort.Strings(runs)
	for _, sacct := range runs {
		dir := filepath.Dir(sacct)
		name := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			for _, f := range []string{"slurm.conf", "gres.conf"} {
				b, err := os.ReadFile(filepath.Join(dir, "config", f))
				if err != nil {
					t.Fatal(err)
				}
				s := strings.ReplaceAll(string(b), "@RUN@", "/nonexistent")
				if err := os.WriteFile(filepath.Join(tmp, f), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// cluster import prints warnings on the same buffer: keep the YAML part.
			out, err := schedsim(t, "cluster", "import", "--slurm-conf", filepath.Join(tmp, "slurm.conf"),
				"--gres-conf", filepath.Join(tmp, "gres.conf"))
			if err != nil {
				t.Fatalf("cluster import: %v\n%s", err, out)
			}
			if i := strings.Index(out, "# Cluster spec"); i > 0 {
				out = out[i:]
			}
			cluster := filepath.Join(tmp, "cluster.yaml")
			if err := os.WriteFile(cluster, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err = schedsim(t, "validate", "--trace", sacct, "--cluster", cluster, "--json", "--worst", "100000")
			if err != nil {
				t.Fatalf("validate: %v\n%s", err, out)
			}
			var v struct {
				Compared, NotStarted int
				Worst                []struct {
					ID        string  `json:"id"`
					Recorded  float64 `json:"recorded_start_s"`
					Simulated float64 `json:"simulated_start_s"`
					Delta     float64 `json:"delta_s"`
				}
			}
			if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &v); err != nil {
				t.Fatalf("validate json: %v\n%s", err, out)
			}
			jobs := strings.Count(readFile(t, sacct), "\n") - 1
			if v.Compared != jobs || len(v.Worst) != jobs {
				t.Fatalf("compared %d jobs (%d listed), the record has %d", v.Compared, len(v.Worst), jobs)
			}
			var w2, w5 int
			var detail []string
			for _, j := range v.Worst {
				d := math.Abs(j.Delta)
				if d <= 2 {
					w2++
				}
				if d <= 5 {
					w5++
				}
				if d > 2 {
					detail = append(detail, fmt.Sprintf("%s:%+gs", j.ID, j.Delta))
				}
			}
			s2, s5 := float64(w2)/float64(jobs), float64(w5)/float64(jobs)
			t.Logf("%s: %d jobs, within ±2 s %.0f%%, within ±5 s %.0f%%; off by more than 2 s: %v",
				name, jobs, 100*s2, 100*s5, detail)
			if s5 < minWithin5 {
				t.Errorf("%s: only %.0f%% of jobs within ±5 s of real Slurm (want ≥ %.0f%%)", name, 100*s5, 100*minWithin5)
			}
		})
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
