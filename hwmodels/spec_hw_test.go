package hwmodels

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHardwareSpec(t *testing.T) {
	c, err := LoadCluster(filepath.Join("testdata", "hardware.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// 64 + 4 + 2 + 2 nodes.
	if len(c.Nodes) != 72 || len(c.Groups) != 4 {
		t.Fatalf("%d nodes, %d groups", len(c.Nodes), len(c.Groups))
	}
	h := c.Groups[0]
	if h.NodeModel != "my-h100" || h.GPU == nil || h.GPU.Name != "h100-sxm-capped" || h.GPU.TDPW != 500 || h.GPU.IdleW != 60 || h.BasePowerW != 2000 {
		t.Errorf("group 0 = %+v, GPU %+v", h, h.GPU)
	}
	if n := c.Nodes[0]; n.GPUs != 8 || n.GPUType != "h100" || n.CPUs != 112 || n.MemMB != 2<<20 || n.GPUModel != "h100-sxm-capped" {
		t.Errorf("node 0 = %+v", n)
	}
	// Peak: 64 × (2000 + 8×500) + 4 × (3300 + 8×400) + 2 × (4600 + 8×700) + 2 × (900 + 4×350).
	if got, want := c.PeakPowerW(), 64*6000.0+4*6500+2*10200+2*2300; got != want {
		t.Errorf("PeakPowerW = %v, want %v", got, want)
	}

	inf := c.Groups[1]
	if inf.MIG == nil || inf.MIG.Dynamic || inf.MIG.GPUs != 4 || inf.Weight != 10 {
		t.Fatalf("inf MIG = %+v", inf.MIG)
	}
	if got := names(inf.MIG.Geometry, inf.MIG.Layout); got != "3g.40gb@4 2g.20gb@0 1g.10gb@2 1g.10gb@3" {
		t.Errorf("inf layout = %s", got)
	}
	wantGRES := []GRES{
		{Name: "gpu", Type: "a100", Count: 4},
		{Name: "gpu", Type: "a100_1g.10gb", Count: 8, MIG: true, Profile: "1g.10gb"},
		{Name: "gpu", Type: "a100_2g.20gb", Count: 4, MIG: true, Profile: "2g.20gb"},
		{Name: "gpu", Type: "a100_3g.40gb", Count: 4, MIG: true, Profile: "3g.40gb"},
	}
	if d := cmp.Diff(wantGRES, c.NodeGRES(int(inf.First))); d != "" {
		t.Errorf("inf GRES (-want +got):\n%s", d)
	}
	dyn := c.Groups[2]
	if dyn.MIG == nil || !dyn.MIG.Dynamic || dyn.MIG.ReconfigureDelay != 90 || dyn.MIG.GPUs != 8 || dyn.MIG.Geometry.Name != "h200-141gb" {
		t.Errorf("dyn MIG = %+v", dyn.MIG)
	}
	if g := c.NodeGRES(int(dyn.First)); len(g) != 7 || g[0].Type != "h200_1g.18gb" || g[0].Count != 56 {
		t.Errorf("dyn GRES = %+v", g)
	}
	mps := c.Groups[3]
	if mps.MPS == nil || mps.MPS.MaxClients != 8 || mps.BasePowerW != 900 {
		t.Errorf("mps group = %+v", mps)
	}

	f := c.Fabric
	if f == nil || f.Kind != FabricFatTree || len(f.Switches) != 6 { // 5 leaves + spine
		t.Fatalf("fabric = %+v", f)
	}
	if f.Switches[0].LinkGbps != 400 || f.Switches[0].Oversubscription != 2 {
		t.Errorf("leaf01 = %+v", f.Switches[0])
	}
	if c.Nodes[16].Switches[0] != 1 {
		t.Errorf("node 16 chain %v", c.Nodes[16].Switches)
	}

	if c.Power.PUE != 1.25 || c.Power.PricePerKWh != 0.2 || c.Power.Currency != "EUR" || c.Power.SuspendTime != 1800 || c.Power.ResumeTimeout != 600 {
		t.Errorf("power = %+v", c.Power)
	}
	if cl, _ := c.Runtime.Class("cfd"); cl.Basis != BasisBandwidth || cl.CommFraction != 0.4 {
		t.Errorf("class cfd = %+v", cl)
	}
	if cl, _ := c.Runtime.Class("inference"); cl.Basis != BasisBandwidth || cl.CommFraction != 0 {
		t.Errorf("class inference = %+v", cl)
	}
	a, _ := c.GPU("a100-sxm-80gb")
	hh, _ := c.GPU("h100-sxm-80gb")
	if s, err := c.Runtime.Speedup(&a, &hh, ""); err != nil || s != 2.5 {
		t.Errorf("speedup = %v, %v", s, err)
	}
	if s, _ := c.Runtime.Speedup(&hh, &a, "training"); s != 0.4 {
		t.Errorf("reverse speedup = %v", s)
	}
	if v, _ := c.Slurm.Get("schedulerparameters"); v != "bf_window=2880,bf_continue" {
		t.Errorf("SchedulerParameters = %q", v)
	}
	if kv := c.Slurm.PartitionKeys("gpu"); len(kv) != 2 || kv[0] != (KeyValue{"MaxNodes", "8"}) {
		t.Errorf("partition keys = %v", kv)
	}
}

// TestHardwareSpecErrors checks that bad hardware sections give an error
// naming the line and field, with what was expected.
func TestHardwareSpecErrors(t *testing.T) {
	const head = "version: 1\nname: c\nnode_groups:\n  - name: n[1-2]\n    cpus: 8\n    memory: 64G\n"
	const gpu = "    gpu: {model: h100-sxm-80gb, count: 8}\n"
	tests := []struct {
		name, yaml, want string
		kind             error
	}{
		{"mig layout beyond geometry", head + gpu + "    mig:\n      layout: [4g.40gb, 3g.40gb, 1g.10gb]\n",
			"c.yaml:9: node_groups[0].mig.layout: cannot be configured on h100-sxm-80gb: needs 9 memory slices, a GPU has 8", ErrRange},
		{"mig instance limit", head + gpu + "    mig: {layout: [1g.20gb, 1g.20gb, 1g.20gb, 1g.20gb, 1g.20gb]}\n",
			"c.yaml:8: node_groups[0].mig.layout: cannot be configured on h100-sxm-80gb: 5 × 1g.20gb: at most 4 per GPU", ErrRange},
		{"mig unknown profile", head + gpu + "    mig:\n      layout:\n        - 3g.40gb\n        - 1g.7gb\n",
			`c.yaml:11: node_groups[0].mig.layout[1]: unknown profile "1g.7gb" (want 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)`, ErrUnknownName},
		{"mig on a GPU without table", head + "    gpu: {model: l4-24gb, count: 8}\n    mig: {mode: dynamic}\n",
			"c.yaml:8: node_groups[0].mig: GPU model l4-24gb has no MIG profile table", ErrRange},
		{"mig without GPUs", head + "    mig: {mode: dynamic}\n", "c.yaml:7: node_groups[0].mig: the node group has no GPUs", ErrRange},
		{"mig gpus above count", head + gpu + "    mig: {mode: dynamic, gpus: 9}\n", "c.yaml:8: node_groups[0].mig.gpus: must be <= 8, got 9", ErrRange},
		{"mig bad mode", head + gpu + "    mig: {mode: auto}\n", `c.yaml:8: node_groups[0].mig.mode: want fixed or dynamic, got "auto"`, ErrRange},
		{"mig and mps", head + gpu + "    mig: {mode: dynamic}\n    mps: {max_clients: 4}\n", "c.yaml:9: node_groups[0].mps: mig and mps are exclusive", ErrRange},
		{"mps too many clients", head + gpu + "    mps: {max_clients: 49}\n", "c.yaml:8: node_groups[0].mps.max_clients: must be <= 48, got 49", ErrRange},
		{"unknown node model", head + "    model: dgx-z\n", `c.yaml:7: node_groups[0].model: unknown node model "dgx-z" (want dgx-a100`, ErrUnknownName},
		{"fabric bad kind", head + "fabric: {kind: torus}\n", `c.yaml:7: fabric.kind: want fat-tree, superpod or tree, got "torus"`, ErrRange},
		{"fabric key of another kind", head + "fabric: {kind: superpod, leaf_size: 4}\n", "c.yaml:7: fabric.leaf_size: not a key of a superpod fabric", ErrUnknownField},
		{"fabric bad ratio", head + "fabric: {kind: fat-tree, leaf_size: 1, oversubscription: \"1:2\"}\n", "c.yaml:7: fabric.oversubscription: want a ratio >= 1", ErrRange},
		{"tree unknown node", head + "fabric:\n  kind: tree\n  switches:\n    - {name: s1, nodes: \"n[1-3]\"}\n",
			`c.yaml:10: fabric.switches: switch "s1": unknown node "n3"`, ErrRange},
		{"tree two parents", head + "fabric:\n  kind: tree\n  switches:\n    - {name: l1, nodes: \"n[1-2]\"}\n    - {name: s1, switches: l1}\n    - {name: s2, switches: l1}\n",
			`c.yaml:12: fabric.switches: switch "s2": switch "l1" is already under switch "s1"`, ErrRange},
		{"gpu model clash", "version: 1\nname: c\ngpu_models:\n  - {name: h100-sxm-80gb, type: h100}\nnode_groups:\n  - {name: n1, cpus: 1, memory: 1G}\n",
			`c.yaml:4: gpu_models[0].name: GPU model "h100-sxm-80gb" is already defined`, ErrDuplicate},
		{"power pue", head + "power: {pue: 0.9}\n", "c.yaml:7: power.pue: must be between 1 and 10, got 0.9", ErrRange},
		{"runtime unknown class", head + "runtime: {default_class: x}\n", `c.yaml:7: runtime.default_class: unknown job class "x"`, ErrUnknownName},
		{"slurm unknown partition", head + "slurm: {partitions: {nope: {MaxNodes: \"1\"}}}\n", `c.yaml:7: slurm.partitions: unknown partition "nope"`, ErrUnknownName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCluster([]byte(tt.yaml), "c.yaml")
			if err == nil {
				t.Fatalf("no error; want %s", tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.want)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error does not wrap %v", tt.kind)
			}
		})
	}
}
