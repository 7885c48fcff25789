package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/cmd/schedsim/internal/sweep"
)

// arraySweep is 8 small scenarios (2 policies × 2 load scales × 2 seeds,
// two days of the embedded Thunder slice each) under a name that tries to
// inject a command into the sbatch script.
const arraySweep = `version: 1
name: "array test 'x' $(touch pwned)"
base:
  cluster: {builtin: example}
  trace:
    builtin: llnl-thunder-slice
    swf: {procs_per_gpu: 10}
    partition_map: {"1": gpu, "2": gpu}
    transforms:
      window: {from: "2007-05-05", to: "2007-05-07"}
  policy: {name: easy}
grid:
  policies:
    - {name: fifo}
    - {label: "slurm $(id)", name: slurm}
  load_scales: [1, 1.5]
  seeds: [1, 2]
output:
  dir: local
  plots: [wait_mean_s]
`

// TestSweepArrayEqualsLocal runs the sweep locally, then as a job array:
// the sbatch script is run by bash once per task, as Slurm would, with
// SLURM_ARRAY_TASK_ID set (the script runs this test binary as schedsim),
// and merged. The merged sweep.parquet must equal the local one byte for
// byte. A missing task is reported and a retry script covers only it.
func TestSweepArrayEqualsLocal(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash:", err)
	}
	root := filepath.Join(t.TempDir(), "study dir 'q'")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "sweep.yaml")
	if err := os.WriteFile(file, []byte(arraySweep), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := schedsim(t, "sweep", file, "--workers", "2", "--quiet"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	local, err := os.ReadFile(filepath.Join(root, "local", sweep.ParquetFile))
	if err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(root, "array $(touch pwned2)")
	out, err := schedsim(t, "sweep", file, "--slurm-array", dir, "--per-task", "3", "--max-running", "2", "--binary", os.Args[0])
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	script, err := os.ReadFile(filepath.Join(dir, sweep.ScriptFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "#SBATCH --array=0-2%2\n") {
		t.Fatalf("8 scenarios at 3 per task should be tasks 0-2:\n%s", script)
	}
	runTask := func(task string) {
		t.Helper()
		cmd := exec.Command("bash", sweep.ScriptFile)
		cmd.Dir = dir // sbatch runs the script where it was submitted
		cmd.Env = append(os.Environ(), "SCHEDSIM_RUN_MAIN=1", "SLURM_ARRAY_TASK_ID="+task)
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Run(); err != nil {
			t.Fatalf("task %s: %v\n%s", task, err, buf.String())
		}
	}
	runTask("0")
	runTask("2")
	// Task 1 has not run: merge reports it and writes a retry script for it.
	if code, stderr := exitCode(t, "sweep", "merge", dir); code != 3 || !strings.Contains(stderr, "missing [1]") {
		t.Fatalf("merge with task 1 missing: exit %d, %s", code, stderr)
	}
	retry, err := os.ReadFile(filepath.Join(dir, sweep.RetryFile))
	if err != nil || !strings.Contains(string(retry), "#SBATCH --array=1%1\n") {
		t.Fatalf("retry script (%v):\n%s", err, retry)
	}
	runTask("1")
	if out, err := schedsim(t, "sweep", "merge", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	merged, err := os.ReadFile(filepath.Join(dir, sweep.ParquetFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(merged, local) {
		t.Fatal("the array's merged sweep.parquet differs from the local one")
	}
	if _, err := os.Stat(filepath.Join(dir, sweep.RetryFile)); !os.IsNotExist(err) {
		t.Errorf("retry.sbatch left after a complete merge (%v)", err)
	}
	for _, d := range []string{root, dir, "."} {
		if m, _ := filepath.Glob(filepath.Join(d, "pwned*")); len(m) > 0 {
			t.Fatalf("a value ran a command: %v", m)
		}
	}
}

func TestSweepBadFileExitsTwo(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte("version: 1\nbase:\n  polcy: {name: easy}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := exitCode(t, "sweep", file)
	if code != 2 || !strings.Contains(stderr, `s.yaml:3: base: unknown key "polcy"`) {
		t.Fatalf("exit %d, %q", code, stderr)
	}
}

// TestSweepArrayPerTaskHuge: --per-task beyond the scenarios is one task
// of all 8 (it wrote --array=%1 and a manifest of 0 tasks that merged
// "successfully"); a negative one is a usage error.
func TestSweepArrayPerTaskHuge(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "sweep.yaml")
	if err := os.WriteFile(file, []byte(arraySweep), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "array")
	if out, err := schedsim(t, "sweep", file, "--slurm-array", dir, "--per-task", "9223372036854775807", "--binary", os.Args[0]); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	script, err := os.ReadFile(filepath.Join(dir, sweep.ScriptFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "#SBATCH --array=0%1\n") {
		t.Errorf("script does not run one task:\n%s", script)
	}
	m, err := sweep.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tasks != 1 || m.PerTask != 8 {
		t.Errorf("manifest: %d tasks of %d, want 1 of 8", m.Tasks, m.PerTask)
	}
	for _, bad := range []string{"-1", "-9223372036854775808"} {
		code, stderr := exitCode(t, "sweep", file, "--slurm-array", filepath.Join(root, "bad"), "--per-task", bad)
		if code != 2 || !strings.Contains(stderr, "--per-task must be >= 1") {
			t.Errorf("--per-task %s: exit %d, %q; want 2", bad, code, stderr)
		}
	}
}
