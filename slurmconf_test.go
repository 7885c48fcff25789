package schedsim

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// slurmConfScenario is a scenario on an inline cluster whose slurm
// section holds settings (as cluster import writes them) and whose
// controller section is ctrl.
func slurmConfScenario(settings, ctrl, policy string) string {
	return `version: 1
cluster:
  inline:
    version: 1
    name: t
    node_groups:
      - {name: "n[1-4]", cpus: 8, memory: 64G}
    fabric:
      kind: tree
      switches:
        - {name: l1, nodes: "n[1-2]"}
        - {name: l2, nodes: "n[3-4]"}
        - {name: top, switches: "l[1-2]"}
    slurm:
      settings: {` + settings + `}
trace: {builtin: llnl-thunder-slice}
policy: {name: ` + policy + `}
` + ctrl
}

// TestSlurmConfDefaults: the controller settings a scenario leaves unset
// come from the cluster's slurm.conf settings; the scenario's win.
func TestSlurmConfDefaults(t *testing.T) {
	for _, tt := range []struct {
		name, settings, ctrl string
		requeue, kill        bool
		overTime             sim.Time
	}{
		{"none", `SchedulerType: "sched/backfill"`, "", true, false, 0},
		{"slurm.conf", `JobRequeue: "0", OverTimeLimit: "5", DependencyParameters: "kill_invalid_depend,max_depend_depth=3"`, "", false, true, 300},
		{"JobRequeue=2 is 1", `JobRequeue: "2", OverTimeLimit: UNLIMITED`, "", true, false, unlimitedOverTime},
		{"scenario wins", `JobRequeue: "0", OverTimeLimit: "5"`,
			"controller: {job_requeue: true, over_time_limit: 1m}\n", true, false, 60},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(slurmConfScenario(tt.settings, tt.ctrl, "easy")), "s.yaml")
			if err != nil {
				t.Fatal(err)
			}
			r, err := s.Build(catalog.Builtin())
			if err != nil {
				t.Fatal(err)
			}
			l := r.Lifecycle
			if l.JobRequeue != tt.requeue || l.KillInvalidDepend != tt.kill || l.OverTimeLimit != tt.overTime {
				t.Errorf("requeue %v, kill_invalid_depend %v, over_time %d; want %v, %v, %d",
					l.JobRequeue, l.KillInvalidDepend, l.OverTimeLimit, tt.requeue, tt.kill, tt.overTime)
			}
		})
	}
	s, err := Parse([]byte(slurmConfScenario(`JobRequeue: "yes"`, "", "easy")), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Build(catalog.Builtin()); err == nil || !strings.Contains(err.Error(), `controller.job_requeue: the cluster's slurm setting JobRequeue="yes": want 0 or 1`) {
		t.Errorf("bad JobRequeue: %v", err)
	}
}

// TestTopologyPluginPlacement: TopologyPlugin=topology/tree on a cluster
// with a fabric makes the slurm policy place by the switch tree, unless
// the scenario names a placement.
func TestTopologyPluginPlacement(t *testing.T) {
	for _, tt := range []struct{ name, settings, policy, want string }{
		{"tree", `TopologyPlugin: topology/tree`, "slurm", policies.PlacementTopologyTree},
		{"flat", `TopologyPlugin: topology/flat`, "slurm", ""},
		{"scenario wins", `TopologyPlugin: topology/tree`, "slurm, args: {placement: best-fit}", policies.PlacementBestFit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(slurmConfScenario(tt.settings, "", tt.policy)), "s.yaml")
			if err != nil {
				t.Fatal(err)
			}
			r, err := s.Build(catalog.Builtin())
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Policy.(*slurm.Policy).Args().Placement; got != tt.want {
				t.Errorf("placement %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTopologyPluginPlacesByTree runs the tree cluster (leaf l1 = n1, n2;
// l2 = n3, n4) under slurm: a one-node job a (t=0, 1000 s) takes n1;
// a two-node job b (t=10) then takes n3 and n4 under one leaf with
// TopologyPlugin=topology/tree, and n2, n3 across the leaves with
// first-fit (topology/flat).
func TestTopologyPluginPlacesByTree(t *testing.T) {
	for plugin, want := range map[string]string{"topology/tree": "n[3-4]", "topology/flat": "n[2-3]"} {
		s, err := Parse([]byte(slurmConfScenario("TopologyPlugin: "+plugin, "", "slurm")), "s.yaml")
		if err != nil {
			t.Fatal(err)
		}
		a, b := workload.NewJob("a"), workload.NewJob("b")
		a.Request = workload.Request{Nodes: 1, CPUs: 8}
		a.Runtime, a.TimeLimit = 1000, 2000
		b.Request = workload.Request{Nodes: 2, CPUs: 16}
		b.Submit, b.Runtime, b.TimeLimit = 10, 100, 200
		s.Trace = Trace{Jobs: &workload.Trace{Jobs: []workload.Job{a, b}}}
		r, err := s.Build(catalog.Builtin())
		if err != nil {
			t.Fatal(err)
		}
		rec, err := sim.Run(r.Config())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, al := range rec.Jobs[1].Alloc.All() {
			names = append(names, r.Cluster.Nodes[al.Node].Name)
		}
		if got := hwmodels.CompressHostlist(names); got != want {
			t.Errorf("%s: job b on %s, want %s", plugin, got, want)
		}
	}
}

// TestImportedPolicyKeysReachThePolicy: every slurm.conf setting cluster
// import passes over silently as one the slurm policy reads (hwmodels'
// globalPolicy) changes the policy's arguments when set alone, so the
// importer cannot call a key modeled that nothing reads.
func TestImportedPolicyKeysReachThePolicy(t *testing.T) {
	for _, line := range []string{
		"SchedulerParameters=bf_window=2880",
		"PriorityType=priority/basic",
		"PriorityWeightAge=7", "PriorityWeightFairshare=7", "PriorityWeightJobSize=7", "PriorityWeightPartition=7",
		"PriorityWeightQOS=7", "PriorityWeightAssoc=7", "PriorityWeightTRES=CPU=7",
		"PriorityMaxAge=3-0", "PriorityDecayHalfLife=3-0", "PriorityCalcPeriod=1", "PriorityUsageResetPeriod=WEEKLY",
		"PriorityFavorSmall=YES", "PriorityFlags=SMALL_RELATIVE_TO_TIME", "FairShareDampeningFactor=3",
		"PreemptType=preempt/partition_prio", "PreemptMode=CANCEL", "PreemptExemptTime=600",
		"TopologyPlugin=topology/tree",
	} {
		conf := line + "\nNodeName=n[1-4] CPUs=8 RealMemory=1000\nPartitionName=p Nodes=ALL Default=YES\n"
		spec, warns, err := hwmodels.ImportSlurm(hwmodels.SlurmFiles{SlurmConf: []byte(conf),
			TopologyConf: []byte("SwitchName=l1 Nodes=n[1-2]\nSwitchName=l2 Nodes=n[3-4]\nSwitchName=top Switches=l[1-2]\n")})
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		key, _, _ := strings.Cut(line, "=")
		for _, w := range warns {
			if strings.Contains(w.Msg, key) {
				t.Errorf("%s: warned: %s", line, w)
			}
		}
		c, err := hwmodels.ParseCluster(spec, "imported.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p, err := slurm.Factory(nil)
		if err != nil {
			t.Fatal(err)
		}
		before := p.(*slurm.Policy).Args()
		if _, err := p.Begin(sim.RunInfo{Cluster: c}); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if after := p.(*slurm.Policy).Args(); reflect.DeepEqual(before, after) {
			t.Errorf("%s: the slurm policy's arguments did not change", line)
		}
	}
}

// TestImportedPartitionPreemptMode: a partition's PreemptMode in
// slurm.conf reaches the slurm policy through cluster import. One 8-GPU
// node in lo (PriorityTier 1, PreemptMode=CANCEL) and hi (tier 2), the
// cluster's PreemptMode REQUEUE: L (lo, 8 GPUs, t=0, 1000 s) is preempted
// at 100 by H (hi, 8 GPUs, 300 s) and cancelled, PREEMPTED at 100; H runs
// [100, 400). Without the partition's key L is requeued instead: held
// until 220 (requeue delay 120 s), it waits for H and reruns [400, 1400).
func TestImportedPartitionPreemptMode(t *testing.T) {
	for _, tt := range []struct{ loLine, want string }{
		{"PreemptMode=CANCEL", "L PREEMPTED 0-100, H COMPLETED 100-400"},
		{"", "L COMPLETED 400-1400, H COMPLETED 100-400"},
	} {
		conf := "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nSchedulerParameters=bf_interval=1,sched_interval=1\n" +
			"NodeName=n1 CPUs=8 RealMemory=1000 Gres=gpu:h100:8\n" +
			"PartitionName=lo Nodes=n1 Default=YES PriorityTier=1 " + tt.loLine + "\nPartitionName=hi Nodes=n1 PriorityTier=2\n"
		spec, _, err := hwmodels.ImportSlurm(hwmodels.SlurmFiles{SlurmConf: []byte(conf)})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "c.yaml"), spec, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Parse([]byte("version: 1\ncluster: {file: c.yaml}\ntrace: {file: unused}\npolicy: {name: slurm}\n"), filepath.Join(dir, "s.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		l, h := workload.NewJob("L"), workload.NewJob("H")
		l.Partition, l.Runtime, l.TimeLimit = "lo", 1000, 1000
		h.Partition, h.Submit, h.Runtime, h.TimeLimit = "hi", 100, 300, 300
		l.Request = workload.Request{Nodes: 1, GPUs: 8}
		h.Request = l.Request
		s.Trace = Trace{Jobs: &workload.Trace{Jobs: []workload.Job{l, h}}}
		r, err := s.Build(catalog.Builtin())
		if err != nil {
			t.Fatal(err)
		}
		rec, err := sim.Run(r.Config())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, jr := range rec.Jobs {
			got = append(got, fmt.Sprintf("%s %s %d-%d", r.Trace.Jobs[i].ID, jr.State, jr.Start, jr.End))
		}
		if g := strings.Join(got, ", "); g != tt.want {
			t.Errorf("lo %q: %s, want %s", tt.loLine, g, tt.want)
		}
	}
}
