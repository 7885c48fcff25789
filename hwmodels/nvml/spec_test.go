package nvml_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/hwmodels/nvml"
	"github.com/schedsim/schedsim/hwmodels/nvml/nvmltest"
)

var update = flag.Bool("update", false, "update golden files")

func TestMatchGPU(t *testing.T) {
	for _, c := range []struct {
		name string
		mib  int64
		want string
	}{
		{"NVIDIA H100 80GB HBM3", 81559, "h100-sxm-80gb"},
		{"NVIDIA H100 PCIe", 81559, "h100-pcie-80gb"},
		{"NVIDIA H100 NVL", 95830, "h100-nvl-94gb"},
		{"NVIDIA H200", 143771, "h200-141gb"},
		{"NVIDIA H200 NVL", 143771, "h200-nvl-141gb"},
		{"NVIDIA A100-SXM4-40GB", 40960, "a100-sxm-40gb"},
		{"NVIDIA A100-SXM4-80GB", 81920, "a100-sxm-80gb"},
		{"NVIDIA A100 80GB PCIe", 81920, "a100-pcie-80gb"},
		{"NVIDIA A100-PCIE-40GB", 40960, "a100-pcie-40gb"},
		{"Tesla V100-SXM2-32GB", 32768, "v100-sxm-32gb"},
		{"NVIDIA L40S", 46068, "l40s-48gb"},
		{"NVIDIA L4", 23034, "l4-24gb"},
		{"NVIDIA GH200 480GB", 97871, ""},
		{"NVIDIA RTX 6000 Ada Generation", 49140, ""},
	} {
		got, ok := nvml.MatchGPU(c.name, c.mib)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("MatchGPU(%q, %d) = %q, %v; want %q", c.name, c.mib, got, ok, c.want)
		}
	}
}

// TestNodeSpec: the probe's YAML for each fixture is a cluster spec
// hwmodels.ParseCluster accepts, and resolves to the fixture's hardware.
func TestNodeSpec(t *testing.T) {
	host := nvml.Host{Name: "gpu-node-01.example.org", CPUs: 224, MemoryMiB: 2063937}
	for _, c := range []struct {
		node                *nvmltest.Node
		golden              string
		gpus                int32
		like, interconnect  string
		switches, nvlinkGBs int32
		idle, tdp           int32
		mig                 string
	}{
		{nvmltest.H100Node(), "spec-h100.golden", 8, "h100-sxm-80gb", hwmodels.InterconnectNVSwitch, 4, 900, 69, 700, ""},
		{nvmltest.A100MIGNode(), "spec-a100-mig.golden", 4, "a100-sxm-40gb", hwmodels.InterconnectBridge, 0, 600, 40, 400, "3g.20gb,2g.10gb,1g.5gb"},
		{nvmltest.H200Node(), "spec-h200.golden", 1, "h200-141gb", hwmodels.InterconnectPCIe, 0, 900, 76, 700, ""},
	} {
		t.Run(c.node.Name, func(t *testing.T) {
			data, err := nvml.NodeSpec(&c.node.Readings, host, host.Name)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", c.golden)
			if *update {
				if err := os.WriteFile(golden, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(want) != string(data) {
				t.Errorf("spec differs from %s (run with -update):\n%s", golden, data)
			}
			cl, err := hwmodels.ParseCluster(data, "probe.yaml")
			if err != nil {
				t.Fatalf("ParseCluster: %v\n%s", err, data)
			}
			if len(cl.Nodes) != 1 || cl.Nodes[0].Name != "gpu-node-01" || cl.Nodes[0].GPUs != c.gpus || cl.Nodes[0].CPUs != 224 {
				t.Fatalf("nodes = %+v", cl.Nodes)
			}
			g := cl.Groups[0].GPU
			if g == nil || g.Name != "gpu-node-01-gpu" || g.SMs != 132 && c.like != "a100-sxm-40gb" || g.TDPW != c.tdp || g.IdleW != c.idle || g.NVLinkGBs != c.nvlinkGBs {
				t.Errorf("GPU model = %+v", g)
			}
			if cat, _ := hwmodels.LookupGPU(c.like); g.BF16TFLOPS != cat.BF16TFLOPS || g.MIG != cat.MIG {
				t.Errorf("GPU model %+v is not like %s", g, c.like)
			}
			var nm hwmodels.NodeModel
			for _, m := range cl.NodeModels {
				if m.Name == "gpu-node-01" {
					nm = m
				}
			}
			if nm.Interconnect != c.interconnect || nm.NVSwitches != c.switches || nm.GPUs != c.gpus {
				t.Errorf("node model = %+v", nm)
			}
			var layout []string
			if mc := cl.Groups[0].MIG; mc != nil {
				for _, p := range mc.Layout {
					layout = append(layout, mc.Geometry.Profiles[p.Profile].Name)
				}
			}
			if strings.Join(layout, ",") != c.mig {
				t.Errorf("MIG layout = %v, want %s", layout, c.mig)
			}
		})
	}
}
