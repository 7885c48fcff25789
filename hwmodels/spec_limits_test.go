package hwmodels

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPartitionDefaultsAndPowerSaving reads the partition defaults
// (default_time, def_cpu_per_gpu, def_mem_per_cpu, def_mem_per_gpu) and
// the power-saving keys slurm.conf's SuspendTimeout, SuspendExcNodes and
// SuspendExcParts map onto.
func TestPartitionDefaultsAndPowerSaving(t *testing.T) {
	spec := `version: 1
name: t
node_groups:
  - {name: "g[1-4]", cpus: 64, memory: 512G, gpu: {model: h100-sxm-80gb, count: 8}}
partitions:
  - {name: short, nodes: "g[1-2]", max_time: "4:00:00", max_nodes: 2, default_time: "30", def_cpu_per_gpu: 8, def_mem_per_gpu: 64G, default: true}
  - {name: long, nodes: ALL, max_time: "7-00:00:00", max_nodes: 8, def_mem_per_cpu: 4000}
power:
  suspend_time: 10m
  suspend_timeout: 90s
  suspend_exc_nodes: "g4"
  suspend_exc_parts: [short]
`
	c, err := ParseCluster([]byte(spec), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	short, long := c.Partitions[0], c.Partitions[1]
	// 30 minutes = 1800 s; 64G = 65536 MiB.
	if short.DefaultTime != 1800 || short.MaxNodes != 2 || short.DefCPUPerGPU != 8 || short.DefMemPerGPU != 65536 || short.DefMemPerCPU != 0 {
		t.Errorf("short = %+v", short)
	}
	if long.DefaultTime != 0 || long.MaxNodes != 8 || long.DefMemPerCPU != 4000 || long.MaxTime != 7*86400 {
		t.Errorf("long = %+v", long)
	}
	// g1, g2 (partition short) and g4 (by name) never suspend.
	if d := cmp.Diff([]int32{0, 1, 3}, c.Power.SuspendExempt); d != "" {
		t.Errorf("SuspendExempt (-want +got):\n%s", d)
	}
	if c.Power.SuspendTime != 600 || c.Power.SuspendTimeout != 90 || c.Power.ResumeTimeout != 60 {
		t.Errorf("power = %+v", c.Power)
	}
	s := Summarize(c)
	if got := s.Partitions["short"].SlurmLine; !strings.Contains(got, "MaxNodes=2 DefaultTime=00:30:00 DefCpuPerGPU=8 DefMemPerGPU=65536") {
		t.Errorf("short line %q", got)
	}
}

func TestPartitionDefaultsErrors(t *testing.T) {
	head := "version: 1\nname: t\nnode_groups:\n  - {name: \"g[1-2]\", cpus: 4, memory: 1G}\n"
	for _, tt := range []struct{ name, body, want string }{
		{"default above max", "partitions:\n  - {name: p, nodes: ALL, max_time: 60, default_time: 61}\n",
			"t.yaml:6: partitions[0].default_time: 01:01:00 exceeds max_time 01:00:00"},
		{"bad def_mem", "partitions:\n  - {name: p, nodes: ALL, def_mem_per_cpu: lots}\n", "t.yaml:6: partitions[0].def_mem_per_cpu: want a size"},
		{"unknown exc part", "power: {suspend_time: 60, suspend_exc_parts: [nope]}\n", `t.yaml:5: power.suspend_exc_parts[0]: unknown partition "nope"`},
		{"unknown exc node", "power: {suspend_time: 60, suspend_exc_nodes: g9}\n", `t.yaml:5: power.suspend_exc_nodes: unknown node "g9"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCluster([]byte(head+tt.body), "t.yaml")
			var pe *ParseError
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.As(err, &pe) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}
