package hwmodels

import (
	"slices"
	"strings"
)

// CustomGPUModel is the model name a cluster spec gives for a GPU that is not
// in the catalog; such a GPU has no datasheet figures, and its GRES type is
// whatever the spec says (none, that is untyped "gpu:N", if it says nothing).
const CustomGPUModel = "custom"

// GPUSpec is one entry of the built-in GPU catalog. For now it holds only the
// names; datasheet figures (memory, bandwidth, TFLOPS, power, MIG profiles)
// are added as fields later, so construct it with field names.
type GPUSpec struct {
	// Name is the catalog name a cluster spec uses: lower case family,
	// form factor and memory size, "h100-sxm-80gb".
	Name string
	// DefaultType is the Slurm GRES type jobs request the GPU by when the
	// spec names none ("h100" for --gres=gpu:h100:8), lower case.
	DefaultType string
}

// gpuCatalog is sorted by Name.
var gpuCatalog = []GPUSpec{
	{Name: "a100-pcie-40gb", DefaultType: "a100"},
	{Name: "a100-pcie-80gb", DefaultType: "a100"},
	{Name: "a100-sxm-40gb", DefaultType: "a100"},
	{Name: "a100-sxm-80gb", DefaultType: "a100"},
	{Name: "a30-24gb", DefaultType: "a30"},
	{Name: "a40-48gb", DefaultType: "a40"},
	{Name: "b200-180gb", DefaultType: "b200"},
	{Name: "h100-nvl-94gb", DefaultType: "h100"},
	{Name: "h100-pcie-80gb", DefaultType: "h100"},
	{Name: "h100-sxm-80gb", DefaultType: "h100"},
	{Name: "h200-141gb", DefaultType: "h200"},
	{Name: "h200-nvl-141gb", DefaultType: "h200"},
	{Name: "l4-24gb", DefaultType: "l4"},
	{Name: "l40s-48gb", DefaultType: "l40s"},
	{Name: "t4-16gb", DefaultType: "t4"},
	{Name: "v100-pcie-16gb", DefaultType: "v100"},
	{Name: "v100-pcie-32gb", DefaultType: "v100"},
	{Name: "v100-sxm-16gb", DefaultType: "v100"},
	{Name: "v100-sxm-32gb", DefaultType: "v100"},
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
