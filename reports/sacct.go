package reports

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
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
// order, fields joined by "|" with no trailing "|". It follows sacct's
// formats (../shared/reference/slurm-gpu-facts.md §1):
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
//   - State is COMPLETED, TIMEOUT, CANCELLED, PREEMPTED, NODE_FAIL, or
//     RUNNING / PENDING for jobs unfinished when the run stopped. Jobs the
//     cluster rejected never reach Slurm's accounting and are left out.
//   - NNodes and NCPUS are the allocated counts, or for a pending job the
//     requested ones (at least one node).
//   - AllocTRES is billing (= CPUs), cpu, gres/gpu:TYPE (when the job
//     asked for a type), gres/gpu, mem (sacct's unit conversion: divide by
//     1024 while the value is at least 1024 and a multiple of 512, "512G",
//     "1.50G") and node, sorted byte-wise; empty for a job that never ran.
//     A MIG job's instances are GPU GRES of their own type, as Slurm
//     counts them: gres/gpu is the number of instances and
//     gres/gpu:PROFILE=N names each profile (gres/gpu:TYPE_PROFILE=N when
//     the job asked for a GPU type, as gres.conf's h100_1g.20gb), so
//     "gres/gpu:1g.10gb=2,gres/gpu=2"; the sacct reader reads it back as
//     the same MIG request.
//
// A "|" in a free-text value (job name, user, account) is written as "_"
// so that the line keeps its field count; sacct itself does not escape.
// It returns CheckRecord's error without writing anything if rec is
// invalid, and otherwise the first write error.
func WriteJobsSacct(w io.Writer, rec *sim.Record) error {
	if err := CheckRecord(rec); err != nil {
		return fmt.Errorf("jobs sacct: %w", err)
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(strings.Join(SacctFields, "|"))
	bw.WriteByte('\n')
	ts := func(t sim.Time) string {
		if t == workload.Unknown {
			return "Unknown"
		}
		return time.Unix(rec.Trace.Epoch+int64(t), 0).UTC().Format("2006-01-02T15:04:05")
	}
	clean := func(s string) string { return strings.ReplaceAll(s, "|", "_") }
	var nodes []int32
	var names []string
	fields := make([]string, len(SacctFields))
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
		elapsed := "00:00:00"
		switch {
		case running:
			elapsed = sacctDuration(int64(rec.End - j.Start))
		case j.Start != workload.Unknown:
			elapsed = sacctDuration(int64(j.End - j.Start))
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
		nodeList, tres := "None assigned", ""
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

		fields[0] = tj.ID
		fields[1] = clean(tj.Name)
		fields[2] = clean(tj.User)
		fields[3] = clean(tj.Account)
		fields[4] = clean(partitionName(rec, j))
		fields[5] = state
		fields[6] = ts(j.Submit)
		fields[7] = ts(j.Eligible)
		fields[8] = ts(start)
		fields[9] = ts(end)
		fields[10] = elapsed
		fields[11] = sacctTimelimit(rec, j, tj)
		fields[12] = strconv.FormatInt(nnodes, 10)
		fields[13] = strconv.FormatInt(ncpus, 10)
		fields[14] = tres
		fields[15] = nodeList
		bw.WriteString(strings.Join(fields, "|"))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// sacctDuration formats seconds as sacct's Elapsed: HH:MM:SS below a
// day, else D-HH:MM:SS with the days not padded; INVALID if negative.
func sacctDuration(sec int64) string {
	if sec < 0 {
		return "INVALID"
	}
	d, h, m, s := sec/86400, sec/3600%24, sec/60%60, sec%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// sacctTimelimit formats the job's time limit as sacct's Timelimit.
func sacctTimelimit(rec *sim.Record, j *sim.JobRecord, tj *workload.Job) string {
	limit := int64(tj.TimeLimit)
	if tj.TimeLimit == workload.Unknown || limit <= 0 {
		limit = 0
		if j.Part >= 0 {
			limit = rec.Cluster.Partitions[j.Part].MaxTime
		}
	}
	if limit <= 0 {
		return "UNLIMITED"
	}
	return sacctDuration((limit + 59) / 60 * 60)
}

// allocTRES formats an allocation as sacct's AllocTRES.
func allocTRES(cpus, gpus int64, gpuType string, memMB, nodes int64, extra ...string) string {
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
		parts = append(parts, "mem="+sacctMem(memMB))
	}
	parts = append(parts, extra...)
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// sacctMem formats MiB as Slurm's convert_num_unit with
// CONVERT_NUM_UNIT_EXACT: divide by 1024 while the value is at least 1024
// and a multiple of 512; two decimals when the result is fractional.
func sacctMem(mb int64) string {
	const units = "MGTPE"
	v, u := float64(mb), 0
	for v >= 1024 && math.Mod(v, 512) == 0 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == math.Trunc(v) {
		return strconv.FormatInt(int64(v), 10) + units[u:u+1]
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + units[u:u+1]
}
