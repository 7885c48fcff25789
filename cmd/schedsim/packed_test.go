package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	scenario "github.com/schedsim/schedsim"
)

// TestPackedRunSameOutputs: a run whose trace is held packed
// (workload.Packed, as a trace too long for the memory budget is) writes
// exactly the files of the same run with the trace held as Jobs, under
// each policy and through every transform that edits a packed trace
// (filter, window, GPU remap, load scaling, partition map, the cut to
// --jobs) and, where ../shared is present, on a real sacct trace with
// arrays and dependencies.
func TestPackedRunSameOutputs(t *testing.T) {
	t.Cleanup(func() { scenario.SetPackAbove(0) })
	cases := []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"fifo", []string{"--policy", "fifo"}},
		{"slurm", []string{"--policy", "slurm", "--jobs", "1500"}},
		{"conservative", []string{"--policy", "conservative", "--jobs", "800"}},
		{"transforms", []string{"--window-from", "0", "--remap-gpu", "*=h100", "--speedup", "1.5",
			"--scale-load", "1.3", "--partition-map", "batch=gpu", "--jobs", "3000"}},
		{"filter", []string{"--filter-state", "COMPLETED,FAILED", "--policy", "slurm", "--jobs", "1200"}},
	}
	const habrok = "../../../shared/traces/sacct-parsable_habrok-rug.txt"
	if _, err := os.Stat(habrok); err == nil {
		cases = append(cases, struct {
			name string
			args []string
		}{"habrok", []string{"--trace", habrok, "--fields", "jobinfo", "--cluster", "testdata/habrok-approx.yaml", "--policy", "slurm", "--jobs", "3000"}})
	} else {
		t.Logf("habrok case skipped: %s absent (../shared is not checked out)", habrok)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dirs := [2]string{filepath.Join(t.TempDir(), "jobs"), filepath.Join(t.TempDir(), "packed")}
			for k, pack := range []int{-1, 1} {
				scenario.SetPackAbove(pack)
				args := append([]string{"run", "--quiet", "--out", dirs[k]}, tc.args...)
				if _, stderr, err := runSplit(t, args...); err != nil {
					t.Fatalf("pack %d: %v\n%s", pack, err, stderr)
				}
			}
			scenario.SetPackAbove(0)
			files := 0
			err := filepath.WalkDir(dirs[0], func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(dirs[0], p)
				a, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				b, err := os.ReadFile(filepath.Join(dirs[1], rel))
				if err != nil {
					t.Errorf("%s: only in the unpacked run's outputs", rel)
					return nil
				}
				files++
				if !bytes.Equal(a, bytes.ReplaceAll(b, []byte(dirs[1]), []byte(dirs[0]))) {
					t.Errorf("%s differs between the packed and the unpacked run", rel)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if files < 5 {
				t.Fatalf("compared %d files, want the run's outputs", files)
			}
		})
	}
}
