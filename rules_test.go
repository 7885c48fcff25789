package schedsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// tinyInline is a two-node inline cluster with partitions a (default)
// and b, for rule and default tests.
const tinyInline = `version: 1
cluster:
  inline:
    version: 1
    name: t
    node_groups:
      - {name: "n[1-2]", cpus: 64, memory: 512G, gpu: {model: h100-sxm-80gb, count: 8}}
    partitions:
      - {name: a, nodes: ALL, default: true, def_cpu_per_gpu: 8, def_mem_per_gpu: 64G}
      - {name: b, nodes: n2, def_mem_per_cpu: 1000}
trace: {builtin: llnl-thunder-slice}
policy: {name: fifo}
`

func mkJob(id, user, account, part, name, array string) workload.Job {
	j := workload.NewJob(id)
	j.User, j.Account, j.Partition, j.Name = user, account, part, name
	if array != "" {
		j.ArrayJobID, j.ArrayTaskID = array, 0
	}
	j.Request = workload.Request{Nodes: 1, GPUs: 1}
	j.Runtime, j.TimeLimit = 100, 200
	return j
}

// buildWith parses src, replaces its trace by jobs and builds it.
func buildWith(t *testing.T, src string, jobs ...workload.Job) *Run {
	t.Helper()
	s, err := Parse([]byte(src), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Trace = Trace{Jobs: &workload.Trace{Jobs: jobs}}
	r, err := s.Build(catalog.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestJobRules: for each option the first matching rule that sets it
// wins; options no rule sets keep the trace's values.
func TestJobRules(t *testing.T) {
	src := tinyInline + `job_rules:
  - match: {partition: b, name: "train-*"}
    checkpoint: 30m
  - match: {account: "ml-*"}
    checkpoint: 1h
    array_throttle: 2
    requeue: false
  - match: {user: alice}
    requeue: true
    array_throttle: 5
`
	jobs := []workload.Job{
		mkJob("1", "alice", "ml-vision", "b", "train-big", ""),  // rule 1 ckpt, rule 2 requeue false
		mkJob("2", "alice", "physics", "a", "train-x", "7"),     // rule 3: requeue, throttle 5
		mkJob("3", "bob", "ml-nlp", "", "eval", "9"),            // rule 2 (partition "" is a, the default)
		mkJob("4", "bob", "ml-nlp", "a,b", "eval", "9"),         // array 9: first task's throttle
		mkJob("5", "carol", "physics", "a", "sim", ""),          // no rule: JobRequeue (true)
		mkJob("6", "carol", "ml-x", "b,a", "train-small", "11"), // rule 1 (b listed), rule 2 rest
	}
	jobs[3].ArrayThrottle = 99 // the trace's value is overridden
	jobs[4].CheckpointInterval = 42
	r := buildWith(t, src, jobs...)
	type opts struct {
		ID       string
		Ckpt     workload.Time
		Throttle int32
		Requeue  bool
	}
	var got []opts
	for _, j := range r.Trace.Jobs {
		got = append(got, opts{j.ID, workload.Time(j.CheckpointInterval), j.ArrayThrottle, j.Requeue})
	}
	want := []opts{
		{"1", 1800, 0, false}, // not an array: no throttle
		{"2", 0, 5, true},
		{"3", 3600, 2, false},
		{"4", 3600, 2, false},
		{"5", 42, 0, true}, // JobRequeue=1 made explicit per job
		{"6", 1800, 2, false},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("job options (-want +got):\n%s", d)
	}
	if r.Lifecycle.JobRequeue {
		t.Error("the cluster-wide JobRequeue stays on; rule 2's requeue: false would not hold")
	}
	if n := r.Trace.Notes[len(r.Trace.Notes)-1]; n != "job_rules: rule 1 matched 2, rule 2 matched 4, rule 3 matched 2 jobs" {
		t.Errorf("note %q", n)
	}
}

func TestJobRulesErrors(t *testing.T) {
	for _, tt := range []struct{ name, rules, want string }{
		{"bad pattern", "  - match: {user: \"[a-\"}\n    requeue: true\n", `s.yaml:14: job_rules[0].match.user: "[a-": bad pattern`},
		{"nothing", "  - match: {user: a}\n", "s.yaml:14: job_rules[0]: sets nothing (want checkpoint, array_throttle or requeue)"},
		{"checkpoint", "  - checkpoint: soon\n", `s.yaml:14: job_rules[0].checkpoint: "soon": want a duration`},
		{"throttle", "  - array_throttle: -1\n", "s.yaml:14: job_rules[0].array_throttle: must be >= 0, got -1"},
		{"unknown key", "  - match: {queue: a}\n    requeue: true\n", `s.yaml:14: job_rules[0].match: unknown key "queue" (want partition, account, user, name)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tinyInline+"job_rules:\n"+tt.rules), "s.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant  %s", err, tt.want)
			}
		})
	}
}

// TestPartitionDefaultsApplied: jobs without CPUs or memory take their
// partition's defaults. Partition a: DefCpuPerGPU 8, DefMemPerGPU 64G;
// b: DefMemPerCPU 1000.
func TestPartitionDefaultsApplied(t *testing.T) {
	j1 := mkJob("1", "u", "x", "a", "", "") // 1 GPU: 8 CPUs, 65536 MiB
	j2 := mkJob("2", "u", "x", "b", "", "") // 1 GPU, no CPUs in b: 0 CPUs; mem 0×1000: none
	j3 := mkJob("3", "u", "x", "b", "", "") // CPU job, 4 CPUs: 4000 MiB
	j3.Request = workload.Request{Nodes: 1, CPUs: 4}
	j4 := mkJob("4", "u", "x", "zz,b", "", "") // first partition the cluster has: b
	j4.Request = workload.Request{Nodes: 2}    // no CPUs: one a node, 2000 MiB
	j5 := mkJob("5", "u", "x", "a", "", "")    // its own request stays
	j5.Request = workload.Request{Nodes: 1, GPUs: 2, CPUs: 3, MemMB: 10}
	r := buildWith(t, tinyInline, j1, j2, j3, j4, j5)
	var got []workload.Request
	for _, j := range r.Trace.Jobs {
		got = append(got, j.Request)
	}
	want := []workload.Request{
		{Nodes: 1, GPUs: 1, CPUs: 8, MemMB: 65536},
		{Nodes: 1, GPUs: 1},
		{Nodes: 1, CPUs: 4, MemMB: 4000},
		{Nodes: 2, MemMB: 2000},
		{Nodes: 1, GPUs: 2, CPUs: 3, MemMB: 10},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

// TestImportedSeedEnforced imports the seed guide's slurm.conf (gpu-short
// MaxTime 4 h MaxNodes 2, the default; gpu-long 7 days MaxNodes 8;
// gpu-interactive on gpu01 only, 2 h, MaxNodes 1) and runs it with
// EnforcePartLimits=ALL under easy: every limit it states holds.
//
//	ok2     gpu-short, 2 nodes, 1 h: runs
//	wide3   gpu-short, 3 nodes: rejected, MaxNodes 2
//	long5h  gpu-short, 1 node, limit 5 h: rejected, MaxTime 4 h
//	long3   gpu-long, 3 nodes, 1 h: runs
//	int1    gpu-interactive, 1 node: runs on gpu01
//	int2    gpu-interactive, 2 nodes: rejected, MaxNodes 1
func TestImportedSeedEnforced(t *testing.T) {
	conf, err := os.ReadFile("hwmodels/testdata/seeds/mevasis-slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	spec, _, err := hwmodels.ImportSlurm(hwmodels.SlurmFiles{SlurmConf: conf, SlurmPath: "mevasis-slurm.conf"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	src := "version: 1\ncluster: {file: cluster.yaml}\ntrace: {file: unused}\npolicy: {name: easy}\ncontroller: {enforce_part_limits: ALL}\n"
	s, err := Parse([]byte(src), filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	job := func(id, part string, nodes int32, limit workload.Time, at workload.Time) workload.Job {
		j := workload.NewJob(id)
		j.Partition, j.Submit = part, at
		j.Request = workload.Request{Nodes: nodes, GPUs: 8 * nodes}
		j.Runtime, j.TimeLimit = 3600, limit
		return j
	}
	s.Trace = Trace{Jobs: &workload.Trace{Jobs: []workload.Job{
		job("ok2", "gpu-short", 2, 3600, 0),
		job("wide3", "gpu-short", 3, 3600, 0),
		job("long5h", "gpu-short", 1, 5*3600, 0),
		job("long3", "gpu-long", 3, 3600, 10000),
		job("int1", "gpu-interactive", 1, 3600, 20000),
		job("int2", "gpu-interactive", 2, 3600, 20000),
	}}}
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
		var nodes []string
		for _, a := range jr.Alloc.All() {
			nodes = append(nodes, r.Cluster.Nodes[a.Node].Name)
		}
		got = append(got, r.Trace.Jobs[i].ID+" "+jr.State.String()+" "+hwmodels.CompressHostlist(nodes))
	}
	want := []string{"ok2 COMPLETED gpu[01-02]", "wide3 REJECTED ", "long5h REJECTED ", "long3 COMPLETED gpu[01-03]", "int1 COMPLETED gpu01", "int2 REJECTED "}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
}
