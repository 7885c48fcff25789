package nvml

import (
	"errors"
	"time"
)

// ErrLibraryNotFound is returned by Open when libnvidia-ml.so.1 cannot be
// loaded: no NVIDIA driver on this machine.
var ErrLibraryNotFound = errors.New("libnvidia-ml.so.1 not found")

// ErrNoCgo is returned by Open in a binary built with CGO_ENABLED=0 (or
// for another OS than Linux): go-nvml needs cgo.
var ErrNoCgo = errors.New("built without NVML support (CGO_ENABLED=0 or not Linux)")

// Source is the part of NVML schedsim reads. Implementations: Open (the
// real library through go-nvml) and nvmltest.Fake. Methods are called from
// one goroutine at a time; none changes GPU state.
//
// A reading NVML does not give for a device (ERROR_NOT_SUPPORTED, no
// permission, a function the driver lacks) is not an error: the field is
// left zero and named in GPU.Missing or Sample.Missing. Errors are for
// what makes the rest meaningless (the device count, a device handle).
type Source interface {
	// System returns the driver and CUDA driver versions.
	System() (System, error)
	// DeviceCount returns the number of GPUs.
	DeviceCount() (int, error)
	// Device returns the static readings of GPU i, 0 ≤ i < DeviceCount.
	Device(i int) (GPU, error)
	// Sample returns the live readings of GPU i.
	Sample(i int) (Sample, error)
	// Close releases the library; the Source must not be used afterwards.
	// It is idempotent.
	Close() error
}

// System is what NVML says about the machine rather than one GPU.
type System struct {
	// Driver is the driver version ("580.159.03"); CUDADriver the CUDA
	// version the driver supports, "major.minor" ("13.0").
	Driver     string `yaml:"driver_version" json:"driver_version"`
	CUDADriver string `yaml:"cuda_driver_version" json:"cuda_driver_version"`
	// Missing names the readings NVML did not give, with the reason.
	Missing []string `yaml:"missing,omitempty" json:"missing,omitempty"`
}

// GPU is the static readings of one GPU. Zero means not read (see Missing).
type GPU struct {
	Index int    `yaml:"index" json:"index"`
	Name  string `yaml:"name" json:"name"` // "NVIDIA H100 80GB HBM3"
	UUID  string `yaml:"uuid" json:"uuid"`
	// PCIBusID is NVML's bus id, "00000000:18:00.0".
	PCIBusID string `yaml:"pci_bus_id" json:"pci_bus_id"`
	// MemoryMiB is the total memory (NVML bytes / 2^20), as nvidia-smi
	// prints it; MemoryUsedMiB what was in use when read.
	MemoryMiB     int64 `yaml:"memory_mib" json:"memory_mib"`
	MemoryUsedMiB int64 `yaml:"memory_used_mib" json:"memory_used_mib"`
	// SMs is the multiprocessor count (nvmlDeviceGetAttributes); 0 where
	// NVML does not give it for a whole GPU.
	SMs int `yaml:"sms" json:"sms"`
	// ComputeCapability is "major.minor" ("9.0").
	ComputeCapability string `yaml:"compute_capability" json:"compute_capability"`
	// Clocks in MHz: the maximum (boost) and current SM and memory clocks.
	MaxSMClockMHz  int `yaml:"max_sm_clock_mhz" json:"max_sm_clock_mhz"`
	MaxMemClockMHz int `yaml:"max_mem_clock_mhz" json:"max_mem_clock_mhz"`
	SMClockMHz     int `yaml:"sm_clock_mhz" json:"sm_clock_mhz"`
	MemClockMHz    int `yaml:"mem_clock_mhz" json:"mem_clock_mhz"`
	// Power in watts: the power management limit in force, its default
	// (the board's TDP unless the vendor set another), and the draw when
	// read.
	PowerLimitW        float64 `yaml:"power_limit_w" json:"power_limit_w"`
	DefaultPowerLimitW float64 `yaml:"default_power_limit_w" json:"default_power_limit_w"`
	PowerW             float64 `yaml:"power_w" json:"power_w"`
	// TemperatureC is the GPU core temperature in °C.
	TemperatureC int `yaml:"temperature_c" json:"temperature_c"`
	// UtilizationPct is the GPU utilization when read, -1 where NVML does
	// not give it (MIG mode).
	UtilizationPct int `yaml:"utilization_pct" json:"utilization_pct"`
	// MIG is the MIG state; nil when the GPU does not support MIG.
	MIG *MIG `yaml:"mig,omitempty" json:"mig,omitempty"`
	// NVLinks are the GPU's NVLink links that NVML reports, by index;
	// empty without NVLink.
	NVLinks []NVLink `yaml:"nvlinks,omitempty" json:"nvlinks,omitempty"`
	// Missing names the readings NVML did not give, with the reason
	// ("power_w: Not Supported").
	Missing []string `yaml:"missing,omitempty" json:"missing,omitempty"`
}

// MIG is a GPU's MIG state.
type MIG struct {
	// Current and Pending are the MIG mode in force and after the next GPU
	// reset.
	Current bool `yaml:"current" json:"current"`
	Pending bool `yaml:"pending" json:"pending"`
	// Profiles are the GPU-instance profiles the GPU supports, in NVML's
	// enum order.
	Profiles []MIGProfile `yaml:"profiles,omitempty" json:"profiles,omitempty"`
	// Instances are the GPU instances present, by start slice.
	Instances []MIGInstance `yaml:"instances,omitempty" json:"instances,omitempty"`
}

// MIGProfile is one GPU-instance profile as NVML reports it.
type MIGProfile struct {
	// Enum is the NVML profile (nvml.GPU_INSTANCE_PROFILE_*: 0 = 1 slice,
	// 7 = 1 slice +me, 9 = 1 slice with double memory, …); ID the profile
	// id NVML returned (nvidia-smi's 19, 20, 15, … on real drivers).
	Enum int `yaml:"enum" json:"enum"`
	ID   int `yaml:"id" json:"id"`
	// Name is the catalog profile name ("3g.40gb") when the GPU matches a
	// catalog MIG geometry, else "<slices>g.<GiB>gb".
	Name string `yaml:"name" json:"name"`
	// Slices is the compute slice count; Instances the most instances.
	Slices    int   `yaml:"slices" json:"slices"`
	Instances int   `yaml:"instances" json:"instances"`
	SMs       int   `yaml:"sms" json:"sms"`
	MemoryMiB int64 `yaml:"memory_mib" json:"memory_mib"`
	// Placements are the possible placements, start and size in memory
	// slices on real hardware.
	Placements []Placement `yaml:"placements,omitempty" json:"placements,omitempty"`
}

// Placement is a GPU instance's start and size, in NVML's slices.
type Placement struct {
	Start int `yaml:"start" json:"start"`
	Size  int `yaml:"size" json:"size"`
}

// MIGInstance is a GPU instance present on the GPU.
type MIGInstance struct {
	ID      int    `yaml:"id" json:"id"`
	Profile string `yaml:"profile" json:"profile"` // MIGProfile.Name
	Enum    int    `yaml:"enum" json:"enum"`
	Start   int    `yaml:"start" json:"start"`
	Size    int    `yaml:"size" json:"size"`
}

// NVLink remote device types.
const (
	RemoteGPU     = "gpu"
	RemoteSwitch  = "nvswitch"
	RemoteUnknown = "unknown"
)

// NVLink is one NVLink link of a GPU.
type NVLink struct {
	Link   int  `yaml:"link" json:"link"`
	Active bool `yaml:"active" json:"active"`
	// RemoteBusID is the PCI bus id of the device at the other end
	// (another GPU, or an NVSwitch); RemoteType RemoteGPU, RemoteSwitch or
	// RemoteUnknown. Both are empty for an inactive link.
	RemoteBusID string `yaml:"remote_bus_id,omitempty" json:"remote_bus_id,omitempty"`
	RemoteType  string `yaml:"remote_type,omitempty" json:"remote_type,omitempty"`
}

// Sample is the live readings of one GPU at one time.
type Sample struct {
	// UtilizationPct is the GPU (SM) utilization over NVML's last sample
	// period, 0–100, -1 when not given (MIG mode); MemUtilPct the memory
	// controller's.
	UtilizationPct int `json:"utilization_pct"`
	MemUtilPct     int `json:"mem_util_pct"`
	// MemoryUsedMiB is the memory in use.
	MemoryUsedMiB int64 `json:"memory_used_mib"`
	// PowerW is the power draw (a 1 s average on Hopper).
	PowerW float64 `json:"power_w"`
	// EnergyMJ is the energy counter since the driver loaded, in mJ; 0 if
	// not given.
	EnergyMJ uint64 `json:"energy_mj"`
	// SMClockMHz and MemClockMHz are the current clocks.
	SMClockMHz   int `json:"sm_clock_mhz"`
	MemClockMHz  int `json:"mem_clock_mhz"`
	TemperatureC int `json:"temperature_c"`
	// Missing names readings NVML did not give.
	Missing []string `json:"missing,omitempty"`
}

// Readings is everything Probe reads.
type Readings struct {
	System System `yaml:"system" json:"system"`
	GPUs   []GPU  `yaml:"gpus" json:"gpus"`
}

// Probe reads the system and every GPU of src.
func Probe(src Source) (*Readings, error) {
	sys, err := src.System()
	if err != nil {
		return nil, err
	}
	n, err := src.DeviceCount()
	if err != nil {
		return nil, err
	}
	r := &Readings{System: sys}
	for i := range n {
		g, err := src.Device(i)
		if err != nil {
			return nil, err
		}
		r.GPUs = append(r.GPUs, g)
	}
	return r, nil
}

// Clock is the sampler's time source. Real is the wall clock; tests pass a
// fake that advances on Wait.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Wait returns after d, or earlier once done is closed (nil: never).
	Wait(d time.Duration, done <-chan struct{})
}

// Real is the wall clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Wait(d time.Duration, done <-chan struct{}) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}
