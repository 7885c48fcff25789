// Package nvml reads the local NVIDIA GPUs through NVML
// (github.com/NVIDIA/go-nvml) for `schedsim probe`: static readings
// (name, UUID, memory, PCI bus id, SMs, clocks, power limits, MIG mode,
// instances and profiles with placements, NVLink links, compute
// capability, driver versions), time series of live readings, and job
// profiles measured while a command runs.
//
// The rest of schedsim, and every test, sees NVML only through Source, an
// interface of this package; Open returns the real one. It needs cgo and
// Linux: go-nvml opens libnvidia-ml.so.1 with dlopen at run time, so a cgo
// build links and runs without the library and Open then returns
// ErrLibraryNotFound. A CGO_ENABLED=0 build compiles without go-nvml and
// Open returns ErrNoCgo. After a failed NVML Init the adapter touches the
// library no more: any later call would end the process with a symbol
// lookup error (../shared/reference/slurm-gpu-facts.md §7.3).
//
// Everything here is read-only: no call changes a GPU's state.
//
// Sampling takes its clock and its Source as arguments (Clock, Sampler),
// so tests run on a fake clock and a fake Source (package nvmltest) with
// no sleeps.
package nvml
