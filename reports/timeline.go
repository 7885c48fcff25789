package reports

import (
	"cmp"
	"math"
	"slices"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// DefaultSampleInterval is the timeline's bin width, in seconds, when
// SummaryOptions leaves it zero: one hour, widened to a whole number of
// hours when the window would otherwise have more than MaxDefaultSamples
// bins.
const DefaultSampleInterval sim.Time = 3600

// MaxDefaultSamples bounds the number of bins the default interval gives.
const MaxDefaultSamples = 2000

// sampleInterval returns the interval to use: opt if positive, else the
// default for a window of length span.
func sampleInterval(opt, span sim.Time) sim.Time {
	if opt > 0 {
		return opt
	}
	d := DefaultSampleInterval
	if span > d*MaxDefaultSamples {
		hours := (span + 3600*MaxDefaultSamples - 1) / (3600 * MaxDefaultSamples)
		d = hours * 3600
	}
	return d
}

// Timeline is the run sampled in bins of Interval seconds over the
// utilization window [Summary.FirstSubmit, Summary.LastEnd): bin k is
// [FirstSubmit + k·Interval, FirstSubmit + (k+1)·Interval), the last one
// cut at LastEnd. It is computed from the record by sweeping job starts
// and ends, never from the engine.
type Timeline struct {
	// Epoch is the trace epoch (Unix seconds) of simulated time 0.
	Epoch    int64
	Interval sim.Time
	// GPUs, Nodes and CPUs are the cluster's totals.
	GPUs, Nodes, CPUs int64
	// Partitions names the cluster's partitions, in order;
	// PartitionGPUs gives each one's GPUs (nodes may be shared).
	Partitions    []string
	PartitionGPUs []int64
	Samples       []Sample
	// Power is true when the cluster has a power model; Sample.EnergyKWh
	// is then the IT energy of each bin (see Energy).
	Power bool
	// MIG is true when the cluster has MIG GPUs; Sample.FreeMIGSlices and
	// UnusableMIGSlices are then filled.
	MIG bool
	// Stretch is true when the runtime model stretched at least one run
	// (EffectiveGPU.StretchedRuns > 0); Sample.EffectiveGPUSeconds is
	// filled either way.
	Stretch bool
}

// Sample is one bin of a Timeline. The *Seconds fields integrate over the
// bin exactly (a job overlapping the bin partly counts for the overlap);
// the snapshot fields hold the state at Start, after every event at Start.
type Sample struct {
	Start, End sim.Time
	// GPUSeconds, CPUSeconds: resources held by jobs in the bin (MIG
	// instances as compute slices / 7 of a GPU, rounded to whole
	// GPU-seconds per bin); NodeSeconds: node-seconds with at least one
	// job on the node.
	GPUSeconds, NodeSeconds, CPUSeconds int64
	// PartGPUSeconds splits GPUSeconds by the partition the jobs ran in,
	// indexed like Timeline.Partitions.
	PartGPUSeconds []int64
	// EffectiveGPUSeconds is GPUSeconds less the GPU-seconds lost to
	// communication stretch (EffectiveGPU): a stretched run's loss is
	// spread over the run in proportion to time (the loss up to t is
	// ⌊loss × (t − start) / (end − start)⌋ in 700ths of a GPU-second), and
	// the bin's value rounded like GPUSeconds.
	EffectiveGPUSeconds int64
	// QueueSeconds integrates the number of queued jobs (submitted or
	// requeued, not yet started, not cancelled); PendingGPUSeconds their
	// requested GPUs (MIG instances as GPU fractions, like GPUSeconds).
	QueueSeconds, PendingGPUSeconds int64
	// Started counts job runs that began in the bin; Ended the jobs whose
	// final run ended in it (the last bin includes its end instant).
	Started, Ended int32

	// Queued is the number of queued jobs at Start, and PendingByReason
	// splits it by the job's last recorded pending reason, indexed by
	// sim.PendingReason (ReasonNone when the policy gave none).
	Queued          int32
	PendingByReason []int32
	// FreeGPUs is the number of idle whole GPUs at Start on nodes in
	// service (not down or drained; MIG GPUs and GPUs with MPS clients
	// are not among them). UnusableFreeGPUs is the part of them that no
	// eligible queued job could use: the free GPUs of every node on which
	// no such job's per-node request fits; 0 when no eligible GPU job is
	// queued (see Fragmentation).
	FreeGPUs, UnusableFreeGPUs int32
	// FreeMIGSlices is the free compute slices of MIG GPUs at Start, by
	// geometry: the slices of free instances of a fixed layout or of a
	// partitioned dynamic GPU in use, and all 7 of an empty dynamic GPU
	// (it can be repartitioned), on nodes in service. UnusableMIGSlices
	// is the part of them no eligible queued MIG job could use: instances
	// of profiles no such job asks for on the node, or on a node where no
	// such job's per-node request (instances, CPUs, memory) fits; 0 when
	// no eligible GPU job is queued (see Fragmentation).
	FreeMIGSlices, UnusableMIGSlices int32
	// EnergyKWh is the cluster's IT energy in the bin (Timeline.Power).
	EnergyKWh float64
}

// Len returns the bin's length in seconds.
func (s *Sample) Len() int64 { return int64(s.End - s.Start) }

// GPUUtil returns GPUSeconds over the cluster's GPU-seconds in the bin.
func (t *Timeline) GPUUtil(s *Sample) float64 { return ratio(s.GPUSeconds, t.GPUs*s.Len()) }

// NodeUtil returns NodeSeconds over the cluster's node-seconds in the bin.
func (t *Timeline) NodeUtil(s *Sample) float64 { return ratio(s.NodeSeconds, t.Nodes*s.Len()) }

// CPUUtil returns CPUSeconds over the cluster's CPU-seconds in the bin.
func (t *Timeline) CPUUtil(s *Sample) float64 { return ratio(s.CPUSeconds, t.CPUs*s.Len()) }

func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// numReasons is the number of sim.PendingReason values with a name.
var numReasons = func() int {
	n := 0
	for sim.PendingReason(n).String() != "Unknown" {
		n++
	}
	return n
}()

// ReasonNames returns the names of the pending reasons, indexed by
// sim.PendingReason.
func ReasonNames() []string {
	out := make([]string, numReasons)
	for i := range out {
		out[i] = sim.PendingReason(i).String()
	}
	return out
}

// timelineEvent is one change the snapshot sweep applies. Events at the
// same instant apply in kind order, then in the order they were made,
// which is by job, then arg (see compareEvents). A year of a large cluster has
// millions, so an event is 16 bytes.
type timelineEvent struct {
	key sim.Time // at<<4 | kind
	job sim.JobRef
	// arg is the run's index among the job's runs for evRunEnd and
	// evRunStart, the index into Record.MIG for evMIG* (job 0), the shape
	// for evEligibleBegin, the shape + 1 for evQueueBegin and evQueueEnd
	// when the job is eligible as it begins or ends queueing (else 0), and
	// the reason for evReason.
	arg int32
}

func newEvent(at sim.Time, kind uint8, job sim.JobRef, arg int32) timelineEvent {
	return timelineEvent{key: at<<4 | sim.Time(kind), job: job, arg: arg}
}

func (e timelineEvent) at() sim.Time { return e.key >> 4 }
func (e timelineEvent) kind() uint8  { return uint8(e.key & 15) }

// compareEvents orders events by time, kind, job and arg: the order they
// are made in, since a job's events of one kind at one instant differ in
// arg (a job's queued and eligible intervals are disjoint and not empty;
// its runs are made in arg order).
func compareEvents(a, b timelineEvent) int {
	switch { // not cmp.Or, which makes all three comparisons
	case a.key != b.key:
		return cmp.Compare(a.key, b.key)
	case a.job != b.job:
		return cmp.Compare(a.job, b.job)
	}
	return cmp.Compare(a.arg, b.arg)
}

// sortEvents sorts events by compareEvents. Events are made by job, then
// arg, so a stable sort by key alone usually gives that order: a radix
// sort by key, checked, with a comparison sort where the check fails.
// Sorting them was a third of a small run's analysis.
func sortEvents(events []timelineEvent) {
	if len(events) < 256 {
		slices.SortFunc(events, compareEvents)
		return
	}
	lo, hi := events[0].key, events[0].key
	for i := range events {
		lo, hi = min(lo, events[i].key), max(hi, events[i].key)
	}
	const digit = 11
	span := uint64(hi - lo)
	tmp := make([]timelineEvent, len(events))
	src, dst := events, tmp
	var count [1 << digit]int
	for shift := 0; shift < 64 && span>>shift != 0; shift += digit {
		clear(count[:])
		for i := range src {
			count[(uint64(src[i].key-lo)>>shift)&(1<<digit-1)]++
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for i := range src {
			d := (uint64(src[i].key-lo) >> shift) & (1<<digit - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &events[0] {
		copy(events, src)
	}
	if !slices.IsSortedFunc(events, compareEvents) {
		slices.SortFunc(events, compareEvents)
	}
}

// queuedIntervals appends to dst job j's queued intervals: from submit to
// the first start, between runs (its runs are given), and after the last
// run until the job starts, is cancelled or the simulation stops. Rejected
// jobs are never queued. Empty intervals are left out.
func queuedIntervals(dst []interval, rec *sim.Record, j *sim.JobRecord, runs []runSpan) []interval {
	if j.State == sim.Rejected {
		return dst
	}
	add := func(q interval) {
		if q.to > q.from {
			dst = append(dst, q)
		}
	}
	a := j.Submit
	for _, r := range runs {
		add(interval{a, r.start})
		a = r.end
	}
	if j.Start == workload.Unknown {
		switch {
		case j.State == sim.Cancelled && j.End != workload.Unknown:
			add(interval{a, j.End})
		case j.State == sim.Unfinished:
			add(interval{a, rec.End})
		}
	}
	return dst
}

const (
	evRunEnd = iota
	evMIGFree
	evQueueEnd // also ends the job's eligible interval, when arg > 0
	evMIGHold
	evRunStart
	evQueueBegin    // also begins it, when arg > 0 (eligible at submit)
	evEligibleBegin // for a job that becomes eligible while queued
	evNode          // a node goes out of service or comes back (arg: Record.NodeEvents index)
	evReason
)

// pendingShape is what an eligible queued GPU job needs on one node:
// gpus whole GPUs, or, for a MIG job (mig not zero), gpus instances of
// that profile, or, for an MPS job (mps set), a share of one GPU of a
// node that shares GPUs by MPS (gpus is 1: a free GPU serves it).
type pendingShape struct {
	parts   uint64
	gpuType string
	mig     workload.MIGProfile
	mps     bool
	gpus    int32
	cpus    int32
	memMB   int64
}

// timelineResult holds what the sweep computes besides the Timeline.
type timelineResult struct {
	tl            Timeline
	reasonSeconds []int64 // queued job-seconds by reason, over the whole run
}

// newTimeline makes the timeline of rec over [from, to) in bins of step
// seconds, with the bins empty: the energy model adds each bin's energy,
// buildTimeline the rest.
func newTimeline(rec *sim.Record, from, to, step sim.Time, s *Summary) Timeline {
	cl := rec.Cluster
	tl := Timeline{
		Epoch:    rec.Trace.Epoch,
		Interval: step,
		GPUs:     s.Cluster.GPUs,
		Nodes:    int64(s.Cluster.Nodes),
		CPUs:     s.Cluster.CPUs,
		MIG:      hasMIG(cl),
	}
	for i := range cl.Partitions {
		p := &cl.Partitions[i]
		tl.Partitions = append(tl.Partitions, p.Name)
		var g int64
		for _, n := range p.Nodes {
			g += int64(cl.Nodes[n].GPUs)
		}
		tl.PartitionGPUs = append(tl.PartitionGPUs, g)
	}
	if to > from {
		tl.Samples = make([]Sample, 0, (to-from+step-1)/step)
		for t := from; t < to; t += step {
			tl.Samples = append(tl.Samples, Sample{
				Start: t, End: min(t+step, to),
				PartGPUSeconds:  make([]int64, len(cl.Partitions)),
				PendingByReason: make([]int32, numReasons),
			})
		}
	}
	return tl
}

// buildTimeline fills tl's bins. It reads the nodes' busy intervals
// first, so they can be freed before the sweep's events are made.
func buildTimeline(rec *sim.Record, runs *runTable, busy *nodeBusy, tl Timeline, from, to, step sim.Time) timelineResult {
	cl := rec.Cluster
	res := timelineResult{reasonSeconds: make([]int64, numReasons)}
	bins := tl.Samples
	// spread calls f(k, seconds) for every bin k that [a, b) overlaps.
	spread := func(a, b sim.Time, f func(k int, d int64)) {
		a, b = max(a, from), min(b, to)
		if b <= a {
			return
		}
		for k := int((a - from) / step); k < len(bins) && bins[k].Start < b; k++ {
			if d := min(b, bins[k].End) - max(a, bins[k].Start); d > 0 {
				f(k, int64(d))
			}
		}
	}
	binOf := func(t sim.Time) int { return int((t - from) / step) }
	var ivs []interval
	for n := range cl.Nodes {
		ivs = busy.of(ivs[:0], n)
		for _, iv := range ivs {
			spread(iv.from, iv.to, func(k int, d int64) { bins[k].NodeSeconds += d })
		}
	}

	// Integrals: resources held, node busy time, queue.
	// The events, counted first so the slice is made at its size.
	var buf []runSpan
	var queued []interval
	nEvents := 2*len(rec.MIG) + len(rec.NodeEvents)
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		buf = runs.appendRuns(buf[:0], i)
		queued = queuedIntervals(queued[:0], rec, j, buf)
		nEvents += 2*len(buf) + 2*len(queued)
		if rec.Trace.At(i).Request.GPUs > 0 && j.Eligible != workload.Unknown {
			for _, q := range queued {
				if j.Eligible > q.from && j.Eligible < q.to {
					nEvents++
				}
			}
		}
	}
	events := make([]timelineEvent, 0, nEvents)
	add := func(e timelineEvent) { events = append(events, e) }
	shapes := map[pendingShape]int32{}
	var shapeList []pendingShape
	clusterTypes := map[string]bool{}
	for i := range cl.Nodes {
		clusterTypes[cl.Nodes[i].GPUType] = true
	}
	stretch, stretched := runStretches(rec, runs)
	tl.Stretch = stretched > 0
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		req := rec.Trace.At(i).Request
		buf = runs.appendRuns(buf[:0], i)
		for ri, r := range buf {
			var g, c int64 // g in 700ths of a GPU
			for a, n := range r.alloc.Spans() {
				g += gpuParts(cl, &a) * int64(n)
				c += int64(a.CPUs) * int64(n)
			}
			part := j.Part
			spread(r.start, r.end, func(k int, d int64) {
				bins[k].GPUSeconds += g * d
				bins[k].EffectiveGPUSeconds += g * d
				bins[k].CPUSeconds += c * d
				if part >= 0 {
					bins[k].PartGPUSeconds[part] += g * d
				}
			})
			if span := int64(r.end - r.start); span > 0 {
				if lost := stretchLost(g, span, stretchOf(stretch, i, ri)); lost > 0 {
					// The loss up to t, spread in proportion to time.
					upTo := func(t sim.Time) int64 { return mulDiv(lost, int64(t-r.start), span) }
					spread(r.start, r.end, func(k int, _ int64) {
						a, b := max(r.start, bins[k].Start), min(r.end, bins[k].End)
						bins[k].EffectiveGPUSeconds -= upTo(b) - upTo(a)
					})
				}
			}
			if r.start >= from && r.start < to {
				bins[binOf(r.start)].Started++
			}
			add(newEvent(r.start, evRunStart, j.Ref, int32(ri)))
			add(newEvent(r.end, evRunEnd, j.Ref, int32(ri)))
		}
		if j.End != workload.Unknown && j.Start != workload.Unknown && j.End >= from && j.End <= to && len(bins) > 0 {
			bins[min(binOf(j.End), len(bins)-1)].Ended++
		}

		if j.State == sim.Rejected {
			continue
		}
		queued = queuedIntervals(queued[:0], rec, j, buf)
		shape := int32(-1)
		if req.GPUs > 0 || req.MPSShare > 0 {
			sh := pendingShape{parts: jobPartitions(rec, j), mig: req.MIGProfile, gpus: 1,
				cpus: ceilDiv32(req.CPUs, req.GPUs), memMB: ceilDiv64(req.MemMB, int64(req.GPUs))}
			if clusterTypes[req.GPUType] {
				sh.gpuType = req.GPUType
			}
			switch {
			case req.GPUs <= 0: // MPS: a share on each of its nodes, one node without a count
				nodes := max(req.Nodes, 1)
				sh.mps, sh.cpus, sh.memMB = true, ceilDiv32(req.CPUs, nodes), ceilDiv64(req.MemMB, int64(nodes))
			case req.Nodes > 0:
				sh.gpus = ceilDiv32(req.GPUs, req.Nodes)
				sh.cpus = ceilDiv32(req.CPUs, req.Nodes)
				sh.memMB = ceilDiv64(req.MemMB, int64(req.Nodes))
			}
			var ok bool
			if shape, ok = shapes[sh]; !ok {
				shape = int32(len(shapeList))
				shapes[sh] = shape
				shapeList = append(shapeList, sh)
			}
		}
		for _, q := range queued {
			gpus := gpuUnit * int64(req.GPUs)
			switch {
			case req.MIGProfile != 0:
				gpus = gpuUnit / 7 * int64(req.MIGProfile.Compute()) * int64(req.GPUs)
			case req.MPSShare > 0:
				gpus = gpuUnit / 100 * int64(req.MPSShare) * int64(max(req.Nodes, 1))
			}
			spread(q.from, q.to, func(k int, d int64) {
				bins[k].QueueSeconds += d
				bins[k].PendingGPUSeconds += gpus * d
			})
			// Only an eligible job can use free GPUs. Its eligible part of
			// the interval ends with it, and begins with it unless the job
			// becomes eligible later: shape counts are read only between
			// instants, so that saves the sweep two events a job.
			begin, end := int32(0), int32(0)
			if shape >= 0 && j.Eligible != workload.Unknown {
				if ef := max(q.from, j.Eligible); ef < q.to {
					end = shape + 1
					if ef == q.from {
						begin = shape + 1
					} else {
						add(newEvent(ef, evEligibleBegin, j.Ref, shape))
					}
				}
			}
			add(newEvent(q.from, evQueueBegin, j.Ref, begin))
			add(newEvent(q.to, evQueueEnd, j.Ref, end))
		}
	}
	// Reason changes, tens per job on a busy queue, are merged into the
	// sweep from the log rather than sorted with the other events: the
	// engine logs them in time order, and evReason is the last kind, so
	// the merge gives the order a sort would. A log out of time order
	// (not the engine's) is sorted by time first.
	validReason := func(rc sim.ReasonChange) bool { return int(rc.Job) >= 0 && int(rc.Job) < len(rec.Jobs) }
	mergeReasons := true
	prev := sim.Time(math.MinInt64)
	for rc := range rec.Reasons.All() {
		if validReason(rc) {
			if rc.At < prev {
				mergeReasons = false
				break
			}
			prev = rc.At
		}
	}
	var sortedReasons []sim.ReasonChange
	if !mergeReasons {
		for rc := range rec.Reasons.All() {
			if validReason(rc) {
				sortedReasons = append(sortedReasons, rc)
			}
		}
		slices.SortStableFunc(sortedReasons, func(a, b sim.ReasonChange) int { return cmp.Compare(a.At, b.At) })
	}
	// MIG instances: held from the pass that allocated them (Record.MIG's
	// At, before any reconfiguration delay) until the end of that run.
	for h := range rec.MIG {
		m := &rec.MIG[h]
		if int(m.Job) < 0 || int(m.Job) >= len(rec.Jobs) {
			continue
		}
		end := sim.Time(-1)
		for k, n := 0, runs.count(int(m.Job)); k < n; k++ {
			if r := runs.at(int(m.Job), k); r.start >= m.At {
				end = r.end
				break
			}
		}
		if end < m.At {
			continue
		}
		add(newEvent(m.At, evMIGHold, 0, int32(h)))
		add(newEvent(end, evMIGFree, 0, int32(h)))
	}
	// Nodes out of service have no free GPUs for anyone.
	for i, ne := range rec.NodeEvents {
		if ne.Node >= 0 && int(ne.Node) < len(cl.Nodes) {
			add(newEvent(ne.At, evNode, 0, int32(i)))
		}
	}
	// Integrals were summed in 700ths of a GPU.
	for k := range bins {
		b := &bins[k]
		b.GPUSeconds = roundGPUParts(b.GPUSeconds)
		b.EffectiveGPUSeconds = roundGPUParts(b.EffectiveGPUSeconds)
		b.PendingGPUSeconds = roundGPUParts(b.PendingGPUSeconds)
		for p := range b.PartGPUSeconds {
			b.PartGPUSeconds[p] = roundGPUParts(b.PartGPUSeconds[p])
		}
	}
	// Snapshot sweep.
	sortEvents(events)
	freeGPU := make([]int32, len(cl.Nodes))
	freeCPU := make([]int32, len(cl.Nodes))
	freeMem := make([]int64, len(cl.Nodes))
	for n := range cl.Nodes {
		freeGPU[n], freeCPU[n], freeMem[n] = cl.Nodes[n].GPUs-migGPUs(&cl.Nodes[n]), cl.Nodes[n].CPUs, cl.Nodes[n].MemMB
	}
	migs := newMIGSweep(cl)
	down := make([]bool, len(cl.Nodes))
	// mpsClients counts the jobs on each MPS GPU of a node: a GPU with
	// clients is not free (sim.NodeState.FreeGPUs), as Slurm allocates a
	// GPU as gpu or as mps, never both. nil without MPS nodes.
	var mpsClients [][sim.MaxMPSGPUs]int32
	mpsNode := make([]bool, len(cl.Nodes))
	for n := range cl.Nodes {
		if sim.MPSCapacity(&cl.Nodes[n]).Enabled() {
			mpsNode[n] = true
			if mpsClients == nil {
				mpsClients = make([][sim.MaxMPSGPUs]int32, len(cl.Nodes))
			}
		}
	}
	// Without GPUs (no node has any, no MIG, no MPS), free GPUs stay at
	// or below 0 on every node at every snapshot: a run takes them before
	// it gives them back, and a run of no length gives them back first at
	// the same instant, between snapshots. The free state is then read
	// by nothing, and runs need not update it node by node.
	trackFree := migs != nil || mpsClients != nil
	for n := range cl.Nodes {
		trackFree = trackFree || cl.Nodes[n].GPUs > 0
	}
	reason := make([]int32, len(rec.Jobs))
	queuedNow := make([]bool, len(rec.Jobs))
	byReason := make([]int32, numReasons)
	shapeCount := make([]int32, len(shapeList))
	var queuedCount int32
	var active []int
	clampReason := func(r int32) int32 {
		if r < 0 || int(r) >= numReasons {
			return 0
		}
		return r
	}
	// snapshot reads the state at s.Start. Fragmentation (docs/reports.md):
	// the free GPUs of nodes in service that no eligible queued GPU job
	// (active shape) could use; none while no such job waits.
	snapshot := func(s *Sample) {
		s.Queued = queuedCount
		copy(s.PendingByReason, byReason)
		active = active[:0]
		for k, c := range shapeCount {
			if c > 0 {
				active = append(active, k)
			}
		}
		waiting := len(active) > 0
		for n := range cl.Nodes {
			node := &cl.Nodes[n]
			if freeGPU[n] <= 0 || down[n] {
				continue
			}
			s.FreeGPUs += freeGPU[n]
			if !waiting {
				continue
			}
			usable := false
			for _, k := range active {
				sh := &shapeList[k]
				if sh.mig == 0 && (!sh.mps || mpsNode[n]) && node.Partitions&sh.parts != 0 && (sh.gpuType == "" || sh.gpuType == node.GPUType) &&
					freeGPU[n] >= sh.gpus && freeCPU[n] >= sh.cpus && (node.MemMB == 0 || freeMem[n] >= sh.memMB) {
					usable = true
					break
				}
			}
			if !usable {
				s.UnusableFreeGPUs += freeGPU[n]
			}
		}
		if migs != nil {
			for n := range cl.Nodes {
				if down[n] {
					continue
				}
				free, unusable := migs.fragmentation(n, active, shapeList, freeCPU[n], freeMem[n])
				s.FreeMIGSlices += free
				if waiting {
					s.UnusableMIGSlices += unusable
				}
			}
		}
	}
	reasons := rec.Reasons.Reader()
	nextReason := func() (timelineEvent, bool) {
		if !mergeReasons {
			if len(sortedReasons) == 0 {
				return timelineEvent{}, false
			}
			rc := sortedReasons[0]
			sortedReasons = sortedReasons[1:]
			return newEvent(rc.At, evReason, rc.Job, int32(rc.Reason)), true
		}
		for {
			rc, ok := reasons.Next()
			if !ok {
				return timelineEvent{}, false
			}
			if validReason(rc) {
				return newEvent(rc.At, evReason, rc.Job, int32(rc.Reason)), true
			}
		}
	}
	pendingReason, haveReason := nextReason()
	next := 0 // next bin to snapshot
	var last sim.Time
	for i, k := 0, 0; ; i++ {
		var e timelineEvent
		// evReason is the last kind, so a reason change goes first only
		// if it is earlier.
		if haveReason && (k == len(events) || pendingReason.key < events[k].key) {
			e = pendingReason
			pendingReason, haveReason = nextReason()
		} else if k < len(events) {
			e = events[k]
			k++
		} else {
			break
		}
		// Integrate the queue by reason up to this event.
		if i > 0 && e.at() > last {
			d := int64(e.at() - last)
			for r, c := range byReason {
				res.reasonSeconds[r] += int64(c) * d
			}
		}
		last = e.at()
		for next < len(bins) && bins[next].Start < e.at() {
			snapshot(&bins[next])
			next++
		}
		switch e.kind() {
		case evRunEnd, evRunStart:
			sign := int32(1)
			if e.kind() == evRunStart {
				sign = -1
				if queuedNow[e.job] {
					byReason[reason[e.job]]--
					reason[e.job] = 0
					byReason[0]++
				} else {
					reason[e.job] = 0
				}
			}
			if !trackFree {
				break
			}
			for a, cnt := range runs.at(int(e.job), int(e.arg)).alloc.Spans() {
				if cnt > 1 { // plain nodes: no MPS share
					for n := a.Node; n < a.Node+int32(cnt); n++ {
						freeGPU[n] += sign * a.GPUs
						freeCPU[n] += sign * a.CPUs
						freeMem[n] += int64(sign) * a.MemMB
					}
					continue
				}
				freeGPU[a.Node] += sign * a.GPUs
				freeCPU[a.Node] += sign * a.CPUs
				freeMem[a.Node] += int64(sign) * a.MemMB
				if g := int(a.MPS.GPU); a.MPS.Share != 0 && mpsClients != nil && g >= 0 && g < sim.MaxMPSGPUs {
					// The first client takes the GPU, the last gives it back.
					c := &mpsClients[a.Node][g]
					*c -= sign
					if *c == 1 && sign < 0 || *c == 0 && sign > 0 {
						freeGPU[a.Node] += sign
					}
				}
			}
		case evMIGHold:
			migs.hold(&rec.MIG[e.arg], true)
		case evMIGFree:
			migs.hold(&rec.MIG[e.arg], false)
		case evQueueBegin:
			queuedNow[e.job] = true
			queuedCount++
			byReason[reason[e.job]]++
			if e.arg > 0 {
				shapeCount[e.arg-1]++
			}
		case evQueueEnd:
			queuedNow[e.job] = false
			queuedCount--
			byReason[reason[e.job]]--
			if e.arg > 0 {
				shapeCount[e.arg-1]--
			}
		case evEligibleBegin:
			shapeCount[e.arg]++
		case evNode:
			ne := rec.NodeEvents[e.arg]
			down[ne.Node] = ne.Down
		case evReason:
			r := clampReason(e.arg)
			if queuedNow[e.job] {
				byReason[reason[e.job]]--
				byReason[r]++
			}
			reason[e.job] = r
		}
	}
	for ; next < len(bins); next++ {
		snapshot(&bins[next])
	}
	res.tl = tl
	res.tl.Samples = bins
	return res
}

func ceilDiv32(a, b int32) int32 {
	if b <= 0 || a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

func ceilDiv64(a, b int64) int64 {
	if b <= 0 || a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
