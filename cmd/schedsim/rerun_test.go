package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rerunScenario is a scenario touching every section whose recording
// could go wrong: relative file paths, an inline policy args mapping, the
// lifecycle sections, job rules, limits and the runtime model.
const rerunScenario = `version: 1
name: rerun
seed: 11
cluster: {file: cluster.yaml}
trace:
  file: jobs.sacct
  partition_map: {batch: all}
policy:
  name: slurm
  args: {bf_interval: 60, PriorityWeightAge: 1000}   # a comment
controller:
  time_limit_sweep: 30s
  job_requeue: false
failures: {mtbf: 30d, mttr: 4h}
node_events:
  - {at: 1800, nodes: n2, state: drain}
  - {at: 5400, nodes: n2, state: up}
job_rules:
  - match: {user: "u[12]"}
    checkpoint: 10m
    requeue: true
limits: {max_failures: 1000}
runtime: {comm_stretch: true}
output: {dir: unused, sample_interval: 15m}
`

const rerunCluster = `version: 1
name: tiny
node_groups:
  - name: "n[1-2]"
    gpu: {model: h100-sxm-80gb, count: 4}
    cpus: 32
    memory: 256G
`

const rerunTrace = "JobID|User|Partition|State|Submit|Start|End|Elapsed|Timelimit|ReqTRES\n" +
	"1|u1|batch|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|02:00:00|cpu=8,gres/gpu=8,mem=16G,node=2\n" +
	"2|u2|batch|COMPLETED|2024-01-01T00:10:00|2024-01-01T01:00:00|2024-01-01T01:30:00|00:30:00|01:00:00|cpu=1,gres/gpu=1,mem=1G,node=1\n" +
	"3|u3|batch|FAILED|2024-01-01T00:20:00|2024-01-01T01:30:00|2024-01-01T01:40:00|00:10:00|01:00:00|cpu=2,gres/gpu=2,mem=1G,node=1\n"

// TestRerunSavedScenario runs a scenario, reruns the OUT/scenario.yaml it
// saved (from another directory, so relative paths must have been
// resolved), and requires every output file to be byte for byte the
// same, scenario.yaml and the config hash included.
func TestRerunSavedScenario(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"cluster.yaml": rerunCluster, "jobs.sacct": rerunTrace, "s.yaml": rerunScenario} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	if out, err := schedsim(t, "run", "--scenario", "s.yaml", "--out", "o1"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := schedsim(t, "run", "--scenario", "o1/scenario.yaml", "--out", "o2"); err != nil {
		t.Fatalf("rerun of the saved scenario: %v\n%s", err, out)
	}
	compareDirs(t, "o1", "o2")
	saved, _ := os.ReadFile(filepath.Join("o1", "scenario.yaml"))
	for _, want := range []string{"file: " + filepath.Join(dir, "cluster.yaml"), "file: " + filepath.Join(dir, "jobs.sacct"), "checkpoint: 10m"} {
		if !strings.Contains(string(saved), want) {
			t.Errorf("saved scenario lacks %q:\n%s", want, saved)
		}
	}
	if strings.Contains(string(saved), "null") {
		t.Errorf("saved scenario holds a null:\n%s", saved)
	}

	// The default scenario, and the slurm policy on it, rerun the same.
	if _, err := schedsim(t, "run", "--policy", "slurm", "--out", "d1"); err != nil {
		t.Fatal(err)
	}
	if _, err := schedsim(t, "run", "--scenario", "d1/scenario.yaml", "--out", "d2"); err != nil {
		t.Fatal(err)
	}
	compareDirs(t, "d1", "d2")
}

// compareDirs fails unless a and b hold the same files with the same
// bytes.
func compareDirs(t *testing.T, a, b string) {
	t.Helper()
	list := func(root string) []string {
		var out []string
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				rel, _ := filepath.Rel(root, p)
				out = append(out, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	fa, fb := list(a), list(b)
	if !slices.Equal(fa, fb) {
		t.Fatalf("%s holds %v, %s holds %v", a, fa, b, fb)
	}
	if len(fa) < 5 {
		t.Fatalf("%s holds only %v", a, fa)
	}
	for _, f := range fa {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between the run and its rerun from the saved scenario", f)
		}
	}
}

// TestBuiltinTraceKeepsMapping: a scenario that names the built-in trace
// and nothing else about it replays it as documented, ceil(procs/10)
// GPUs a job in partition gpu, not CPU-only.
func TestBuiltinTraceKeepsMapping(t *testing.T) {
	dir := t.TempDir()
	scen := "version: 1\ncluster: {builtin: example}\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: fifo}\noutput: {dir: out}\n"
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte(scen), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := schedsim(t, "run", "--scenario", p); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "out", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Utilization struct {
			GPU struct {
				Fraction float64 `json:"fraction"`
			} `json:"gpu"`
		} `json:"utilization"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Utilization.GPU.Fraction <= 0 {
		t.Errorf("GPU utilization %v: the built-in trace ran CPU-only\n%s", sum.Utilization.GPU.Fraction, data)
	}
}
