package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/hwmodels/nvml"
	"github.com/schedsim/schedsim/hwmodels/nvml/nvmltest"
)

// TestProbeNoNVML: on a machine without the NVIDIA driver (this one, CI)
// probe prints one line and exits 2; a CGO_ENABLED=0 build says it has no
// NVML support.
func TestProbeNoNVML(t *testing.T) {
	if src, err := nvml.Open(); err == nil {
		src.Close()
		t.Skip("libnvidia-ml.so.1 is present: a GPU machine")
	}
	code, stderr := exitCode(t, "probe")
	want := "schedsim: NVML not available: libnvidia-ml.so.1 not found; run this on a GPU node\n"
	if _, err := nvml.Open(); errors.Is(err, nvml.ErrNoCgo) {
		want = "schedsim: NVML not available: this schedsim was built without NVML support (CGO_ENABLED=0); rebuild with cgo on Linux\n"
	}
	if code != 2 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 2, %q", code, stderr, want)
	}
}

// fakeProbe makes probe read node n through the fake source on a fake
// clock, with a fixed host.
func fakeProbe(t *testing.T, n *nvmltest.Node) *nvmltest.Clock {
	t.Helper()
	clk := nvmltest.NewClock(time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC))
	oldOpen, oldClock, oldHost, oldProc := openNVML, probeClock, probeHost, newProcess
	t.Cleanup(func() { openNVML, probeClock, probeHost, newProcess = oldOpen, oldClock, oldHost, oldProc })
	openNVML = func() (nvml.Source, error) { return nvmltest.NewFake(n), nil }
	probeClock = clk
	probeHost = func() nvml.Host { return nvml.Host{Name: "node07.cluster", CPUs: 112, MemoryMiB: 2 << 20} }
	return clk
}

// TestProbeNodeModels: probe on each fixture node prints a cluster spec
// that hwmodels.ParseCluster accepts; --raw prints the readings.
func TestProbeNodeModels(t *testing.T) {
	for _, c := range []struct {
		node *nvmltest.Node
		gpus int32
		raw  string
	}{
		{nvmltest.H100Node(), 8, "remote_type: nvswitch"},
		{nvmltest.A100MIGNode(), 4, "profile: 3g.20gb"},
		{nvmltest.H200Node(), 1, "memory_mib: 143771"},
	} {
		t.Run(c.node.Name, func(t *testing.T) {
			fakeProbe(t, c.node)
			out, err := schedsim(t, "probe")
			if err != nil {
				t.Fatal(err)
			}
			cl, err := hwmodels.ParseCluster([]byte(out), "probe.yaml")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if cl.Nodes[0].Name != "node07" || cl.Nodes[0].GPUs != c.gpus {
				t.Errorf("nodes %+v", cl.Nodes)
			}
			out, err = schedsim(t, "probe", "--raw", "--name", "x")
			if err != nil || !strings.Contains(out, c.raw) || !strings.Contains(out, "driver_version:") {
				t.Errorf("--raw: %v\n%s", err, out)
			}
			out, err = schedsim(t, "probe", "--raw", "--json")
			if err != nil || !strings.Contains(out, `"gpus": [`) {
				t.Errorf("--raw --json: %v\n%s", err, out)
			}
		})
	}
}

func TestProbeSample(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"s.csv", "s.parquet"} {
		fakeProbe(t, nvmltest.H100Node())
		path := filepath.Join(dir, name)
		if out, err := schedsim(t, "probe", "--sample", "10s", "--interval", "1s", "--out", path); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if name == "s.csv" {
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			// A header, then 10 instants × 8 GPUs.
			if len(lines) != 1+80 || !strings.HasPrefix(lines[80], "9.000,7,98,49,61440,690.00,") {
				t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
			}
		} else if !strings.HasPrefix(string(data), "PAR1") {
			t.Errorf("%s is not Parquet", name)
		}
	}
	fakeProbe(t, nvmltest.H100Node())
	for _, args := range [][]string{
		{"probe", "--sample", "10s"},
		{"probe", "--sample", "10s", "--out", "x.txt"},
		{"probe", "--sample", "10s", "--out", "x.csv", "--interval", "0s"},
		{"probe", "--raw", "--run", "--", "true"},
		{"probe", "--run"},
		{"probe", "extra"},
	} {
		if _, err := schedsim(t, args...); err == nil || !errors.As(err, new(inputError)) {
			t.Errorf("%v: err %v, want bad input", args, err)
		}
	}
}

// TestProbeRun measures a fake 6 s job on the H200 fixture (idle 76 W,
// then 640 W at 97 %) and reads the profile back.
func TestProbeRun(t *testing.T) {
	clk := fakeProbe(t, nvmltest.H200Node())
	var started []string
	newProcess = func(args []string, _, _ io.Writer) nvml.Process {
		started = args
		return &nvmltest.Process{Clock: clk, Runtime: 6 * time.Second}
	}
	dir := t.TempDir()
	prof := filepath.Join(dir, "p.yaml")
	series := filepath.Join(dir, "p.csv")
	out, err := schedsim(t, "probe", "--run", "--workload", "gemm-8192", "--out", prof, "--series", series, "--", "./gemm", "--size", "8192")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Join(started, " ") != "./gemm --size 8192" {
		t.Errorf("ran %q", started)
	}
	data, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	p, err := nvml.ParseProfile(data, prof)
	if err != nil {
		t.Fatal(err)
	}
	if p.Workload != "gemm-8192" || p.GPUModel != "h200-141gb" || p.Class != "training" || p.WallS != 6 ||
		p.IdlePowerW != 76 || p.MeanPowerW != 640 || p.EnergyJ != 3840 || p.MeanUtilPct != 97 || p.PeakMemoryMiB != 98304 {
		t.Errorf("profile %+v", p)
	}
	if _, err := os.Stat(series); err != nil {
		t.Error(err)
	}
}
