package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/bundle"
	"github.com/schedsim/schedsim/cmd/schedsim/internal/conformance"
)

// writeRecordBundle writes the bundle of a conformance record into a
// directory, and as a tarball with the collection script's layout (one
// top directory), and returns both paths.
func writeRecordBundle(t *testing.T, run string) (dir, tgz string) {
	t.Helper()
	rdir := filepath.Join(recordsDir, filepath.FromSlash(run))
	if _, err := os.Stat(rdir); err != nil {
		t.Skipf("no conformance record %s: %v", rdir, err)
	}
	r, err := conformance.LoadRecord(rdir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := recordBundle(r, false)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	dir = filepath.Join(tmp, "slurm-records-x")
	tgz = filepath.Join(tmp, "slurm-records-x.tar.gz")
	f, err := os.Create(tgz)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: "slurm-records-x/" + n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[n]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, gz, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir, tgz
}

// TestValidateBundle runs `schedsim validate BUNDLE` on the bundle of
// node-down-requeue/run1 (5 jobs; J1 requeued after gn1 went down, so 6
// starts) as a directory and as a tarball, and checks the breakdown:
// every start within ±5 s (TestBundleConformance's figure for the
// record), one partition, four users, three size classes, and the same
// JSON from both forms.
func TestValidateBundle(t *testing.T) {
	dir, tgz := writeRecordBundle(t, "node-down-requeue/run1")
	out, err := schedsim(t, "validate", dir)
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	t.Log(out)
	for _, want := range []string{"5 jobs replayed, 6 starts compared", "all  6       6 (100%)", "partition", "batch", "dave", "9-32 GPUs",
		"Every job's inputs were recovered", "event.txt: 4 node state changes"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	js := func(path string) string {
		out, err := schedsim(t, "validate", path, "--json")
		if err != nil {
			t.Fatalf("validate --json: %v\n%s", err, out)
		}
		return out
	}
	a, b := js(dir), js(tgz)
	var v struct {
		Jobs   int `json:"jobs"`
		Starts int `json:"starts"`
		All    struct {
			Within int `json:"within_5s"`
		} `json:"all"`
		Users []struct{ Name string } `json:"users"`
		Sizes []struct{ Name string } `json:"sizes"`
	}
	if err := json.Unmarshal([]byte(a), &v); err != nil {
		t.Fatalf("json: %v\n%s", err, a)
	}
	if v.Jobs != 5 || v.Starts != 6 || v.All.Within != 6 || len(v.Users) != 4 || len(v.Sizes) != 3 {
		t.Errorf("got %+v", v)
	}
	// The bundle field names the path given; the rest is the same.
	if strings.Replace(a, dir, "B", 1) != strings.Replace(b, tgz, "B", 1) {
		t.Errorf("directory and tarball differ:\n%s\n%s", a, b)
	}
	out, err = schedsim(t, "run", "--bundle", tgz, "--policy", "fifo")
	if err != nil || !strings.Contains(out, "scenario slurm-records-x.tar.gz") {
		t.Errorf("run --bundle: %v\n%s", err, out)
	}
}

func TestValidateBundleBadInput(t *testing.T) {
	dir, _ := writeRecordBundle(t, "node-down-requeue/run1")
	if code, msg := exitCode(t, "validate", dir, "--trace", "x.sacct"); code != 2 || !strings.Contains(msg, "--trace: a records bundle names the trace") {
		t.Errorf("exit %d, %q", code, msg)
	}
	if code, msg := exitCode(t, "validate", t.TempDir()); code != 2 || !strings.Contains(msg, "no sacct.txt (want a records bundle") {
		t.Errorf("exit %d, %q", code, msg)
	}
	// A bad row of event.txt: the message names the file, line and field.
	p := filepath.Join(dir, "event.txt")
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), "2026-11-30T09:07:51", "yesterday", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, msg := exitCode(t, "validate", dir); code != 2 || !strings.Contains(msg, "event.txt:2: TimeStart: \"yesterday\"") || strings.Count(strings.TrimSpace(msg), "\n") > 0 {
		t.Errorf("exit %d, %q", code, msg)
	}
}

// TestAnalyzeSmallBundle replays bundle/testdata/small (its cases are
// listed in bundle/replay_test.go) and checks the breakdown: seven jobs
// (frank's first run, an admin's requeue, occupies gn3 as a job of its
// own and is not compared), every one started within ±5 s of its record.
func TestAnalyzeSmallBundle(t *testing.T) {
	b, err := bundle.Open(filepath.Join("..", "..", "bundle", "testdata", "small"))
	if err != nil {
		t.Fatal(err)
	}
	rp, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	run, rec, err := simulateReplay(rp, "small")
	if err != nil {
		t.Fatalf("%v\n%s", err, rp.Scenario)
	}
	bd, err := bundle.Analyze(rp, rec, run.Cluster, bundle.BreakdownOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 7 jobs (frank's first run is not compared), 7 starts; each job
	// starts where the record says, give or take the scheduling cycle.
	if bd.Jobs != 7 || bd.Starts != 7 {
		t.Fatalf("jobs %d starts %d, want 7, 7", bd.Jobs, bd.Starts)
	}
	if bd.All.Within != 7 {
		var sb strings.Builder
		_ = bundle.WriteText(&sb, bd)
		t.Errorf("%d of 7 within ±5 s\n%s", bd.All.Within, sb.String())
	}
	if len(bd.Users) != 7 || len(bd.Partitions) != 1 || len(bd.Sizes) != 1 || bd.Sizes[0].Name != "5-8 GPUs" {
		t.Errorf("users %d, partitions %d, sizes %+v", len(bd.Users), len(bd.Partitions), bd.Sizes)
	}
	if len(bd.Worst) != 0 || len(bd.Causes) != 1 || bd.Causes[0].Cause != bundle.CauseWithin {
		t.Errorf("worst %v, causes %v", bd.Worst, bd.Causes)
	}
}

// TestValidateBundleOut: validate BUNDLE --out DIR writes validate.html
// with the breakdown (its headline, the per-partition, user, size and
// cause tables, the notes) and breakdown.json, which is what --json
// prints. node-down-requeue/run1 has every start within ±5 s
// (TestValidateBundle), so its one cause is "within ±5 s".
func TestValidateBundleOut(t *testing.T) {
	dir, _ := writeRecordBundle(t, "node-down-requeue/run1")
	out := filepath.Join(t.TempDir(), "v")
	if msg, err := schedsim(t, "validate", dir, "--out", out); err != nil {
		t.Fatalf("validate --out: %v\n%s", err, msg)
	}
	page, err := os.ReadFile(filepath.Join(out, "validate.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<p class="headline" id="headline">Replayed from the records bundle alone under slurm, 6 of 6 starts (100 %) are within ±5 s of the recorded ones. Every job&#39;s inputs were recovered.</p>`,
		`id="bundle-partitions"`, `id="bundle-users"`, `id="bundle-sizes"`, `id="bundle-causes"`, `id="bundle-notes"`,
		`<tr><td>within ±5 s</td><td class="num">6</td>`,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("validate.html lacks %s", want)
		}
	}
	js, err := schedsim(t, "validate", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(filepath.Join(out, "breakdown.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(saved) != js {
		t.Errorf("breakdown.json differs from validate --json:\n%s\n%s", saved, js)
	}
}
