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
	"time"
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
			trace := withDependencies(t, sacct, filepath.Join(dir, "submissions.tsv"), filepath.Join(tmp, "sacct.txt"))
			out, err = schedsim(t, "validate", "--trace", trace, "--cluster", cluster, "--json", "--worst", "100000")
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

// TestConformanceRealVsReal prints, for every scenario recorded more than
// once, how far the real runs are from each other (Slurm's own noise): the
// share of jobs (matched by job id; ids restart at 1 in every run) whose
// start, counted from the run's first submission, differs by at most 2 s and
// 5 s from run1's. It asserts nothing beyond the records being readable.
func TestConformanceRealVsReal(t *testing.T) {
	scen, _ := filepath.Glob(filepath.Join("..", "..", "conformance", "records", "*"))
	for _, sd := range scen {
		runs, _ := filepath.Glob(filepath.Join(sd, "run*", "sacct.txt"))
		sort.Strings(runs)
		if len(runs) < 2 {
			continue
		}
		ref := recordedStarts(t, runs[0])
		for _, other := range runs[1:] {
			got := recordedStarts(t, other)
			var n, w2, w5 int
			for id, st := range ref {
				o, ok := got[id]
				if !ok {
					continue
				}
				n++
				d := math.Abs(st - o)
				if d <= 2 {
					w2++
				}
				if d <= 5 {
					w5++
				}
			}
			if n == 0 {
				t.Errorf("%s: no job in common with %s", other, runs[0])
				continue
			}
			t.Logf("%s: real vs real (%s vs %s): %d jobs, within ±2 s %.0f%%, within ±5 s %.0f%%",
				filepath.Base(sd), filepath.Base(filepath.Dir(runs[0])), filepath.Base(filepath.Dir(other)),
				n, 100*float64(w2)/float64(n), 100*float64(w5)/float64(n))
		}
	}
}

// recordedStarts reads a record's sacct -P output and returns each job's
// start in seconds after the run's first submission, by JobID.
func recordedStarts(t *testing.T, path string) map[string]float64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(readFile(t, path)), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "|") {
		col[h] = i
	}
	type js struct {
		id            string
		submit, start time.Time
	}
	var jobs []js
	var t0 time.Time
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		sub, err1 := time.Parse("2006-01-02T15:04:05", f[col["Submit"]])
		st, err2 := time.Parse("2006-01-02T15:04:05", f[col["Start"]])
		if err1 != nil || err2 != nil {
			continue // never started
		}
		if t0.IsZero() || sub.Before(t0) {
			t0 = sub
		}
		jobs = append(jobs, js{f[col["JobID"]], sub, st})
	}
	m := map[string]float64{}
	for _, j := range jobs {
		m[j.id] = j.start.Sub(t0).Seconds()
	}
	return m
}

// withDependencies writes the record's sacct output with a Dependency column
// taken from the --dependency= of each sbatch line in submissions.tsv (sacct
// does not keep dependencies; the job ids are the real ones) and returns its
// path, or returns sacct unchanged when no job had a dependency. Array
// throttles (%N) are not carried: sacct of finished tasks does not show them.
func withDependencies(t *testing.T, sacct, subs, out string) string {
	t.Helper()
	deps := map[string]string{}
	b, err := os.ReadFile(subs)
	if err != nil {
		return sacct
	}
	for _, l := range strings.Split(string(b), "\n")[1:] {
		f := strings.Split(l, "\t")
		if len(f) < 5 {
			continue
		}
		if i := strings.Index(f[4], "--dependency="); i >= 0 {
			deps[f[1]] = strings.Fields(f[4][i+len("--dependency="):])[0]
		}
	}
	if len(deps) == 0 {
		return sacct
	}
	lines := strings.Split(strings.TrimRight(readFile(t, sacct), "\n"), "\n")
	raw := 0
	for i, h := range strings.Split(lines[0], "|") {
		if h == "JobIDRaw" {
			raw = i
		}
	}
	lines[0] += "|Dependency"
	for i, l := range lines[1:] {
		id := strings.Split(l, "|")[raw]
		lines[i+1] = l + "|" + deps[id]
	}
	if err := os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
