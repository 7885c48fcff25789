package reports

import (
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/traces"
	"github.com/schedsim/schedsim/workload"
)

// SacctFields is the header WriteJobsSacct writes, as sacct -D -X -P
// --format=JobID,JobName,... prints it.
var SacctFields = []string{
	"JobID", "JobName", "User", "Account", "Partition", "State", "Submit", "Eligible",
	"Start", "End", "Elapsed", "Timelimit", "NNodes", "NCPUS", "AllocTRES", "NodeList",
}

// WriteJobsSacct writes the simulated jobs as `sacct -D -X -P` output with
// the SacctFields columns: a header line, then one line per run in JobRef
// order, fields joined by "|" with no trailing "|". It writes with the
// sacct writer of package traces (traces.SacctWriter), converting each
// run to a row, and follows sacct's formats
// (../shared/reference/slurm-gpu-facts.md §1):
//
//   - A requeued job has a line per run, as sacct -D lists it: first its
//     earlier runs (Record.Runs), each ended NODE_FAIL or PREEMPTED, as
//     Slurm writes a requeued run, then its final run. Each run's Submit
//     is the one Slurm gives it: the job's submit for its first run, the
//     requeue (the earlier run's end) for a rerun; Eligible is when that
//     run became eligible (for a rerun, when its requeue hold ended).
//   - Submit, Eligible, Start and End are YYYY-MM-DDTHH:MM:SS in UTC
//     (the trace epoch plus the simulated time; sacct prints the host's
//     local time, so read the file with TZ=UTC), or "Unknown" when absent:
//     Start of a pending job, End of a running one, Eligible of a held one.
//   - A job cancelled before it started has Start = End = its cancel
//     time, Elapsed 00:00:00, no AllocTRES and NodeList "None assigned".
//   - Elapsed is [D-]HH:MM:SS (running jobs: until the run's end);
//     Timelimit is [D-]HH:MM:00 from the job's limit rounded up to whole
//     minutes, else its partition's MaxTime, else UNLIMITED.
//   - State is the run's sim.State (COMPLETED, TIMEOUT, CANCELLED,
//     PREEMPTED, NODE_FAIL, FAILED, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE),
//     or RUNNING / PENDING for jobs unfinished when the run stopped (a job
//     requeued and not started again is PENDING). Jobs the cluster
//     rejected never reach Slurm's accounting and are left out.
//   - NNodes and NCPUS are the run's allocated counts, or for a pending
//     job the requested ones (at least one node).
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
	runs := newRunTable(rec)
	rw := sacctRow{hosts: clusterHosts(rec.Cluster)}
	var buf []runSpan
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		if j.State == sim.Rejected {
			continue
		}
		// The earlier runs; the last of buf is the final run when the
		// job's record has a start.
		buf = runs.appendRuns(buf[:0], i)
		if j.Start != workload.Unknown {
			buf = buf[:len(buf)-1]
		}
		submit := j.Submit
		for _, r := range buf {
			rw.alloc = r.alloc.Append(rw.alloc[:0])
			if err := rw.write(sw, rec, j, runPart(rec, j, rw.alloc), submit, r.eligible, r.start, r.end, r.end, r.state.String(), rw.alloc); err != nil {
				return err
			}
			submit = r.end // Slurm's submit time for the rerun: the requeue
		}
		start, end, elapsedTo := j.Start, j.End, j.End
		state := j.State.String()
		switch {
		case j.Start != workload.Unknown && j.End == workload.Unknown:
			state, elapsedTo = "RUNNING", rec.End
		case j.Start == workload.Unknown && j.State == sim.Unfinished:
			state = "PENDING"
		case j.State == sim.Cancelled && j.Start == workload.Unknown:
			start = j.End // cancelled before it started
		}
		rw.alloc = j.Alloc.Append(rw.alloc[:0])
		if err := rw.write(sw, rec, j, j.Part, submit, j.Eligible, start, end, elapsedTo, state, rw.alloc); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// sacctRow converts one run to a jobs.sacct row; it keeps scratch space
// between rows.
type sacctRow struct {
	// tres keeps the AllocTRES items of each allocation shape seen (jobs
	// of one shape share them; SacctWriter.TRES sorts them in place once).
	tres  map[tresKey][]string
	hosts *hwmodels.Hostlister
	nodes []int32
	list  []byte
	alloc []sim.NodeAlloc
}

// write writes the row of one run of job j in partition part: submitted
// (as Slurm counts that run) at submit, eligible at eligible, run [start,
// end) in state with alloc; its Elapsed runs to elapsedTo (the run's end,
// or the run's stop for one still running). A run without an allocation
// (pending, or cancelled before it started) has Elapsed 0.
func (rw *sacctRow) write(sw *traces.SacctWriter, rec *sim.Record, j *sim.JobRecord, part int32,
	submit, eligible, start, end, elapsedTo sim.Time, state string, alloc []sim.NodeAlloc) error {
	tj := rec.Trace.At(int(j.Ref))
	nodes := rw.nodes[:0]
	var gpus, cpus, mem int64
	for _, a := range alloc {
		nodes = append(nodes, a.Node)
		gpus += int64(a.GPUs)
		cpus += int64(a.CPUs)
		mem += a.MemMB
	}
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	rw.nodes = nodes
	nnodes, ncpus := int64(len(nodes)), cpus
	nodeList := "None assigned"
	var tres []string
	elapsed := int64(0)
	if len(alloc) > 0 {
		elapsed = int64(elapsedTo - start)
		nodeList = jobNodeList(rw.hosts, rec.Cluster, nodes, &rw.list)
		tres = rw.plainTRES(tresKey{cpus, gpus, mem, nnodes, tj.Request.GPUType})
		if migN, typed := migTRES(rec.Cluster, alloc, tj.Request.GPUType); migN > 0 {
			// MIG instances are GPU GRES of their own type; a MIG job
			// holds no whole GPU, so gres/gpu is its instance count.
			tres = allocTRES(cpus, migN, "", mem, nnodes, typed...)
		}
		if mps := mpsTotal(alloc); mps > 0 {
			// An MPS job holds no whole GPU: gres/mps is its shares
			// summed over its nodes (100 per GPU).
			tres = allocTRES(cpus, gpus, tj.Request.GPUType, mem, nnodes, "gres/mps="+strconv.FormatInt(mps, 10))
		}
	} else {
		nnodes, ncpus = max(int64(tj.Request.Nodes), 1), int64(tj.Request.CPUs)
	}
	name := tj.Partition // a job rejected before a partition was chosen
	if part >= 0 {
		name = rec.Cluster.Partitions[part].Name
	}
	sw.Text(tj.ID)
	sw.Text(tj.Name)
	sw.Text(tj.User)
	sw.Text(tj.Account)
	sw.Text(name)
	sw.Text(state)
	sw.Time(rec.Trace.Epoch, submit, time.UTC)
	sw.Time(rec.Trace.Epoch, eligible, time.UTC)
	sw.Time(rec.Trace.Epoch, start, time.UTC)
	sw.Time(rec.Trace.Epoch, end, time.UTC)
	sw.Duration(elapsed)
	if limit := sacctLimit(rec, part, &tj); limit > 0 {
		sw.Duration((limit + 59) / 60 * 60)
	} else {
		sw.Text("UNLIMITED")
	}
	sw.Int(nnodes)
	sw.Int(ncpus)
	sw.TRES(tres)
	sw.Text(nodeList)
	return sw.EndRow()
}

// tresKey is what plain AllocTRES items (no MIG, no MPS) are made of.
type tresKey struct {
	cpus, gpus, memMB, nodes int64
	gpuType                  string
}

// plainTRES returns allocTRES of k, made once per distinct k for the
// first maxTRESShapes of them (a trace whose every job asks for its own
// memory keeps no more than those).
func (rw *sacctRow) plainTRES(k tresKey) []string {
	if t, ok := rw.tres[k]; ok {
		return t
	}
	if rw.tres == nil {
		rw.tres = map[tresKey][]string{}
	}
	t := allocTRES(k.cpus, k.gpus, k.gpuType, k.memMB, k.nodes)
	if len(rw.tres) < maxTRESShapes {
		rw.tres[k] = t
	}
	return t
}

const maxTRESShapes = 4096

// sacctLimit returns the job's time limit in seconds as sacct's Timelimit
// shows it: its own, else its partition's MaxTime, else 0 (UNLIMITED).
func sacctLimit(rec *sim.Record, part int32, tj *workload.Job) int64 {
	limit := int64(tj.TimeLimit)
	if tj.TimeLimit == workload.Unknown || limit <= 0 {
		limit = 0
		if part >= 0 {
			limit = rec.Cluster.Partitions[part].MaxTime
		}
	}
	return max(limit, 0)
}

// runPart returns the partition an earlier run of job j ran in: the
// record's, or, when the run's nodes are not all in it (a multi-partition
// job that ran elsewhere before), the first of the job's partitions that
// holds them all, as the controller chooses.
func runPart(rec *sim.Record, j *sim.JobRecord, alloc []sim.NodeAlloc) int32 {
	holds := func(p int32) bool {
		for _, a := range alloc {
			if rec.Cluster.Nodes[a.Node].Partitions&(1<<uint(p)) == 0 {
				return false
			}
		}
		return true
	}
	if j.Part >= 0 && holds(j.Part) {
		return j.Part
	}
	for m := jobPartitions(rec, j); m != 0; m &= m - 1 {
		if p := int32(bits.TrailingZeros64(m)); holds(p) {
			return p
		}
	}
	return j.Part
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
