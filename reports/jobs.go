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
	// Wait is the job's wait as Summary.Wait defines it (WaitDefinition):
	// Start − Submit for a job never requeued, and for a requeued one its
	// first run's start − submit plus each rerun's start − the time it
	// became eligible again; Unknown when the final run never started.
	// Response is End − Submit and Run is End − Start (the final run),
	// for jobs that ended after starting; a job still running when the
	// run stopped has neither.
	Wait, Response, Run sim.Time
	// TimeLimit is the requested limit (the trace's), Unknown if none;
	// TraceRuntime the runtime the trace recorded.
	TimeLimit, TraceRuntime sim.Time
	// Slowdown is the bounded slowdown of a finished job (see
	// Slowdown); HasSlowdown is false for every other job.
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
	// the part of runs that a node failure of the simulation ended held
	// after the run's last checkpoint (workload.Job.CheckpointInterval;
	// all of the run without one): the work the rerun does again, or
	// that is lost with the job. GPU-seconds count
	// a MIG instance as its compute slices / 7 of a GPU, summed exactly
	// and rounded to whole seconds per job.
	GPUSeconds, CPUSeconds, LostGPUSeconds int64
	// StretchLostGPUSeconds is the part of GPUSeconds lost to the
	// runtime model's communication stretch (see EffectiveGPU), summed
	// exactly like GPUSeconds and rounded per job; 0 for a job never
	// stretched.
	StretchLostGPUSeconds int64
	// Requeues is JobRecord.Requeues; Preemptions and NodeFails count
	// the job's runs (earlier ones and the final one) that the
	// simulation's preemptions and node failures ended (a final state the
	// trace recorded, JobRecord.Recorded, is not counted).
	Requeues, Preemptions, NodeFails int32
	// EnergyKWh is the IT energy charged to the job over all its runs
	// (hwmodels.JobKWh: its GPUs' busy power and its share of each node's
	// base power); zero without a power model. Analyze fills it; JobRows
	// alone leaves it zero.
	EnergyKWh float64
}

// finished reports whether started job j's final run ended on its own
// (in whatever state its trace recorded) or at its time limit, and so has
// a bounded slowdown: not when the simulation preempted it or its node
// failed, nor when it was still running at the end.
func finished(j *sim.JobRecord) bool {
	switch j.State {
	case sim.Unfinished, sim.Rejected:
		return false
	case sim.Preempted, sim.NodeFail:
		return j.Recorded
	}
	return j.Start != workload.Unknown
}

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
	job sim.JobRef
	// eligible is when the job became eligible for the run (its
	// requeue hold ended, for a rerun).
	eligible, start, end sim.Time
	state                sim.State
	alloc                sim.Allocs
}

// runTable lists every run of every job: a job's earlier runs
// (Record.Runs, by start) then its final one (the JobRecord; a final run
// still going at the end lasts until Record.End). It keeps no slice per
// job, so a record of a million jobs costs nothing extra when none was
// requeued and four bytes a job when some were.
type runTable struct {
	rec *sim.Record
	// segs lists indices into rec.Runs by job, each job's by start;
	// first[i] is where job i's begin (first[len(rec.Jobs)] ends them).
	// Both are nil when no job has an earlier run.
	first, segs []int32
}

func newRunTable(rec *sim.Record) *runTable {
	t := &runTable{rec: rec}
	n := len(rec.Jobs)
	var counted int
	for _, seg := range rec.Runs {
		if int(seg.Job) >= 0 && int(seg.Job) < n {
			counted++
		}
	}
	if counted == 0 {
		return t
	}
	t.first = make([]int32, n+1)
	for _, seg := range rec.Runs {
		if int(seg.Job) >= 0 && int(seg.Job) < n {
			t.first[seg.Job+1]++
		}
	}
	for i := range n {
		t.first[i+1] += t.first[i]
	}
	t.segs = make([]int32, counted)
	next := slices.Clone(t.first[:n])
	for k, seg := range rec.Runs {
		if int(seg.Job) >= 0 && int(seg.Job) < n {
			t.segs[next[seg.Job]] = int32(k)
			next[seg.Job]++
		}
	}
	for i := range n {
		if own := t.segs[t.first[i]:t.first[i+1]]; len(own) > 1 {
			slices.SortStableFunc(own, func(a, b int32) int { return cmp.Compare(rec.Runs[a].Start, rec.Runs[b].Start) })
		}
	}
	return t
}

// count returns how many runs job i has.
func (t *runTable) count(i int) int {
	n := 0
	if t.first != nil {
		n = int(t.first[i+1] - t.first[i])
	}
	if t.rec.Jobs[i].Start != workload.Unknown {
		n++
	}
	return n
}

// at returns run k of job i (0 ≤ k < count(i)).
func (t *runTable) at(i, k int) runSpan {
	if t.first != nil {
		if s := int(t.first[i]) + k; s < int(t.first[i+1]) {
			seg := &t.rec.Runs[t.segs[s]]
			return runSpan{seg.Job, seg.Eligible, seg.Start, seg.End, seg.State, seg.Alloc}
		}
	}
	j := &t.rec.Jobs[i]
	return runSpan{j.Ref, j.Eligible, j.Start, endOf(t.rec, j), j.State, j.Alloc}
}

// wait returns job i's wait (see Summary.Wait): its first run's start −
// its submit, plus, for each rerun after a requeue, the rerun's start −
// the time it became eligible again (Slurm gives a requeued job a new
// submit time and holds it for the requeue delay; neither the earlier
// runs nor the hold are waiting for resources). ok is false when the
// job's final run never started (pending at the end, requeued or not).
func (t *runTable) wait(i int) (w sim.Time, ok bool) {
	j := &t.rec.Jobs[i]
	if j.Start == workload.Unknown {
		return 0, false
	}
	n := t.count(i)
	prevEnd := j.Submit
	for k := range n {
		r := t.at(i, k)
		from := j.Submit
		if k > 0 {
			// A rerun waits from when it was eligible; a record without
			// that time counts from the requeue (the earlier run's end).
			from = prevEnd
			if r.eligible != workload.Unknown && r.eligible >= prevEnd && r.eligible <= r.start {
				from = r.eligible
			}
		}
		w += r.start - from
		prevEnd = r.end
	}
	return w, true
}

// appendRuns appends job i's runs to dst, in order.
func (t *runTable) appendRuns(dst []runSpan, i int) []runSpan {
	for k, n := 0, t.count(i); k < n; k++ {
		dst = append(dst, t.at(i, k))
	}
	return dst
}

// JobRows returns one JobRow per job of rec, in JobRef order, with the
// bounded slowdown's τ = tau (seconds; ≤ 0 selects DefaultSlowdownTau).
// rec must satisfy CheckRecord.
func JobRows(rec *sim.Record, tau sim.Time) []JobRow {
	runs := newRunTable(rec)
	rm := newRowMaker(rec, runs, tau, true)
	rows := make([]JobRow, len(rec.Jobs))
	for i := range rows {
		rm.fill(&rows[i], i)
	}
	return rows
}

// rowMaker fills JobRows one at a time, so a caller that only sums them
// keeps none.
type rowMaker struct {
	rec     *sim.Record
	runs    *runTable
	tau     sim.Time
	stretch [][]float64
	// labels says whether to fill NodeList and MIG, the two strings a
	// row builds (the summary reads neither).
	labels bool
	hosts  *hwmodels.Hostlister // with labels
	nodes  []int32
	list   []byte // NodeList's bytes
	alloc  []sim.NodeAlloc
	buf    []runSpan
}

func newRowMaker(rec *sim.Record, runs *runTable, tau sim.Time, labels bool) *rowMaker {
	if tau <= 0 {
		tau = DefaultSlowdownTau
	}
	stretch, _ := runStretches(rec, runs)
	m := &rowMaker{rec: rec, runs: runs, tau: tau, stretch: stretch, labels: labels}
	if labels {
		m.hosts = clusterHosts(rec.Cluster)
	}
	return m
}

// clusterHosts returns a Hostlister over c's node names, by node index.
func clusterHosts(c *hwmodels.Cluster) *hwmodels.Hostlister {
	names := make([]string, len(c.Nodes))
	for i := range c.Nodes {
		names[i] = c.Nodes[i].Name
	}
	return hwmodels.NewHostlister(names)
}

// jobNodeList returns the hostlist of nodes (sorted node indices, no
// duplicates), reusing *buf: a job on one node costs no allocation.
func jobNodeList(h *hwmodels.Hostlister, c *hwmodels.Cluster, nodes []int32, buf *[]byte) string {
	switch len(nodes) {
	case 0:
		return ""
	case 1:
		return c.Nodes[nodes[0]].Name
	}
	*buf = h.Append((*buf)[:0], nodes)
	return string(*buf)
}

// fill sets *r to job i's row.
func (m *rowMaker) fill(r *JobRow, i int) {
	rec := m.rec
	j := &rec.Jobs[i]
	tj := rec.Trace.At(i)
	*r = JobRow{}
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

	for a, n := range j.Alloc.Spans() {
		r.AllocGPUs += a.GPUs * int32(n)
		r.AllocCPUs += a.CPUs * int32(n)
		r.AllocMemMB += a.MemMB * int64(n)
	}
	if m.labels {
		nodes := appendAllocNodes(m.nodes[:0], j.Alloc)
		m.nodes = nodes
		r.AllocNodes = int32(len(nodes))
		if len(nodes) > 0 {
			r.AllocGPUType = rec.Cluster.Nodes[nodes[0]].GPUType
		}
		m.alloc = j.Alloc.Append(m.alloc[:0])
		r.MIG = migLabel(rec.Cluster, m.alloc)
		r.NodeList = jobNodeList(m.hosts, rec.Cluster, nodes, &m.list)
	} else if n, first := m.countAllocNodes(j.Alloc); n > 0 {
		r.AllocNodes = n
		r.AllocGPUType = rec.Cluster.Nodes[first].GPUType
	}

	if w, ok := m.runs.wait(i); ok {
		r.Wait = w
		if j.End != workload.Unknown {
			r.Response = j.End - j.Submit
			r.Run = j.End - j.Start
		}
		if finished(j) {
			r.Slowdown = boundedSlowdown(int64(r.Response), int64(r.Run), int64(m.tau))
			r.HasSlowdown = true
		}
	}
	var gpu7, lost7, stretch7 int64 // 700ths of a GPU-second
	m.buf = m.runs.appendRuns(m.buf[:0], i)
	for ri, run := range m.buf {
		d := int64(run.end - run.start)
		var g, c int64
		for a, n := range run.alloc.Spans() {
			g += gpuParts(rec.Cluster, &a) * int64(n)
			c += int64(a.CPUs) * int64(n)
		}
		gpu7 += g * d
		stretch7 += stretchLost(g, d, stretchOf(m.stretch, i, ri))
		r.CPUSeconds += c * d
		if ri == len(m.buf)-1 && j.Recorded {
			continue // the trace's own NODE_FAIL or PREEMPTED, not the simulation's
		}
		switch run.state {
		case sim.NodeFail:
			lost7 += g * lostSeconds(d, sim.Time(tj.CheckpointInterval))
			r.NodeFails++
		case sim.Preempted:
			r.Preemptions++
		}
	}
	r.GPUSeconds, r.LostGPUSeconds = roundGPUParts(gpu7), roundGPUParts(lost7)
	r.StretchLostGPUSeconds = roundGPUParts(stretch7)
}

// lostSeconds returns how much of a run of d seconds that a node failure
// ended is lost: the time since its last checkpoint, d − ⌊d/c⌋·c, for a
// job that checkpoints every c seconds of run time
// (workload.Job.CheckpointInterval, as the controller restarts it), all
// of it for one that never checkpoints (c ≤ 0).
func lostSeconds(d int64, c sim.Time) int64 {
	if c <= 0 || d <= 0 {
		return max(d, 0)
	}
	return d % int64(c)
}

// boundedSlowdown is max(1, response / max(run, tau)), response = end −
// submit (wait + run for a job never requeued).
func boundedSlowdown(response, run, tau int64) float64 {
	return max(float64(response)/float64(max(run, tau)), 1)
}

// jobPartitions returns the bit set of cluster partitions pending job j
// could run in: those its trace partition string names ("a,b"), plus
// the one it ran in; the default partition if that leaves none.
func jobPartitions(rec *sim.Record, j *sim.JobRecord) uint64 {
	var set uint64
	for p := range strings.SplitSeq(rec.Trace.At(int(j.Ref)).Partition, ",") {
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

// countAllocNodes returns how many distinct nodes a holds and the lowest
// of them (when it holds any), as len and [0] of appendAllocNodes's list,
// without making the list when a's runs of nodes ascend.
func (m *rowMaker) countAllocNodes(a sim.Allocs) (n, first int32) {
	last := int32(-1)
	for x, k := range a.Spans() {
		if n > 0 && x.Node <= last {
			m.nodes = appendAllocNodes(m.nodes[:0], a)
			return int32(len(m.nodes)), m.nodes[0]
		}
		if n == 0 {
			first = x.Node
		}
		n += int32(k)
		last = x.Node + int32(k) - 1
	}
	return n, first
}

// appendAllocNodes appends the nodes of a to dst, ascending, each once.
// The nodes of an allocation usually ascend already (the placers visit
// them in cluster order), and then they are not sorted.
func appendAllocNodes(dst []int32, a sim.Allocs) []int32 {
	base := len(dst)
	ordered := true
	for x, n := range a.Spans() {
		ordered = ordered && (len(dst) == base || x.Node > dst[len(dst)-1])
		for k := range int32(n) {
			dst = append(dst, x.Node+k)
		}
	}
	if !ordered {
		slices.Sort(dst[base:])
		dst = dst[:base+len(slices.Compact(dst[base:]))]
	}
	return dst
}
