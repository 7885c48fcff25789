package reports

import (
	"fmt"
	"maps"
	"slices"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// DefaultSlowdownTau is the bound τ, in seconds, of the bounded slowdown
// when SummaryOptions leaves it zero. Ten seconds is the customary value
// (Feitelson, Rudolph, Schwiegelshohn, Sevcik and Wong, "Theory and
// Practice in Parallel Job Scheduling", JSSPP 1997).
const DefaultSlowdownTau sim.Time = 10

// SummaryOptions tunes Summarize. The zero value selects the defaults.
type SummaryOptions struct {
	// SlowdownTau is the bound τ of the bounded slowdown in seconds; zero
	// or less selects DefaultSlowdownTau.
	SlowdownTau sim.Time
	// SampleInterval is the timeline's bin width in seconds; zero or less
	// selects the default (see DefaultSampleInterval).
	SampleInterval sim.Time
	// ConfigHash identifies the configuration the run came from (the
	// command uses the SHA-256 of the effective scenario); it is copied
	// into the outputs as is.
	ConfigHash string
	// Build is the schedsim build that ran it (ReadBuild), copied into
	// the outputs; the zero value writes empty fields.
	Build Build
	// NoJobRows makes Analyze leave Analysis.Jobs nil: the summary and
	// timeline are the same, and a large run keeps no row per job (about
	// 400 bytes each) when nothing will write them.
	NoJobRows bool
	// StreamJobRows makes Analyze leave Analysis.Jobs nil but keep what
	// makes the rows again, one at a time, for the writers that need them
	// (WriteJobsParquet, the wait figures of OutDir.WriteRun): the same
	// bytes as from kept rows, in the memory of one row, each job's
	// energy (8 bytes) and each started job's wait for the figures (40
	// bytes), instead of about 400 bytes a job. NoJobRows wins.
	StreamJobRows bool
	// TextOnly makes Analyze compute only what WriteTable prints, for a
	// run whose only output is that text: no job rows are made (it wins
	// over NoJobRows and StreamJobRows) and the timeline is not swept, so
	// the Analysis has no Jobs and no Timeline samples, and the Summary
	// fields WriteTable does not print keep their zero values: Response,
	// Throughput, WaitBy, Fairness and Disruption (from the rows),
	// Samples, Fragmentation and PendingReasons (from the timeline).
	// Every other field is the same. On a cluster with MIG GPUs the
	// timeline is swept anyway: WriteTable prints their fragmentation.
	TextOnly bool
}

// Summary holds the run-level metrics of one Record. Every count and
// time is exact (integers, sim.Time seconds); every float is computed from
// integer sums or, for the slowdown, summed in JobRef order, so two runs
// that produce equal Records produce bit-identical Summaries.
//
// Summaries are plain values: they share no memory with the Record.
type Summary struct {
	// Policy and Seed identify the run (Record.Policy, Record.Seed).
	Policy string
	Seed   uint64
	// Cluster describes the simulated cluster.
	Cluster ClusterInfo
	// Trace describes the replayed workload.
	Trace TraceInfo
	// Notes are the run's remarks (Record.Notes), in order.
	Notes []string
	// RunEnd is the virtual time the run stopped at (Record.End) and
	// Events the number of events the engine processed.
	RunEnd sim.Time
	Events int64

	// Jobs is the number of jobs in the record; Started the number that
	// started (whatever their final state).
	Jobs    int
	Started int
	// States counts jobs by final sim.State.
	States StateCounts
	// NotStarted breaks down the jobs that never started; these have no
	// wait time and are left out of Wait and Slowdown.
	NotStarted NotStarted
	// TraceStates counts jobs by the final state their trace recorded
	// (workload.Job.TraceState), sorted by state string; the empty string
	// stands for "not recorded".
	TraceStates []TraceStateCount

	// FirstSubmit is the earliest submit time of any job, LastEnd the
	// latest end of any started job (see Summarize for jobs still running
	// when the run stopped). Both are workload.Unknown when there is no
	// such job. Makespan is LastEnd − FirstSubmit, and zero when either is
	// unknown. [FirstSubmit, LastEnd) is the utilization window.
	FirstSubmit sim.Time
	LastEnd     sim.Time
	Makespan    sim.Time

	// GPU, Node and CPU give utilization over the window.
	GPU  Utilization
	Node Utilization
	CPU  Utilization
	// GPUEffective is GPU utilization less the GPU time lost to the
	// runtime model's communication stretch (see EffectiveGPU).
	GPUEffective EffectiveGPU

	// Wait summarizes the jobs' waits, in seconds, over every job whose
	// final run started (whatever its final state, UNFINISHED jobs that
	// were running when the run stopped included), as WaitDefinition
	// says: start − submit, and for a requeued job its first run's start
	// − submit plus each rerun's start − the time it became eligible
	// again.
	Wait Stats
	// WaitDefinition states in words how Wait, WaitBy and the partitions'
	// waits are measured (WaitDefinitionText).
	WaitDefinition string
	// Slowdown is the bounded slowdown over finished jobs.
	Slowdown Slowdown

	// Partitions has one entry per cluster partition, in the cluster's
	// order, then one per partition name that jobs asked for but the
	// cluster lacks (jobs with JobRecord.Part < 0), sorted by name.
	Partitions []PartitionSummary

	// ConfigHash is SummaryOptions.ConfigHash.
	ConfigHash string
	// Build is SummaryOptions.Build.
	Build Build
	// Response summarizes end − submit over jobs that ended after they
	// started (every final state but UNFINISHED).
	Response Stats
	// WaitBy breaks Wait down by user, account, job-size class and GPU
	// type.
	WaitBy WaitBy
	// Throughput is the work done per day of the window.
	Throughput Throughput
	// Fairness holds Jain's index over users' slowdowns and the accounts'
	// shares of the GPU time.
	Fairness Fairness
	// Fragmentation averages the timeline's free and unusable GPUs.
	Fragmentation Fragmentation
	// Disruption counts preemptions, requeues and node-failure losses.
	Disruption Disruption
	// PendingReasons gives, for each pending reason in sim.PendingReason
	// order, the job-seconds queued jobs spent with it as their last
	// recorded reason; reasons never seen are left out.
	PendingReasons []ReasonTime
	// SampleInterval and Samples describe the timeline.
	SampleInterval sim.Time
	Samples        int
	// Energy is the run's energy and cost by the cluster's power model
	// (energy.go); Energy.Modeled is false when the cluster has no power
	// figures.
	Energy Energy
}

// ClusterInfo identifies the simulated cluster.
type ClusterInfo struct {
	Name       string
	Nodes      int
	GPUs       int64 // hwmodels.Cluster.TotalGPUs
	CPUs       int64 // sum of Node.CPUs
	Partitions int
}

// TraceInfo identifies the replayed workload.
type TraceInfo struct {
	Source string
	// Epoch is the Unix time in seconds that simulated time zero stands
	// for (workload.Trace.Epoch).
	Epoch int64
	Jobs  int
	// Notes are the trace reader's remarks (workload.Trace.Notes), in order.
	Notes []string
}

// StateCounts counts jobs by final sim.State.
type StateCounts struct {
	Completed  int
	Timeout    int
	Cancelled  int
	Rejected   int
	Unfinished int
	Preempted  int
	NodeFail   int
	// The states a run ends in when its trace recorded them (sim's
	// outcome.go).
	Failed      int
	OutOfMemory int
	BootFail    int
	Deadline    int
}

// add counts one job in state st; st must be a valid sim.State.
func (c *StateCounts) add(st sim.State) {
	switch st {
	case sim.Completed:
		c.Completed++
	case sim.Timeout:
		c.Timeout++
	case sim.Cancelled:
		c.Cancelled++
	case sim.Rejected:
		c.Rejected++
	case sim.Unfinished:
		c.Unfinished++
	case sim.Preempted:
		c.Preempted++
	case sim.NodeFail:
		c.NodeFail++
	case sim.Failed:
		c.Failed++
	case sim.OutOfMemory:
		c.OutOfMemory++
	case sim.BootFail:
		c.BootFail++
	case sim.Deadline:
		c.Deadline++
	}
}

// NotStarted counts the jobs that never started, by cause.
type NotStarted struct {
	// Cancelled jobs were cancelled before they started (sim.Cancelled).
	Cancelled int
	// Rejected jobs could never run on the cluster (sim.Rejected).
	Rejected int
	// Pending jobs were still queued when the run stopped (sim.Unfinished
	// without a start). Their wait is at least RunEnd − submit, so leaving
	// them out biases Wait low; a large Pending count means the run was
	// cut short.
	Pending int
}

// TraceStateCount is the number of jobs whose trace recorded State.
type TraceStateCount struct {
	State string
	Count int
}

// Utilization is allocated over available resource-seconds in the window.
type Utilization struct {
	// Allocated is the resource-seconds held by jobs inside the window;
	// Available is the resource total times the window length.
	Allocated int64
	Available int64
	// Fraction is Allocated / Available, in [0, 1] for a valid record;
	// zero when Available is zero.
	Fraction float64
}

func utilization(alloc, avail int64) Utilization {
	u := Utilization{Allocated: alloc, Available: avail}
	if avail > 0 {
		u.Fraction = float64(alloc) / float64(avail)
	}
	return u
}

// Stats summarizes a sample of durations in seconds. Quantiles use
// linear interpolation between order statistics (Hyndman and Fan type 7,
// the default of R and NumPy: workload.Quantile, the project's one
// definition). All fields are zero when Count is zero.
type Stats struct {
	Count int
	Mean  float64
	P50   float64
	P90   float64
	P95   float64
	P99   float64
	Max   float64
}

// statsOf summarizes xs, which it sorts in place.
func statsOf(xs []int64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	sortInt64s(xs)
	var sum int64
	for _, x := range xs {
		sum += x
	}
	return Stats{
		Count: len(xs),
		Mean:  float64(sum) / float64(len(xs)),
		P50:   quantileOf(xs, 0.50),
		P90:   quantileOf(xs, 0.90),
		P95:   quantileOf(xs, 0.95),
		P99:   quantileOf(xs, 0.99),
		Max:   float64(xs[len(xs)-1]),
	}
}

// quantileOf is workload.Quantile of the sorted integers xs.
func quantileOf(xs []int64, q float64) float64 {
	return workload.QuantileFunc(int64(len(xs)), q, func(i int64) float64 { return float64(xs[i]) })
}

// WaitDefinitionText is Summary.WaitDefinition: how a job's wait is
// measured. A rerun waits from its own eligible time because Slurm gives a
// requeued job a new submit time (the requeue) and holds it (BeginTime)
// for the requeue delay before it may start: neither its earlier runs nor
// the hold are waiting for resources.
const WaitDefinitionText = "start - submit of the job's first run, plus, for each rerun after a requeue, " +
	"start - the rerun's eligible time (the end of its requeue hold)"

// Slowdown summarizes the bounded slowdown
//
//	max(1, (end − submit) / max(run, Tau))
//
// of each finished job (its last run ended on its own, in the state its
// trace recorded, or at its time limit; not preempted or failed by the
// simulation), where run = end − start of the last run (end − submit is
// wait + run for a job never requeued). Jobs still running when the run
// stopped are left out: their run time is not known.
type Slowdown struct {
	Tau   sim.Time
	Count int
	// Mean is the arithmetic mean over the Count jobs, summed in JobRef
	// order; Max the largest value. Both are zero when Count is zero.
	Mean float64
	Max  float64
}

// PartitionSummary is the per-partition breakdown.
type PartitionSummary struct {
	// Name is the partition's name. InCluster is false for a name that
	// only appears on jobs rejected before a partition was chosen
	// (JobRecord.Part < 0); their Name is the job's own partition string.
	Name      string
	InCluster bool
	// Jobs is the number of jobs in the partition, Started the number that
	// started; States counts them by final state.
	Jobs    int
	Started int
	States  StateCounts
	// Wait summarizes the waits (Summary.WaitDefinition) of the
	// partition's started jobs.
	Wait Stats
}

// Summarize computes the run-level metrics of rec. It reads only the
// record (jobs, cluster, trace) and the options.
//
// Definitions, all in whole seconds of simulated time:
//
//   - A job started when JobRecord.Start is not workload.Unknown. Its end
//     is JobRecord.End or, for a job still running when the run stopped
//     (End unknown), Record.End.
//   - The window is [FirstSubmit, LastEnd): from the earliest submit of
//     any job (rejected and cancelled ones included) to the latest end of
//     any started job. Makespan is its length; it is zero, and LastEnd is
//     workload.Unknown, when no job started (FirstSubmit is Unknown only
//     when the record has no jobs).
//   - GPU utilization is the allocated GPU-seconds inside the window —
//     each NodeAlloc's GPUs, MIG instances counted as their compute
//     slices / 7 of a GPU (see doc.go), times the part of [start, end)
//     that lies in the window — divided by TotalGPUs × window length
//     (MIG GPUs count as whole GPUs there). Allocated is rounded to whole
//     GPU-seconds; Fraction is computed before rounding. CPU utilization
//     is the same with NodeAlloc.CPUs over the sum of Node.CPUs. Node
//     utilization counts a node busy while at least one job holds an
//     allocation on it (the union of those intervals), over node count ×
//     window length.
//   - Effective GPU utilization (GPUEffective) is the allocated
//     GPU-seconds less those lost to communication stretch: a run the
//     runtime model stretched by x > 1 (Record.RuntimeChanges) that held
//     G GPU-equivalents for d seconds loses G × (d − ceil(d / x)), the
//     time beyond what it would have needed under one leaf switch on the
//     same GPUs. Speed ratios lose nothing.
//   - Wait is start − submit for every started job; a requeued job's wait
//     is its first run's start − submit plus each rerun's start − the
//     time it became eligible again (WaitDefinitionText). Jobs cancelled
//     before they started, rejected jobs and jobs pending at the end
//     (after a requeue or not) are left out and counted in NotStarted.
//   - Slowdown is the bounded slowdown (see Slowdown) of finished jobs
//     with τ = opts.SlowdownTau.
//
// Summarize panics if rec breaks the invariants CheckRecord checks: a
// Record comes from the engine, and a broken one is a bug there.
func Summarize(rec *sim.Record, opts SummaryOptions) Summary {
	opts.NoJobRows = true
	return analyze(rec, opts, "Summarize").Summary
}

// baseSummary computes the Summary fields that need no timeline, and the
// nodes' busy intervals in the window. rec must satisfy CheckRecord,
// which analyze, its caller, has checked.
func baseSummary(rec *sim.Record, runs *runTable, opts SummaryOptions) (Summary, *nodeBusy) {
	tau := opts.SlowdownTau
	if tau <= 0 {
		tau = DefaultSlowdownTau
	}
	cl := rec.Cluster
	s := Summary{
		Policy: rec.Policy,
		Seed:   rec.Seed,
		Cluster: ClusterInfo{
			Name:       cl.Name,
			Nodes:      len(cl.Nodes),
			GPUs:       cl.TotalGPUs(),
			CPUs:       totalCPUs(rec),
			Partitions: len(cl.Partitions),
		},
		Trace: TraceInfo{
			Source: rec.Trace.Source,
			Epoch:  rec.Trace.Epoch,
			Jobs:   rec.Trace.Len(),
			Notes:  slices.Clone(rec.Trace.Notes),
		},
		Notes:       slices.Clone(rec.Notes),
		RunEnd:      rec.End,
		Events:      rec.Events,
		Jobs:        len(rec.Jobs),
		FirstSubmit: workload.Unknown,
		LastEnd:     workload.Unknown,
		Slowdown:    Slowdown{Tau: tau},

		WaitDefinition: WaitDefinitionText,
	}

	// Pass 1: the window, state counts and partition rows.
	parts := newPartitionRows(rec)
	traceStates := map[string]int{}
	started := false
	var buf []runSpan
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		if i == 0 || j.Submit < s.FirstSubmit {
			s.FirstSubmit = j.Submit
		}
		buf = runs.appendRuns(buf[:0], i)
		for _, r := range buf {
			if !started || r.end > s.LastEnd {
				s.LastEnd = r.end
			}
			started = true
		}
		s.States.add(j.State)
		traceStates[rec.Trace.At(i).TraceState]++
		p := &parts.rows[parts.index(rec, j)]
		p.Jobs++
		p.States.add(j.State)
	}
	for _, st := range slices.Sorted(maps.Keys(traceStates)) {
		s.TraceStates = append(s.TraceStates, TraceStateCount{State: st, Count: traceStates[st]})
	}
	if started {
		s.Makespan = s.LastEnd - s.FirstSubmit
	}

	// Pass 2: waits, slowdown and allocated resource-seconds.
	var (
		waits          = make([]int64, 0, parts.started)
		gpuSec, cpuSec int64
		lostSec        int64 // to communication stretch, 700ths of a GPU
		sldSum         float64
	)
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		if j.Start == workload.Unknown {
			switch j.State {
			case sim.Cancelled:
				s.NotStarted.Cancelled++
			case sim.Rejected:
				s.NotStarted.Rejected++
			case sim.Unfinished:
				s.NotStarted.Pending++
			}
			continue
		}
		s.Started++
		w, _ := runs.wait(i)
		wait := int64(w)
		waits = append(waits, wait)
		k := parts.index(rec, j)
		parts.rows[k].Started++
		parts.waits[k] = append(parts.waits[k], wait)

		end := endOf(rec, j)
		if finished(j) {
			run := int64(end - j.Start)
			b := boundedSlowdown(int64(end-j.Submit), run, int64(tau))
			sldSum += b
			s.Slowdown.Count++
			s.Slowdown.Max = max(s.Slowdown.Max, b)
		}

	}
	stretch, stretched := runStretches(rec, runs)
	for i := range rec.Jobs {
		buf = runs.appendRuns(buf[:0], i)
		for ri, r := range buf {
			// Clip to the window; by construction nothing lies outside it.
			from, to := max(r.start, s.FirstSubmit), min(r.end, s.LastEnd)
			if to <= from {
				continue
			}
			d := int64(to - from)
			var g int64 // 700ths of a GPU
			for a, n := range r.alloc.Spans() {
				g += gpuParts(cl, &a) * int64(n)
				cpuSec += int64(a.CPUs) * int64(n) * d
			}
			gpuSec += g * d
			lostSec += stretchLost(g, d, stretchOf(stretch, i, ri))
		}
	}
	if s.Slowdown.Count > 0 {
		s.Slowdown.Mean = sldSum / float64(s.Slowdown.Count)
	}
	s.Wait = statsOf(waits)

	window := int64(s.Makespan)
	// The intervals are read by the timeline and the energy model.
	busy := newNodeBusy(rec, runs, s.FirstSubmit, s.LastEnd, sweepTimeline(opts, cl) || cl.PeakPowerW() > 0)
	nodeSec := busy.seconds()
	s.GPU = utilization(roundGPUParts(gpuSec), s.Cluster.GPUs*window)
	if s.GPU.Available > 0 {
		s.GPU.Fraction = float64(gpuSec) / float64(gpuUnit*s.GPU.Available)
	}
	s.GPUEffective = EffectiveGPU{StretchedRuns: stretched, LostToStretch: roundGPUParts(lostSec), Fraction: s.GPU.Fraction}
	s.GPUEffective.Effective = s.GPU.Allocated - s.GPUEffective.LostToStretch
	if s.GPU.Available > 0 && lostSec > 0 {
		s.GPUEffective.Fraction = float64(gpuSec-lostSec) / float64(gpuUnit*s.GPU.Available)
	}
	s.CPU = utilization(cpuSec, s.Cluster.CPUs*window)
	s.Node = utilization(nodeSec, int64(s.Cluster.Nodes)*window)

	for k := range parts.rows {
		if len(parts.waits[k]) == len(waits) {
			// The partition has every started job: the same waits.
			parts.rows[k].Wait = s.Wait
			continue
		}
		parts.rows[k].Wait = statsOf(parts.waits[k])
	}
	s.Partitions = parts.rows
	return s, busy
}

// endOf returns when started job j released its resources: its End, or
// the run's end for a job still running when the run stopped.
func endOf(rec *sim.Record, j *sim.JobRecord) sim.Time {
	if j.End == workload.Unknown {
		return rec.End
	}
	return j.End
}

func totalCPUs(rec *sim.Record) int64 {
	var n int64
	for i := range rec.Cluster.Nodes {
		n += int64(rec.Cluster.Nodes[i].CPUs)
	}
	return n
}

// interval is a half-open span of simulated time [from, to).
type interval struct{ from, to sim.Time }

// partitionRows builds Summary.Partitions: one row per cluster partition,
// then rows for the partition strings of jobs with Part < 0 that name no
// cluster partition.
type partitionRows struct {
	rows    []PartitionSummary
	waits   [][]int64
	extra   map[string]int // name → row index, for Part < 0
	started int            // jobs that started, over all rows
}

func newPartitionRows(rec *sim.Record) *partitionRows {
	cl := rec.Cluster
	pr := &partitionRows{extra: map[string]int{}}
	for i := range cl.Partitions {
		pr.rows = append(pr.rows, PartitionSummary{Name: cl.Partitions[i].Name, InCluster: true})
	}
	// Collect the unknown names first so that their rows are sorted.
	var names []string
	seen := map[string]bool{}
	for i := range rec.Jobs {
		if rec.Jobs[i].Part >= 0 {
			continue
		}
		name := rec.Trace.At(i).Partition
		if cl.PartitionIndex(name) >= 0 || seen[name] {
			continue
		}
		seen[name] = true
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		pr.extra[name] = len(pr.rows)
		pr.rows = append(pr.rows, PartitionSummary{Name: name})
	}
	// Each row's waits, one per started job, sized at once: appended to
	// from empty, 20,000 waits allocate five times their size.
	started := make([]int, len(pr.rows))
	for i := range rec.Jobs {
		if j := &rec.Jobs[i]; j.Start != workload.Unknown {
			started[pr.index(rec, j)]++
			pr.started++
		}
	}
	pr.waits = make([][]int64, len(pr.rows))
	for k, n := range started {
		pr.waits[k] = make([]int64, 0, n)
	}
	return pr
}

// index returns the row of job j: its cluster partition, or, for Part <
// 0, the cluster partition or extra row named by the job's own string.
func (pr *partitionRows) index(rec *sim.Record, j *sim.JobRecord) int {
	if j.Part >= 0 {
		return int(j.Part)
	}
	name := rec.Trace.At(int(j.Ref)).Partition
	if k := rec.Cluster.PartitionIndex(name); k >= 0 {
		return k
	}
	return pr.extra[name]
}

// partitionName returns the partition name reports show for job j: the
// cluster partition's name, or the job's own string when Part < 0.
func partitionName(rec *sim.Record, j *sim.JobRecord) string {
	if j.Part >= 0 {
		return rec.Cluster.Partitions[j.Part].Name
	}
	return rec.Trace.At(int(j.Ref)).Partition
}

// maxRecordTime bounds every time of a record (seconds from the epoch,
// either way): the timeline packs a time with four bits beside it. The
// trace readers reject times past 2⁵³ s.
const maxRecordTime = 1 << 58

func outOfClock(t sim.Time) bool {
	return t != workload.Unknown && (t > maxRecordTime || t < -maxRecordTime)
}

// checkAllocs returns what is wrong with the first bad node of a (a node
// index outside [0, nodes), a negative amount), "" when none is: a span
// of nodes with equal shares is checked at its ends.
func checkAllocs(a sim.Allocs, nodes int) string {
	k := 0
	for x, n := range a.Spans() {
		switch {
		case !(x.Node >= 0 && int(x.Node) < nodes):
			return fmt.Sprintf("alloc[%d]: node index %d out of range [0, %d)", k, x.Node, nodes)
		case x.GPUs < 0 || x.CPUs < 0 || x.MemMB < 0:
			return fmt.Sprintf("alloc[%d]: negative amount", k)
		case int(x.Node)+n > nodes:
			f := nodes - int(x.Node) // the first node past the last index
			return fmt.Sprintf("alloc[%d]: node index %d out of range [0, %d)", k+f, nodes, nodes)
		}
		k += n
	}
	return ""
}

// CheckRecord reports whether rec satisfies the invariants the writers of
// this package rely on: Cluster and Trace are set; Jobs has one entry per
// trace job with Ref equal to its index; every State is a defined final
// state; a job that never started (Start unknown) has no End (a job
// cancelled before it started has its cancel time) and is CANCELLED,
// REJECTED or UNFINISHED; a started job has Start ≥ Submit, an end (End,
// or Record.End if End is unknown) ≥ Start, and is in a final state other
// than REJECTED with a known End, or UNFINISHED; Part is -1 or a
// partition index; every NodeAlloc names a node of the cluster and holds
// no negative amount; every earlier run (Record.Runs) names a job, is
// PREEMPTED or NODE_FAIL and lies after the job's submit; every time is
// within ±2⁵⁸ s. The error names the first offending job or run.
func CheckRecord(rec *sim.Record) error {
	switch {
	case rec == nil:
		return fmt.Errorf("nil record")
	case rec.Cluster == nil:
		return fmt.Errorf("record has no cluster")
	case rec.Trace == nil:
		return fmt.Errorf("record has no trace")
	case len(rec.Jobs) != rec.Trace.Len():
		return fmt.Errorf("record has %d jobs, trace has %d", len(rec.Jobs), rec.Trace.Len())
	}
	if outOfClock(rec.End) {
		return fmt.Errorf("run end %d outside ±%d s", rec.End, maxRecordTime)
	}
	nodes, parts := len(rec.Cluster.Nodes), len(rec.Cluster.Partitions)
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		bad := func(format string, args ...any) error {
			return fmt.Errorf("job %d (id %q): %s", i, rec.Trace.At(i).ID, fmt.Sprintf(format, args...))
		}
		if int(j.Ref) != i {
			return bad("ref is %d, want its index %d", j.Ref, i)
		}
		for _, t := range [...]sim.Time{j.Submit, j.Eligible, j.Start, j.End} {
			if outOfClock(t) {
				return bad("time %d outside ±%d s", t, maxRecordTime)
			}
		}
		if !(j.State >= sim.Completed && j.State < sim.NumStates) {
			return bad("undefined state %d", j.State)
		}
		if !(j.Part >= -1 && int(j.Part) < parts) {
			return bad("partition index %d out of range [-1, %d)", j.Part, parts)
		}
		if j.Start == workload.Unknown {
			// Only a job cancelled before it started has an end (its
			// cancel time) and no start.
			if j.End != workload.Unknown && j.State != sim.Cancelled {
				return bad("end %d without a start", j.End)
			}
			if j.End != workload.Unknown && j.End < j.Submit {
				return bad("cancelled at %d before submit %d", j.End, j.Submit)
			}
			if j.State != sim.Cancelled && j.State != sim.Rejected && j.State != sim.Unfinished {
				return bad("state %v without a start", j.State)
			}
		} else {
			if j.State == sim.Rejected {
				return bad("state %v with start %d", j.State, j.Start)
			}
			if j.Start < j.Submit {
				return bad("start %d before submit %d", j.Start, j.Submit)
			}
			if j.End == workload.Unknown && j.State != sim.Unfinished {
				return bad("state %v without an end", j.State)
			}
			if e := endOf(rec, j); e < j.Start {
				return bad("end %d before start %d", e, j.Start)
			}
		}
		if msg := checkAllocs(j.Alloc, nodes); msg != "" {
			return bad("%s", msg)
		}
	}
	for k := range rec.Runs {
		r := &rec.Runs[k]
		if !(r.Job >= 0 && int(r.Job) < len(rec.Jobs)) {
			return fmt.Errorf("runs[%d]: job %d out of range [0, %d)", k, r.Job, len(rec.Jobs))
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("runs[%d] (job id %q): %s", k, rec.Trace.At(int(r.Job)).ID, fmt.Sprintf(format, args...))
		}
		if r.State != sim.Preempted && r.State != sim.NodeFail {
			return bad("state %v, want PREEMPTED or NODE_FAIL", r.State)
		}
		if r.Start < rec.Jobs[r.Job].Submit || r.End < r.Start {
			return bad("run [%d, %d) not after submit %d", r.Start, r.End, rec.Jobs[r.Job].Submit)
		}
		if msg := checkAllocs(r.Alloc, nodes); msg != "" {
			return bad("%s", msg)
		}
	}
	return nil
}
