package reports

import (
	"cmp"
	"slices"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// JobRow is one job's results, as jobs.parquet stores them. Times are
// whole seconds of simulated time since the trace epoch; a time or
// duration that does not apply is workload.Unknown.
type JobRow struct {
	// ID, Name, User and Account come from the trace.
	ID, Name, User, Account string
	// Partition is the partition the job ran in, or its own partition
	// string if it never got one (see partitionName).
	Partition string
	// State is the final sim.State's name (COMPLETED, TIMEOUT, ...).
	State string
	// GPUType is the GPU type the job asked for, "" for any type.
	// AllocGPUType is the GRES type of the first node it ran on, "" if it
	// never ran or ran on nodes without GPUs.
	GPUType, AllocGPUType string
	// SizeClass is SizeClassOf(requested GPUs).
	SizeClass string
	// NodeList is the allocation as a Slurm hostlist; "" if none.
	NodeList string
	// Reason explains a REJECTED job (JobRecord.Reason).
	Reason string

	Submit, Eligible, Start, End sim.Time
	// Wait is Start − Submit (started jobs). Response is End − Submit and
	// Run is End − Start, for jobs that ended after starting (COMPLETED,
	// TIMEOUT, PREEMPTED, NODE_FAIL); a job still running when the run
	// stopped has neither.
	Wait, Response, Run sim.Time
	// TimeLimit is the requested limit (the trace's), Unknown if none;
	// TraceRuntime the runtime the trace recorded.
	TimeLimit, TraceRuntime sim.Time
	// Slowdown is the bounded slowdown of a finished (COMPLETED or
	// TIMEOUT) job; HasSlowdown is false for every other job.
	Slowdown    float64
	HasSlowdown bool

	ReqNodes, ReqGPUs, ReqCPUs       int32
	ReqMemMB                         int64
	AllocNodes, AllocGPUs, AllocCPUs int32
	AllocMemMB                       int64
	// MIG lists the MIG instances of the final allocation as
	// profile:count ("1g.10gb:2"; several profiles comma-separated in name
	// order), "" for none. AllocGPUs counts whole GPUs only.
	MIG string
	// MPSShare is the MPS share per node the job asked for (percent of one
	// GPU, workload.Request.MPSShare), 0 for none; an MPS job's AllocGPUs
	// is 0.
	MPSShare int32
	// GPUSeconds and CPUSeconds are what the job held over all its runs
	// (earlier runs of a requeued job included); a run still going when
	// the simulation stopped counts until Record.End. LostGPUSeconds is
	// the part held in runs that a node failure ended. GPU-seconds count
	// a MIG instance as its compute slices / 7 of a GPU, summed exactly
	// and rounded to whole seconds per job.
	GPUSeconds, CPUSeconds, LostGPUSeconds int64
	// StretchLostGPUSeconds is the part of GPUSeconds lost to the
	// runtime model's communication stretch (see EffectiveGPU), summed
	// exactly like GPUSeconds and rounded per job; 0 for a job never
	// stretched.
	StretchLostGPUSeconds int64
	// Requeues is JobRecord.Requeues; Preemptions and NodeFails count
	// the job's runs (earlier ones and the final one) that ended PREEMPTED
	// and NODE_FAIL.
	Requeues, Preemptions, NodeFails int32
	// EnergyKWh is the IT energy charged to the job over all its runs
	// (hwmodels.JobKWh: its GPUs' busy power and its share of each node's
	// base power); zero without a power model. Analyze fills it; JobRows
	// alone leaves it zero.
	EnergyKWh float64
}

// finished reports whether a job in state st has a bounded slowdown.
func finished(st sim.State) bool { return st == sim.Completed || st == sim.Timeout }

// Job-size classes by requested GPUs: CPU-only, one GPU, a few, up to a
// typical node (8), two nodes, up to 64, and more.
var sizeClasses = []struct {
	name   string
	maxGPU int32
}{
	{"0", 0}, {"1", 1}, {"2-4", 4}, {"5-8", 8}, {"9-16", 16}, {"17-64", 64}, {"65+", 1<<31 - 1},
}

// SizeClasses returns the names of the job-size classes SizeClassOf
// returns, smallest first.
func SizeClasses() []string {
	out := make([]string, len(sizeClasses))
	for i, c := range sizeClasses {
		out[i] = c.name
	}
	return out
}

// SizeClassOf returns the job-size class of a job asking for gpus GPUs in
// all: "0" (CPU only), "1", "2-4", "5-8" (one 8-GPU node), "9-16",
// "17-64" or "65+".
func SizeClassOf(gpus int32) string {
	for _, c := range sizeClasses {
		if gpus <= c.maxGPU {
			return c.name
		}
	}
	return sizeClasses[len(sizeClasses)-1].name
}

// runSpan is one run of a job: the final one (JobRecord) or an earlier
// one (sim.RunSegment).
type runSpan struct {
	job        sim.JobRef
	start, end sim.Time
	state      sim.State
	alloc      []sim.NodeAlloc
}

// jobRuns returns every run of every job, earlier runs first for each
// job, jobs in JobRef order. A final run still going at the end lasts
// until Record.End.
func jobRuns(rec *sim.Record) [][]runSpan {
	runs := make([][]runSpan, len(rec.Jobs))
	for _, seg := range rec.Runs {
		if int(seg.Job) < 0 || int(seg.Job) >= len(runs) {
			continue
		}
		runs[seg.Job] = append(runs[seg.Job], runSpan{seg.Job, seg.Start, seg.End, seg.State, seg.Alloc})
	}
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		slices.SortStableFunc(runs[i], func(a, b runSpan) int { return cmp.Compare(a.start, b.start) })
		if j.Start != workload.Unknown {
			runs[i] = append(runs[i], runSpan{j.Ref, j.Start, endOf(rec, j), j.State, j.Alloc})
		}
	}
	return runs
}

// JobRows returns one JobRow per job of rec, in JobRef order, with the
// bounded slowdown's τ = tau (seconds; ≤ 0 selects DefaultSlowdownTau).
// rec must satisfy CheckRecord.
func JobRows(rec *sim.Record, tau sim.Time) []JobRow {
	if tau <= 0 {
		tau = DefaultSlowdownTau
	}
	runs := jobRuns(rec)
	stretch, _ := runStretches(rec, runs)
	rows := make([]JobRow, len(rec.Jobs))
	var nodes []int32
	var names []string
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		tj := &rec.Trace.Jobs[i]
		r := &rows[i]
		r.ID, r.Name, r.User, r.Account = tj.ID, tj.Name, tj.User, tj.Account
		r.Partition = partitionName(rec, j)
		r.State = j.State.String()
		r.GPUType = tj.Request.GPUType
		r.SizeClass = SizeClassOf(tj.Request.GPUs)
		r.Reason = j.Reason
		r.Submit, r.Eligible, r.Start, r.End = j.Submit, j.Eligible, j.Start, j.End
		r.Wait, r.Response, r.Run = workload.Unknown, workload.Unknown, workload.Unknown
		r.TimeLimit, r.TraceRuntime = tj.TimeLimit, tj.Runtime
		r.ReqNodes, r.ReqGPUs, r.ReqCPUs, r.ReqMemMB = tj.Request.Nodes, tj.Request.GPUs, tj.Request.CPUs, tj.Request.MemMB
		r.MPSShare = tj.Request.MPSShare
		r.Requeues = j.Requeues

		nodes = nodes[:0]
		for _, a := range j.Alloc {
			nodes = append(nodes, a.Node)
			r.AllocGPUs += a.GPUs
			r.AllocCPUs += a.CPUs
			r.AllocMemMB += a.MemMB
		}
		slices.Sort(nodes)
		nodes = slices.Compact(nodes)
		names = names[:0]
		for _, n := range nodes {
			names = append(names, rec.Cluster.Nodes[n].Name)
		}
		r.MIG = migLabel(rec.Cluster, j.Alloc)
		r.AllocNodes = int32(len(nodes))
		r.NodeList = hwmodels.CompressHostlist(names)
		if len(nodes) > 0 {
			r.AllocGPUType = rec.Cluster.Nodes[nodes[0]].GPUType
		}

		if j.Start != workload.Unknown {
			r.Wait = j.Start - j.Submit
			if j.End != workload.Unknown {
				r.Response = j.End - j.Submit
				r.Run = j.End - j.Start
			}
			if finished(j.State) {
				r.Slowdown = boundedSlowdown(int64(r.Wait), int64(r.Run), int64(tau))
				r.HasSlowdown = true
			}
		}
		var gpu7, lost7, stretch7 int64 // 700ths of a GPU-second
		for ri, run := range runs[i] {
			d := int64(run.end - run.start)
			var g, c int64
			for k := range run.alloc {
				g += gpuParts(rec.Cluster, &run.alloc[k])
				c += int64(run.alloc[k].CPUs)
			}
			gpu7 += g * d
			stretch7 += stretchLost(g, d, stretchOf(stretch, i, ri))
			r.CPUSeconds += c * d
			switch run.state {
			case sim.NodeFail:
				lost7 += g * d
				r.NodeFails++
			case sim.Preempted:
				r.Preemptions++
			}
		}
		r.GPUSeconds, r.LostGPUSeconds = roundGPUParts(gpu7), roundGPUParts(lost7)
		r.StretchLostGPUSeconds = roundGPUParts(stretch7)
	}
	return rows
}

// boundedSlowdown is max(1, (wait + run) / max(run, tau)).
func boundedSlowdown(wait, run, tau int64) float64 {
	return max(float64(wait+run)/float64(max(run, tau)), 1)
}

// jobPartitions returns the bit set of cluster partitions pending job j
// could run in: those its trace partition string names ("a,b"), plus
// the one it ran in; the default partition if that leaves none.
func jobPartitions(rec *sim.Record, j *sim.JobRecord) uint64 {
	var set uint64
	for p := range strings.SplitSeq(rec.Trace.Jobs[j.Ref].Partition, ",") {
		if k := rec.Cluster.PartitionIndex(strings.TrimSpace(p)); k >= 0 {
			set |= 1 << uint(k)
		}
	}
	if j.Part >= 0 {
		set |= 1 << uint(j.Part)
	}
	if set == 0 && len(rec.Cluster.Partitions) > 0 {
		set = 1 << uint(rec.Cluster.DefaultPartition)
	}
	return set
}
