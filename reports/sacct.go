package reports

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/traces"
	"github.com/schedsim/schedsim/workload"
)

// SacctFields is the header WriteJobsSacct writes, as sacct -P
// --format=JobID,JobName,... prints it.
var SacctFields = []string{
	"JobID", "JobName", "User", "Account", "Partition", "State", "Submit", "Eligible",
	"Start", "End", "Elapsed", "Timelimit", "NNodes", "NCPUS", "AllocTRES", "NodeList",
}

// WriteJobsSacct writes the simulated jobs as `sacct -X -P` output with the
// SacctFields columns: a header line, then one line per job in JobRef
// order, fields joined by "|" with no trailing "|". It writes with the
// sacct writer of package traces (traces.SacctWriter), converting each
// record to a row, and follows sacct's formats
// (../shared/reference/slurm-gpu-facts.md §1):
//
//   - Submit, Eligible, Start and End are YYYY-MM-DDTHH:MM:SS in UTC
//     (the trace epoch plus the simulated time; sacct prints the host's
//     local time, so read the file with TZ=UTC), or "Unknown" when absent:
//     Start of a pending job, End of a running one, Eligible of a held one.
//   - A job cancelled before it started has Start = End = its cancel
//     time, Elapsed 00:00:00, no AllocTRES and NodeList "None assigned".
//   - Elapsed is [D-]HH:MM:SS (running jobs: until the run's end);
//     Timelimit is [D-]HH:MM:00 from the job's limit rounded up to whole
//     minutes, else its partition's MaxTime, else UNLIMITED.
//   - State is the final sim.State (COMPLETED, TIMEOUT, CANCELLED,
//     PREEMPTED, NODE_FAIL, FAILED, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE),
//     or RUNNING / PENDING for jobs unfinished when the run stopped. Jobs
//     the cluster rejected never reach Slurm's accounting and are left
//     out.
//   - NNodes and NCPUS are the allocated counts, or for a pending job the
//     requested ones (at least one node).
//   - AllocTRES is billing (= CPUs), cpu, gres/gpu:TYPE (when the job
//     asked for a type), gres/gpu, mem (traces.SacctMem: "512G", "1.50G")
//     and node, sorted byte-wise; empty for a job that never ran.
//     A MIG job's instances are GPU GRES of their own type, as Slurm
//     counts them: gres/gpu is the number of instances and
//     gres/gpu:PROFILE=N names each profile (gres/gpu:TYPE_PROFILE=N when
//     the job asked for a GPU type, as gres.conf's h100_1g.20gb), so
//     "gres/gpu:1g.10gb=2,gres/gpu=2"; the sacct reader reads it back as
//     the same MIG request.
//
// A "|" in a free-text value (job name, user, account) is written as "¦"
// so that the line keeps its field count; sacct itself does not escape.
// It returns CheckRecord's error without writing anything if rec is
// invalid, and otherwise the first write error.
func WriteJobsSacct(w io.Writer, rec *sim.Record) error {
	if err := CheckRecord(rec); err != nil {
		return fmt.Errorf("jobs sacct: %w", err)
	}
	sw := traces.NewSacctWriter(w, SacctFields)
	var nodes []int32
	var names []string
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		tj := &rec.Trace.Jobs[i]
		if j.State == sim.Rejected {
			continue
		}
		start, end := j.Start, j.End
		state := j.State.String()
		running := j.Start != workload.Unknown && j.End == workload.Unknown
		pending := j.Start == workload.Unknown && j.State == sim.Unfinished
		switch {
		case running:
			state = "RUNNING"
		case pending:
			state = "PENDING"
		case j.State == sim.Cancelled && j.Start == workload.Unknown:
			start = j.End // cancelled before it started
		}
		elapsed := int64(0)
		switch {
		case running:
			elapsed = int64(rec.End - j.Start)
		case j.Start != workload.Unknown:
			elapsed = int64(j.End - j.Start)
		}

		nodes = nodes[:0]
		var gpus, cpus int64
		var mem int64
		for _, a := range j.Alloc {
			nodes = append(nodes, a.Node)
			gpus += int64(a.GPUs)
			cpus += int64(a.CPUs)
			mem += a.MemMB
		}
		slices.Sort(nodes)
		nodes = slices.Compact(nodes)
		names = names[:0]
		for _, n := range nodes {
			names = append(names, rec.Cluster.Nodes[n].Name)
		}
		nnodes, ncpus := int64(len(nodes)), cpus
		nodeList := "None assigned"
		var tres []string
		if j.Start != workload.Unknown {
			nodeList = hwmodels.CompressHostlist(names)
			tres = allocTRES(cpus, gpus, tj.Request.GPUType, mem, nnodes)
			if migN, typed := migTRES(rec.Cluster, j.Alloc, tj.Request.GPUType); migN > 0 {
				// MIG instances are GPU GRES of their own type; a MIG job
				// holds no whole GPU, so gres/gpu is its instance count.
				tres = allocTRES(cpus, migN, "", mem, nnodes, typed...)
			}
			if mps := mpsTotal(j.Alloc); mps > 0 {
				// An MPS job holds no whole GPU: gres/mps is its shares
				// summed over its nodes (100 per GPU).
				tres = allocTRES(cpus, gpus, tj.Request.GPUType, mem, nnodes, "gres/mps="+strconv.FormatInt(mps, 10))
			}
		} else {
			nnodes, ncpus = max(int64(tj.Request.Nodes), 1), int64(tj.Request.CPUs)
		}

		sw.Text(tj.ID)
		sw.Text(tj.Name)
		sw.Text(tj.User)
		sw.Text(tj.Account)
		sw.Text(partitionName(rec, j))
		sw.Text(state)
		sw.Time(rec.Trace.Epoch, j.Submit, time.UTC)
		sw.Time(rec.Trace.Epoch, j.Eligible, time.UTC)
		sw.Time(rec.Trace.Epoch, start, time.UTC)
		sw.Time(rec.Trace.Epoch, end, time.UTC)
		sw.Duration(elapsed)
		if limit := sacctLimit(rec, j, tj); limit > 0 {
			sw.Duration((limit + 59) / 60 * 60)
		} else {
			sw.Text("UNLIMITED")
		}
		sw.Int(nnodes)
		sw.Int(ncpus)
		sw.TRES(tres)
		sw.Text(nodeList)
		if err := sw.EndRow(); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// sacctLimit returns the job's time limit in seconds as sacct's Timelimit
// shows it: its own, else its partition's MaxTime, else 0 (UNLIMITED).
func sacctLimit(rec *sim.Record, j *sim.JobRecord, tj *workload.Job) int64 {
	limit := int64(tj.TimeLimit)
	if tj.TimeLimit == workload.Unknown || limit <= 0 {
		limit = 0
		if j.Part >= 0 {
			limit = rec.Cluster.Partitions[j.Part].MaxTime
		}
	}
	return max(limit, 0)
}

// allocTRES returns an allocation's AllocTRES items (unsorted; the writer
// sorts them).
func allocTRES(cpus, gpus int64, gpuType string, memMB, nodes int64, extra ...string) []string {
	parts := []string{
		"billing=" + strconv.FormatInt(cpus, 10),
		"cpu=" + strconv.FormatInt(cpus, 10),
		"node=" + strconv.FormatInt(nodes, 10),
	}
	if gpus > 0 {
		parts = append(parts, "gres/gpu="+strconv.FormatInt(gpus, 10))
		if gpuType != "" {
			parts = append(parts, "gres/gpu:"+gpuType+"="+strconv.FormatInt(gpus, 10))
		}
	}
	if memMB > 0 {
		parts = append(parts, "mem="+traces.SacctMem(memMB))
	}
	return append(parts, extra...)
}
