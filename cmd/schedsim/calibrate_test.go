package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels/calibrate"
)

// TestCalibrateAndRun fits the recorded profile fixtures, writes
// calibration.yaml, and runs the default scenario with and without it:
// the calibrated GPU power changes the energy (the example cluster has
// A100 SXM 80GB and H100 SXM nodes, both calibrated).
func TestCalibrateAndRun(t *testing.T) {
	dir := t.TempDir()
	cal := filepath.Join(dir, "calibration.yaml")
	out, err := schedsim(t, "calibrate", "../../hwmodels/calibrate/testdata/profiles", "--out", cal)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"speed ratios", "inference  a100-sxm-80gb    h200-141gb          2.343", "GPU power per GPU (W)", "h100-sxm-80gb       69.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	c, err := calibrate.Load(cal)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Runtime.Ratios) != 6 || len(c.GPUPower) != 3 {
		t.Errorf("calibration %+v", c)
	}
	plain, err := schedsim(t, "run", "--jobs", "300", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	calibrated, err := schedsim(t, "run", "--jobs", "300", "--quiet", "--calibration", cal)
	if err != nil {
		t.Fatalf("%v\n%s", err, calibrated)
	}
	if !strings.Contains(calibrated, "calibration "+cal+": 6 speed ratios, power of 2 GPU models") {
		t.Errorf("no calibration line:\n%s", calibrated)
	}
	energy := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(strings.ToLower(l), "energy") {
				return l
			}
		}
		return ""
	}
	if energy(plain) == "" || energy(plain) == energy(calibrated) {
		t.Errorf("energy unchanged by calibration:\n%s\n%s", energy(plain), energy(calibrated))
	}
	// --jobs and --calibration are scenario keys (trace.transforms.head,
	// cluster.calibration): the saved scenario reruns to the same outputs
	// without the flags.
	o1, o2 := filepath.Join(dir, "o1"), filepath.Join(dir, "o2")
	if out, err := schedsim(t, "run", "--jobs", "300", "--quiet", "--calibration", cal, "--out", o1); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := schedsim(t, "run", "--quiet", "--scenario", filepath.Join(o1, "scenario.yaml"), "--out", o2); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	compareDirs(t, o1, o2)
	saved, _ := os.ReadFile(filepath.Join(o1, "scenario.yaml"))
	for _, want := range []string{"head: 300", "calibration: " + cal, "# calibration: calibration.yaml sha256:"} {
		if !strings.Contains(string(saved), want) {
			t.Errorf("saved scenario lacks %q:\n%s", want, saved)
		}
	}
	// Bad input: exit status 2 and the file's line.
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\ngpu_power:\n  - {model: h100-sxm-80gb, idle_w: -5, busy_w: 1}\n"), 0o644)
	if code, stderr := exitCode(t, "run", "--jobs", "10", "--calibration", bad); code != 2 || !strings.Contains(stderr, "bad.yaml:3: gpu_power[0].idle_w") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if code, stderr := exitCode(t, "calibrate", bad); code != 2 || !strings.Contains(stderr, "bad job profile") {
		t.Errorf("calibrate on a non-profile: exit %d: %s", code, stderr)
	}
}
