package hwmodels

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func seqNodes(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

func switchNames(f *Fabric, ss []int32) []string {
	var out []string
	for _, s := range ss {
		out = append(out, f.Switches[s].Name)
	}
	return out
}

func TestFatTreeTwoLevels(t *testing.T) {
	// 64 nodes, 32 per leaf, 2:1 leaves: leaf01, leaf02, spine.
	f, err := BuildFatTree(FatTreeParams{LeafSize: 32, LeafOversubscription: 2, LinkGbps: 400}, seqNodes(64), 64)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"leaf01", "leaf02", "spine"}, switchNames(f, seqNodes(3))); d != "" {
		t.Fatal(d)
	}
	if f.LeafOf(31) != 0 || f.LeafOf(32) != 1 || f.LeafOf(64) != -1 {
		t.Errorf("LeafOf: %d %d %d", f.LeafOf(31), f.LeafOf(32), f.LeafOf(64))
	}
	if f.Switches[2].Level != 1 || f.Switches[0].Level != 0 {
		t.Errorf("levels %d %d", f.Switches[0].Level, f.Switches[2].Level)
	}
	if d := cmp.Diff([]string{"leaf01"}, switchNames(f, f.Path(0, 5))); d != "" {
		t.Errorf("same-leaf path: %s", d)
	}
	if d := cmp.Diff([]string{"leaf01", "spine", "leaf02"}, switchNames(f, f.Path(3, 40))); d != "" {
		t.Errorf("cross-leaf path: %s", d)
	}
	under := seqNodes(32)
	spread := append(seqNodes(16), 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47)
	if f.LowestCommonSwitch(under) != 0 || f.LowestCommonSwitch(spread) != 2 {
		t.Errorf("LCS %d %d", f.LowestCommonSwitch(under), f.LowestCommonSwitch(spread))
	}
	if f.Leaves(under) != 1 || f.Leaves(spread) != 2 {
		t.Errorf("Leaves %d %d", f.Leaves(under), f.Leaves(spread))
	}
	if f.PathOversubscription(under) != 1 || f.PathOversubscription(spread) != 2 {
		t.Errorf("oversubscription %v %v", f.PathOversubscription(under), f.PathOversubscription(spread))
	}
}

func TestFatTreeThreeLevels(t *testing.T) {
	// 128 nodes, 16 per leaf (8 leaves), 4 leaves per pod (2 pods), leaves
	// 1:1, pods 3:1.
	f, err := BuildFatTree(FatTreeParams{LeafSize: 16, LeavesPerPod: 4, LeafOversubscription: 1, PodOversubscription: 3}, seqNodes(128), 128)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Switches) != 8+2+1 || f.Switches[10].Name != "core" || f.Switches[10].Level != 2 {
		t.Fatalf("switches: %v", switchNames(f, seqNodes(len(f.Switches))))
	}
	if d := cmp.Diff([]string{"leaf01", "pod01", "core", "pod02", "leaf05"}, switchNames(f, f.Path(0, 64))); d != "" {
		t.Errorf("cross-pod path: %s", d)
	}
	if d := cmp.Diff([]string{"leaf01", "pod01", "leaf02"}, switchNames(f, f.Path(0, 16))); d != "" {
		t.Errorf("in-pod path: %s", d)
	}
	if o := f.PathOversubscription([]int32{0, 16}); o != 1 {
		t.Errorf("in-pod oversubscription %v", o)
	}
	if o := f.PathOversubscription([]int32{0, 64}); o != 3 {
		t.Errorf("cross-pod oversubscription %v", o)
	}
}

func TestSuperPOD(t *testing.T) {
	for _, tt := range []struct {
		nodes                 int
		sus, groups, topLevel int
		top                   string
	}{
		{64, 2, 0, 1, "spine"},   // 2 SU: 2-tier
		{128, 4, 0, 1, "spine"},  // 4 SU
		{256, 8, 0, 1, "spine"},  // 8 SU
		{512, 16, 2, 2, "core"},  // 16 SU: 3-tier
		{1024, 32, 4, 2, "core"}, // 32 SU
	} {
		t.Run(fmt.Sprint(tt.nodes), func(t *testing.T) {
			f, err := BuildSuperPOD(0, 8, 400, seqNodes(tt.nodes), tt.nodes)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.sus + tt.groups + 1; len(f.Switches) != want {
				t.Fatalf("%d switches, want %d", len(f.Switches), want)
			}
			top := f.Switches[len(f.Switches)-1]
			if top.Name != tt.top || int(top.Level) != tt.topLevel || f.Rails != 8 || f.Kind != FabricSuperPOD {
				t.Errorf("top %+v rails %d", top, f.Rails)
			}
			if f.Switches[0].Name != "su01" || len(f.Switches[0].Nodes) != SuperPODSUSize {
				t.Errorf("first SU %+v", f.Switches[0])
			}
			if o := f.PathOversubscription(seqNodes(tt.nodes)); o != 1 {
				t.Errorf("SuperPOD is non-blocking, got %v", o)
			}
		})
	}
}

func TestBuildTree(t *testing.T) {
	names := map[string]int32{}
	for i := range 64 {
		names[fmt.Sprintf("gpu%03d", i+1)] = int32(i)
	}
	idx := func(s string) (int32, bool) { i, ok := names[s]; return i, ok }
	// The reference's topology.conf example (slurm-gpu-facts.md §5.4).
	f, err := BuildTree([]TreeSwitch{
		{Name: "leaf0", Nodes: "gpu[001-032]", Oversubscription: 2},
		{Name: "leaf1", Nodes: "gpu[033-064]", Oversubscription: 2},
		{Name: "spine0", Switches: "leaf[0-1]"},
	}, idx, 64)
	if err != nil {
		t.Fatal(err)
	}
	if f.LeafOf(0) != 0 || f.LeafOf(63) != 1 || f.Switches[2].Level != 1 || f.Switches[2].Oversubscription != 1 {
		t.Errorf("tree: %+v", f.Switches)
	}
	if d := cmp.Diff([]string{"leaf0", "spine0", "leaf1"}, switchNames(f, f.Path(0, 63))); d != "" {
		t.Error(d)
	}
	for _, bad := range []struct {
		sw   []TreeSwitch
		want string
	}{
		{[]TreeSwitch{{Name: "a", Switches: "b"}, {Name: "b", Switches: "a"}}, "parents form a cycle"},
		{[]TreeSwitch{{Name: "a", Nodes: "gpu001"}, {Name: "a", Nodes: "gpu002"}}, `switch "a" defined twice`},
		{[]TreeSwitch{{Name: "a", Nodes: "gpu001"}, {Name: "b", Nodes: "gpu001"}}, `node "gpu001" is already under switch "a"`},
		{[]TreeSwitch{{Name: "a"}}, "has neither nodes nor switches"},
		{[]TreeSwitch{{Name: "a", Switches: "zz"}}, `unknown switch "zz"`},
		{[]TreeSwitch{{Name: "a", Nodes: "gpu[001-003"}}, "has no closing"},
	} {
		if _, err := BuildTree(bad.sw, idx, 64); err == nil || !contains(err.Error(), bad.want) {
			t.Errorf("BuildTree(%+v) = %v, want %q", bad.sw, err, bad.want)
		}
	}
	// Unattached nodes have no leaf and no common switch with others.
	g, _ := BuildTree([]TreeSwitch{{Name: "l", Nodes: "gpu001"}}, idx, 64)
	if g.LeafOf(1) != -1 || g.LowestCommonSwitch([]int32{0, 1}) != -1 || g.Path(0, 1) != nil || g.Leaves([]int32{0, 1, 2}) != 3 {
		t.Error("unattached nodes")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestRuntimeModel checks the documented formulas: datasheet ratios by
// class basis, explicit ratios, scaling, and the communication stretch of
// a 64-node job kept under one leaf or spread over two of a 2:1 tree.
func TestRuntimeModel(t *testing.T) {
	m := DefaultRuntimeModel()
	a, _ := LookupGPU("a100-sxm-80gb")
	h, _ := LookupGPU("h100-sxm-80gb")
	h2, _ := LookupGPU("h200-141gb")
	l4, _ := LookupGPU("l4-24gb")
	for _, tt := range []struct {
		from, to *GPUSpec
		class    string
		want     float64
	}{
		{&a, &h, "", 989.0 / 312},             // training: BF16 TFLOPS
		{&a, &h, "training", 989.0 / 312},     // same
		{&a, &h, "inference", 3350.0 / 2039},  // HBM bandwidth
		{&h, &h2, "training", 1},              // same die
		{&h, &h2, "inference", 4800.0 / 3350}, // more bandwidth
		{&h, &a, "hpc", 2039.0 / 3350},        // slower
		{&h, &h, "inference", 1},              // same model
	} {
		got, err := m.Speedup(tt.from, tt.to, tt.class)
		if err != nil || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Speedup(%s→%s, %q) = %v, %v; want %v", tt.from.Name, tt.to.Name, tt.class, got, err, tt.want)
		}
	}
	if _, err := m.Speedup(&a, &l4, ""); err == nil {
		t.Error("no figures for l4: want an error")
	}
	if _, err := m.Speedup(&a, &h, "nope"); err == nil {
		t.Error("unknown class: want an error")
	}
	m.Ratios = []SpeedRatio{{From: "a100-sxm-80gb", To: "l4-24gb", Ratio: 0.5}}
	if s, err := m.Speedup(&l4, &a, "inference"); err != nil || s != 2 {
		t.Errorf("explicit inverse ratio = %v, %v", s, err)
	}

	// One hour on A100 is ceil(3600 × 312 / 989) = 1136 s on H100.
	if got := ScaleRuntime(3600, 989.0/312); got != 1136 {
		t.Errorf("ScaleRuntime = %d", got)
	}
	if ScaleRuntime(1, 1000) != 1 || ScaleRuntime(0, 2) != 0 {
		t.Error("ScaleRuntime keeps positive runtimes >= 1 s and 0 at 0")
	}

	// A 64-node training job on a 2:1 tree of 64-node leaves: under one
	// leaf nothing changes; spread over two leaves it runs 20 % longer.
	f, _ := BuildFatTree(FatTreeParams{LeafSize: 64, LeafOversubscription: 2}, seqNodes(128), 128)
	kept := seqNodes(64)
	spread := append(seqNodes(32), seqNodes(96)[64:]...)
	cl, _ := m.Class("")
	keptT := StretchRuntime(10000, CommStretch(cl.CommFraction, f.PathOversubscription(kept)))
	spreadT := StretchRuntime(10000, CommStretch(cl.CommFraction, f.PathOversubscription(spread)))
	if keptT != 10000 || spreadT != 12000 {
		t.Errorf("kept %d, spread %d; want 10000, 12000", keptT, spreadT)
	}
	if CommStretch(0.5, 0.5) != 1 {
		t.Error("oversubscription below 1 is taken as 1")
	}
}

func TestEnergyModel(t *testing.T) {
	h, _ := LookupGPU("h100-sxm-80gb")
	dgx, _ := LookupNodeModel("dgx-h100")
	p := NodePower{BaseW: float64(dgx.BasePowerW), GPUIdleW: float64(h.IdleW), GPUBusyW: float64(h.BusyW), GPUs: 8}
	// 4600 W base + 8 × 700 W = 10,200 W, the DGX H100 maximum.
	if p.PeakW() != 10200 || p.Watts(0) != 4600+8*70 || p.Watts(3) != 4600+3*700+5*70 {
		t.Errorf("watts: peak %v idle %v", p.PeakW(), p.Watts(0))
	}
	// A full node for one hour: 10.2 kWh; PUE 1.5 and 0.2/kWh: 3.06.
	m := PowerModel{PUE: 1.5, PricePerKWh: 0.2}
	kwh := KWh(p.PeakW(), 3600)
	if math.Abs(kwh-10.2) > 1e-9 || math.Abs(m.Cost(kwh)-3.06) > 1e-9 {
		t.Errorf("kWh %v cost %v", kwh, m.Cost(kwh))
	}
	// A 2-GPU job for an hour: 2 × 700 W + 2/8 of 4600 W = 2550 W.
	if got := JobKWh(p, 2, 0, 3600); math.Abs(got-2.55) > 1e-9 {
		t.Errorf("JobKWh = %v", got)
	}
	// Idle for 2 h with SuspendTime 30 min, ResumeTimeout 10 min, 50 W
	// suspended: 40 min at idle power, 80 min at 50 W.
	m = PowerModel{SuspendTime: 1800, ResumeTimeout: 600, SuspendedW: 50}
	want := KWh(p.Watts(0), 2400) + KWh(50, 4800)
	if got := m.IdleKWh(p, 7200); math.Abs(got-want) > 1e-9 {
		t.Errorf("IdleKWh = %v, want %v", got, want)
	}
	if got := m.IdleKWh(p, 1000); got != KWh(p.Watts(0), 1000) {
		t.Errorf("short idle = %v", got)
	}
}
