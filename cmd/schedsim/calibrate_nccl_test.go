package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels/calibrate"
)

// TestCalibrateNCCL: calibrate --nccl on the sample logs (made from 470
// and 46 GB/s, hwmodels/calibrate/testdata/nccl/README.md) writes a
// calibration that Load accepts, with the fitted bandwidths; a bad log
// exits 2 naming file and line.
func TestCalibrateNCCL(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "cal.yaml")
	td := filepath.Join("..", "..", "hwmodels", "calibrate", "testdata", "nccl")
	text, err := schedsim(t, "calibrate", "--nccl", filepath.Join(td, "h100-1node.txt"), "--nccl", filepath.Join(td, "h100-4node.txt"), "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	c, err := calibrate.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if c.Comm == nil || c.Comm.IntraGBs < 460 || c.Comm.IntraGBs > 480 || c.Comm.InterGBs < 45 || c.Comm.InterGBs > 47 {
		t.Fatalf("comm %+v, want intra ≈ 470 and inter ≈ 46 GB/s", c.Comm)
	}
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("#  Rank  0 Group 0 Pid 1 on h device 0 [0] X\n#  Rank  1 Group 0 Pid 1 on h device 1 [0] X\n8 2 float\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := exitCode(t, "calibrate", "--nccl", bad)
	if code != 2 || !strings.Contains(stderr, "bad.txt:3: row:") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("bad log: exit %d, stderr %q; want 2 and one line naming bad.txt:3: row", code, stderr)
	}
}
