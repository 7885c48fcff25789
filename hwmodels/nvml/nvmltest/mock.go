//go:build cgo && linux

package nvmltest

import (
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/schedsim/schedsim/hwmodels/nvml"
)

// Mock returns a go-nvml mock library (github.com/NVIDIA/go-nvml/pkg/nvml/
// mock) that answers as node n's GPUs: static readings from n.Readings,
// ERROR_NOT_SUPPORTED for each field a GPU's Missing names (by the part
// before ':'). Live readings (power, utilization, clocks, memory used) are
// the static ones; the energy counter is 1e9 mJ. Every method the NVML
// adapter calls is set, so none panics as go-nvml's unset mock methods do.
func Mock(n *Node) *mock.Interface {
	r := n.Clone()
	devs := make([]*mock.Device, len(r.GPUs))
	for i := range r.GPUs {
		devs[i] = mockDevice(&r.GPUs[i])
	}
	cuda := 0
	if ma, mi, ok := strings.Cut(r.System.CUDADriver, "."); ok {
		cuda = atoi(ma)*1000 + atoi(mi)*10
	}
	return &mock.Interface{
		InitFunc:     func() gonvml.Return { return gonvml.SUCCESS },
		ShutdownFunc: func() gonvml.Return { return gonvml.SUCCESS },
		ExtensionsFunc: func() gonvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(string) error { return nil }}
		},
		SystemGetDriverVersionFunc:     func() (string, gonvml.Return) { return r.System.Driver, gonvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, gonvml.Return) { return cuda, gonvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, gonvml.Return) { return len(devs), gonvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (gonvml.Device, gonvml.Return) {
			if i < 0 || i >= len(devs) {
				return nil, gonvml.ERROR_INVALID_ARGUMENT
			}
			return devs[i], gonvml.SUCCESS
		},
	}
}

func atoi(s string) int {
	v := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		v = v*10 + int(c-'0')
	}
	return v
}

func pci(bus string) gonvml.PciInfo {
	var p gonvml.PciInfo
	copy(p.BusId[:], bus)
	return p
}

func mockDevice(g *nvml.GPU) *mock.Device {
	miss := map[string]bool{}
	for _, m := range g.Missing {
		f, _, _ := strings.Cut(m, ":")
		miss[f] = true
	}
	ret := func(field string) gonvml.Return {
		if miss[field] {
			return gonvml.ERROR_NOT_SUPPORTED
		}
		return gonvml.SUCCESS
	}
	mw := func(w float64) uint32 { return uint32(w*1000 + 0.5) }
	d := &mock.Device{
		GetNameFunc:    func() (string, gonvml.Return) { return g.Name, ret("name") },
		GetUUIDFunc:    func() (string, gonvml.Return) { return g.UUID, ret("uuid") },
		GetPciInfoFunc: func() (gonvml.PciInfo, gonvml.Return) { return pci(g.PCIBusID), ret("pci_bus_id") },
		GetMemoryInfoFunc: func() (gonvml.Memory, gonvml.Return) {
			t, u := uint64(g.MemoryMiB)<<20, uint64(g.MemoryUsedMiB)<<20
			return gonvml.Memory{Total: t, Used: u, Free: t - u}, ret("memory_mib")
		},
		GetAttributesFunc: func() (gonvml.DeviceAttributes, gonvml.Return) {
			return gonvml.DeviceAttributes{MultiprocessorCount: uint32(g.SMs)}, ret("sms")
		},
		GetCudaComputeCapabilityFunc: func() (int, int, gonvml.Return) {
			ma, mi, _ := strings.Cut(g.ComputeCapability, ".")
			return atoi(ma), atoi(mi), ret("compute_capability")
		},
		GetMaxClockInfoFunc: func(t gonvml.ClockType) (uint32, gonvml.Return) {
			if t == gonvml.CLOCK_MEM {
				return uint32(g.MaxMemClockMHz), ret("max_mem_clock_mhz")
			}
			return uint32(g.MaxSMClockMHz), ret("max_sm_clock_mhz")
		},
		GetClockInfoFunc: func(t gonvml.ClockType) (uint32, gonvml.Return) {
			if t == gonvml.CLOCK_MEM {
				return uint32(g.MemClockMHz), ret("mem_clock_mhz")
			}
			return uint32(g.SMClockMHz), ret("sm_clock_mhz")
		},
		GetPowerManagementLimitFunc:        func() (uint32, gonvml.Return) { return mw(g.PowerLimitW), ret("power_limit_w") },
		GetPowerManagementDefaultLimitFunc: func() (uint32, gonvml.Return) { return mw(g.DefaultPowerLimitW), ret("default_power_limit_w") },
		GetPowerUsageFunc:                  func() (uint32, gonvml.Return) { return mw(g.PowerW), ret("power_w") },
		GetTotalEnergyConsumptionFunc:      func() (uint64, gonvml.Return) { return 1e9, ret("energy_mj") },
		GetTemperatureFunc: func(gonvml.TemperatureSensors) (uint32, gonvml.Return) {
			return uint32(g.TemperatureC), ret("temperature_c")
		},
		GetUtilizationRatesFunc: func() (gonvml.Utilization, gonvml.Return) {
			u := uint32(max(g.UtilizationPct, 0))
			return gonvml.Utilization{Gpu: u, Memory: u / 2}, ret("utilization_pct")
		},
		GetNvLinkStateFunc: func(k int) (gonvml.EnableState, gonvml.Return) {
			if miss["nvlinks"] {
				return 0, gonvml.ERROR_NOT_SUPPORTED
			}
			if k < 0 || k >= len(g.NVLinks) {
				return 0, gonvml.ERROR_INVALID_ARGUMENT
			}
			if g.NVLinks[k].Active {
				return gonvml.FEATURE_ENABLED, gonvml.SUCCESS
			}
			return gonvml.FEATURE_DISABLED, gonvml.SUCCESS
		},
		GetNvLinkRemotePciInfoFunc: func(k int) (gonvml.PciInfo, gonvml.Return) {
			if k < 0 || k >= len(g.NVLinks) {
				return gonvml.PciInfo{}, gonvml.ERROR_INVALID_ARGUMENT
			}
			return pci(g.NVLinks[k].RemoteBusID), gonvml.SUCCESS
		},
		GetNvLinkRemoteDeviceTypeFunc: func(k int) (gonvml.IntNvLinkDeviceType, gonvml.Return) {
			if k < 0 || k >= len(g.NVLinks) {
				return 0, gonvml.ERROR_INVALID_ARGUMENT
			}
			switch g.NVLinks[k].RemoteType {
			case nvml.RemoteGPU:
				return gonvml.NVLINK_DEVICE_TYPE_GPU, gonvml.SUCCESS
			case nvml.RemoteSwitch:
				return gonvml.NVLINK_DEVICE_TYPE_SWITCH, gonvml.SUCCESS
			}
			return gonvml.NVLINK_DEVICE_TYPE_UNKNOWN, gonvml.SUCCESS
		},
	}
	m := g.MIG
	profileByID := func(id uint32) *nvml.MIGProfile {
		if m == nil {
			return nil
		}
		for i := range m.Profiles {
			if uint32(m.Profiles[i].ID) == id {
				return &m.Profiles[i]
			}
		}
		return nil
	}
	d.GetMigModeFunc = func() (int, int, gonvml.Return) {
		if m == nil {
			return 0, 0, gonvml.ERROR_NOT_SUPPORTED
		}
		b := func(v bool) int {
			if v {
				return gonvml.DEVICE_MIG_ENABLE
			}
			return gonvml.DEVICE_MIG_DISABLE
		}
		return b(m.Current), b(m.Pending), gonvml.SUCCESS
	}
	d.GetGpuInstanceProfileInfoFunc = func(e int) (gonvml.GpuInstanceProfileInfo, gonvml.Return) {
		if e < 0 || e >= gonvml.GPU_INSTANCE_PROFILE_COUNT {
			return gonvml.GpuInstanceProfileInfo{}, gonvml.ERROR_INVALID_ARGUMENT
		}
		if m != nil {
			for _, p := range m.Profiles {
				if p.Enum == e {
					return gonvml.GpuInstanceProfileInfo{Id: uint32(p.ID), SliceCount: uint32(p.Slices),
						InstanceCount: uint32(p.Instances), MultiprocessorCount: uint32(p.SMs),
						MemorySizeMB: uint64(p.MemoryMiB)}, gonvml.SUCCESS
				}
			}
		}
		return gonvml.GpuInstanceProfileInfo{}, gonvml.ERROR_NOT_SUPPORTED
	}
	d.GetGpuInstancePossiblePlacementsFunc = func(info *gonvml.GpuInstanceProfileInfo) ([]gonvml.GpuInstancePlacement, gonvml.Return) {
		p := profileByID(info.Id)
		if p == nil {
			return nil, gonvml.ERROR_INVALID_ARGUMENT
		}
		var out []gonvml.GpuInstancePlacement
		for _, x := range p.Placements {
			out = append(out, gonvml.GpuInstancePlacement{Start: uint32(x.Start), Size: uint32(x.Size)})
		}
		return out, gonvml.SUCCESS
	}
	d.GetGpuInstancesFunc = func(info *gonvml.GpuInstanceProfileInfo) ([]gonvml.GpuInstance, gonvml.Return) {
		p := profileByID(info.Id)
		if p == nil {
			return nil, gonvml.ERROR_INVALID_ARGUMENT
		}
		var out []gonvml.GpuInstance
		for _, in := range m.Instances {
			if in.Enum != p.Enum {
				continue
			}
			gi := gonvml.GpuInstanceInfo{Device: d, Id: uint32(in.ID), ProfileId: info.Id,
				Placement: gonvml.GpuInstancePlacement{Start: uint32(in.Start), Size: uint32(in.Size)}}
			out = append(out, &mock.GpuInstance{GetInfoFunc: func() (gonvml.GpuInstanceInfo, gonvml.Return) { return gi, gonvml.SUCCESS }})
		}
		return out, gonvml.SUCCESS
	}
	return d
}
