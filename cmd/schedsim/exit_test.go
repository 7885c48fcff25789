package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedsim/schedsim/hwmodels/nvml"
	"github.com/schedsim/schedsim/hwmodels/nvml/nvmltest"
)

// TestExitCodes runs the real binary over the commands: 2 for every
// usage or input error (unknown command or subcommand, missing or extra
// argument, unknown flag, bad flag value, a file that is not there or not
// what it should be), 1 only for a broken gate (or a MIG layout that
// cannot be placed), 0 otherwise (a command or group alone prints its
// help); every error is one line on stderr naming what is wrong.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	runA, runB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, r := range []struct{ dir, policy string }{{runA, "easy"}, {runB, "fifo"}} {
		if code, stderr := exitCode(t, "run", "--jobs", "300", "--quiet", "--policy", r.policy, "--out", r.dir); code != 0 {
			t.Fatalf("run --out %s: exit %d: %s", r.dir, code, stderr)
		}
	}
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"no command: help", nil, 0, ""},
		{"help flag", []string{"run", "--help"}, 0, ""},
		{"help command", []string{"help", "sweep", "merge"}, 0, ""},
		{"help of an unknown topic", []string{"help", "frob"}, 2, `unknown command "frob" for "schedsim"`},
		{"help of an unknown subtopic", []string{"help", "trace", "frob"}, 2, `unknown command "frob" for "schedsim trace"`},
		{"completion", []string{"completion", "bash"}, 0, ""},
		{"completion: unknown shell", []string{"completion", "tcsh"}, 2, `unknown command "tcsh" for "schedsim completion"`},
		{"version", []string{"version"}, 0, ""},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate" for "schedsim" (want one of`},
		{"unknown command, suggestion", []string{"runn"}, 2, `unknown command "runn" for "schedsim" (did you mean run?)`},
		{"unknown subcommand", []string{"trace", "frob"}, 2, `unknown command "frob" for "schedsim trace" (want one of`},
		{"command group alone: help", []string{"trace"}, 0, ""},
		{"command group alone: help, hw", []string{"hw"}, 0, ""},
		{"unknown subcommand, hw", []string{"hw", "frob"}, 2, `unknown command "frob" for "schedsim hw" (want one of catalog, mig-layout)`},
		{"missing argument", []string{"plot"}, 2, "schedsim plot: accepts 1 arg(s), received 0 (usage: schedsim plot DIR"},
		{"missing arguments", []string{"compare", runA}, 2, "schedsim compare: accepts 2 arg(s), received 1"},
		{"extra argument", []string{"run", "extra"}, 2, `schedsim run: unexpected argument "extra" (usage: schedsim run [flags])`},
		{"extra argument, sweep merge", []string{"sweep", "merge", "a", "b"}, 2, "schedsim sweep merge: accepts 1 arg(s), received 2"},
		{"run past a bound of the scenario", []string{"run", "--quiet", "--set", "failures.mtbf=30d", "--set", "failures.mttr=4h", "--set", "limits.max_node_events=10"}, 2, "limits.max_node_events"},
		{"unknown flag", []string{"run", "--frob"}, 2, "schedsim run: unknown flag: --frob (see 'schedsim run --help')"},
		{"unknown shorthand", []string{"compare", "-q", runA, runB}, 2, "unknown shorthand flag: 'q' in -q"},
		{"bad flag value", []string{"run", "--seed", "x"}, 2, `invalid argument "x" for "--seed"`},
		{"flag without value", []string{"run", "--seed"}, 2, "flag needs an argument: --seed"},
		{"bad flag value, checked by the command", []string{"run", "--jobs", "-1"}, 2, "--jobs must be >= 0"},
		{"missing file", []string{"trace", "inspect", filepath.Join(dir, "none.swf")}, 2, "none.swf"},
		{"plot: not a run directory", []string{"plot", empty}, 2, "no manifest.json"},
		{"plot: missing directory", []string{"plot", filepath.Join(dir, "none")}, 2, "none"},
		{"compare: malformed gate", []string{"compare", runA, runB, "--gate", "p95_wait"}, 2, "p95_wait"},
		{"compare: gate holds", []string{"compare", runA, runA, "--resamples", "20", "--gate", "p95_wait:+0%"}, 0, ""},
		{"compare: gate broken", []string{"compare", runA, runB, "--resamples", "20", "--gate", "mean_wait:+0s"}, 1, "1 gate(s) broken: mean_wait:+0s"},
		{"hw mig-layout: cannot place", []string{"hw", "mig-layout", "--gpu", "h100-80gb", "4g.40gb,3g.40gb,1g.10gb"}, 1, "cannot configure"},
		{"hw mig-layout: unknown profile", []string{"hw", "mig-layout", "--gpu", "a100-40gb", "1g.7gb"}, 2, "unknown MIG profile"},
		{"sweep: not a sweep array", []string{"sweep", "merge", empty}, 2, "manifest.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := exitCode(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if tc.code == 0 {
				if stderr != "" {
					t.Errorf("stderr %q, want none", stderr)
				}
				return
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", stderr, tc.want)
			}
			if !strings.HasPrefix(stderr, "schedsim: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr is not one line \"schedsim: ...\": %q", stderr)
			}
		})
	}
}

// TestExitStatus checks how errors map to exit statuses, wrapped or not.
func TestExitStatus(t *testing.T) {
	plain := errors.New("x")
	enospc := &fs.PathError{Op: "write", Path: "out/jobs.csv", Err: syscall.ENOSPC}
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"unmarked: the input's", plain, 2},
		{"input", badInput(plain), 2},
		{"gate", gateBroken(plain), 1},
		{"gate, wrapped", fmt.Errorf("compare: %w", gateBroken(plain)), 1},
		{"failure", failed(plain), 3},
		{"failure, wrapped", fmt.Errorf("run: %w", failed(plain)), 3},
		{"input inside a failure", failed(badInput(plain)), 2},
		{"disk full", enospc, 3},
		{"disk full, marked as input", badInput(enospc), 3},
		{"quota", fmt.Errorf("w: %w", syscall.EDQUOT), 3},
		{"I/O error", syscall.EIO, 3},
		{"permission: the input's (--out)", &fs.PathError{Op: "mkdir", Path: "/x", Err: syscall.EACCES}, 2},
	} {
		if got := exitStatus(tc.err); got != tc.want {
			t.Errorf("%s: exitStatus(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
	if got := oneLine("a\nb\n\n  c \n"); got != "a; b; c" {
		t.Errorf("oneLine = %q", got)
	}
}

// TestProbeRunFailedExitsThree: a measured command that fails is not a
// broken gate (exit 1) nor bad input: probe writes the profile and exits 3.
func TestProbeRunFailedExitsThree(t *testing.T) {
	clk := fakeProbe(t, nvmltest.H200Node())
	newProcess = func(args []string, _, _ io.Writer) nvml.Process {
		return &nvmltest.Process{Clock: clk, Runtime: 2 * time.Second, Code: 7}
	}
	prof := filepath.Join(t.TempDir(), "p.yaml")
	_, err := schedsim(t, "probe", "--run", "--out", prof, "--", "./fails")
	if got := exitStatus(err); got != 3 || err == nil || !strings.Contains(err.Error(), "exited with status 7") {
		t.Errorf("probe --run of a failing command: %v, exit %d; want exit 3", err, got)
	}
	if _, err := os.Stat(prof); err != nil {
		t.Errorf("profile not written: %v", err)
	}
}
