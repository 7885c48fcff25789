// Package nvmltest holds test doubles for package nvml: three node
// fixtures with realistic readings (an 8 × H100 SXM node, a 4 × A100 node
// in MIG mode, a single H200), a fake nvml.Source serving them, a fake
// clock, and (with cgo) go-nvml mocks built from the same fixtures so the
// real NVML adapter can be tested without a GPU.
//
// Where each number comes from is said next to it. "Observed" figures
// were read off real GPUs (../shared/reference/h200-observed.md);
// "reference" ones come from ../shared/reference/slurm-gpu-facts.md §6
// (MIG tables observed by third parties, datasheets); "assumed" ones are
// plausible values nobody measured for this project (idle power, bus ids,
// UUIDs, temperatures).
package nvmltest
