package hwmodels

import (
	"slices"
	"strings"
)

// Node interconnects of NodeModel.Interconnect.
const (
	// InterconnectNVSwitch: SXM GPUs all-to-all through NVSwitch chips at
	// the full per-GPU NVLink bandwidth (one NVLink domain per node).
	InterconnectNVSwitch = "nvswitch"
	// InterconnectBridge: PCIe GPUs with NVLink bridges between pairs (or
	// groups of 4), PCIe between the rest.
	InterconnectBridge = "nvlink-bridge"
	// InterconnectPCIe: GPUs talk over PCIe only.
	InterconnectPCIe = "pcie"
)

// NodeModel is a server model: GPUs, their interconnect, CPUs, memory,
// the compute-fabric HCAs and power. A node group names one with
// node_groups[].model to take its values as defaults.
type NodeModel struct {
	// Name is the catalog name, "dgx-h100".
	Name string
	// GPUModel (a GPU catalog name) and GPUs per node.
	GPUModel string
	GPUs     int32
	// Interconnect is InterconnectNVSwitch, InterconnectBridge or
	// InterconnectPCIe; NVSwitches the NVSwitch chips (0 without).
	Interconnect string
	NVSwitches   int32
	// CPUs is the Slurm CPU count (cores; these servers ship with SMT, and
	// sites differ in whether Slurm counts threads); MemMB the memory.
	CPUs  int32
	MemMB int64
	// HCAs is the number of compute-fabric adapters (one per GPU, a
	// "rail", on DGX) and HCAGbps each one's port speed.
	HCAs    int32
	HCAGbps int32
	// MaxPowerW is the system's maximum power (datasheet); BasePowerW the
	// non-GPU draw the energy model charges whenever the node is up:
	// MaxPowerW − GPUs × TDP by default, an upper bound (CPUs, memory,
	// NICs, NVSwitches, fans at full load); measurements should replace it.
	MaxPowerW  int32
	BasePowerW int32
	// Source says where the figures come from.
	Source string
}

const (
	srcDGXA100 = "DGX A100 User Guide DU-09821-001 / datasheet as reported by secondary pages " +
		"(pcnews.ru on NVIDIA's DGX A100 documentation: 2 × AMD EPYC 7742 64-core, 6,500 W max; " +
		"reference §6.4–6.5: 8 × A100 SXM4, 6 NVSwitch gen2, 8 × HDR 200 Gb/s compute HCAs); memory 1 TB (2 TB option)"
	srcDGXH100 = "DGX H100/H200 User Guide as reported by secondary pages (unanswered.io, supercluster.blog: " +
		"10.2 kW max input; DGX H200 datasheet quoted in adelineclarissa/MMLU-Bench: 2 × Xeon Platinum 8480C, " +
		"112 cores, 2 TB in 32 DIMMs); reference §6.4–6.5: 4 NVSwitch gen3, 8 × ConnectX-7 400 Gb/s NDR compute ports"
	srcPCIe = "generic template, not a vendor datasheet: 8 PCIe GPUs with NVLink bridges in pairs, 2 × 32-core CPUs, " +
		"1 TiB, 4 × NDR 400 Gb/s; base power an assumption (1,500 W); adjust to your servers"
)

func nodeModel(m NodeModel) NodeModel {
	if m.BasePowerW == 0 && m.MaxPowerW > 0 {
		if g, ok := LookupGPU(m.GPUModel); ok {
			m.BasePowerW = m.MaxPowerW - m.GPUs*g.TDPW
		}
	}
	return m
}

// nodeCatalog is sorted by Name.
var nodeCatalog = []NodeModel{
	nodeModel(NodeModel{Name: "dgx-a100", GPUModel: "a100-sxm-80gb", GPUs: 8, Interconnect: InterconnectNVSwitch, NVSwitches: 6,
		CPUs: 128, MemMB: 1 << 20, HCAs: 8, HCAGbps: 200, MaxPowerW: 6500, Source: srcDGXA100}),
	nodeModel(NodeModel{Name: "dgx-h100", GPUModel: "h100-sxm-80gb", GPUs: 8, Interconnect: InterconnectNVSwitch, NVSwitches: 4,
		CPUs: 112, MemMB: 2 << 20, HCAs: 8, HCAGbps: 400, MaxPowerW: 10200, Source: srcDGXH100}),
	nodeModel(NodeModel{Name: "dgx-h200", GPUModel: "h200-141gb", GPUs: 8, Interconnect: InterconnectNVSwitch, NVSwitches: 4,
		CPUs: 112, MemMB: 2 << 20, HCAs: 8, HCAGbps: 400, MaxPowerW: 10200, Source: srcDGXH100}),
	// HGX boards in OEM servers: the DGX figures, as a starting point.
	nodeModel(NodeModel{Name: "hgx-a100", GPUModel: "a100-sxm-80gb", GPUs: 8, Interconnect: InterconnectNVSwitch, NVSwitches: 6,
		CPUs: 128, MemMB: 1 << 20, HCAs: 8, HCAGbps: 200, MaxPowerW: 6500, Source: "as dgx-a100: " + srcDGXA100}),
	nodeModel(NodeModel{Name: "hgx-h100", GPUModel: "h100-sxm-80gb", GPUs: 8, Interconnect: InterconnectNVSwitch, NVSwitches: 4,
		CPUs: 112, MemMB: 2 << 20, HCAs: 8, HCAGbps: 400, MaxPowerW: 10200, Source: "as dgx-h100: " + srcDGXH100}),
	nodeModel(NodeModel{Name: "hgx-h200", GPUModel: "h200-141gb", GPUs: 8, Interconnect: InterconnectNVSwitch, NVSwitches: 4,
		CPUs: 112, MemMB: 2 << 20, HCAs: 8, HCAGbps: 400, MaxPowerW: 10200, Source: "as dgx-h200: " + srcDGXH100}),
	{Name: "pcie-a100-8gpu", GPUModel: "a100-pcie-80gb", GPUs: 8, Interconnect: InterconnectBridge,
		CPUs: 64, MemMB: 1 << 20, HCAs: 4, HCAGbps: 200, BasePowerW: 1500, Source: srcPCIe},
	{Name: "pcie-h100-8gpu", GPUModel: "h100-pcie-80gb", GPUs: 8, Interconnect: InterconnectBridge,
		CPUs: 64, MemMB: 1 << 20, HCAs: 4, HCAGbps: 400, BasePowerW: 1500, Source: srcPCIe},
	{Name: "pcie-h200nvl-8gpu", GPUModel: "h200-nvl-141gb", GPUs: 8, Interconnect: InterconnectBridge,
		CPUs: 64, MemMB: 1 << 20, HCAs: 4, HCAGbps: 400, BasePowerW: 1500, Source: srcPCIe},
}

// NodeCatalog returns the built-in node models sorted by name, a copy.
func NodeCatalog() []NodeModel { return slices.Clone(nodeCatalog) }

// LookupNodeModel returns the built-in node model called name.
func LookupNodeModel(name string) (NodeModel, bool) {
	i, ok := slices.BinarySearchFunc(nodeCatalog, name, func(m NodeModel, n string) int {
		return strings.Compare(m.Name, n)
	})
	if !ok {
		return NodeModel{}, false
	}
	return nodeCatalog[i], true
}
