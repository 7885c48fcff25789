//go:build cgo && linux

package nvml_test

import (
	"errors"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/hwmodels/nvml"
	"github.com/schedsim/schedsim/hwmodels/nvml/nvmltest"
)

// TestProbeThroughMock reads each fixture node through go-nvml's mock
// library and the real adapter: every reading must come back as the
// fixture says, gaps (Not Supported) included.
func TestProbeThroughMock(t *testing.T) {
	for _, n := range nvmltest.Nodes() {
		t.Run(n.Name, func(t *testing.T) {
			src, err := nvml.FromInterface(nvmltest.Mock(n))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got, err := nvml.Probe(src)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(n.Readings, *got); d != "" {
				t.Errorf("readings (-want +got):\n%s", d)
			}
			// Live readings: the mock serves the static ones.
			g := n.Readings.GPUs[0]
			s, err := src.Sample(0)
			if err != nil {
				t.Fatal(err)
			}
			want := nvml.Sample{UtilizationPct: g.UtilizationPct, MemUtilPct: g.UtilizationPct / 2, MemoryUsedMiB: g.MemoryUsedMiB,
				PowerW: g.PowerW, EnergyMJ: 1e9, SMClockMHz: g.SMClockMHz, MemClockMHz: g.MemClockMHz, TemperatureC: g.TemperatureC}
			if g.UtilizationPct < 0 {
				want.MemUtilPct = -1
				want.Missing = []string{"utilization_pct: Not Supported"}
			}
			if d := cmp.Diff(want, s); d != "" {
				t.Errorf("sample (-want +got):\n%s", d)
			}
			if err := src.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := src.DeviceCount(); err == nil {
				t.Error("DeviceCount after Close: no error")
			}
		})
	}
}

// TestInitLibraryNotFound: a failed Init is ErrLibraryNotFound and nothing
// else is called (the mock's other methods are nil and would panic, as
// the real library would end the process).
func TestInitLibraryNotFound(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() gonvml.Return { return gonvml.ERROR_LIBRARY_NOT_FOUND }}
	if _, err := nvml.FromInterface(lib); !errors.Is(err, nvml.ErrLibraryNotFound) {
		t.Fatalf("err = %v, want ErrLibraryNotFound", err)
	}
	lib.InitFunc = func() gonvml.Return { return gonvml.ERROR_DRIVER_NOT_LOADED }
	if _, err := nvml.FromInterface(lib); err == nil || err.Error() != "NVML init: Driver Not Loaded" {
		t.Fatalf("err = %v", err)
	}
}

// TestOpenHere: on a machine without the NVIDIA driver (CI, this
// project's build machines) Open reports ErrLibraryNotFound without
// crashing the process.
func TestOpenHere(t *testing.T) {
	src, err := nvml.Open()
	if err == nil {
		src.Close()
		t.Skip("libnvidia-ml.so.1 is present: a GPU machine")
	}
	if !errors.Is(err, nvml.ErrLibraryNotFound) {
		t.Fatalf("Open: %v, want ErrLibraryNotFound", err)
	}
}

// TestMissingSymbols: a driver lacking the MIG and NVLink remote-type
// functions gives readings without them instead of a crash.
func TestMissingSymbols(t *testing.T) {
	n := nvmltest.H100Node()
	lib := nvmltest.Mock(n)
	lib.ExtensionsFunc = func() gonvml.ExtendedInterface {
		return &mock.ExtendedInterface{LookupSymbolFunc: func(s string) error {
			switch s {
			case "nvmlDeviceGetMigMode", "nvmlDeviceGetNvLinkRemoteDeviceType":
				return errors.New("undefined symbol")
			}
			return nil
		}}
	}
	src, err := nvml.FromInterface(lib)
	if err != nil {
		t.Fatal(err)
	}
	g, err := src.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	if g.MIG != nil {
		t.Errorf("MIG = %+v, want nil without nvmlDeviceGetMigMode", g.MIG)
	}
	if g.NVLinks[0].RemoteType != nvml.RemoteUnknown || g.NVLinks[0].RemoteBusID != "00000000:05:00.0" {
		t.Errorf("link 0 = %+v", g.NVLinks[0])
	}
}
