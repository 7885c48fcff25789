package calibrate

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
)

func loadNCCL(t *testing.T, name string) *NCCLRun {
	t.Helper()
	path := filepath.Join("testdata", "nccl", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseNCCL(data, path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFitNCCL: the sample logs were generated from B = 470 GB/s, α = 15 µs
// (one node, 8 GPUs) and B = 46 GB/s, α = 40 µs (4 nodes × 8 GPUs) with
// times perturbed by up to 0.9 % (testdata/nccl/README.md); the fit must
// recover each within 5 %.
func TestFitNCCL(t *testing.T) {
	one, four := loadNCCL(t, "h100-1node.txt"), loadNCCL(t, "h100-4node.txt")
	if one.Ranks != 8 || one.Nodes != 1 || four.Ranks != 32 || four.Nodes != 4 || len(one.Rows) != 31 {
		t.Fatalf("parsed %d ranks on %d nodes (%d rows), %d on %d; want 8 on 1 (31 rows), 32 on 4",
			one.Ranks, one.Nodes, len(one.Rows), four.Ranks, four.Nodes)
	}
	fit, err := FitNCCL([]*NCCLRun{four, one}) // order does not matter
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"intra_gbs", fit.IntraGBs, 470},
		{"intra_latency_us", fit.IntraLatencyUS, 15},
		{"inter_gbs", fit.InterGBs, 46},
		{"latency_us", fit.LatencyUS, 40},
	} {
		if rel := math.Abs(c.got/c.want - 1); !(rel < 0.05) {
			t.Errorf("%s = %v, want %v within 5%% (off by %.2f%%)", c.name, c.got, c.want, 100*rel)
		} else {
			t.Logf("%s = %.3f (made from %v: %.2f%% off)", c.name, c.got, c.want, 100*rel)
		}
	}
	if len(fit.Runs) != 2 || fit.Runs[0].Nodes != 1 {
		t.Errorf("runs %+v, want the one-node run first", fit.Runs)
	}
}

// TestParseNCCLErrors: bad input names the file, line and field.
func TestParseNCCLErrors(t *testing.T) {
	head := "#  Rank  0 Group  0 Pid 1 on h1 device  0 [0x18] X\n#  Rank  1 Group  0 Pid 2 on h1 device  1 [0x28] X\n"
	row := func(size string) string {
		return "  " + size + "  2  float  sum  -1  10.0  0.0  0.0  0  10.0  0.0  0.0  0\n"
	}
	cases := []struct{ name, src, want string }{
		{"short row", head + "8 2 float sum -1 10.0\n", "x.txt:3: row: bad nccl-tests output: 6 fields"},
		{"bad size", head + row("-8"), `x.txt:3: size: bad nccl-tests output: "-8"`},
		{"bad time", head + "  8  2  float  sum  -1  abc  0.0  0.0  0  10.0  0.0  0.0  0\n", `x.txt:3: time (out-of-place): bad nccl-tests output: "abc"`},
		{"no ranks", row("8") + row("16") + row("32"), "x.txt:3: ranks: bad nccl-tests output: found 0"},
		{"too few rows", head + row("8"), "x.txt:3: rows: bad nccl-tests output: 1 table rows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseNCCL([]byte(tc.src), "x.txt")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrNCCL) {
				t.Errorf("error %v, want %q (ErrNCCL)", err, tc.want)
			}
		})
	}
}

// TestCommParseApply: a calibration's comm section is range-checked with
// its line, and Apply puts it on a copy of the cluster's fabric.
func TestCommParseApply(t *testing.T) {
	_, err := Parse([]byte("version: 1\nruntime: {ratios: []}\ncomm:\n  intra_gbs: -3\n"), "c.yaml")
	if err == nil || !strings.Contains(err.Error(), "c.yaml:4: comm.intra_gbs: bad calibration: must be 0 to 100000, got -3") {
		t.Errorf("error %v, want c.yaml:4: comm.intra_gbs", err)
	}
	cl := hwmodels.ExampleCluster()
	nodes := make([]int32, len(cl.Nodes))
	for i := range nodes {
		nodes[i] = int32(i)
	}
	f, err := hwmodels.BuildFatTree(hwmodels.FatTreeParams{LeafSize: 8, LinkGbps: 400}, nodes, len(nodes))
	if err != nil {
		t.Fatal(err)
	}
	cl.Fabric = f
	if _, err := Apply(cl, &Calibration{Version: Version, Comm: &CommFit{IntraGBs: 470, InterGBs: 46}}); err != nil {
		t.Fatal(err)
	}
	if cl.Fabric == f || cl.Fabric.IntraGBs != 470 || cl.Fabric.NICGBsPerGPU() != 46 || f.NICGBsPerGPU() != 50 {
		t.Errorf("fabric after Apply: intra %v, NIC %v (original %v); want a copy with 470, 46 and the original at 50",
			cl.Fabric.IntraGBs, cl.Fabric.NICGBsPerGPU(), f.NICGBsPerGPU())
	}
}
