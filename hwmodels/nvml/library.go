//go:build cgo && linux

package nvml

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Open loads libnvidia-ml.so.1 and initializes NVML. Without the library it
// returns ErrLibraryNotFound; it then touches the library no more (see the
// package comment).
func Open() (Source, error) { return FromInterface(gonvml.New()) }

// FromInterface initializes lib (go-nvml's Interface: the real library or
// one of its mocks) and returns a Source reading it. Calls that go-nvml
// would make through symbols an older driver lacks are checked with
// Extensions().LookupSymbol first.
func FromInterface(lib gonvml.Interface) (Source, error) {
	switch ret := lib.Init(); ret {
	case gonvml.SUCCESS:
	case gonvml.ERROR_LIBRARY_NOT_FOUND:
		return nil, ErrLibraryNotFound
	default:
		return nil, fmt.Errorf("NVML init: %s", errString(ret))
	}
	return &library{lib: lib, syms: map[string]bool{}, handles: map[int]gonvml.Device{}}, nil
}

type library struct {
	lib     gonvml.Interface
	syms    map[string]bool
	handles map[int]gonvml.Device
	closed  bool
}

// errString names a Return without calling into the library (go-nvml's
// Return.Error calls nvmlErrorString, which needs a loaded library).
func errString(r gonvml.Return) string {
	switch r {
	case gonvml.ERROR_UNINITIALIZED:
		return "Uninitialized"
	case gonvml.ERROR_INVALID_ARGUMENT:
		return "Invalid Argument"
	case gonvml.ERROR_NOT_SUPPORTED:
		return "Not Supported"
	case gonvml.ERROR_NO_PERMISSION:
		return "Insufficient Permissions"
	case gonvml.ERROR_NOT_FOUND:
		return "Not Found"
	case gonvml.ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded"
	case gonvml.ERROR_LIBRARY_NOT_FOUND:
		return "Library Not Found"
	case gonvml.ERROR_FUNCTION_NOT_FOUND:
		return "Function Not Found"
	case gonvml.ERROR_GPU_IS_LOST:
		return "GPU is lost"
	case gonvml.ERROR_UNKNOWN:
		return "Unknown Error"
	}
	return fmt.Sprintf("NVML error %d", int32(r))
}

// has reports whether the loaded library exports one of the symbols.
func (l *library) has(names ...string) bool {
	key := strings.Join(names, ",")
	if v, ok := l.syms[key]; ok {
		return v
	}
	ok := false
	ext := l.lib.Extensions()
	for _, n := range names {
		if ext != nil && ext.LookupSymbol(n) == nil {
			ok = true
			break
		}
	}
	l.syms[key] = ok
	return ok
}

func (l *library) System() (System, error) {
	if l.closed {
		return System{}, errors.New("nvml: source closed")
	}
	var s System
	if v, ret := l.lib.SystemGetDriverVersion(); ret == gonvml.SUCCESS {
		s.Driver = v
	} else {
		s.Missing = append(s.Missing, "driver_version: "+errString(ret))
	}
	if l.has("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion") {
		if v, ret := l.lib.SystemGetCudaDriverVersion(); ret == gonvml.SUCCESS {
			s.CUDADriver = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
		} else {
			s.Missing = append(s.Missing, "cuda_driver_version: "+errString(ret))
		}
	} else {
		s.Missing = append(s.Missing, "cuda_driver_version: Function Not Found")
	}
	return s, nil
}

func (l *library) DeviceCount() (int, error) {
	if l.closed {
		return 0, errors.New("nvml: source closed")
	}
	n, ret := l.lib.DeviceGetCount()
	if ret != gonvml.SUCCESS {
		return 0, fmt.Errorf("NVML device count: %s", errString(ret))
	}
	return n, nil
}

func (l *library) handle(i int) (gonvml.Device, error) {
	if l.closed {
		return nil, errors.New("nvml: source closed")
	}
	if d, ok := l.handles[i]; ok {
		return d, nil
	}
	d, ret := l.lib.DeviceGetHandleByIndex(i)
	if ret != gonvml.SUCCESS {
		return nil, fmt.Errorf("NVML device %d: %s", i, errString(ret))
	}
	l.handles[i] = d
	return d, nil
}

// reader collects per-field gaps.
type reader struct{ missing []string }

func (r *reader) ok(field string, ret gonvml.Return) bool {
	if ret == gonvml.SUCCESS {
		return true
	}
	r.missing = append(r.missing, field+": "+errString(ret))
	return false
}

func mib(b uint64) int64 { return int64(b >> 20) }

func busID(p gonvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

func (l *library) Device(i int) (GPU, error) {
	d, err := l.handle(i)
	if err != nil {
		return GPU{}, err
	}
	g := GPU{Index: i, UtilizationPct: -1}
	var r reader
	if v, ret := d.GetName(); r.ok("name", ret) {
		g.Name = v
	}
	if v, ret := d.GetUUID(); r.ok("uuid", ret) {
		g.UUID = v
	}
	if v, ret := d.GetPciInfo(); r.ok("pci_bus_id", ret) {
		g.PCIBusID = busID(v)
	}
	if v, ret := d.GetMemoryInfo(); r.ok("memory_mib", ret) {
		g.MemoryMiB, g.MemoryUsedMiB = mib(v.Total), mib(v.Used)
	}
	if l.has("nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes") {
		if v, ret := d.GetAttributes(); r.ok("sms", ret) {
			g.SMs = int(v.MultiprocessorCount)
		}
	} else {
		r.missing = append(r.missing, "sms: Function Not Found")
	}
	if ma, mi, ret := d.GetCudaComputeCapability(); r.ok("compute_capability", ret) {
		g.ComputeCapability = fmt.Sprintf("%d.%d", ma, mi)
	}
	for _, c := range []struct {
		field string
		max   bool
		typ   gonvml.ClockType
		dst   *int
	}{
		{"max_sm_clock_mhz", true, gonvml.CLOCK_SM, &g.MaxSMClockMHz},
		{"max_mem_clock_mhz", true, gonvml.CLOCK_MEM, &g.MaxMemClockMHz},
		{"sm_clock_mhz", false, gonvml.CLOCK_SM, &g.SMClockMHz},
		{"mem_clock_mhz", false, gonvml.CLOCK_MEM, &g.MemClockMHz},
	} {
		get := d.GetClockInfo
		if c.max {
			get = d.GetMaxClockInfo
		}
		if v, ret := get(c.typ); r.ok(c.field, ret) {
			*c.dst = int(v)
		}
	}
	if v, ret := d.GetPowerManagementLimit(); r.ok("power_limit_w", ret) {
		g.PowerLimitW = float64(v) / 1000
	}
	if v, ret := d.GetPowerManagementDefaultLimit(); r.ok("default_power_limit_w", ret) {
		g.DefaultPowerLimitW = float64(v) / 1000
	}
	if v, ret := d.GetPowerUsage(); r.ok("power_w", ret) {
		g.PowerW = float64(v) / 1000
	}
	if v, ret := d.GetTemperature(gonvml.TEMPERATURE_GPU); r.ok("temperature_c", ret) {
		g.TemperatureC = int(v)
	}
	g.MIG = l.mig(d, &r)
	if v, ret := d.GetUtilizationRates(); r.ok("utilization_pct", ret) {
		g.UtilizationPct = int(v.Gpu) // not supported in MIG mode
	}
	g.NVLinks = l.nvlinks(d, &r)
	if g.MIG != nil {
		nameProfiles(g.MIG, g.Name, g.MemoryMiB)
	}
	g.Missing = r.missing
	return g, nil
}

// mig reads MIG mode, supported profiles with placements, and instances;
// nil when the GPU has no MIG.
func (l *library) mig(d gonvml.Device, r *reader) *MIG {
	if !l.has("nvmlDeviceGetMigMode") {
		return nil
	}
	cur, pend, ret := d.GetMigMode()
	if ret == gonvml.ERROR_NOT_SUPPORTED {
		return nil
	}
	if !r.ok("mig", ret) {
		return nil
	}
	m := &MIG{Current: cur == gonvml.DEVICE_MIG_ENABLE, Pending: pend == gonvml.DEVICE_MIG_ENABLE}
	if !l.has("nvmlDeviceGetGpuInstanceProfileInfo") {
		return m
	}
	for e := 0; e < gonvml.GPU_INSTANCE_PROFILE_COUNT; e++ {
		info, ret := d.GetGpuInstanceProfileInfo(e)
		if ret == gonvml.ERROR_INVALID_ARGUMENT {
			break
		}
		if ret != gonvml.SUCCESS || info.InstanceCount == 0 {
			continue // the GPU lacks this profile
		}
		p := MIGProfile{Enum: e, ID: int(info.Id), Slices: int(info.SliceCount), Instances: int(info.InstanceCount),
			SMs: int(info.MultiprocessorCount), MemoryMiB: int64(info.MemorySizeMB)}
		if l.has("nvmlDeviceGetGpuInstancePossiblePlacements_v2", "nvmlDeviceGetGpuInstancePossiblePlacements") {
			if pl, ret := d.GetGpuInstancePossiblePlacements(&info); r.ok(fmt.Sprintf("mig.profiles[%d].placements", e), ret) {
				for _, x := range pl {
					p.Placements = append(p.Placements, Placement{Start: int(x.Start), Size: int(x.Size)})
				}
			}
		}
		m.Profiles = append(m.Profiles, p)
		if !m.Current || !l.has("nvmlDeviceGetGpuInstances") {
			continue
		}
		gis, ret := d.GetGpuInstances(&info)
		if !r.ok(fmt.Sprintf("mig.instances[%d]", e), ret) {
			continue
		}
		for _, gi := range gis {
			in, ret := gi.GetInfo()
			if !r.ok("mig.instance", ret) {
				continue
			}
			m.Instances = append(m.Instances, MIGInstance{ID: int(in.Id), Enum: e,
				Start: int(in.Placement.Start), Size: int(in.Placement.Size)})
		}
	}
	sort.Slice(m.Instances, func(a, b int) bool {
		x, y := m.Instances[a], m.Instances[b]
		if x.Start != y.Start {
			return x.Start < y.Start
		}
		return x.ID < y.ID
	})
	return m
}

// nvlinks reads each link's state and, for active links, the remote
// device. A GPU without NVLink answers NOT_SUPPORTED on link 0: no links.
func (l *library) nvlinks(d gonvml.Device, r *reader) []NVLink {
	var out []NVLink
	remoteType := l.has("nvmlDeviceGetNvLinkRemoteDeviceType")
	for k := 0; k < gonvml.NVLINK_MAX_LINKS; k++ {
		st, ret := d.GetNvLinkState(k)
		if ret == gonvml.ERROR_NOT_SUPPORTED || ret == gonvml.ERROR_INVALID_ARGUMENT {
			if k == 0 {
				r.missing = append(r.missing, "nvlinks: "+errString(ret))
			}
			break
		}
		if !r.ok(fmt.Sprintf("nvlinks[%d]", k), ret) {
			continue
		}
		ln := NVLink{Link: k, Active: st == gonvml.FEATURE_ENABLED}
		if ln.Active {
			if p, ret := d.GetNvLinkRemotePciInfo(k); r.ok(fmt.Sprintf("nvlinks[%d].remote_bus_id", k), ret) {
				ln.RemoteBusID = busID(p)
			}
			ln.RemoteType = RemoteUnknown
			if remoteType {
				if t, ret := d.GetNvLinkRemoteDeviceType(k); ret == gonvml.SUCCESS {
					switch t {
					case gonvml.NVLINK_DEVICE_TYPE_GPU:
						ln.RemoteType = RemoteGPU
					case gonvml.NVLINK_DEVICE_TYPE_SWITCH:
						ln.RemoteType = RemoteSwitch
					}
				}
			}
		}
		out = append(out, ln)
	}
	return out
}

func (l *library) Sample(i int) (Sample, error) {
	d, err := l.handle(i)
	if err != nil {
		return Sample{}, err
	}
	s := Sample{UtilizationPct: -1, MemUtilPct: -1}
	var r reader
	if v, ret := d.GetUtilizationRates(); r.ok("utilization_pct", ret) {
		s.UtilizationPct, s.MemUtilPct = int(v.Gpu), int(v.Memory)
	}
	if v, ret := d.GetMemoryInfo(); r.ok("memory_used_mib", ret) {
		s.MemoryUsedMiB = mib(v.Used)
	}
	if v, ret := d.GetPowerUsage(); r.ok("power_w", ret) {
		s.PowerW = float64(v) / 1000
	}
	if v, ret := d.GetTotalEnergyConsumption(); r.ok("energy_mj", ret) {
		s.EnergyMJ = v
	}
	if v, ret := d.GetClockInfo(gonvml.CLOCK_SM); r.ok("sm_clock_mhz", ret) {
		s.SMClockMHz = int(v)
	}
	if v, ret := d.GetClockInfo(gonvml.CLOCK_MEM); r.ok("mem_clock_mhz", ret) {
		s.MemClockMHz = int(v)
	}
	if v, ret := d.GetTemperature(gonvml.TEMPERATURE_GPU); r.ok("temperature_c", ret) {
		s.TemperatureC = int(v)
	}
	s.Missing = r.missing
	return s, nil
}

func (l *library) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	if ret := l.lib.Shutdown(); ret != gonvml.SUCCESS {
		return fmt.Errorf("NVML shutdown: %s", errString(ret))
	}
	return nil
}
