package nvmltest

import (
	"fmt"

	"github.com/schedsim/schedsim/hwmodels/nvml"
)

// Node is a fixture: the readings a probe of it must return, and its live
// readings over time.
type Node struct {
	// Name says which fixture it is.
	Name     string
	Readings nvml.Readings
	// Live returns GPU gpu's k-th live reading (k = 0, 1, … per GPU).
	Live func(gpu, k int) nvml.Sample
	// Switches are the NVSwitch PCI bus ids the links lead to (for mocks).
	Switches []string
}

// Clone returns a deep copy of n's readings, so tests may modify them.
func (n *Node) Clone() nvml.Readings {
	r := n.Readings
	r.System.Missing = append([]string(nil), r.System.Missing...)
	r.GPUs = append([]nvml.GPU(nil), r.GPUs...)
	for i := range r.GPUs {
		g := &r.GPUs[i]
		g.Missing = append([]string(nil), g.Missing...)
		g.NVLinks = append([]nvml.NVLink(nil), g.NVLinks...)
		if g.MIG != nil {
			m := *g.MIG
			m.Profiles = append([]nvml.MIGProfile(nil), m.Profiles...)
			for j := range m.Profiles {
				m.Profiles[j].Placements = append([]nvml.Placement(nil), m.Profiles[j].Placements...)
			}
			m.Instances = append([]nvml.MIGInstance(nil), m.Instances...)
			g.MIG = &m
		}
	}
	return r
}

// Busy returns live readings of a job that starts after the first
// reading: reading 0 is idle (0 %, idleW, no memory), later ones run at
// util % drawing busyW with memMiB in use; SM clock idleMHz then busyMHz;
// the energy counter starts at 1e9 mJ and grows by each reading's power
// over 1 s (readings taken once a second).
func Busy(idleW, busyW float64, util int, memMiB int64, idleMHz, busyMHz, memMHz int) func(gpu, k int) nvml.Sample {
	return func(gpu, k int) nvml.Sample {
		s := nvml.Sample{UtilizationPct: 0, MemUtilPct: 0, PowerW: idleW, SMClockMHz: idleMHz, MemClockMHz: memMHz, TemperatureC: 30}
		if k > 0 {
			s = nvml.Sample{UtilizationPct: util, MemUtilPct: util / 2, MemoryUsedMiB: memMiB, PowerW: busyW,
				SMClockMHz: busyMHz, MemClockMHz: memMHz, TemperatureC: 55}
		}
		// Energy: 1e9 mJ at reading 0, then each reading's power over 1 s.
		e := uint64(1e9)
		if k > 0 {
			e += uint64(idleW*1000) + uint64(k-1)*uint64(busyW*1000)
		}
		s.EnergyMJ = e
		return s
	}
}

// hopperProfiles returns the seven MIG profiles of an 80/141 GB Hopper in
// NVML enum order (0: 1 slice, 1: 2, 2: 3, 3: 4, 4: 7, 7: 1 slice +me,
// 9: 1 slice with 2/8 memory). IDs are nvidia-smi's (real NVML is believed
// to return them; reference §7.4); starts and sizes in memory slices from
// nvidia-smi mig -lgipp on H100 (reference §6.1).
func hopperProfiles(names [7]string, sms [7]int, mib [7]int64) []nvml.MIGProfile {
	pl := func(size int, starts ...int) []nvml.Placement {
		var out []nvml.Placement
		for _, s := range starts {
			out = append(out, nvml.Placement{Start: s, Size: size})
		}
		return out
	}
	return []nvml.MIGProfile{
		{Enum: 0, ID: 19, Name: names[0], Slices: 1, Instances: 7, SMs: sms[0], MemoryMiB: mib[0], Placements: pl(1, 0, 1, 2, 3, 4, 5, 6)},
		{Enum: 1, ID: 14, Name: names[3], Slices: 2, Instances: 3, SMs: sms[3], MemoryMiB: mib[3], Placements: pl(2, 0, 2, 4)},
		{Enum: 2, ID: 9, Name: names[4], Slices: 3, Instances: 2, SMs: sms[4], MemoryMiB: mib[4], Placements: pl(4, 0, 4)},
		{Enum: 3, ID: 5, Name: names[5], Slices: 4, Instances: 1, SMs: sms[5], MemoryMiB: mib[5], Placements: pl(4, 0)},
		{Enum: 4, ID: 0, Name: names[6], Slices: 7, Instances: 1, SMs: sms[6], MemoryMiB: mib[6], Placements: pl(8, 0)},
		{Enum: 7, ID: 20, Name: names[1], Slices: 1, Instances: 1, SMs: sms[1], MemoryMiB: mib[1], Placements: pl(1, 0, 1, 2, 3, 4, 5, 6)},
		{Enum: 9, ID: 15, Name: names[2], Slices: 1, Instances: 4, SMs: sms[2], MemoryMiB: mib[2], Placements: pl(2, 0, 2, 4, 6)},
	}
}

// H100Node is an 8 × H100 SXM5 80GB node on an HGX baseboard (DGX H100
// layout), idle, MIG off.
func H100Node() *Node {
	// Bus ids as DGX H100s list their GPUs (assumed, recalled from
	// nvidia-smi outputs; unverified).
	bus := []string{"00000000:1B:00.0", "00000000:43:00.0", "00000000:52:00.0", "00000000:61:00.0",
		"00000000:9D:00.0", "00000000:C3:00.0", "00000000:D1:00.0", "00000000:DF:00.0"}
	// Four NVSwitch gen3 chips (reference §6.4); bus ids assumed.
	sw := []string{"00000000:05:00.0", "00000000:06:00.0", "00000000:07:00.0", "00000000:08:00.0"}
	n := &Node{Name: "8x H100 SXM", Switches: sw,
		// Driver 550.54.15: what go-nvml's fake DGX servers report (reference
		// §7.4); R550 drivers support CUDA 12.4.
		Readings: nvml.Readings{System: nvml.System{Driver: "550.54.15", CUDADriver: "12.4"}},
		// Idle 69 W, busy 690 W at 98 %: assumed (about 10 % and 99 % of the
		// 700 W TDP); clocks as the H200 observed (same GH100 die): 345 MHz
		// idle, 1,980 under load; HBM3 2,619 MHz (assumed, H100 SXM's max).
		Live: Busy(69, 690, 98, 61440, 345, 1980, 2619)}
	for i := range 8 {
		g := nvml.GPU{Index: i,
			Name:      "NVIDIA H100 80GB HBM3",                                      // NVML's name for the SXM5 part (assumed, as nvidia-smi prints it)
			UUID:      fmt.Sprintf("GPU-4d6f1a2c-0b8e-4c1f-9a3e-7c5d2e8f10%02d", i), // synthetic
			PCIBusID:  bus[i],
			MemoryMiB: 81559, // nvidia-smi total of an H100 80GB HBM3 (assumed, commonly printed value)
			SMs:       132,   // datasheet (reference §6.4)
			// Compute capability 9.0: Hopper.
			ComputeCapability: "9.0",
			MaxSMClockMHz:     1980, MaxMemClockMHz: 2619, SMClockMHz: 345, MemClockMHz: 2619,
			PowerLimitW: 700, DefaultPowerLimitW: 700, // SXM5 TDP (reference §6.4)
			PowerW:         69, // assumed idle draw
			TemperatureC:   30 + i%3,
			UtilizationPct: 0,
			MIG: &nvml.MIG{Profiles: hopperProfiles(
				[7]string{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
				// SMs and MiB observed by nvidia-smi mig -lgip on H100 SXM5
				// (reference §6.2; the lower value where outputs differ).
				[7]int{16, 16, 26, 32, 60, 64, 132},
				[7]int64{9856, 9856, 19968, 19968, 40192, 40448, 81152})},
		}
		// 18 NVLink4 links, 5/4/4/5 to the four NVSwitches (assumed split).
		for k := range 18 {
			s := 0
			switch {
			case k >= 13:
				s = 3
			case k >= 9:
				s = 2
			case k >= 5:
				s = 1
			}
			g.NVLinks = append(g.NVLinks, nvml.NVLink{Link: k, Active: true, RemoteBusID: sw[s], RemoteType: nvml.RemoteSwitch})
		}
		n.Readings.GPUs = append(n.Readings.GPUs, g)
	}
	return n
}

// A100MIGNode is an HGX A100 4-GPU board (A100-SXM4-40GB, NVLink3 links
// straight between the GPUs, no NVSwitch) with every GPU in MIG mode
// holding 3g.20gb + 2g.10gb + 1g.5gb.
func A100MIGNode() *Node {
	bus := []string{"00000000:01:00.0", "00000000:41:00.0", "00000000:81:00.0", "00000000:C1:00.0"} // assumed
	n := &Node{Name: "4x A100 MIG",
		// An R535 driver (assumed; any R450+ supports MIG on A100, reference §6.2).
		Readings: nvml.Readings{System: nvml.System{Driver: "535.104.05", CUDADriver: "12.2"}},
		// MIG mode: NVML gives no utilization (reference §6.2); idle 52 W and
		// 330 W busy assumed; 1,410 MHz max SM clock and 1,215 MHz HBM2 are
		// the A100 SXM4's (assumed, recalled).
		Live: func(gpu, k int) nvml.Sample {
			s := Busy(52, 330, 0, 30720, 210, 1410, 1215)(gpu, k)
			s.UtilizationPct, s.MemUtilPct = -1, -1
			s.Missing = []string{"utilization_pct: Not Supported"}
			return s
		}}
	for i := range 4 {
		g := nvml.GPU{Index: i,
			Name:      "NVIDIA A100-SXM4-40GB", // NVML's name (reference §6.2 header)
			UUID:      fmt.Sprintf("GPU-9b2e7d14-51c3-4a8f-b6d0-3e1f5a7c92%02d", i),
			PCIBusID:  bus[i],
			MemoryMiB: 40960, // nvidia-smi total of an A100 40GB (assumed)
			// nvmlDeviceGetAttributes is documented for MIG device handles;
			// the fixture has the parent answer Not Supported (assumed), so
			// the probe keeps the catalog's 108 SMs.
			ComputeCapability: "8.0",
			MaxSMClockMHz:     1410, MaxMemClockMHz: 1215, SMClockMHz: 210, MemClockMHz: 1215,
			PowerLimitW: 400, DefaultPowerLimitW: 400, // SXM4 TDP (reference §6.4)
			PowerW:         52,
			TemperatureC:   29,
			UtilizationPct: -1,
			MIG: &nvml.MIG{Current: true, Pending: true,
				// A100-40GB table (reference §6.2): SMs and MiB observed by
				// nvidia-smi mig -lgip, placements as go-nvml's A100 mock and
				// the MIG guide (memory-slice sizes).
				Profiles: hopperProfiles(
					[7]string{"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"},
					[7]int{14, 14, 14, 28, 42, 56, 98},
					[7]int64{4864, 4864, 9856, 9856, 19968, 19968, 40192}),
				// Instance ids as nvidia-smi numbers them for this layout
				// (assumed): 3g at 0, 2g at 4, 1g at 6.
				Instances: []nvml.MIGInstance{
					{ID: 2, Profile: "3g.20gb", Enum: 2, Start: 0, Size: 4},
					{ID: 3, Profile: "2g.10gb", Enum: 1, Start: 4, Size: 2},
					{ID: 13, Profile: "1g.5gb", Enum: 0, Start: 6, Size: 1},
				}},
			Missing: []string{"sms: Not Supported", "utilization_pct: Not Supported"},
		}
		// 12 NVLink3 links, 4 to each other GPU (HGX A100 4-GPU; reference
		// §6.4 gives 12 links × 50 GB/s = 600 GB/s).
		others := []int{}
		for j := range 4 {
			if j != i {
				others = append(others, j)
			}
		}
		for k := range 12 {
			g.NVLinks = append(g.NVLinks, nvml.NVLink{Link: k, Active: true, RemoteBusID: bus[others[k/4]], RemoteType: nvml.RemoteGPU})
		}
		n.Readings.GPUs = append(n.Readings.GPUs, g)
	}
	return n
}

// H200Node is a single-H200 machine as observed
// (../shared/reference/h200-observed.md), idle, MIG off.
func H200Node() *Node {
	return &Node{Name: "1x H200",
		// Driver 580.159.03 and CUDA 13.0: observed.
		Readings: nvml.Readings{System: nvml.System{Driver: "580.159.03", CUDADriver: "13.0"},
			GPUs: []nvml.GPU{{
				Index:     0,
				Name:      "NVIDIA H200", // NVML's name for the SXM part (assumed; not in h200-observed.md)
				UUID:      "GPU-1c0ffee0-2b4d-4e6f-8a9b-0c1d2e3f4a5b",
				PCIBusID:  "00000000:18:00.0", // assumed
				MemoryMiB: 143771,             // observed (nvidia-smi total)
				SMs:       132,                // observed
				// 9.0: Hopper. Clocks observed: SM 345 MHz idle, 1,980 under a
				// dense matrix load (taken as the max), memory 3,201 MHz.
				ComputeCapability: "9.0",
				MaxSMClockMHz:     1980, MaxMemClockMHz: 3201, SMClockMHz: 345, MemClockMHz: 3201,
				// 700 W: the SXM datasheet TDP (reference §6.4), not observed;
				// idle 76 W assumed.
				PowerLimitW: 700, DefaultPowerLimitW: 700, PowerW: 76,
				TemperatureC: 27, UtilizationPct: 0,
				MIG: &nvml.MIG{Profiles: hopperProfiles(
					[7]string{"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"},
					// Reference §6.2: 1g/2g/7g from a parser fixture, 60 SMs for
					// 3g observed by several users; 1g.35gb (26 SMs, 2g's memory)
					// and 4g.71gb (64 SMs, 3g's memory) by analogy with H100.
					[7]int{16, 16, 26, 32, 60, 64, 132},
					[7]int64{16384, 16384, 33280, 33280, 71475, 71475, 143360})},
				// A one-GPU machine with no NVLink peers: the fixture answers
				// Not Supported (assumed; h200-observed.md does not say).
				Missing: []string{"nvlinks: Not Supported"},
			}}},
		// Live: 345 → 1,980 MHz and 3,201 MHz memory clock observed; 76 W idle
		// and 640 W busy at 97 % assumed (a dense BF16 load below the 700 W
		// cap).
		Live: Busy(76, 640, 97, 98304, 345, 1980, 3201),
	}
}

// Nodes returns the three fixtures.
func Nodes() []*Node { return []*Node{H100Node(), A100MIGNode(), H200Node()} }
