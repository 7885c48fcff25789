package reports_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// requeueRun runs fifo on one node of 4 GPUs (gpu1), which is down
// [700,710):
//
//	v  t=0    4 GPUs, runs 1000 (limit 2000), --requeue, checkpoints every
//	          300 s: [0,700) ends NODE_FAIL; 600 s saved (checkpoints at
//	          300 and 600), 400 s left; held until 700+120 = 820 (eligible
//	          then) and reruns [820,1220) COMPLETED.
//	w  t=100  4 GPUs, runs 50: waits for v, then for the node: [710,760)
//	x  t=1300 4 GPUs, runs 10, recorded OUT_OF_MEMORY: [1300,1310)
//	          OUT_OF_MEMORY
func requeueRun(t *testing.T) *sim.Record {
	t.Helper()
	c, err := hwmodels.ParseCluster([]byte("version: 1\nname: one\nnode_groups:\n  - {name: gpu, count: 1, gpu: {model: custom, count: 4}, cpus: 32, memory: 262144}\n"), "one.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j := func(id string, submit, run workload.Time) workload.Job {
		x := workload.NewJob(id)
		x.Submit, x.Runtime, x.TimeLimit = submit, run, 2000
		x.Request = workload.Request{Nodes: 1, GPUs: 4, CPUs: 4}
		x.TraceState = "COMPLETED"
		return x
	}
	v := j("v", 0, 1000)
	v.Requeue, v.CheckpointInterval = true, 300
	x := j("x", 1300, 10)
	x.TraceState = "OUT_OF_MEMORY"
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: []workload.Job{v, j("w", 100, 50), x}},
		Policy: policies.NewFIFO(nil), Seed: 1, Check: true,
		NodeEvents: []sim.NodeEvent{{At: 700, Node: 0, Down: true}, {At: 710, Node: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestRequeueAccounting checks per-run accounting on requeueRun:
//
//   - waits: v 0 (first run 0 − 0, rerun 820 − its eligible 820; counted
//     from the original submit it would be 820, its first run included),
//     w 710 − 100 = 610, x 0. Mean 610/3, max 610, p50 0.
//   - lost GPU time: v's NODE_FAIL run held 4 GPUs for 700 s, 100 s of
//     them after its last checkpoint (600): 400 GPU-s lost, not 2800.
//     GPU time held: 4 × (700 + 400 + 50 + 10) = 4640 GPU-s.
//   - states: COMPLETED 2 (v, w), OUT_OF_MEMORY 1 (x).
func TestRequeueAccounting(t *testing.T) {
	rec := requeueRun(t)
	if len(rec.Runs) != 1 || rec.Runs[0].Start != 0 || rec.Runs[0].End != 700 || rec.Runs[0].State != sim.NodeFail {
		t.Fatalf("runs = %+v, want v's [0,700) NODE_FAIL", rec.Runs)
	}
	a := reports.Analyze(rec, reports.SummaryOptions{})
	type row struct {
		ID                   string
		Wait                 sim.Time
		State                string
		GPUSeconds, LostGPUs int64
		NodeFails            int32
	}
	var got []row
	for _, r := range a.Jobs {
		got = append(got, row{r.ID, r.Wait, r.State, r.GPUSeconds, r.LostGPUSeconds, r.NodeFails})
	}
	want := []row{
		{"v", 0, "COMPLETED", 4 * 1100, 400, 1},
		{"w", 610, "COMPLETED", 200, 0, 0},
		{"x", 0, "OUT_OF_MEMORY", 40, 0, 0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("job rows (-want +got):\n%s", d)
	}
	s := a.Summary
	if s.Wait.Count != 3 || s.Wait.Max != 610 || s.Wait.P50 != 0 || s.Wait.Mean != 610.0/3 {
		t.Errorf("wait = %+v, want count 3, mean 203.33, p50 0, max 610", s.Wait)
	}
	if s.WaitDefinition != reports.WaitDefinitionText {
		t.Errorf("wait definition %q", s.WaitDefinition)
	}
	if d := s.Disruption; d.NodeFailRuns != 1 || d.LostGPUSeconds != 400 || d.Requeues != 1 {
		t.Errorf("disruption = %+v, want 1 node-fail run, 400 GPU-s lost, 1 requeue", d)
	}
	if st := s.States; st.Completed != 2 || st.OutOfMemory != 1 {
		t.Errorf("states = %+v, want 2 COMPLETED, 1 OUT_OF_MEMORY", st)
	}
	if s.GPU.Allocated != 4640 {
		t.Errorf("GPU-s allocated %d, want 4640", s.GPU.Allocated)
	}
}

// TestRequeueSacctRuns: jobs.sacct lists every run as sacct -D does. v's
// NODE_FAIL run [0,700) comes first, submitted at 0; its rerun was
// submitted (Slurm's new submit time) at the requeue, 700 = 00:11:40, and
// became eligible at 820 = 00:13:40, when its hold ended; it ran [820,1220).
// Times are from the epoch 1970-01-01T00:00:00Z; limits 2000 s show as
// 00:34:00 (whole minutes, rounded up).
func TestRequeueSacctRuns(t *testing.T) {
	var buf bytes.Buffer
	if err := reports.WriteJobsSacct(&buf, requeueRun(t)); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		strings.Join(reports.SacctFields, "|"),
		"v||||all|NODE_FAIL|1970-01-01T00:00:00|1970-01-01T00:00:00|1970-01-01T00:00:00|1970-01-01T00:11:40|00:11:40|00:34:00|1|4|billing=4,cpu=4,gres/gpu=4,node=1|gpu1",
		"v||||all|COMPLETED|1970-01-01T00:11:40|1970-01-01T00:13:40|1970-01-01T00:13:40|1970-01-01T00:20:20|00:06:40|00:34:00|1|4|billing=4,cpu=4,gres/gpu=4,node=1|gpu1",
		"w||||all|COMPLETED|1970-01-01T00:01:40|1970-01-01T00:01:40|1970-01-01T00:11:50|1970-01-01T00:12:40|00:00:50|00:34:00|1|4|billing=4,cpu=4,gres/gpu=4,node=1|gpu1",
		"x||||all|OUT_OF_MEMORY|1970-01-01T00:21:40|1970-01-01T00:21:40|1970-01-01T00:21:40|1970-01-01T00:21:50|00:00:10|00:34:00|1|4|billing=4,cpu=4,gres/gpu=4,node=1|gpu1",
	}, "\n") + "\n"
	if d := cmp.Diff(want, buf.String()); d != "" {
		t.Errorf("jobs.sacct (-want +got):\n%s", d)
	}
}
