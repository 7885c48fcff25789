package hwmodels

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// memFiles is an in-memory ConfFiles: path → contents.
type memFiles map[string]string

func (m memFiles) ReadFile(p string) ([]byte, error) {
	s, ok := m[filepath.Clean(p)]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return []byte(s), nil
}

func (m memFiles) Glob(pattern string) ([]string, error) {
	var out []string
	for p := range m {
		if ok, err := filepath.Match(pattern, p); err != nil {
			return nil, err
		} else if ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// importMem imports /etc/slurm/slurm.conf of files.
func importMem(t *testing.T, files memFiles) (*Cluster, []string, error) {
	t.Helper()
	f := SlurmFiles{SlurmConf: []byte(files["/etc/slurm/slurm.conf"]), SlurmPath: "/etc/slurm/slurm.conf", Files: files}
	spec, warns, err := ImportSlurm(f)
	var ws []string
	for _, w := range warns {
		ws = append(ws, w.String())
	}
	if err != nil {
		return nil, ws, err
	}
	c, perr := ParseCluster(spec, "imported.yaml")
	if perr != nil {
		t.Fatalf("imported spec does not load: %v\n%s", perr, spec)
	}
	return c, ws, nil
}

func readSeed(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "seeds", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestImportSeedLimits: the seed guide's partitions (gpu-short MaxTime 4 h
// MaxNodes 2, the default; gpu-long 7 days MaxNodes 8; gpu-interactive on
// gpu01 only, 2 h, MaxNodes 1; Priority=300/100/500, the pre-16.05 key
// that sets both PriorityTier and PriorityJobFactor) reach the partition
// fields the simulation enforces.
func TestImportSeedLimits(t *testing.T) {
	c, warns, err := importMem(t, memFiles{
		"/etc/slurm/slurm.conf": readSeed(t, "mevasis-slurm.conf"),
		"/etc/slurm/gres.conf":  readSeed(t, "mevasis-gres.conf"),
	})
	if err != nil {
		t.Fatal(err)
	}
	type lim struct {
		Name              string
		Nodes             string
		MaxTime           int64
		MaxNodes          int32
		Default           bool
		Tier, JobFactor   int32
		DefaultTime       int64
		DefCPUPerGPU      int32
		DefMem, DefMemGPU int64
	}
	var got []lim
	for _, p := range c.Partitions {
		var names []string
		for _, ni := range p.Nodes {
			names = append(names, c.Nodes[ni].Name)
		}
		got = append(got, lim{p.Name, CompressHostlist(names), p.MaxTime, p.MaxNodes, p.Default, p.PriorityTier, p.PriorityJobFactor, p.DefaultTime, p.DefCPUPerGPU, p.DefMemPerCPU, p.DefMemPerGPU})
	}
	want := []lim{
		{"gpu-short", "gpu[01-04]", 4 * 3600, 2, true, 300, 300, 0, 0, 0, 0},
		{"gpu-long", "gpu[01-04]", 7 * 86400, 8, false, 100, 100, 0, 0, 0, 0},
		{"gpu-interactive", "gpu01", 2 * 3600, 1, false, 500, 500, 0, 0, 0, 0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("partitions (-want +got):\n%s", d)
	}
	// gres.conf beside slurm.conf is read; its H100 lines agree with
	// slurm.conf's Gres=gpu:h100:8.
	if n := c.Nodes[0]; n.GPUs != 8 || n.GPUType != "h100" {
		t.Errorf("gpu01 = %+v", n)
	}
	wantWarns := []string{"/etc/slurm/gres.conf: read beside slurm.conf, where Slurm reads it (--gres-conf names another)"}
	if d := cmp.Diff(wantWarns, warns); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

// TestImportPartitionDefaults: DefaultTime, DefCpuPerGPU, DefMemPerCPU,
// DefMemPerGPU (partition, else global) and MaxNodes=UNLIMITED.
func TestImportPartitionDefaults(t *testing.T) {
	conf := `DefCpuPerGPU=4
DefMemPerCPU=8000
NodeName=g[1-2] CPUs=64 RealMemory=512000 Gres=gpu:h100:8
PartitionName=short Nodes=ALL MaxTime=4:00:00 DefaultTime=30 MaxNodes=UNLIMITED DefMemPerGPU=65536 Default=YES
PartitionName=long Nodes=ALL MaxTime=1:00:00 DefaultTime=2:00:00 DefCpuPerGPU=16
`
	c, warns, err := importMem(t, memFiles{"/etc/slurm/slurm.conf": conf})
	if err != nil {
		t.Fatal(err)
	}
	short, long := c.Partitions[0], c.Partitions[1]
	// short: DefaultTime 30 min; global DefCpuPerGPU 4 and DefMemPerCPU
	// 8000; its own DefMemPerGPU. long: DefaultTime 2 h above MaxTime 1 h
	// is dropped, as slurmctld does; its own DefCpuPerGPU 16.
	if short.DefaultTime != 1800 || short.MaxNodes != 0 || short.DefCPUPerGPU != 4 || short.DefMemPerCPU != 8000 || short.DefMemPerGPU != 65536 {
		t.Errorf("short = %+v", short)
	}
	if long.DefaultTime != 0 || long.DefCPUPerGPU != 16 || long.DefMemPerCPU != 8000 || long.DefMemPerGPU != 0 {
		t.Errorf("long = %+v", long)
	}
	want := "/etc/slurm/slurm.conf:5: partition long: DefaultTime=2:00:00 exceeds MaxTime=1:00:00; dropped, as slurmctld does (read_config.c)"
	if !slices.Contains(warns, want) {
		t.Errorf("warnings %q lack %q", warns, want)
	}
}

// TestImportPowerSaving: SuspendTime, ResumeTimeout, SuspendTimeout
// (Slurm's default 30 s when unset), SuspendExcNodes and SuspendExcParts
// become the power section.
func TestImportPowerSaving(t *testing.T) {
	conf := `SuspendTime=600
ResumeTimeout=120
SuspendExcNodes=g[1,9],g7:1
SuspendExcParts=debug
NodeName=g[1-4] CPUs=8 RealMemory=1000
NodeName=g7 CPUs=8 RealMemory=1000
PartitionName=batch Nodes=ALL Default=YES
PartitionName=debug Nodes=g4
`
	c, warns, err := importMem(t, memFiles{"/etc/slurm/slurm.conf": conf})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Power
	if p.SuspendTime != 600 || p.ResumeTimeout != 120 || p.SuspendTimeout != 30 {
		t.Errorf("power = %+v", p)
	}
	// g1 and g7 by name (g7:1, the count form, keeps g7 up), g4 by
	// partition debug; g9 does not exist.
	if d := cmp.Diff([]int32{0, 3, 4}, p.SuspendExempt); d != "" {
		t.Errorf("SuspendExempt (-want +got):\n%s", d)
	}
	for _, want := range []string{
		"/etc/slurm/slurm.conf:3: SuspendExcNodes names node g9, which no NodeName line defines; skipped",
		"/etc/slurm/slurm.conf:3: SuspendExcNodes g7:1: the count form is not modeled; all of g7 stay up",
	} {
		if !slices.Contains(warns, want) {
			t.Errorf("warnings %q lack %q", warns, want)
		}
	}
	for _, off := range []string{"SuspendTime=NONE", "SuspendTime=-1", "ResumeTimeout=30"} {
		c, _, err := importMem(t, memFiles{"/etc/slurm/slurm.conf": off + "\nNodeName=g1 CPUs=8 RealMemory=1000\n"})
		if err != nil || c.Power.SuspendTime != 0 {
			t.Errorf("%s: err %v, SuspendTime %d; want power saving off", off, err, c.Power.SuspendTime)
		}
	}
}

// TestImportInclude: Include lines are read in place, relative to the
// including file's directory, with globs (lexical order), "%c" for
// ClusterName, loop detection and a depth limit.
func TestImportInclude(t *testing.T) {
	files := memFiles{
		"/etc/slurm/slurm.conf":         "ClusterName=alpha\ninclude nodes/%c.conf\nInclude parts.d/*.conf\n",
		"/etc/slurm/nodes/alpha.conf":   "NodeName=g[1-2] CPUs=8 RealMemory=1000\nInclude ../more/extra.conf\n",
		"/etc/slurm/more/extra.conf":    "NodeName=g3 CPUs=16 RealMemory=1000\n",
		"/etc/slurm/parts.d/10-a.conf":  "PartitionName=a Nodes=g[1-2] Default=YES\n",
		"/etc/slurm/parts.d/20-b.conf":  "PartitionName=b Nodes=g3 MaxNodes=1\n",
		"/etc/slurm/parts.d/notes.txt":  "not a partition\n",
		"/etc/slurm/parts.d/30-c.conf~": "PartitionName=x Nodes=g9\n",
	}
	c, _, err := importMem(t, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 3 || c.Nodes[2].CPUs != 16 || len(c.Partitions) != 2 || c.Partitions[0].Name != "a" || c.Partitions[1].MaxNodes != 1 {
		t.Fatalf("nodes %+v, partitions %+v", c.Nodes, c.Partitions)
	}

	for _, tt := range []struct {
		name  string
		files memFiles
		want  string
	}{
		{"missing", memFiles{"/etc/slurm/slurm.conf": "Include nodes.conf\n"},
			"/etc/slurm/slurm.conf:1: Include: Include nodes.conf: /etc/slurm/nodes.conf does not exist"},
		{"loop", memFiles{"/etc/slurm/slurm.conf": "NodeName=g1 CPUs=1\nInclude a.conf\n", "/etc/slurm/a.conf": "Include sub/b.conf\n", "/etc/slurm/sub/b.conf": "Include ../a.conf\n"},
			"/etc/slurm/sub/b.conf:1: Include: Include ../a.conf: include loop /etc/slurm/a.conf > /etc/slurm/sub/b.conf > /etc/slurm/a.conf"},
		{"self", memFiles{"/etc/slurm/slurm.conf": "include slurm.conf\n"},
			"/etc/slurm/slurm.conf:1: Include: Include slurm.conf: include loop /etc/slurm/slurm.conf > /etc/slurm/slurm.conf"},
		{"%c first", memFiles{"/etc/slurm/slurm.conf": "Include %c.conf\nClusterName=x\n"},
			"/etc/slurm/slurm.conf:1: Include: Include %c.conf: %c stands for ClusterName, which no line before it sets"},
		{"two names", memFiles{"/etc/slurm/slurm.conf": "Include a.conf b.conf\n"},
			`/etc/slurm/slurm.conf:1: Include: "Include a.conf b.conf": want Include and one file name`},
		{"bad line inside", memFiles{"/etc/slurm/slurm.conf": "Include a.conf\n", "/etc/slurm/a.conf": "\nNodeName=g1 CPUs=x\n"},
			`/etc/slurm/a.conf:2: cpus: want a non-negative integer, got "x"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := importMem(t, tt.files)
			var pe *ParseError
			if err == nil || err.Error() != tt.want || !errors.As(err, &pe) {
				t.Fatalf("error %v\nwant  %s", err, tt.want)
			}
		})
	}

	// Depth: a chain of 17 files, each including the next.
	deep := memFiles{"/etc/slurm/slurm.conf": "NodeName=g1 CPUs=1\nInclude d1.conf\n"}
	for i := 1; i <= 17; i++ {
		deep[fmt.Sprintf("/etc/slurm/d%d.conf", i)] = fmt.Sprintf("Include d%d.conf\n", i+1)
	}
	if _, _, err := importMem(t, deep); err == nil || !strings.Contains(err.Error(), "includes nest more than 16 deep") {
		t.Errorf("deep includes: %v", err)
	}
	// A glob matching nothing includes nothing, with a warning.
	_, warns, err := importMem(t, memFiles{"/etc/slurm/slurm.conf": "NodeName=g1 CPUs=1 RealMemory=1\nInclude conf.d/*.conf\n"})
	if err != nil || !slices.Contains(warns, "/etc/slurm/slurm.conf:2: Include conf.d/*.conf matches no file; nothing included") {
		t.Errorf("empty glob: %v %q", err, warns)
	}
	// Without file access an Include is an error, not silence.
	_, _, err = ImportSlurm(SlurmFiles{SlurmConf: []byte("NodeName=g1 CPUs=1\ninclude x.conf\n")})
	if err == nil || !strings.HasPrefix(err.Error(), "slurm.conf:2: Include: Include x.conf: this reader has no file access") {
		t.Errorf("no file access: %v", err)
	}
}

// TestImportGresConfLikeSlurm: a gres.conf line without NodeName applies
// to the nodes whose slurm.conf Gres= declares that GRES, not to CPU-only
// nodes; typed gres.conf lines refine an untyped slurm.conf Gres=gpu:8.
func TestImportGresConfLikeSlurm(t *testing.T) {
	conf := `GresTypes=gpu
NodeName=g[1-2] CPUs=64 RealMemory=512000 Gres=gpu:8
NodeName=c[1-2] CPUs=128 RealMemory=256000
PartitionName=all Nodes=ALL Default=YES
`
	gres := `Name=gpu Type=h100 File=/dev/nvidia[0-7]
`
	c, warns, err := importMem(t, memFiles{"/etc/slurm/slurm.conf": conf, "/etc/slurm/gres.conf": gres})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		want := int32(8)
		wantType := "h100"
		if strings.HasPrefix(n.Name, "c") {
			want, wantType = 0, ""
		}
		if n.GPUs != want || n.GPUType != wantType {
			t.Errorf("%s: %d GPUs of type %q, want %d of %q", n.Name, n.GPUs, n.GPUType, want, wantType)
		}
	}
	if len(c.Groups) != 2 {
		t.Errorf("%d groups, want 2 (g[1-2], c[1-2])", len(c.Groups))
	}
	if slices.ContainsFunc(warns, func(w string) bool { return strings.Contains(w, "c1") }) {
		t.Errorf("a warning about a CPU-only node: %q", warns)
	}

	// A line without NodeName for a GRES no node declares is dropped,
	// with a warning; a typed count that disagrees keeps slurm.conf's.
	gres = "Name=mps Count=800\nNodeName=g1 Name=gpu Type=a100 Count=4\n"
	c, warns, err = importMem(t, memFiles{"/etc/slurm/slurm.conf": conf, "/etc/slurm/gres.conf": gres})
	if err != nil {
		t.Fatal(err)
	}
	if g1, g2 := c.Nodes[0], c.Nodes[1]; g1.GPUType != "a100" || g1.GPUs != 8 || g2.GPUType != "" || g2.GPUs != 8 {
		t.Errorf("g1 %+v, g2 %+v", g1, g2)
	}
	for _, want := range []string{
		"/etc/slurm/gres.conf:1: line without NodeName applies to the nodes whose slurm.conf Gres= declares mps, and none does; ignored",
		"/etc/slurm/gres.conf:2: g1: gres.conf has 4 GPUs of type a100, slurm.conf Gres= says 8; using slurm.conf's count",
	} {
		if !slices.Contains(warns, want) {
			t.Errorf("warnings %q lack %q", warns, want)
		}
	}
}

// TestImportTopologyBeside: under TopologyPlugin=topology/tree the
// topology.conf beside slurm.conf is read when none is given.
func TestImportTopologyBeside(t *testing.T) {
	files := memFiles{
		"/etc/slurm/slurm.conf":    "TopologyPlugin=topology/tree\nNodeName=g[1-4] CPUs=8 RealMemory=1000\n",
		"/etc/slurm/topology.conf": "SwitchName=l1 Nodes=g[1-2]\nSwitchName=l2 Nodes=g[3-4]\nSwitchName=top Switches=l[1-2]\n",
	}
	c, _, err := importMem(t, files)
	if err != nil {
		t.Fatal(err)
	}
	if c.Fabric == nil || c.Fabric.LowestCommonSwitch([]int32{0, 1}) != 0 || c.Fabric.LowestCommonSwitch([]int32{1, 2}) != 2 {
		t.Fatalf("fabric %+v", c.Fabric)
	}
	if v, _ := c.Slurm.Get("TopologyPlugin"); v != "topology/tree" {
		t.Errorf("TopologyPlugin kept as %q", v)
	}
	delete(files, "/etc/slurm/topology.conf")
	c, warns, err := importMem(t, files)
	if err != nil || c.Fabric != nil || !slices.Contains(warns, "/etc/slurm/slurm.conf: TopologyPlugin=topology/tree but there is no /etc/slurm/topology.conf: no fabric imported") {
		t.Errorf("without topology.conf: %v, fabric %v, warnings %q", err, c.Fabric, warns)
	}
}

// TestImportWarnsEveryUnmodeledKey: each key read but not modeled is
// warned about once, at its first line; keys set to the value the
// simulation behaves as (State=UP, OverSubscribe=NO, select/cons_tres)
// are not, nor are keys the slurm policy reads (KillWait, line 8: its
// preemption quiet time with MessageTimeout).
func TestImportWarnsEveryUnmodeledKey(t *testing.T) {
	conf := `SlurmctldHost=ctl
AuthType=auth/munge
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MaxArraySize=10001
MinJobAge=300
KillWait=30
PriorityParameters=foo
PriorityWeightAge=1000
JobRequeue=0
NodeName=g[1-2] CPUs=8 RealMemory=1000 State=UNKNOWN NodeAddr=10.0.0.1
NodeName=g[3-4] CPUs=8 RealMemory=1000 State=UNKNOWN
PartitionName=a Nodes=ALL Default=YES State=UP OverSubscribe=NO GraceTime=60 PreemptMode=REQUEUE
PartitionName=b Nodes=ALL State=DOWN AllowAccounts=ml GraceTime=30
`
	gres := "NodeName=g[1-2] Name=gpu File=/dev/nvidia0 Cores=0-3 Links=-1,2\n"
	_, warns, err := importMem(t, memFiles{"/etc/slurm/slurm.conf": conf, "/etc/slurm/gres.conf": gres})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/etc/slurm/slurm.conf:1: SlurmctldHost has no effect on a simulated schedule; ignored",
		"/etc/slurm/slurm.conf:2: AuthType has no effect on a simulated schedule; ignored",
		"/etc/slurm/slurm.conf:6: MaxArraySize is not modeled by schedsim; kept in the spec's slurm section",
		"/etc/slurm/slurm.conf:7: MinJobAge is not modeled by schedsim; kept in the spec's slurm section",
		"/etc/slurm/slurm.conf:9: PriorityParameters is not modeled by schedsim; kept in the spec's slurm section",
		"/etc/slurm/slurm.conf:12: NodeName key State is not modeled by schedsim; ignored",
		"/etc/slurm/slurm.conf:12: NodeName key NodeAddr is not modeled by schedsim; ignored",
		"/etc/slurm/slurm.conf:14: PartitionName key GraceTime is not modeled by schedsim; kept in the spec's slurm section",
		"/etc/slurm/slurm.conf:15: PartitionName State=DOWN is not modeled: partitions take and run jobs as if UP",
		"/etc/slurm/slurm.conf:15: PartitionName key AllowAccounts is not modeled by schedsim; kept in the spec's slurm section",
		"/etc/slurm/gres.conf: read beside slurm.conf, where Slurm reads it (--gres-conf names another)",
		"/etc/slurm/gres.conf:1: gres.conf key Cores is not modeled by schedsim (no GPU-CPU affinity or NVLink layout within a node); ignored",
		"/etc/slurm/gres.conf:1: gres.conf key Links is not modeled by schedsim (no GPU-CPU affinity or NVLink layout within a node); ignored",
		"/etc/slurm/slurm.conf:12: gres.conf defines GPUs for g1 but its NodeName line has no Gres=; taking gres.conf's",
	}
	if d := cmp.Diff(want, warns); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

// TestImportBounds: hostile sizes are refused before anything is
// expanded, with the file, line and limit.
func TestImportBounds(t *testing.T) {
	// 300 lines of 60,001 nodes: 18 M nodes. Line 2 passes the 65,536
	// node limit (120,002 in all).
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "NodeName=n%d-[000001-060001] CPUs=4 RealMemory=1000\n", i)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	_, _, err := ImportSlurm(SlurmFiles{SlurmConf: []byte(b.String()), SlurmPath: "big.conf"})
	runtime.ReadMemStats(&ms)
	if err == nil || err.Error() != "big.conf:2: NodeName: the NodeName lines up to this one define more than 65536 nodes (schedsim models at most 65536 nodes)" {
		t.Errorf("error %v", err)
	}
	// Line 1's 60,001 names are expanded (a few MB); the other 299 lines
	// are not.
	if alloc := ms.TotalAlloc - before; alloc > 64<<20 {
		t.Errorf("allocated %d MB before refusing", alloc>>20)
	}
	_, _, err = ImportSlurm(SlurmFiles{SlurmConf: []byte(b.String()), SlurmPath: "big.conf", MaxNodes: 1000})
	if err == nil || err.Error() != "big.conf:1: NodeName: the NodeName lines up to this one define more than 1000 nodes (the limit set by --max-nodes; raise it, up to 65536)" {
		t.Errorf("--max-nodes 1000: %v", err)
	}

	for _, tt := range []struct{ name, slurm, gres, want string }{
		// The FuzzImportSlurm crasher: "!0" was taken as a GRES type and
		// the imported spec did not load.
		{"gres bang", "NodeName=n1 CPUs=1 Gres=gpu:!0\n", "",
			`slurm.conf:1: Gres: "gpu:!0": "!0" is neither a count (digits, optional K, M or G) nor a type (letters, digits, '-', '_' and '.')`},
		{"gres name", "NodeName=n1 CPUs=1 Gres=g{u:2\n", "", `slurm.conf:1: Gres: "g{u:2": GRES name "g{u": want letters`},
		{"gres.conf type", "NodeName=n1 CPUs=1 Gres=gpu:1\n", "Name=gpu Type=h1{0 Count=1\n", `gres.conf:1: Type: "h1{0": want a GRES type`},
		{"partition hostlist", "NodeName=n1 CPUs=1\nPartitionName=p Nodes=n[1-9999999]\n", "",
			"slurm.conf:2: Nodes: names more than 65536 nodes (schedsim models at most 65536 nodes)"},
		{"gres.conf hostlist", "NodeName=n1 CPUs=1\n", "NodeName=n[1-9999999] Name=gpu Count=1\n",
			"gres.conf:1: NodeName: names more than 65536 nodes (schedsim models at most 65536 nodes)"},
		{"too many partitions", "NodeName=n1 CPUs=1\n" + strings.Repeat("PartitionName=p Nodes=n1\n", 65), "",
			"slurm.conf:66: PartitionName: more than 64 partitions (schedsim models at most 64)"},
		{"node ALL", "NodeName=ALL CPUs=1\n", "", `slurm.conf:1: NodeName: node name "ALL" is reserved`},
		{"max nodes", "NodeName=n1 CPUs=1\nPartitionName=p Nodes=n1 MaxNodes=0\n", "", `slurm.conf:2: MaxNodes: want a node count of at least 1 or UNLIMITED, got "0"`},
		{"job requeue", "JobRequeue=yes\nNodeName=n1 CPUs=1\n", "", `slurm.conf:1: JobRequeue: want 0 or 1, got "yes"`},
		{"def mem", "DefMemPerCPU=lots\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n", "", `slurm.conf:1: DefMemPerCPU: want an integer 0 to`},
		{"suspend", "SuspendTime=soon\nNodeName=n1 CPUs=1\n", "", `slurm.conf:1: SuspendTime: want seconds, got "soon"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := SlurmFiles{SlurmConf: []byte(tt.slurm)}
			if tt.gres != "" {
				f.GresConf = []byte(tt.gres)
			}
			_, _, err := ImportSlurm(f)
			var pe *ParseError
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.As(err, &pe) {
				t.Fatalf("error %v\nwant  %s", err, tt.want)
			}
		})
	}
}

// TestImportDefaultLastWins: Default=YES on two partitions: slurmctld
// keeps the last (read_config.c), where the spec would refuse two.
func TestImportDefaultLastWins(t *testing.T) {
	c, warns, err := importMem(t, memFiles{"/etc/slurm/slurm.conf": "NodeName=n1 CPUs=1 RealMemory=1\nPartitionName=a Nodes=n1 Default=YES\nPartitionName=b Nodes=n1 Default=YES\n"})
	if err != nil {
		t.Fatal(err)
	}
	if c.DefaultPartition != 1 || c.Partitions[0].Default {
		t.Errorf("default partition %d", c.DefaultPartition)
	}
	if want := "/etc/slurm/slurm.conf:2: Default=YES on partition a and again on b (line 3): slurmctld keeps the last"; !slices.Contains(warns, want) {
		t.Errorf("warnings %q lack %q", warns, want)
	}
}

// BenchmarkImportRefusesHugeNodeLines measures how fast cluster import
// refuses 300 NodeName lines of 60,001 nodes each (18 M nodes): before
// the bound it expanded every line, 2.2 GB and 48 s, then failed.
func BenchmarkImportRefusesHugeNodeLines(b *testing.B) {
	var sb strings.Builder
	for i := range 300 {
		fmt.Fprintf(&sb, "NodeName=n%d-[000001-060001] CPUs=4 RealMemory=1000\n", i)
	}
	conf := []byte(sb.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ImportSlurm(SlurmFiles{SlurmConf: conf}); err == nil || !strings.Contains(err.Error(), "more than 65536 nodes") {
			b.Fatalf("error %v", err)
		}
	}
}
