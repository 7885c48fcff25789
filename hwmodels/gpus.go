package hwmodels

import (
	"slices"
	"strings"
)

// CustomGPUModel is the model name a cluster spec gives for a GPU that is not
// in the catalog; such a GPU has no datasheet figures, and its GRES type is
// whatever the spec says (none, that is untyped "gpu:N", if it says nothing).
const CustomGPUModel = "custom"

// IdleFraction is the documented default idle power of a GPU as a fraction
// of its maximum TDP: GPUSpec.IdleW is round(IdleFraction × TDPW) for every
// catalog entry with a TDP. It is an assumption, not a datasheet figure
// (NVIDIA publishes no idle power); measured values (schedsim probe, DCGM
// DCGM_FI_DEV_POWER_USAGE on an idle node) should replace it through
// gpu_models in the cluster spec.
const IdleFraction = 0.10

// NVLink topologies of GPUSpec.NVLinkTopo.
const (
	// NVLinkSwitch: SXM GPUs on a baseboard with NVSwitch chips, every GPU
	// reaching every other at the full per-GPU NVLink bandwidth (HGX/DGX).
	NVLinkSwitch = "nvswitch"
	// NVLinkBridge: PCIe cards joined pairwise (or 4-way on H200 NVL) by
	// NVLink bridges; other GPU pairs talk over PCIe.
	NVLinkBridge = "bridge"
)

// GPUSpec is one GPU model: its names and, for the models the simulator
// knows, datasheet figures. A zero figure means unknown (the catalog has no
// figures for that model); models without figures can be named in a cluster
// spec but give no speed ratio or power on their own.
//
// Dense tensor throughput is the datasheet's figure "with sparsity" halved,
// as the datasheets footnote. Memory is decimal GB as marketed.
type GPUSpec struct {
	// Name is the catalog name a cluster spec uses: lower case family,
	// form factor and memory size, "h100-sxm-80gb".
	Name string
	// DefaultType is the Slurm GRES type jobs request the GPU by when the
	// spec names none ("h100" for --gres=gpu:h100:8), lower case.
	DefaultType string
	// Arch is the architecture ("ampere", "hopper", "blackwell"); FormFactor
	// is "sxm", "pcie" or "nvl" (PCIe card with NVLink bridges).
	Arch       string
	FormFactor string
	// MemGB is the memory in GB; MemBWGBs the memory bandwidth in GB/s.
	MemGB    int32
	MemBWGBs int32
	// BF16TFLOPS is the dense BF16 (= FP16) tensor throughput in TFLOPS.
	BF16TFLOPS int32
	// SMs is the number of streaming multiprocessors.
	SMs int32
	// TDPW is the maximum thermal design power in watts; IdleW the idle
	// power default (IdleFraction × TDPW, an assumption); BusyW the power
	// drawn while a job runs, TDPW by default (a conservative upper bound:
	// real training jobs draw 60–100 % of TDP).
	TDPW  int32
	IdleW int32
	BusyW int32
	// NVLinkGen is the NVLink generation (0: none); NVLinkGBs the per-GPU
	// bidirectional NVLink bandwidth in GB/s; NVLinkTopo NVLinkSwitch or
	// NVLinkBridge ("" without NVLink).
	NVLinkGen  int32
	NVLinkGBs  int32
	NVLinkTopo string
	// MIG names the MIG geometry (LookupMIG) of the model, "" when it has
	// none or the catalog does not know its profile table.
	MIG string
	// Source says where the figures come from and which were checked.
	Source string
}

// HasFigures reports whether the catalog has datasheet figures for g.
func (g *GPUSpec) HasFigures() bool { return g.BF16TFLOPS > 0 && g.MemBWGBs > 0 }

// idle returns the IdleFraction default for a TDP.
func idle(tdp int32) int32 { return int32(float64(tdp)*IdleFraction + 0.5) }

// withPower fills IdleW and BusyW from TDPW.
func withPower(g GPUSpec) GPUSpec {
	g.IdleW, g.BusyW = idle(g.TDPW), g.TDPW
	return g
}

// Sources of the figures below. The search for NVIDIA's own PDFs found
// secondary copies only (noted per entry); each figure was compared with
// the reference table (../shared/reference/slurm-gpu-facts.md §6.4) and at
// least one copy of NVIDIA's published table.
const (
	srcA100 = "NVIDIA A100 datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf) as reproduced by " +
		"glennklockwood.com/garden/processors/A100 and thundercompute.com/blog/nvidia-a100-specs-full-guide: " +
		"312 TFLOPS BF16 dense (624 sparse), 1,555 GB/s (40GB), 2,039 GB/s (SXM 80GB), 1,935 GB/s (PCIe 80GB), " +
		"400 W SXM, 250 W PCIe 40GB, 300 W PCIe 80GB, 108 SMs, NVLink3 600 GB/s; verified against these copies"
	srcH100 = "NVIDIA H100 table as reproduced by archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html " +
		"(SXM: 132 SMs, 1,979 TFLOPS BF16 sparse = 989 dense, 3,350 GB/s, 700 W, NVLink 900 GB/s; " +
		"PCIe: 114 SMs, 1,513 sparse = 756 dense, 2,000 GB/s, 300–350 W, NVLink bridge 600 GB/s) and NVIDIA H100 PCIe " +
		"product brief PB-11133-001_v02 (350 W max TDP, > 2,000 GB/s; copy on manuals.plus); verified against these copies"
	srcH100NVL = "memory 94 GB, 3.9 TB/s, 350–400 W, NVLink bridge 600 GB/s from secondary pages " +
		"(aiminingco.com/gpu/h100-nvl/specs, grokipedia 900-21010-0120-030); BF16 835 TFLOPS dense is the reference's " +
		"recalled value, UNVERIFIED (no NVIDIA table found); MIG profile table (1g.12gb … 7g.94gb) not in the catalog"
	srcH200 = "141 GB HBM3e, 4.8 TB/s, 700 W, NVLink4 900 GB/s, 132 SMs from secondary copies of NVIDIA's H200 page " +
		"(aiwiki.ai/wiki/nvidia_h200, gentic.news/glossary/h200, saulelectric.com/nvidia-h200.html); BF16 989 dense " +
		"as H100 SXM (same GH100 die and clocks), consistent with 769–798 TFLOPS measured on a real H200 " +
		"(../shared/reference/h200-observed.md, about 80 % of datasheet); verified against copies, not the PDF"
	srcH200NVL = "141 GB, 4.8 TB/s, 600 W and NVLink bridge 900 GB/s per GPU (2- or 4-way) from secondary pages " +
		"(saulelectric.com/nvidia-h200.html, NetworkWorld report copied on gixtools.net); BF16 835 TFLOPS dense is the " +
		"reference's recalled value, UNVERIFIED"
	srcNone = "names only: no datasheet figures in this catalog"
)

// gpuCatalog is sorted by Name.
var gpuCatalog = []GPUSpec{
	withPower(GPUSpec{Name: "a100-pcie-40gb", DefaultType: "a100", Arch: "ampere", FormFactor: "pcie",
		MemGB: 40, MemBWGBs: 1555, BF16TFLOPS: 312, SMs: 108, TDPW: 250,
		NVLinkGen: 3, NVLinkGBs: 600, NVLinkTopo: NVLinkBridge, MIG: "a100-40gb", Source: srcA100}),
	withPower(GPUSpec{Name: "a100-pcie-80gb", DefaultType: "a100", Arch: "ampere", FormFactor: "pcie",
		MemGB: 80, MemBWGBs: 1935, BF16TFLOPS: 312, SMs: 108, TDPW: 300,
		NVLinkGen: 3, NVLinkGBs: 600, NVLinkTopo: NVLinkBridge, MIG: "a100-80gb", Source: srcA100}),
	withPower(GPUSpec{Name: "a100-sxm-40gb", DefaultType: "a100", Arch: "ampere", FormFactor: "sxm",
		MemGB: 40, MemBWGBs: 1555, BF16TFLOPS: 312, SMs: 108, TDPW: 400,
		NVLinkGen: 3, NVLinkGBs: 600, NVLinkTopo: NVLinkSwitch, MIG: "a100-40gb", Source: srcA100}),
	withPower(GPUSpec{Name: "a100-sxm-80gb", DefaultType: "a100", Arch: "ampere", FormFactor: "sxm",
		MemGB: 80, MemBWGBs: 2039, BF16TFLOPS: 312, SMs: 108, TDPW: 400,
		NVLinkGen: 3, NVLinkGBs: 600, NVLinkTopo: NVLinkSwitch, MIG: "a100-80gb", Source: srcA100}),
	{Name: "a30-24gb", DefaultType: "a30", Source: srcNone},
	{Name: "a40-48gb", DefaultType: "a40", Source: srcNone},
	// B200: the reference lists only its MIG profile names (1g.23gb …
	// 7g.180gb), not their starts, and no datasheet figures.
	{Name: "b200-180gb", DefaultType: "b200", Arch: "blackwell", Source: srcNone},
	withPower(GPUSpec{Name: "h100-nvl-94gb", DefaultType: "h100", Arch: "hopper", FormFactor: "nvl",
		MemGB: 94, MemBWGBs: 3900, BF16TFLOPS: 835, SMs: 132, TDPW: 400,
		NVLinkGen: 4, NVLinkGBs: 600, NVLinkTopo: NVLinkBridge, Source: srcH100NVL}),
	withPower(GPUSpec{Name: "h100-pcie-80gb", DefaultType: "h100", Arch: "hopper", FormFactor: "pcie",
		MemGB: 80, MemBWGBs: 2000, BF16TFLOPS: 756, SMs: 114, TDPW: 350,
		NVLinkGen: 4, NVLinkGBs: 600, NVLinkTopo: NVLinkBridge, MIG: "h100-80gb", Source: srcH100}),
	withPower(GPUSpec{Name: "h100-sxm-80gb", DefaultType: "h100", Arch: "hopper", FormFactor: "sxm",
		MemGB: 80, MemBWGBs: 3350, BF16TFLOPS: 989, SMs: 132, TDPW: 700,
		NVLinkGen: 4, NVLinkGBs: 900, NVLinkTopo: NVLinkSwitch, MIG: "h100-80gb", Source: srcH100}),
	withPower(GPUSpec{Name: "h200-141gb", DefaultType: "h200", Arch: "hopper", FormFactor: "sxm",
		MemGB: 141, MemBWGBs: 4800, BF16TFLOPS: 989, SMs: 132, TDPW: 700,
		NVLinkGen: 4, NVLinkGBs: 900, NVLinkTopo: NVLinkSwitch, MIG: "h200-141gb", Source: srcH200}),
	withPower(GPUSpec{Name: "h200-nvl-141gb", DefaultType: "h200", Arch: "hopper", FormFactor: "nvl",
		MemGB: 141, MemBWGBs: 4800, BF16TFLOPS: 835, SMs: 132, TDPW: 600,
		NVLinkGen: 4, NVLinkGBs: 900, NVLinkTopo: NVLinkBridge, MIG: "h200-141gb", Source: srcH200NVL}),
	{Name: "l4-24gb", DefaultType: "l4", Source: srcNone},
	{Name: "l40s-48gb", DefaultType: "l40s", Source: srcNone},
	{Name: "t4-16gb", DefaultType: "t4", Source: srcNone},
	{Name: "v100-pcie-16gb", DefaultType: "v100", Source: srcNone},
	{Name: "v100-pcie-32gb", DefaultType: "v100", Source: srcNone},
	{Name: "v100-sxm-16gb", DefaultType: "v100", Source: srcNone},
	{Name: "v100-sxm-32gb", DefaultType: "v100", Source: srcNone},
}

// GPUCatalog returns the built-in GPU models sorted by name. The slice is a
// copy; the caller may modify it.
func GPUCatalog() []GPUSpec {
	return slices.Clone(gpuCatalog)
}

// LookupGPU returns the catalog entry called name (exact, lower case) and
// whether there is one. CustomGPUModel is not a catalog entry.
func LookupGPU(name string) (GPUSpec, bool) {
	i, ok := slices.BinarySearchFunc(gpuCatalog, name, func(g GPUSpec, n string) int {
		return strings.Compare(g.Name, n)
	})
	if !ok {
		return GPUSpec{}, false
	}
	return gpuCatalog[i], true
}

// gpuModelChoices lists the valid model names for messages.
func gpuModelChoices() string {
	names := make([]string, 0, len(gpuCatalog)+1)
	for _, g := range gpuCatalog {
		names = append(names, g.Name)
	}
	names = append(names, CustomGPUModel)
	return strings.Join(names, ", ")
}
