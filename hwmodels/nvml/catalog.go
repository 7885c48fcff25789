package nvml

import (
	"fmt"
	"math"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
)

// families lists the GPU families MatchGPU knows, in match order (l40s
// before l4, gh200 ruled out before h200).
var families = []string{"a100", "h100", "h200", "b200", "v100", "l40s", "l4", "a30", "a40", "t4"}

// sxmFamilies are the families whose NVML name says nothing of the form
// factor for the SXM part ("NVIDIA H100 80GB HBM3", "NVIDIA H200").
var sxmFamilies = map[string]bool{"a100": true, "h100": true, "h200": true, "v100": true, "b200": true}

// MatchGPU returns the catalog GPU model an NVML device name and total
// memory stand for: the family and form factor from the name ("PCIe",
// "NVL", else SXM for the families sold in both), then the catalog entry
// whose memory is nearest memMiB / 1024 (marketed "GB" are GiB rounded,
// less what the driver reserves: an H200 shows 143,771 MiB = 140.4 GiB for
// 141 GB). ok is false for a GPU outside the catalog.
func MatchGPU(name string, memMiB int64) (model string, ok bool) {
	n := strings.ToLower(name)
	if strings.Contains(n, "gh200") || strings.Contains(n, "gb200") {
		return "", false // Grace superchips: not in the catalog
	}
	family := ""
	for _, f := range families {
		if strings.Contains(n, f) {
			family = f
			break
		}
	}
	if family == "" {
		return "", false
	}
	form := ""
	switch {
	case strings.Contains(n, "pcie"):
		form = "pcie"
	case strings.Contains(n, "nvl"):
		form = "nvl"
	case sxmFamilies[family]:
		form = "sxm"
	}
	gib := float64(memMiB) / 1024
	best, bestD := "", math.Inf(1)
	for _, g := range hwmodels.GPUCatalog() {
		if g.DefaultType != family || formOf(&g) != form {
			continue
		}
		d := math.Abs(float64(memGB(&g)) - gib)
		if d < bestD {
			best, bestD = g.Name, d
		}
	}
	return best, best != ""
}

// memGB is a catalog entry's memory, from its name ("-32gb") when the
// entry has no figures.
func memGB(g *hwmodels.GPUSpec) int32 {
	if g.MemGB > 0 {
		return g.MemGB
	}
	i := strings.LastIndexByte(g.Name, '-')
	v := int32(0)
	for _, c := range strings.TrimSuffix(g.Name[i+1:], "gb") {
		if c < '0' || c > '9' {
			return 0
		}
		v = v*10 + c - '0'
	}
	return v
}

// formOf is a catalog entry's form factor, from its name when the entry
// has no figures ("v100-sxm-32gb").
func formOf(g *hwmodels.GPUSpec) string {
	if g.FormFactor != "" {
		return g.FormFactor
	}
	for _, f := range []string{"pcie", "sxm", "nvl"} {
		if strings.Contains(g.Name, "-"+f+"-") {
			return f
		}
	}
	return ""
}

// profileIDs maps NVML GPU-instance profile enums (nvml.GPU_INSTANCE_
// PROFILE_*) to the nvidia-smi profile IDs of the catalog's MIG tables
// (1 slice → 19, 1 slice +me → 20, 1 slice double memory → 15, 2 → 14,
// 3 → 9, 4 → 5, 7 → 0; nvml.h and ../shared/reference/slurm-gpu-facts.md
// §6.1). Keyed by enum rather than by the Id NVML returns because go-nvml's
// fake servers return the enum as Id.
var profileIDs = map[int]int32{0: 19, 7: 20, 9: 15, 1: 14, 2: 9, 3: 5, 4: 0}

// nameProfiles names m's profiles and instances after the catalog MIG
// geometry of the GPU (by MatchGPU), else "<slices>g.<GiB>gb".
func nameProfiles(m *MIG, gpuName string, memMiB int64) {
	var geo *hwmodels.MIGGeometry
	if model, ok := MatchGPU(gpuName, memMiB); ok {
		geo, _ = hwmodels.LookupMIG(model)
	}
	names := map[int]string{}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		p.Name = ""
		if id, ok := profileIDs[p.Enum]; ok && geo != nil {
			for _, q := range geo.Profiles {
				if q.ID == id {
					p.Name = q.Name
				}
			}
		}
		if p.Name == "" {
			p.Name = fmt.Sprintf("%dg.%dgb", p.Slices, (p.MemoryMiB+512)/1024)
			if p.Enum == 7 {
				p.Name += "+me"
			}
		}
		names[p.Enum] = p.Name
	}
	for i := range m.Instances {
		m.Instances[i].Profile = names[m.Instances[i].Enum]
	}
}
