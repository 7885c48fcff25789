package hwmodels

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// seq returns the node indices lo, lo+1, …, hi-1.
func seq(lo, hi int32) []int32 {
	var out []int32
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// nodes returns count nodes named by format (with i = 1 … count) made from
// tmpl.
func nodes(format string, count int, tmpl Node) []Node {
	out := make([]Node, count)
	for i := range out {
		out[i] = tmpl
		out[i].Name = fmt.Sprintf(format, i+1)
	}
	return out
}

func TestParseClusterGood(t *testing.T) {
	h200 := Node{GPUs: 8, GPUModel: "h200-141gb", GPUType: "h200", CPUs: 96, MemMB: 1536 << 10, Features: []string{"h200"}, Partitions: 0b011}
	l40s := Node{GPUs: 4, GPUModel: "l40s-48gb", GPUType: "l40s_48gb", CPUs: 96, MemMB: 1536 << 10, Features: []string{"l40s", "pcie"}, Partitions: 0b011}
	lab := &Cluster{
		Name: "lab",
		Nodes: append(append(
			nodes("h200-%02d", 4, h200),
			nodes("l40s-%02d", 2, l40s)...),
			Node{Name: "login", CPUs: 16, MemMB: 64 << 10, Partitions: 0b110}),
		Partitions: []Partition{
			{Name: "gpu", Nodes: seq(0, 6), MaxTime: 86400, PriorityTier: 1, PriorityJobFactor: 1},
			{Name: "short", Nodes: seq(0, 7), MaxTime: 1800, Default: true, PriorityTier: 10, PriorityJobFactor: 5},
			{Name: "inter", Nodes: []int32{3, 6}, MaxTime: 91 * 60, PriorityTier: 1, PriorityJobFactor: 1},
		},
		DefaultPartition: 1,
	}
	lab.Nodes[3].Partitions = 0b111 // h200-04 is also in inter

	tests := []struct {
		name string
		file string // in testdata, or
		yaml string
		want *Cluster
	}{
		{
			name: "minimal: prefix form, custom GPU, default partition all",
			file: "minimal.yaml",
			want: &Cluster{
				Name:       "tiny",
				Nodes:      nodes("gpu%d", 4, Node{GPUs: 2, GPUModel: "custom", CPUs: 32, MemMB: 262144, Partitions: 1}),
				Partitions: []Partition{{Name: "all", Nodes: seq(0, 4), Default: true, PriorityTier: 1, PriorityJobFactor: 1}},
			},
		},
		{
			name: "overlapping partitions, anchors, merge keys",
			file: "overlap.yaml",
			want: lab,
		},
		{
			name: "no default marked: the first partition is the default",
			yaml: `version: 1
name: c
node_groups:
  - name: "n[1-2]"
    cpus: 4
    memory: 1048576K
partitions:
  - name: a
    nodes: n1
    max_time: UNLIMITED
  - name: b
    nodes: [n2, n1, "n[1-2]"]
    default: false
`,
			want: &Cluster{
				Name: "c",
				Nodes: []Node{
					{Name: "n1", CPUs: 4, MemMB: 1024, Partitions: 0b11},
					{Name: "n2", CPUs: 4, MemMB: 1024, Partitions: 0b10},
				},
				Partitions: []Partition{
					{Name: "a", Nodes: []int32{0}, Default: true, PriorityTier: 1, PriorityJobFactor: 1},
					{Name: "b", Nodes: []int32{0, 1}, PriorityTier: 1, PriorityJobFactor: 1},
				},
			},
		},
		{
			name: "prefix padding, count matching a hostlist, zero GPUs, type override",
			yaml: `version: 1
name: c
node_groups:
  - name: cn
    count: 10
    cpus: 1
    memory: 1T
  - name: "g[7-8]"
    count: 2
    gpu: {model: v100-sxm-32gb, type: Tesla, count: 0}
    cpus: 2
    memory: 2GiB
partitions:
  - name: all
    nodes: [cn, "g[7-8]"]
    max_time: 0:01
    priority_tier: 0
    priority_job_factor: 0
`,
			want: &Cluster{
				Name: "c",
				Nodes: append(nodes("cn%02d", 10, Node{CPUs: 1, MemMB: 1 << 20, Partitions: 1}),
					Node{Name: "g7", GPUModel: "v100-sxm-32gb", GPUType: "tesla", CPUs: 2, MemMB: 2048, Partitions: 1},
					Node{Name: "g8", GPUModel: "v100-sxm-32gb", GPUType: "tesla", CPUs: 2, MemMB: 2048, Partitions: 1}),
				Partitions: []Partition{{Name: "all", Nodes: seq(0, 12), MaxTime: 60, Default: true}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *Cluster
			var err error
			if tt.file != "" {
				got, err = LoadCluster(filepath.Join("testdata", tt.file))
			} else {
				got, err = ParseCluster([]byte(tt.yaml), "c.yaml")
			}
			if err != nil {
				t.Fatal(err)
			}
			// The hardware fields (groups, power, runtime) have their own
			// tests (spec_hw_test.go).
			ignoreHW := cmpopts.IgnoreFields(Cluster{}, "Groups", "Power", "Runtime")
			ignoreGroup := cmpopts.IgnoreFields(Node{}, "Group")
			if diff := cmp.Diff(tt.want, got, ignoreHW, ignoreGroup); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// TestParseClusterErrors checks the exact message, line included, for each
// kind of bad input.
func TestParseClusterErrors(t *testing.T) {
	// head is a valid start; its node group is on lines 3-6.
	const head = `version: 1
name: c
node_groups:
  - name: "gpu[001-004]"
    cpus: 8
    memory: 64G
`
	tests := []struct {
		name string
		yaml string
		want string
		kind error
	}{
		{"empty file", "", `c.yaml: empty cluster spec (want a mapping with version, name, node_groups)`, ErrMissing},
		{"comments only", "# nothing\n", `c.yaml: empty cluster spec (want a mapping with version, name, node_groups)`, ErrMissing},
		{"yaml syntax", "version: 1\nname: [c\n", `c.yaml:1: malformed YAML: did not find expected ',' or ']'`, ErrSyntax},
		{"tab indentation", "version: 1\n\tname: c\n", `c.yaml:2: malformed YAML: found a tab character that violates indentation`, ErrSyntax},
		{"two documents", head + "---\nversion: 1\n", `c.yaml:7: a second YAML document (want one document)`, ErrSyntax},
		{"root not a mapping", "- a\n", `c.yaml:1: want a mapping (version, name, gpu_models, node_models, node_groups, partitions, fabric, power, runtime, slurm), got a list`, ErrSyntax},
		{"unknown top-level key", head + "nodes: 3\n", `c.yaml:7: nodes: unknown key (want version, name, gpu_models, node_models, node_groups, partitions, fabric, power, runtime, slurm)`, ErrUnknownField},
		{"unknown node group key", head + "    mgi: 1\n", `c.yaml:7: node_groups[0].mgi: unknown key (want name, count, model, gpu, cpus, memory, features, weight, mig, mps, power)`, ErrUnknownField},
		{"reserved key", head + "    nvlink: {}\n", `c.yaml:7: node_groups[0].nvlink: not supported by this version of the schema (want name, count, model, gpu, cpus, memory, features, weight, mig, mps, power)`, ErrUnknownField},
		{"duplicate key", head + "    cpus: 9\n", `c.yaml:7: node_groups[0].cpus: key given twice (first at line 5)`, ErrDuplicate},
		{"missing version", "name: c\n", `c.yaml:1: version: required (the schema version, 1)`, ErrMissing},
		{"bad version", strings.Replace(head, "version: 1", "version: 2", 1), `c.yaml:1: version: unsupported version 2 (want 1)`, ErrRange},
		{"version not an integer", strings.Replace(head, "version: 1", `version: "1"`, 1), `c.yaml:1: version: want an integer, got "1"`, ErrSyntax},
		{"bad cluster name", strings.Replace(head, "name: c", "name: my cluster", 1), `c.yaml:2: name: want a name of letters, digits, '-', '_' and '.', got "my cluster"`, ErrSyntax},
		{"no node groups", "version: 1\nname: c\nnode_groups: []\n", `c.yaml:3: node_groups: must list at least one node group`, ErrMissing},
		{"node groups not a list", "version: 1\nname: c\nnode_groups: {a: 1}\n", `c.yaml:3: node_groups: want a list of node groups, got a mapping`, ErrSyntax},
		{"missing cpus", strings.Replace(head, "    cpus: 8\n", "", 1), `c.yaml:4: node_groups[0].cpus: required (CPUs per node, an integer >= 1)`, ErrMissing},
		{"negative gpu count", head + "    gpu: {model: h100-sxm-80gb, count: -2}\n", `c.yaml:7: node_groups[0].gpu.count: must be >= 0, got -2`, ErrRange},
		{"gpu count too large", head + "    gpu:\n      model: h100-sxm-80gb\n      count: 2000\n", `c.yaml:9: node_groups[0].gpu.count: must be <= 1024, got 2000`, ErrRange},
		{"unknown gpu model", head + "    gpu: {model: h100, count: 8}\n", `c.yaml:7: node_groups[0].gpu.model: unknown GPU model "h100" (want ` + gpuModelChoices() + `)`, ErrUnknownName},
		{"missing gpu model", head + "    gpu: {count: 8}\n", `c.yaml:7: node_groups[0].gpu.model: required (one of ` + gpuModelChoices() + `)`, ErrMissing},
		{"bad gres type", head + "    gpu: {model: custom, type: \"a:b\", count: 8}\n", `c.yaml:7: node_groups[0].gpu.type: want a name of letters, digits, '-', '_' and '.', got "a:b"`, ErrSyntax},
		{"bad memory unit", strings.Replace(head, "64G", "64Q", 1), `c.yaml:6: node_groups[0].memory: want a size such as "512G", "2T", "1048576K" or MiB as an integer, got "64Q" (unknown unit "Q" (want K, M, G or T))`, ErrSyntax},
		{"memory in bytes", strings.Replace(head, "64G", "100B", 1), `c.yaml:6: node_groups[0].memory: want a size such as "512G", "2T", "1048576K" or MiB as an integer, got "100B" (unknown unit "B" (want K, M, G or T))`, ErrSyntax},
		{"memory not whole MiB", strings.Replace(head, "64G", "1000K", 1), `c.yaml:6: node_groups[0].memory: want a size such as "512G", "2T", "1048576K" or MiB as an integer, got "1000K" (not a whole number of MiB)`, ErrSyntax},
		{"zero memory", strings.Replace(head, "64G", "0", 1), `c.yaml:6: node_groups[0].memory: must be at least 1 MiB, got 0`, ErrRange},
		{"bad hostlist", strings.Replace(head, `"gpu[001-004]"`, `"gpu[001-004"`, 1), `c.yaml:4: node_groups[0].name: hostlist "gpu[001-004": "[" at offset 3 has no closing "]"`, ErrSyntax},
		{"count mismatch", head + "    count: 5\n", `c.yaml:7: node_groups[0].count: 5 does not match the 4 nodes of "gpu[001-004]" (omit count, or give a plain prefix as name)`, ErrRange},
		// FuzzParseCluster's crasher: a name list giving one node twice.
		{"duplicate node in a group", head + "  - name: \"n[1,1]\"\n    cpus: 8\n    memory: 64G\n", `c.yaml:7: node_groups[1].name: node "n1" is named twice in this group's names`, ErrDuplicate},
		{"duplicate node across groups", head + "  - name: \"gpu[004-005]\"\n    cpus: 8\n    memory: 64G\n", `c.yaml:7: node_groups[1].name: node "gpu004" is already defined by node_groups[0] (line 4)`, ErrDuplicate},
		{"duplicate group name", head + "  - name: \"gpu[001-004]\"\n    cpus: 8\n    memory: 64G\n", `c.yaml:7: node_groups[1].name: node group "gpu[001-004]" is already defined by node_groups[0] (line 4)`, ErrDuplicate},
		{"too many nodes", head + "  - name: \"n[1-65536]\"\n    cpus: 8\n    memory: 64G\n", `c.yaml:7: node_groups[1].name: the cluster would have more than 65536 nodes`, ErrRange},
		{"duplicate feature", head + "    features: [a, b, a]\n", `c.yaml:7: node_groups[0].features[2]: feature "a" is listed twice (also node_groups[0].features[0])`, ErrDuplicate},
		{"empty partitions", head + "partitions: []\n", `c.yaml:7: partitions: must list at least one partition (or leave the key out for one partition "all" of every node)`, ErrMissing},
		{"unknown node in partition", head + "partitions:\n  - name: p\n    nodes: \"gpu[001-005]\"\n", `c.yaml:9: partitions[0].nodes: unknown node "gpu005" (want ALL, a node-group name or a hostlist of defined nodes; node groups: gpu[001-004])`, ErrUnknownName},
		{"unknown node in partition list", head + "partitions:\n  - name: p\n    nodes:\n      - ALL\n      - cpu1\n", `c.yaml:11: partitions[0].nodes[1]: unknown node "cpu1" (want ALL, a node-group name or a hostlist of defined nodes; node groups: gpu[001-004])`, ErrUnknownName},
		{"partition hostlists too long in all", "version: 1\nname: c\nnode_groups: [{name: \"n[1-60002]\", cpus: 1, memory: 1}]\npartitions:\n  - {name: p, nodes: [\"n[1-60000]\", \"n[2-60001]\", \"n[3-60002]\"]}\n", `c.yaml:5: partitions[0].nodes[2]: the hostlists of partitions[0].nodes name more than 131072 nodes in all`, ErrRange},
		{"partition without nodes", head + "partitions:\n  - name: p\n", `c.yaml:8: partitions[0].nodes: required (ALL, a hostlist, or a list of node-group names and hostlists)`, ErrMissing},
		{"bad max_time", head + "partitions:\n  - name: p\n    nodes: ALL\n    max_time: 2-00:00:60\n", `c.yaml:10: partitions[0].max_time: bad Slurm time "2-00:00:60": seconds must be below 60 (want UNLIMITED, M, M:S, H:M:S, D-H, D-H:M or D-H:M:S)`, ErrSyntax},
		{"zero max_time", head + "partitions:\n  - name: p\n    nodes: ALL\n    max_time: 0\n", `c.yaml:10: partitions[0].max_time: must be at least 1 minute or UNLIMITED, got "0"`, ErrRange},
		{"two defaults", head + "partitions:\n  - name: p\n    nodes: ALL\n    default: true\n  - name: q\n    nodes: ALL\n    default: true\n", `c.yaml:13: partitions[1].default: only one partition may be the default, and partitions[0] ("p") already is`, ErrDuplicate},
		{"default not a bool", head + "partitions:\n  - name: p\n    nodes: ALL\n    default: maybe\n", `c.yaml:10: partitions[0].default: want true or false, got "maybe"`, ErrSyntax},
		{"duplicate partition", head + "partitions:\n  - name: p\n    nodes: ALL\n  - name: p\n    nodes: ALL\n", `c.yaml:10: partitions[1].name: partition "p" is already defined by partitions[0] (line 8)`, ErrDuplicate},
		{"priority tier range", head + "partitions:\n  - name: p\n    nodes: ALL\n    priority_tier: 65534\n", `c.yaml:10: partitions[0].priority_tier: must be <= 65533, got 65534`, ErrRange},
		{"reserved partition key", head + "partitions:\n  - name: p\n    nodes: ALL\n    min_nodes: 4\n", `c.yaml:10: partitions[0].min_nodes: not supported by this version of the schema (want name, nodes, max_time, max_nodes, default_time, default, priority_tier, priority_job_factor, def_cpu_per_gpu, def_mem_per_cpu, def_mem_per_gpu)`, ErrUnknownField},
		{"bad max_nodes", head + "partitions:\n  - name: p\n    nodes: ALL\n    max_nodes: -1\n", `c.yaml:10: partitions[0].max_nodes: must be >= 0, got -1`, ErrRange},
		{"too many partitions", head + "partitions:\n" + strings.Repeat("  - {name: p, nodes: ALL}\n", 64) + "  - {name: q, nodes: ALL}\n", `c.yaml:72: partitions[64]: at most 64 partitions, got 65`, ErrRange},
		{"reserved node name", "version: 1\nname: c\nnode_groups:\n  - {name: ALL, cpus: 1, memory: 1}\n", `c.yaml:4: node_groups[0].name: node name "ALL" is reserved (it means every node in partitions[].nodes)`, ErrRange},
		{"bad merge", head + "    <<: 3\n", `c.yaml:7: node_groups[0].<<: want a mapping or a list of mappings to merge, got "3"`, ErrSyntax},
		{"null node group", "version: 1\nname: c\nnode_groups:\n  -\n", `c.yaml:4: node_groups[0]: want a mapping (name, count, model, gpu, cpus, memory, features, weight, mig, mps, power), got null`, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseCluster([]byte(tt.yaml), "c.yaml")
			if err == nil {
				t.Fatalf("no error, got cluster %q; want %s", c.Name, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != "c.yaml" {
				t.Errorf("error %T is not a *ParseError for c.yaml", err)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error does not wrap %v", tt.kind)
			}
		})
	}
}

func TestParseErrorFormat(t *testing.T) {
	msg := &specError{kind: ErrRange, msg: "must be >= 0, got -2"}
	tests := []struct {
		e    ParseError
		want string
	}{
		{ParseError{Path: "c.yaml", Line: 12, Field: "a.b", Err: msg}, "c.yaml:12: a.b: must be >= 0, got -2"},
		{ParseError{Path: "c.yaml", Field: "a.b", Err: msg}, "c.yaml: a.b: must be >= 0, got -2"},
		{ParseError{Line: 12, Field: "a.b", Err: msg}, "line 12: a.b: must be >= 0, got -2"},
		{ParseError{Line: 12, Err: msg}, "line 12: must be >= 0, got -2"},
		{ParseError{Err: msg}, "must be >= 0, got -2"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestLoadClusterMissingFile(t *testing.T) {
	_, err := LoadCluster(filepath.Join("testdata", "no-such-file.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadCluster of a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestExampleCluster(t *testing.T) {
	c := ExampleCluster()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// 32 H100 nodes + 16 A100 nodes, 8 GPUs each: 48 nodes, 384 GPUs.
	if len(c.Nodes) != 48 || c.TotalGPUs() != 384 {
		t.Fatalf("example: %d nodes, %d GPUs; want 48, 384", len(c.Nodes), c.TotalGPUs())
	}
	h100 := Node{Name: "h100-001", GPUs: 8, GPUModel: "h100-sxm-80gb", GPUType: "h100", CPUs: 112, MemMB: 2 << 20, Features: []string{"h100", "nvlink"}, Partitions: 0b011}
	a100 := Node{Name: "a100-016", GPUs: 8, GPUModel: "a100-sxm-80gb", GPUType: "a100", CPUs: 128, MemMB: 1 << 20, Features: []string{"a100", "nvlink"}, Partitions: 0b101, Group: 1}
	if diff := cmp.Diff(h100, c.Nodes[0]); diff != "" {
		t.Errorf("first node (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(a100, c.Nodes[47]); diff != "" {
		t.Errorf("last node (-want +got):\n%s", diff)
	}
	wantParts := []Partition{
		{Name: "gpu", Nodes: seq(0, 48), MaxTime: 2 * 86400, Default: true, PriorityTier: 1, PriorityJobFactor: 1},
		{Name: "h100", Nodes: seq(0, 32), MaxTime: 2 * 86400, PriorityTier: 1, PriorityJobFactor: 1},
		{Name: "a100", Nodes: seq(32, 48), MaxTime: 2 * 86400, PriorityTier: 1, PriorityJobFactor: 1},
	}
	if diff := cmp.Diff(wantParts, c.Partitions); diff != "" {
		t.Errorf("partitions (-want +got):\n%s", diff)
	}
	if c.DefaultPartition != 0 || c.PartitionIndex("a100") != 2 {
		t.Errorf("DefaultPartition %d, a100 at %d; want 0, 2", c.DefaultPartition, c.PartitionIndex("a100"))
	}
	var names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	if got := CompressHostlist(names); got != "a100-[001-016],h100-[001-032]" {
		t.Errorf("node names compress to %q", got)
	}
	// Each call is a fresh copy.
	c.Nodes[0].Name = "changed"
	if ExampleCluster().Nodes[0].Name != "h100-001" {
		t.Error("ExampleCluster returned shared state")
	}
	y := ExampleClusterYAML()
	y[0] = 'X'
	if ExampleClusterYAML()[0] == 'X' {
		t.Error("ExampleClusterYAML returned shared bytes")
	}
	// The file on disk is what is embedded.
	disk, err := os.ReadFile(exampleClusterPath)
	if err != nil || string(disk) != string(exampleClusterYAML) {
		t.Errorf("embedded example differs from %s (%v)", exampleClusterPath, err)
	}
}

func TestUniformCluster(t *testing.T) {
	got := UniformCluster("swf", 3, 64, 4, 256000)
	tmpl := Node{GPUs: 4, GPUModel: CustomGPUModel, CPUs: 64, MemMB: 256000, Partitions: 1}
	want := &Cluster{
		Name:       "swf",
		Nodes:      nodes("node%04d", 3, tmpl),
		Partitions: []Partition{{Name: "all", Nodes: seq(0, 3), Default: true, PriorityTier: 1, PriorityJobFactor: 1}},
		Groups:     []NodeGroup{{Name: "node[0001-0003]", End: 3, Weight: 1}},
		Power:      DefaultPowerModel(),
		Runtime:    DefaultRuntimeModel(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}

	big := UniformCluster("big", 12345, 1, 0, 1)
	if big.Nodes[0].Name != "node00001" || big.Nodes[12344].Name != "node12345" || big.Nodes[0].GPUModel != "" {
		t.Errorf("big cluster nodes %q … %q, model %q", big.Nodes[0].Name, big.Nodes[12344].Name, big.Nodes[0].GPUModel)
	}
	if err := big.Validate(); err != nil {
		t.Error(err)
	}

	for _, n := range []int{0, -1, MaxClusterNodes + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("UniformCluster with %d nodes did not panic", n)
				}
			}()
			UniformCluster("x", n, 1, 1, 1)
		}()
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Cluster)
		want   string
	}{
		{"no nodes", func(c *Cluster) { c.Nodes = nil }, `cluster "example": no nodes`},
		{"duplicate node", func(c *Cluster) { c.Nodes[1].Name = c.Nodes[0].Name }, `cluster "example": nodes 0 and 1 are both called "h100-001"`},
		{"negative", func(c *Cluster) { c.Nodes[2].GPUs = -1 }, `cluster "example": node "h100-003": negative count (gpus -1, cpus 112, mem_mb 2097152)`},
		{"no partitions", func(c *Cluster) { c.Partitions = nil }, `cluster "example": 0 partitions, want 1 to 64`},
		{"unsorted", func(c *Cluster) { c.Partitions[0].Nodes[0], c.Partitions[0].Nodes[1] = 1, 0 }, `cluster "example": partition "gpu": node indices not strictly ascending at position 1`},
		{"out of range", func(c *Cluster) { c.Partitions[2].Nodes[15] = 48 }, `cluster "example": partition "a100": node index 48 out of range [0, 48)`},
		{"bits", func(c *Cluster) { c.Nodes[5].Partitions = 5 }, `cluster "example": node "h100-006": Partitions is 0x5, the partition lists give 0x3`},
		{"two defaults", func(c *Cluster) { c.Partitions[2].Default = true }, `cluster "example": partition "a100" (2) is marked default but DefaultPartition is 0`},
		{"no default", func(c *Cluster) { c.Partitions[0].Default = false }, `cluster "example": 0 default partitions, want exactly 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ExampleCluster()
			tt.modify(c)
			err := c.Validate()
			if err == nil || err.Error() != tt.want {
				t.Errorf("Validate() = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestGPUCatalog(t *testing.T) {
	cat := GPUCatalog()
	for i, g := range cat {
		if i > 0 && cat[i-1].Name >= g.Name {
			t.Errorf("catalog not sorted at %q", g.Name)
		}
		if got, ok := LookupGPU(g.Name); !ok || got != g {
			t.Errorf("LookupGPU(%q) = %v, %v", g.Name, got, ok)
		}
		if g.DefaultType == "" || strings.ToLower(g.DefaultType) != g.DefaultType {
			t.Errorf("%q: default type %q not lower case", g.Name, g.DefaultType)
		}
	}
	for _, name := range []string{"h100-sxm-80gb", "h100-pcie-80gb", "h200-141gb", "a100-sxm-80gb", "a100-sxm-40gb", "a100-pcie-80gb", "v100-sxm-32gb"} {
		if _, ok := LookupGPU(name); !ok {
			t.Errorf("catalog lacks %q", name)
		}
	}
	if _, ok := LookupGPU(CustomGPUModel); ok {
		t.Error("custom is a catalog entry")
	}
	cat[0].Name = "changed"
	if GPUCatalog()[0].Name == "changed" {
		t.Error("GPUCatalog returned shared state")
	}
}

func FuzzParseCluster(f *testing.F) {
	f.Add(string(exampleClusterYAML))
	for _, name := range []string{"minimal.yaml", "overlap.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	for _, s := range []string{
		"",
		"version: 1\nname: c\nnode_groups:\n  - {name: \"n[1-2]\", cpus: 1, memory: 1G}\n",
		"version: 1\nname: c\nnode_groups:\n  - &a {name: n, count: 3, cpus: 1, memory: 1}\n  - {<<: *a, name: m}\npartitions: [{name: p, nodes: [n, m1], max_time: 1-0}]\n",
		"a: &a [*a]\n",
		"version: 1\nname: c\nnode_groups: [{name: \"x[1-3]y[01-02]\", cpus: 1, memory: 1K}]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCluster([]byte(s), "f.yaml")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != "f.yaml" || pe.Line < 0 || pe.Err == nil {
				t.Fatalf("error %T %v is not a *ParseError for f.yaml", err, err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("resolved cluster invalid: %v", err)
		}
	})
}
