package hwmodels

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImportSlurm(t *testing.T) {
	slurm := `# A test cluster
ClusterName=test-cluster
SlurmctldHost=ctl
SchedulerParameters=bf_window=2880,bf_continue
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityDecayHalfLife=7-0
FrobnicateLevel=3
FrobnicateLevel=4
NodeName=DEFAULT Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=515000
NodeName=a[01-04] Gres=gpu:a100:4 Features=a100,ib Weight=10 Colour=blue
NodeName=m[01-02] Gres=gpu:a100_3g.40gb:4,gpu:a100_4g.40gb:4 Colour=red
NodeName=c[1-2] CPUs=128 RealMemory=256000
PartitionName=DEFAULT MaxTime=1-00:00:00 State=UP
PartitionName=gpu Nodes=a[01-04],m[01-02] Default=YES PriorityTier=2 OverSubscribe=NO PreemptMode=REQUEUE MaxNodes=4
PartitionName=cpu Nodes=c[1-2] MaxTime=UNLIMITED PriorityJobFactor=5 Wibble=1
`
	gres := `AutoDetect=nvml
NodeName=a[01-02] Name=gpu Type=a100 File=/dev/nvidia[0-3]
NodeName=a[03-04] Name=gpu Type=a100 File=/dev/nvidia[0-3] Count=2
NodeName=m[01-02] Name=gpu Type=a100_3g.40gb Count=4 File=/dev/nvidia[0-3]
NodeName=m[01-02] Name=gpu Type=a100_4g.40gb Count=4 File=/dev/nvidia[0-3]
`
	topo := "SwitchName=s1 Nodes=a[01-04]\nSwitchName=s2 Nodes=m[01-02],c[1-2] LinkSpeed=400\nSwitchName=top Switches=s[1-2]\nBlockName=b1 Nodes=a[01-02]\n"
	spec, warns, err := ImportSlurm(SlurmFiles{SlurmConf: []byte(slurm), GresConf: []byte(gres), TopologyConf: []byte(topo)})
	if err != nil {
		t.Fatal(err)
	}
	var ws []string
	for _, w := range warns {
		ws = append(ws, w.String())
	}
	wantWarns := []string{
		"slurm.conf:3: SlurmctldHost has no effect on a simulated schedule; ignored",
		"slurm.conf:8: key FrobnicateLevel is not a slurm.conf key schedsim knows; ignored", // once, not twice
		"slurm.conf:11: NodeName key Colour is not a slurm.conf node key schedsim knows; ignored",
		"slurm.conf:16: PartitionName key Wibble is not a slurm.conf partition key schedsim knows; ignored",
		"topology.conf: read, but TopologyPlugin is neither topology/tree nor topology/block: the fabric is imported (comm_stretch and a topology placement use it) and the slurm policy places first-fit, as Slurm ignores topology.conf",
		"gres.conf:1: AutoDetect=nvml: schedsim cannot detect devices; GPU counts come from slurm.conf Gres= and explicit gres.conf lines",
		"gres.conf:3: Count=2 but File= names 4 devices; using Count",
		"gres.conf:3: a03: gres.conf Count=2 for type a100, slurm.conf Gres= says 4; using slurm.conf",
		"gres.conf:3: a04: gres.conf Count=2 for type a100, slurm.conf Gres= says 4; using slurm.conf",
	}
	if got := strings.Join(ws, "\n"); got != strings.Join(wantWarns, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, strings.Join(wantWarns, "\n"))
	}
	c, err := ParseCluster(spec, "imported.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, spec)
	}
	if c.Name != "test-cluster" || len(c.Nodes) != 8 || len(c.Groups) != 3 {
		t.Fatalf("cluster %s: %d nodes, %d groups\n%s", c.Name, len(c.Nodes), len(c.Groups), spec)
	}
	a := c.Nodes[0]
	if a.GPUs != 4 || a.GPUType != "a100" || a.GPUModel != "a100-sxm-80gb" || a.CPUs != 64 || a.MemMB != 515000 || strings.Join(a.Features, ",") != "a100,ib" || c.Groups[0].Weight != 10 {
		t.Errorf("a01 = %+v, group %+v", a, c.Groups[0])
	}
	m := c.Groups[1]
	if m.MIG == nil || m.MIG.GPUs != 4 || names(m.MIG.Geometry, m.MIG.Layout) != "3g.40gb@4 4g.40gb@0" {
		t.Errorf("m group MIG = %+v\n%s", m.MIG, spec)
	}
	if g := c.NodeGRES(int(m.First)); len(g) != 2 || g[0].Type != "a100_3g.40gb" || g[0].Count != 4 {
		t.Errorf("m GRES = %+v", g)
	}
	if c.Nodes[6].GPUs != 0 || c.Nodes[6].CPUs != 128 {
		t.Errorf("c1 = %+v", c.Nodes[6])
	}
	gpu, cpu := c.Partitions[0], c.Partitions[1]
	if !gpu.Default || gpu.MaxTime != 86400 || gpu.PriorityTier != 2 || len(gpu.Nodes) != 6 || cpu.MaxTime != 0 || cpu.PriorityJobFactor != 5 {
		t.Errorf("partitions %+v", c.Partitions)
	}
	if kv := c.Slurm.PartitionKeys("gpu"); len(kv) != 3 || kv[0] != (KeyValue{"OverSubscribe", "NO"}) || kv[2] != (KeyValue{"State", "UP"}) {
		t.Errorf("gpu kept keys %v", kv)
	}
	if gpu.MaxNodes != 4 || cpu.MaxNodes != 0 {
		t.Errorf("MaxNodes: gpu %d, cpu %d; want 4 and 0 (UNLIMITED)", gpu.MaxNodes, cpu.MaxNodes)
	}
	for _, k := range []string{"SchedulerParameters", "PriorityType", "PriorityWeightAge", "PriorityDecayHalfLife"} {
		if _, ok := c.Slurm.Get(k); !ok {
			t.Errorf("setting %s not kept", k)
		}
	}
	if _, ok := c.Slurm.Get("SlurmctldHost"); ok {
		t.Error("SlurmctldHost kept")
	}
	if c.Fabric == nil || c.Fabric.LowestCommonSwitch([]int32{0, 7}) != 2 {
		t.Errorf("fabric %+v", c.Fabric)
	}
	if bl := c.Fabric.Blocks; len(bl) != 1 || bl[0].Name != "b1" || len(bl[0].Nodes) != 2 || c.Nodes[1].Block != 1 || c.Nodes[2].Block != 0 {
		t.Errorf("blocks %+v", bl)
	}
}

func TestImportSlurmErrors(t *testing.T) {
	for _, tt := range []struct {
		name, slurm, gres, topo, want string
		kind                          error
	}{
		{"bad token", "NodeName=n1 CPUs\n", "", "", `slurm.conf:1: "CPUs": want Key=Value`, ErrSyntax},
		{"bad hostlist", "NodeName=n[1-\n", "", "", `slurm.conf:1: NodeName: hostlist "n[1-"`, ErrSyntax},
		{"bad cpus", "NodeName=n1 CPUs=x\n", "", "", `slurm.conf:1: cpus: want a non-negative integer, got "x"`, ErrSyntax},
		{"bad maxtime", "NodeName=n1 CPUs=1\nPartitionName=p Nodes=n1 MaxTime=1:99:00\n", "", "", "slurm.conf:2: MaxTime: bad Slurm time", ErrSyntax},
		{"duplicate partition", "NodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\nPartitionName=p Nodes=n1\n", "", "", "slurm.conf:3: PartitionName: partition p is already defined on line 2", ErrDuplicate},
		{"bad priority", "NodeName=n1 CPUs=1\nPartitionName=p Nodes=n1 Priority=70000\n", "", "", `slurm.conf:2: PriorityTier: want an integer 0 to 65533, got "70000"`, ErrRange},
		{"gres without name", "NodeName=n1 CPUs=1\n", "NodeName=n1 Type=h100 Count=8\n", "", "gres.conf:1: Name: want Name=gpu", ErrMissing},
		{"gres bad count", "NodeName=n1 CPUs=1\n", "Name=gpu Count=eight\n", "", `gres.conf:1: Count: want a count`, ErrSyntax},
		{"topology unknown node", "NodeName=n1 CPUs=1\n", "", "SwitchName=s Nodes=n[1-2]\n", `topology.conf:1: SwitchName: switch "s": unknown node "n2"`, ErrRange},
		{"topology no members", "NodeName=n1 CPUs=1\n", "", "SwitchName=s\n", `topology.conf:1: SwitchName: switch "s" has neither Nodes= nor Switches=`, ErrMissing},
		// FuzzImportSlurm's crasher: an '=' in a switch name reached the
		// imported spec, which cannot hold it.
		{"topology bad switch name", "NodeName=n1 CPUs=1\n", "", "SwitchName=hName=s Nodes=n1\n", `topology.conf:1: SwitchName: "hName=s": want a name of letters, digits, '-', '_' and '.', 1 to 128 characters (a cluster spec's switch name)`, ErrSyntax},
		{"unterminated quote", "NodeName=n1 Features=\"a b\n", "", "", "slurm.conf:1: Features: unterminated quoted value", ErrSyntax},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := SlurmFiles{SlurmConf: []byte(tt.slurm)}
			if tt.gres != "" {
				f.GresConf = []byte(tt.gres)
			}
			if tt.topo != "" {
				f.TopologyConf = []byte(tt.topo)
			}
			_, _, err := ImportSlurm(f)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, tt.kind) {
				t.Errorf("error %T does not wrap %v", err, tt.kind)
			}
		})
	}
}

func TestCountFiles(t *testing.T) {
	for s, want := range map[string]int{"/dev/nvidia[0-7]": 8, "/dev/nvidia0": 1, "/dev/nvidia[0-1,4]": 3, "/dev/nvidia0,/dev/nvidia1": 2, "/dev/n[0-1]x[0-2]": 6} {
		if got, err := countFiles(s); err != nil || got != want {
			t.Errorf("countFiles(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	if _, err := countFiles("/dev/nvidia[3-1]"); err == nil {
		t.Error("backwards range accepted")
	}
}

func FuzzImportSlurm(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "seeds", "*.conf"))
	for _, p := range seeds {
		data, _ := os.ReadFile(p)
		f.Add(data, []byte("NodeName=gpu01 Name=gpu Type=h100 File=/dev/nvidia[0-7] Count=8\n"), []byte("SwitchName=s Nodes=gpu[01-04]\n"))
	}
	f.Add([]byte("NodeName=n[1-2] CPUs=4 Gres=gpu:a100_1g.10gb:14\nPartitionName=p Nodes=ALL Default=YES\n"), []byte(""), []byte(""))
	f.Fuzz(func(t *testing.T, slurm, gres, topo []byte) {
		spec, _, err := ImportSlurm(SlurmFiles{SlurmConf: slurm, GresConf: gres, TopologyConf: topo})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) && !strings.Contains(err.Error(), "imported spec") {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
			if strings.Contains(err.Error(), "imported spec") {
				t.Fatalf("import wrote a spec that does not load: %v", err)
			}
			return
		}
		if _, err := ParseCluster(spec, "x"); err != nil {
			t.Fatalf("spec does not load: %v\n%s", err, spec)
		}
	})
}

func FuzzParseTopologyConf(f *testing.F) {
	f.Add([]byte("SwitchName=leaf0 Nodes=gpu[001-032]\nSwitchName=leaf1 Nodes=gpu[033-064]\nSwitchName=spine0 Switches=leaf[0-1]\n"))
	f.Add([]byte("SwitchName=s1 Nodes=n1 \\\n LinkSpeed=100 # c\nBlockName=b Nodes=n1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tc, _, err := ParseTopologyConf(data, "t.conf")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line <= 0 {
				t.Fatalf("error %v is not a *ParseError with a line", err)
			}
			return
		}
		_, _ = BuildTree(tc.Switches, func(s string) (int32, bool) { return 0, s == "n1" }, 1)
		if len(tc.BlockSizes) > 0 {
			if _, err := ParseBlockSizes(tc.BlockSizes); err != nil {
				t.Fatalf("accepted BlockSizes %v: %v", tc.BlockSizes, err)
			}
		}
	})
}
