package reports

import (
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// U is workload.Unknown, short for the tables below.
const U = workload.Unknown

// fixtureCluster has three nodes of 4 GPUs and 32 CPUs each: 12 GPUs and
// 96 CPUs in all. Partition "gpu" (index 0) holds all three nodes,
// partition "debug" (index 1) only gpu003.
func fixtureCluster() *hwmodels.Cluster {
	node := func(name string, parts uint64) hwmodels.Node {
		return hwmodels.Node{Name: name, GPUs: 4, GPUModel: "h100-sxm-80gb", GPUType: "h100",
			CPUs: 32, MemMB: 512 << 10, Partitions: parts}
	}
	return &hwmodels.Cluster{
		Name:  "tiny",
		Nodes: []hwmodels.Node{node("gpu001", 1), node("gpu002", 1), node("gpu003", 3)},
		Partitions: []hwmodels.Partition{
			{Name: "gpu", Nodes: []int32{0, 1, 2}, Default: true},
			{Name: "debug", Nodes: []int32{2}, MaxTime: 3600},
		},
	}
}

// fixtureJob is one row of the fixture: the trace side and the record side.
type fixtureJob struct {
	id, user, part, traceState string
	submit, start, end         sim.Time
	state                      sim.State
	partIdx                    int32
	alloc                      []sim.NodeAlloc
}

// fixtureRecord is a hand-made run of eight jobs on fixtureCluster. Times
// are seconds from the epoch 2024-01-01T00:00:00Z; the run stopped at
// 9500 s.
//
//	job  part    submit start  end   state       alloc (node: GPUs/CPUs)   wait   run
//	100  gpu          0     0  3600  COMPLETED   gpu001: 4/16                 0  3600
//	101  gpu         60  3600  7200  TIMEOUT     gpu001: 4/8, gpu002: 4/8  3540  3600
//	102  debug      120   150   155  COMPLETED   gpu003: 1/2                 30     5
//	103  gpu        300     -   900  CANCELLED   -                            -     -
//	104  bigmem     400     -     -  REJECTED    - (Part -1: no such part.)   -     -
//	105  gpu        600   600  3000  COMPLETED   gpu002: 2/8                  0  2400
//	106  gpu       1000  1800  9000  COMPLETED   gpu003: 4/16               800  7200
//	107  debug     7000  9000     -  UNFINISHED  gpu003: 2/4 (running)     2000   (500 to run end)
//
// No node is oversubscribed: gpu003 holds 1 GPU in [150,155), 4 in
// [1800,9000) and 2 in [9000,9500).
//
// Worked numbers (summary_test.go checks them, the goldens show them):
//
//   - Window: first submit 0, last end 9500 (job 107 still running at the
//     run's end counts until 9500). Makespan 9500 s = 02:38:20.
//   - GPU-seconds: 4·3600 + 8·3600 + 1·5 + 2·2400 + 4·7200 + 2·500
//     = 14400 + 28800 + 5 + 4800 + 28800 + 1000 = 77805; available
//     12·9500 = 114000; utilization 77805/114000 = 0.6825.
//   - CPU-seconds: 16·3600 + 16·3600 + 2·5 + 8·2400 + 16·7200 + 4·500
//     = 57600 + 57600 + 10 + 19200 + 115200 + 2000 = 251610; available
//     96·9500 = 912000; utilization 0.275888 (rounded).
//   - Node-seconds busy: gpu001 [0,7200) = 7200; gpu002 [600,3000) ∪
//     [3600,7200) = 6000; gpu003 [150,155) ∪ [1800,9500) = 7705; total
//     20905 of 3·9500 = 28500: 0.733509 (rounded).
//   - Waits of the 6 started jobs, sorted: 0 0 30 800 2000 3540. Mean
//     6370/6 = 1061.666667. Type 7 quantiles, h = (n−1)p = 5p:
//     p50 h=2.5: 30 + 0.5·(800−30) = 415; p95 h=4.75: 2000 + 0.75·1540 =
//     3155; p99 h=4.95: 2000 + 0.95·1540 = 3463; max 3540. Not in the
//     waits: 1 cancelled (103), 1 rejected (104), 0 pending.
//   - Bounded slowdown, τ = 10, over the 5 finished jobs:
//     100: 3600/3600 = 1; 101: 7140/3600 = 119/60; 102: 35/max(5,10) =
//     3.5; 105: 1; 106: 8000/7200 = 10/9. Sum 1547/180, mean 1547/900 =
//     1.718889 (rounded), max 3.5.
//   - Partition gpu: 5 jobs (100, 101, 103, 105, 106), 4 started, waits
//     0 0 800 3540: mean 1085, p50 (h=1.5) 400, p95 (h=2.85) 800 +
//     0.85·2740 = 3129, p99 (h=2.97) 800 + 0.97·2740 = 3457.8, max 3540.
//   - Partition debug: 2 jobs (102, 107), both started, waits 30 2000:
//     mean 1015, p50 (h=0.5) 1015, p95 30 + 0.95·1970 = 1901.5, p99 30 +
//     0.99·1970 = 1980.3, max 2000.
//   - Partition bigmem (not in the cluster): 1 job (104), none started.
func fixtureRecord() *sim.Record {
	a := func(node, gpus, cpus int32) sim.NodeAlloc {
		return sim.NodeAlloc{Node: node, GPUs: gpus, CPUs: cpus, MemMB: int64(cpus) * 4096}
	}
	rows := []fixtureJob{
		{"100", "alice", "gpu", "COMPLETED", 0, 0, 3600, sim.Completed, 0, []sim.NodeAlloc{a(0, 4, 16)}},
		{"101", "bob", "gpu", "TIMEOUT", 60, 3600, 7200, sim.Timeout, 0, []sim.NodeAlloc{a(0, 4, 8), a(1, 4, 8)}},
		{"102", "carol", "debug", "COMPLETED", 120, 150, 155, sim.Completed, 1, []sim.NodeAlloc{a(2, 1, 2)}},
		{"103", "alice", "gpu", "CANCELLED", 300, U, 900, sim.Cancelled, 0, nil}, // cancelled at 900, never started
		{"104", "dave", "bigmem", "FAILED", 400, U, U, sim.Rejected, -1, nil},
		{"105", "bob", "gpu", "COMPLETED", 600, 600, 3000, sim.Completed, 0, []sim.NodeAlloc{a(1, 2, 8)}},
		{"106", "erin", "gpu", "FAILED", 1000, 1800, 9000, sim.Completed, 0, []sim.NodeAlloc{a(2, 4, 16)}},
		{"107", "frank", "debug", "COMPLETED", 7000, 9000, U, sim.Unfinished, 1, []sim.NodeAlloc{a(2, 2, 4)}},
	}
	rec := buildRecord(fixtureCluster(), rows, 9500)
	// Accounts, requests (what the jobs asked for: their allocations; 103
	// asked for 2 GPUs, 104 for 8) and pending reasons.
	accounts := map[string]string{"alice": "physics", "bob": "physics", "carol": "bio", "dave": "bio", "erin": "ml", "frank": "ml"}
	for i := range rec.Trace.Jobs {
		tj := &rec.Trace.Jobs[i]
		tj.Account = accounts[tj.User]
		tj.Name = "job" + tj.ID
		tj.TimeLimit = 7200
		for _, a := range rows[i].alloc {
			tj.Request.GPUs += a.GPUs
			tj.Request.CPUs += a.CPUs
			tj.Request.MemMB += a.MemMB
		}
		tj.Request.Nodes = int32(len(rows[i].alloc))
	}
	rec.Trace.Jobs[3].Request = workload.Request{Nodes: 1, GPUs: 2, CPUs: 8, MemMB: 8 << 10}
	rec.Trace.Jobs[4].Request = workload.Request{Nodes: 1, GPUs: 8, CPUs: 64, GPUType: "h100"}
	rec.Trace.Jobs[1].TimeLimit = 3600 // it timed out
	rec.Trace.Jobs[6].TimeLimit = 10800
	rec.Trace.Jobs[7].Request.GPUType = "h100"
	rec.Reasons = sim.ReasonLogOf(
		sim.ReasonChange{At: 60, Job: 1, Reason: sim.ReasonResources},
		sim.ReasonChange{At: 1000, Job: 6, Reason: sim.ReasonPriority},
		sim.ReasonChange{At: 1500, Job: 6, Reason: sim.ReasonResources},
		sim.ReasonChange{At: 7000, Job: 7, Reason: sim.ReasonResources},
	)
	return rec
}

// fixtureOptions are the options the fixture's goldens use: the default
// τ and interval (one hour), and a made-up config hash.
var fixtureOptions = SummaryOptions{ConfigHash: "sha256:fixture"}

// buildRecord makes a Record (policy "fifo", seed 42, epoch
// 2024-01-01T00:00:00Z) from fixture rows.
func buildRecord(cl *hwmodels.Cluster, rows []fixtureJob, end sim.Time) *sim.Record {
	tr := &workload.Trace{
		Epoch:  1704067200, // 2024-01-01T00:00:00Z
		Source: "testdata/fixture.sacct",
		Notes:  []string{"hand-made fixture"},
	}
	rec := &sim.Record{
		Cluster: cl,
		Trace:   tr,
		Policy:  "fifo",
		Seed:    42,
		End:     end,
		Notes:   []string{`partition "bigmem" does not exist: 1 job rejected`},
		Events:  123,
	}
	for i, r := range rows {
		j := workload.NewJob(r.id)
		j.User, j.Partition, j.TraceState, j.Submit = r.user, r.part, r.traceState, r.submit
		if r.state == sim.Cancelled {
			j.CancelAfter = 100
		}
		tr.Jobs = append(tr.Jobs, j)
		reason := ""
		if r.state == sim.Rejected {
			reason = "partition " + r.part + " does not exist"
		}
		rec.Jobs = append(rec.Jobs, sim.JobRecord{
			Ref: sim.JobRef(i), Submit: r.submit, Eligible: r.submit, Start: r.start, End: r.end,
			State: r.state, Reason: reason, Part: r.partIdx, Alloc: sim.AllocsOf(r.alloc),
		})
	}
	return rec
}
