package schedsim

import (
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

func TestBuildRuntime(t *testing.T) {
	head := "version: 1\ncluster: {builtin: example}\npolicy: {name: easy}\n"
	cases := []struct {
		name, src string
		wantErr   string
		wantOff   bool
		speed     bool
		stretch   bool
		comm      string
		classOf   map[string]string // partition → class
	}{
		{name: "off by default", src: head + "trace: {builtin: llnl-thunder-slice}\n", wantOff: true},
		{name: "recorded gpu turns speed on", src: head + "trace: {builtin: llnl-thunder-slice, recorded_gpu: a100-sxm-80gb}\n", speed: true},
		{name: "speed off explicitly", src: head + "trace: {builtin: llnl-thunder-slice, recorded_gpu: a100-sxm-80gb}\nruntime: {speed: false}\n", wantOff: true},
		{name: "stretch only", src: head + "trace: {builtin: llnl-thunder-slice}\nruntime: {comm_stretch: true}\n", comm: "ring"},
		{name: "tree", src: head + "trace: {builtin: llnl-thunder-slice}\nruntime: {comm_stretch: true, comm_model: tree}\n", comm: "tree"},
		{name: "fixed", src: head + "trace: {builtin: llnl-thunder-slice}\nruntime: {comm_stretch: true, comm_model: fixed}\n", stretch: true},
		{name: "classes", src: head + "trace: {builtin: llnl-thunder-slice, recorded_gpu: a100-sxm-80gb}\nruntime:\n  class: hpc\n  class_by_partition: {infer: inference}\n",
			speed: true, classOf: map[string]string{"infer": "inference", "gpu": "hpc", "infer,gpu": "inference"}},
		{name: "unknown model", src: head + "trace:\n  builtin: llnl-thunder-slice\n  recorded_gpu: a100-xl\n",
			wantErr: `s.yaml:6: trace.recorded_gpu: unknown GPU model "a100-xl"`},
		{name: "unknown comm model", src: head + "trace: {builtin: llnl-thunder-slice}\nruntime:\n  comm_stretch: true\n  comm_model: mesh\n",
			wantErr: `s.yaml:7: runtime.comm_model: unknown communication model "mesh" (want ring, tree or fixed)`},
		{name: "unknown class", src: head + "trace: {builtin: llnl-thunder-slice}\nruntime:\n  comm_stretch: true\n  class_by_partition:\n    infer: serving\n",
			wantErr: `s.yaml:8: runtime.class_by_partition.infer: unknown job class "serving" (want training, inference, hpc`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.src), "s.yaml")
			if err != nil && tc.wantErr != "" && strings.Contains(err.Error(), tc.wantErr) {
				return // caught by the scenario's own validation
			}
			if err != nil {
				t.Fatal(err)
			}
			rs, err := s.buildRuntime(hwmodels.ExampleCluster())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantOff {
				if rs != nil {
					t.Fatalf("got %+v, want nil (off)", rs)
				}
				return
			}
			if rs == nil || rs.Speed != tc.speed || rs.CommStretch != tc.stretch || rs.Comm != tc.comm {
				t.Fatalf("got %+v, want speed %v stretch %v comm %q", rs, tc.speed, tc.stretch, tc.comm)
			}
			for part, want := range tc.classOf {
				j := workload.NewJob("x")
				j.Partition = part
				if got := rs.Class(&j); got != want {
					t.Errorf("class of a job in %q = %q, want %q", part, got, want)
				}
			}
		})
	}
}
