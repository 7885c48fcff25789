package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/reports"
)

// hwCluster is a catalog-based spec with a fixed MIG layout on part of the
// A100 group, a 2:1 fat-tree and a power model.
const hwCluster = `version: 1
name: hw
node_groups:
  - name: "h100-[01-32]"
    model: dgx-h100
  - name: "a100-[01-16]"
    model: dgx-a100
    mig: {layout: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb], gpus: 2}
fabric: {kind: fat-tree, leaf_size: 16, oversubscription: "2:1"}
power: {pue: 1.3, price_per_kwh: 0.15, currency: EUR, suspend_time: 30m, resume_timeout: 10m, suspended_w: 50}
`

// TestRunHardwareCluster: schedsim run accepts the spec, replays the
// embedded trace on it, prints the energy line and writes the energy
// section; with trace.recorded_gpu and comm_stretch in a scenario the run
// lists runtime changes and the summary differs.
func TestRunHardwareCluster(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(spec, []byte(hwCluster), 0o644); err != nil {
		t.Fatal(err)
	}
	out1 := filepath.Join(dir, "out1")
	text, err := schedsim(t, "run", "--cluster", spec, "--out", out1)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !strings.Contains(text, "Energy ") || !strings.Contains(text, "PUE 1.30") || !strings.Contains(text, "EUR") {
		t.Errorf("output lacks the energy line:\n%s", text)
	}
	rd, err := reports.ReadRunDir(out1)
	if err != nil {
		t.Fatal(err)
	}
	if rd.Header.EnergyPUE != 1.3 || !(rd.Header.EnergyITKWh > 0) {
		t.Errorf("summary energy: IT %v kWh, PUE %v; want > 0 and 1.3", rd.Header.EnergyITKWh, rd.Header.EnergyPUE)
	}
	if _, err := os.Stat(filepath.Join(out1, "plots", "energy.svg")); err != nil {
		t.Errorf("no energy plot: %v", err)
	}

	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte(`version: 1
cluster: {file: cluster.yaml}
trace: {builtin: llnl-thunder-slice, recorded_gpu: a100-sxm-80gb, swf: {procs_per_gpu: 10}}
policy: {name: easy, args: {placement: topology-tree}}
runtime: {comm_stretch: true}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	text2, err := schedsim(t, "run", "--scenario", scen)
	if err != nil {
		t.Fatalf("%v\n%s", err, text2)
	}
	line := func(s, prefix string) string {
		for l := range strings.SplitSeq(s, "\n") {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		return ""
	}
	// The H100 jobs recorded on A100s run faster: a shorter makespan.
	if m1, m2 := line(text, "Makespan"), line(text2, "Makespan"); m1 == "" || m1 == m2 || !strings.Contains(text2, "Energy ") {
		t.Errorf("runtime model changed nothing (%q vs %q), or no energy line:\n%s", m1, m2, text2)
	}
}
