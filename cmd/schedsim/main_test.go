package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets tests run the real binary (main, exit codes included) by
// re-executing the test binary with SCHEDSIM_RUN_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("SCHEDSIM_RUN_MAIN") == "1" {
		if os.Getenv(peakLiveEnv) == "1" {
			trackPeakLive()
		}
		main()
		if os.Getenv(peakLiveEnv) == "1" {
			fmt.Fprintf(os.Stderr, "peak-live %d\n", peakLive.Load())
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// schedsim runs the command in-process and returns its output and error.
func schedsim(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// exitCode runs the real main in a child process.
func exitCode(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SCHEDSIM_RUN_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &bytes.Buffer{}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatalf("run %v: %v", args, err)
	return 0, ""
}

func TestRunDefault(t *testing.T) {
	out, err := schedsim(t, "run")
	if err != nil {
		t.Fatal(err)
	}
	// The embedded slice holds 5,341 job lines: 38 without a submit time
	// are skipped, and 2 with no processors and run time 0 (jobs 91832 and
	// 94218) failed or were cancelled before they started: 5,303 jobs, the
	// other 5,301 of which fit the example cluster and finish.
	for _, want := range []string{
		"scenario default",
		"embedded slice of LLNL-Thunder-2007-1.1-cln.swf",
		"SWF processors mapped to GPUs: GPUs = ceil(procs/10)",
		"policy      easy, seed 1",
		"48 nodes, 384 GPUs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !strings.Contains(out, "Jobs                   5303") || !strings.Contains(out, "started              5301") {
		t.Errorf("output does not report 5303 jobs, 5301 started:\n%s", out)
	}
}

func TestRunDeterministicOutputs(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		if _, err := schedsim(t, "run", "--policy", "fifo", "--seed", "7", "--out", d); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"summary.json", "jobs.csv"} {
		a, err := os.ReadFile(filepath.Join(dirs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dirs[1], name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
		if len(a) == 0 {
			t.Errorf("%s is empty", name)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dirs[0], "jobs.csv"))
	header, _, _ := strings.Cut(string(csv), "\n")
	if header != "job_id,user,partition,submit_s,start_s,end_s,wait_s,state,nodes,gpus,node_list" {
		t.Errorf("jobs.csv header %q", header)
	}
	if n := strings.Count(string(csv), "\n"); n != 5304 {
		t.Errorf("jobs.csv has %d lines, want 5304 (header + 5303 jobs)", n)
	}
}

// TestPoliciesDiffer guards against flags being ignored: FIFO cannot
// backfill, so on the default trace its mean wait exceeds EASY's.
func TestPoliciesDiffer(t *testing.T) {
	easy, err := schedsim(t, "run", "--policy", "easy")
	if err != nil {
		t.Fatal(err)
	}
	fifo, err := schedsim(t, "run", "--policy", "fifo")
	if err != nil {
		t.Fatal(err)
	}
	if easy == fifo {
		t.Fatal("fifo and easy printed the same summary")
	}
	if !strings.Contains(fifo, "policy      fifo") {
		t.Error("fifo run does not name its policy")
	}
}

func TestRunSWFOnHeaderMachine(t *testing.T) {
	// The CTC excerpt's header says MaxNodes 338 (batch partition; 512
	// total) and MaxProcs 338: a 338-node machine, one processor each.
	out, err := schedsim(t, "run", "--trace", "../../traces/testdata/ctc_head.swf", "--cluster", "header")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "338 nodes") {
		t.Errorf("header machine is not 338 nodes:\n%s", out)
	}
}

func TestRunScenarioFile(t *testing.T) {
	dir := t.TempDir()
	cluster := `version: 1
name: tiny
node_groups:
  - name: "n[1-2]"
    gpu: {model: h100-sxm-80gb, count: 4}
    cpus: 32
    memory: 256G
`
	trace := "JobID|User|Partition|State|Submit|Start|End|Elapsed|Timelimit|ReqTRES\n" +
		"1|u1|all|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|01:00:00|02:00:00|cpu=8,gres/gpu=8,mem=16G,node=2\n" +
		"2|u2|all|COMPLETED|2024-01-01T00:10:00|2024-01-01T01:00:00|2024-01-01T01:30:00|00:30:00|01:00:00|cpu=1,gres/gpu=1,mem=1G,node=1\n"
	scen := `version: 1
name: tiny-fifo
seed: 3
cluster: {file: cluster.yaml}
trace: {file: jobs.sacct}
policy: {name: fifo}
output: {dir: out}
`
	for name, body := range map[string]string{"cluster.yaml": cluster, "jobs.sacct": trace, "s.yaml": scen} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := schedsim(t, "run", "--scenario", filepath.Join(dir, "s.yaml")); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "out", "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Job 1 takes both nodes for an hour; job 2 (submitted at 600 s)
	// waits for it and runs [3600, 5400).
	want := "job_id,user,partition,submit_s,start_s,end_s,wait_s,state,nodes,gpus,node_list\n" +
		"1,u1,all,0,0,3600,0,COMPLETED,2,8,n[1-2]\n" +
		"2,u2,all,600,3600,5400,3000,COMPLETED,1,1,n1\n"
	if string(csv) != want {
		t.Errorf("jobs.csv:\n%s\nwant:\n%s", csv, want)
	}
}

func TestBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	badScen := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badScen, []byte("version: 1\ncluster: {builtin: example}\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: easy}\nseeed: 3\n"), 0o644)
	badTrace := filepath.Join(dir, "bad.swf")
	os.WriteFile(badTrace, []byte("; Version: 2.2\n1 0 -1 10 4 -1 -1 4 100 -1 1 1 -1 -1 -1 1 -1 -1\n2 5 -1 abc 4 -1 -1 4 100 -1 1 1 -1 -1 -1 1 -1 -1\n"), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown policy", []string{"run", "--policy", "nope"}, `unknown policy "nope" (want one of`},
		{"missing trace", []string{"run", "--trace", filepath.Join(dir, "none.swf")}, "none.swf"},
		{"scenario unknown key", []string{"run", "--scenario", badScen}, `bad.yaml:5: unknown key "seeed"`},
		{"bad trace value", []string{"run", "--trace", badTrace}, "bad.swf:3: run_time"},
		{"unknown flag", []string{"run", "--polcy", "easy"}, "unknown flag: --polcy"},
		{"bad partition map", []string{"run", "--partition-map", "a"}, `--partition-map: "a": want from=to`},
		{"missing cluster", []string{"run", "--cluster", filepath.Join(dir, "none.yaml")}, "none.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := exitCode(t, tc.args...)
			if code != 2 {
				t.Errorf("exit code %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", stderr, tc.want)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	out, err := schedsim(t, "version")
	if err != nil || !strings.HasPrefix(out, "schedsim ") {
		t.Fatalf("version: %q, %v", out, err)
	}
}
