package reports

import (
	"maps"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Analysis is everything the reports derive from one Record: the
// run-level Summary, one JobRow per job and the Timeline. The writers
// (summary.json, jobs.parquet, timeline.parquet, jobs.sacct, plots,
// report.html) each read a part of it.
type Analysis struct {
	Summary Summary
	// Jobs holds one row per job, nil with SummaryOptions.NoJobRows or
	// StreamJobRows (JobCount and the writers still see every row with
	// the latter).
	Jobs     []JobRow
	Timeline Timeline
	// stream makes the rows again (SummaryOptions.StreamJobRows).
	stream *rowStream
}

// rowStream makes an Analysis's rows one at a time for its writers.
type rowStream struct {
	rm    *rowMaker // with labels (NodeList, MIG)
	n     int
	kwh   []float64 // EnergyKWh by job; nil without a power model
	waits waitRows  // the started jobs', in job order, for the figures
	cur   int       // the job row holds, or -1
	row   JobRow
}

// JobCount returns how many job rows the analysis has: len(Jobs), or the
// jobs of the record when the rows are streamed.
func (a *Analysis) JobCount() int {
	if a.stream != nil {
		return a.stream.n
	}
	return len(a.Jobs)
}

// jobRow returns job i's row: Jobs[i], or the stream's one row, made
// again when i changes (the writers read rows in order, every column of
// a row before the next row). It is valid until the next call.
func (a *Analysis) jobRow(i int) *JobRow {
	st := a.stream
	if st == nil {
		return &a.Jobs[i]
	}
	if st.cur != i {
		st.rm.fill(&st.row, i)
		if st.kwh != nil {
			st.row.EnergyKWh = st.kwh[i]
		}
		st.cur = i
	}
	return &st.row
}

// anyMPS reports whether some job row has an MPSShare: for streamed
// rows from the trace's requests (which fill copies), so that the rows
// are not all made an extra time before the writer makes them.
func (a *Analysis) anyMPS() bool {
	if st := a.stream; st != nil {
		t := st.rm.rec.Trace
		for i := range st.n {
			if t.At(i).Request.MPSShare != 0 {
				return true
			}
		}
		return false
	}
	for i := range a.Jobs {
		if a.Jobs[i].MPSShare != 0 {
			return true
		}
	}
	return false
}

// waitRows returns what the wait figures read of the rows.
func (a *Analysis) waitRows() *waitRows {
	if a.stream != nil {
		return &a.stream.waits
	}
	return waitRowsOf(a.Jobs)
}

// Analyze computes the Analysis of rec. It panics, like Summarize, if rec
// breaks CheckRecord's invariants.
func Analyze(rec *sim.Record, opts SummaryOptions) *Analysis {
	return analyze(rec, opts, "Analyze")
}

// CheckAndAnalyze is Analyze for a record not checked yet: it returns
// CheckRecord's error instead of panicking, having checked rec once (a
// check walks every job's allocation).
func CheckAndAnalyze(rec *sim.Record, opts SummaryOptions) (*Analysis, error) {
	if err := CheckRecord(rec); err != nil {
		return nil, err
	}
	return analyzeChecked(rec, opts), nil
}

func analyze(rec *sim.Record, opts SummaryOptions, caller string) *Analysis {
	if err := CheckRecord(rec); err != nil {
		panic("reports: " + caller + ": " + err.Error())
	}
	return analyzeChecked(rec, opts)
}

// analyzeChecked is analyze of a record that satisfies CheckRecord.
func analyzeChecked(rec *sim.Record, opts SummaryOptions) *Analysis {
	runs := newRunTable(rec)
	s, busy := baseSummary(rec, runs, opts)
	// The rows are summed as they are made; only an Analysis that keeps
	// them holds one per job. The text prints none of their sums.
	var rows []JobRow
	var d derived
	var st *rowStream
	switch {
	case opts.TextOnly:
	case opts.StreamJobRows && !opts.NoJobRows:
		st = &rowStream{rm: newRowMaker(rec, runs, s.Slowdown.Tau, true), n: len(rec.Jobs), cur: -1}
		started := 0 // a row has a wait when the job's final run started (runTable.wait)
		for i := range rec.Jobs {
			if rec.Jobs[i].Start != workload.Unknown {
				started++
			}
		}
		st.waits.rows = make([]waitRow, 0, started)
		fallthrough
	default:
		d.grow(len(rec.Jobs))
		rm := newRowMaker(rec, runs, s.Slowdown.Tau, !opts.NoJobRows && st == nil)
		if opts.NoJobRows || st != nil {
			var r JobRow
			for i := range rec.Jobs {
				rm.fill(&r, i)
				d.add(&r)
				if st != nil && r.Wait != workload.Unknown {
					st.waits.add(r.Partition, r.SizeClass, r.Wait)
				}
			}
		} else {
			rows = make([]JobRow, len(rec.Jobs))
			for i := range rows {
				rm.fill(&rows[i], i)
				d.add(&rows[i])
			}
		}
		d.finish(&s)
	}
	s.ConfigHash = opts.ConfigHash
	s.Build = opts.Build
	s.SampleInterval = sampleInterval(opts.SampleInterval, s.Makespan)
	from, to := s.FirstSubmit, s.FirstSubmit+s.Makespan
	noTimeline := !sweepTimeline(opts, rec.Cluster)
	binsTo := to
	if noTimeline {
		binsTo = from // no samples, so energyOf fills none
	}
	tl := newTimeline(rec, from, binsTo, s.SampleInterval, &s)
	var setKWh func(i int, kwh float64)
	switch {
	case rows != nil:
		setKWh = func(i int, kwh float64) { rows[i].EnergyKWh = kwh }
	case st != nil:
		setKWh = func(i int, kwh float64) {
			if st.kwh == nil {
				st.kwh = make([]float64, st.n)
			}
			st.kwh[i] = kwh
		}
	}
	s.Energy = energyOf(rec, runs, busy, from, to, setKWh, tl.Samples)
	tl.Power = s.Energy.Modeled
	if noTimeline {
		return &Analysis{Summary: s, Jobs: rows, Timeline: tl, stream: st}
	}
	tr := buildTimeline(rec, runs, busy, tl, from, to, s.SampleInterval)
	s.Samples = len(tr.tl.Samples)
	fillTimelineDerived(&s, &tr)
	return &Analysis{Summary: s, Jobs: rows, Timeline: tr.tl, stream: st}
}

// sweepTimeline reports whether analyze sweeps the timeline: unless
// opts.TextOnly, and on a cluster with MIG GPUs anyway, since WriteTable
// prints their fragmentation, which only the timeline gives.
func sweepTimeline(opts SummaryOptions, cl *hwmodels.Cluster) bool {
	return !opts.TextOnly || hasMIG(cl)
}

// WaitBy holds wait statistics by group. Users, Accounts and GPUTypes
// are sorted by name (the GPU type "any" stands for jobs that named
// none); SizeClasses follow SizeClasses(). Only groups with at least one
// job appear.
type WaitBy struct {
	Users, Accounts, SizeClasses, GPUTypes []GroupStats
}

// GroupStats is the wait of the started jobs of one group.
type GroupStats struct {
	Name string
	// Jobs counts the group's jobs, started or not.
	Jobs int
	Wait Stats
}

// Throughput is the work finished per day of the window.
type Throughput struct {
	// Finished counts jobs that ended after they started (every final
	// state but UNFINISHED).
	Finished int
	// JobsPerDay is Finished over the makespan in days; GPUHoursPerDay
	// the allocated GPU-hours over the same. Both are 0 for an empty
	// window.
	JobsPerDay     float64
	GPUHours       float64
	GPUHoursPerDay float64
}

// Fairness holds fairness measures.
type Fairness struct {
	// Users counts the users with at least one finished job, and
	// JainUserSlowdown is Jain's index (Σx)² / (n·Σx²) over their mean
	// bounded slowdowns (Jain, Chiu and Hawe, DEC-TR-301, 1984): 1 when
	// every user sees the same slowdown, 1/n when one user takes all of
	// it. It is 0 when no user finished a job.
	Users            int
	JainUserSlowdown float64
	// Accounts lists every account with at least one job, sorted by
	// name, with its share of the GPU-seconds jobs held.
	Accounts []AccountShare
}

// AccountShare is one account's use of the GPUs.
type AccountShare struct {
	Name       string
	GPUSeconds int64
	// Share is GPUSeconds over all accounts' GPU-seconds (0 if none).
	// Target is the share a fair-share scheduler aims at: Slurm gives
	// every association Fairshare=1 unless configured otherwise, so each
	// of the n accounts is entitled to 1/n.
	Share, Target float64
}

// Fragmentation averages the timeline's snapshots (see Sample): free
// GPUs, and free GPUs that no eligible queued job could use because its
// per-node request fits on none of the nodes holding them (by partition,
// GPU type, GPUs, CPUs and memory; an MPS job only on nodes sharing GPUs
// by MPS). A job with a node count asks for ⌈GPUs/nodes⌉ GPUs (and
// likewise CPUs and memory) on each node; one without asks for at least
// one GPU with ⌈CPUs/GPUs⌉ CPUs. While no eligible GPU job is queued no
// free GPU is unusable: fragmentation is capacity that waiting work
// cannot use, not idle capacity. docs/reports.md has the definition.
type Fragmentation struct {
	Samples int
	// MeanFreeGPUs and MeanUnusableFreeGPUs average the snapshots;
	// UnusableFraction is Σ unusable / Σ free over all snapshots (0 when
	// nothing was free): the share of free GPU time stranded while jobs
	// waited. They count whole GPUs (MIG GPUs are not among them).
	MeanFreeGPUs, MeanUnusableFreeGPUs, UnusableFraction float64
	// MIG is true when the cluster has MIG GPUs; MeanFreeMIGSlices,
	// MeanUnusableMIGSlices and MIGUnusableFraction are then the same
	// for the free compute slices of MIG GPUs (Sample.FreeMIGSlices).
	MIG                                                           bool
	MeanFreeMIGSlices, MeanUnusableMIGSlices, MIGUnusableFraction float64
}

// Disruption counts what preemption and node failures cost.
type Disruption struct {
	// Preemptions counts runs that ended PREEMPTED; Requeues sums
	// JobRecord.Requeues.
	Preemptions, Requeues int
	// NodeFailRuns counts runs that a node failure of the simulation
	// ended; LostGPUSeconds is the GPU time those runs held after their
	// last checkpoint (JobRow.LostGPUSeconds). Preemptions and failures
	// the trace recorded as a job's final state are not counted.
	NodeFailRuns   int
	LostGPUSeconds int64
}

// ReasonTime is the queued job-seconds spent with one pending reason.
type ReasonTime struct {
	Reason     string
	JobSeconds int64
}

// derived sums the job rows, one at a time in JobRef order, into the
// Summary fields that come from them; finish adds the timeline's.
type derived struct {
	// groups are the wait groups by user, account, size class and GPU
	// type. The waits of started jobs are kept once, with each job's four
	// group indices, and split by group when finished: a million jobs'
	// waits would otherwise be held four times over, in slices that grow
	// by copying.
	groups    [4]map[string]*waitGroup
	waits     []int64
	waitGroup [4][]int32
	responses []int64
	// userSld sums each user's slowdowns in JobRef order, as a mean over
	// a slice of them would.
	userSld    map[string]*sldSum
	accountGPU map[string]int64
	gpuSec     int64
	disruption Disruption
	// The group each grouping's last row went to, and the last user's
	// slowdown sum: consecutive jobs often share them (a user's batch,
	// a trace without accounts), sparing the map lookups.
	lastName  [4]string
	lastGroup [4]*waitGroup
	lastUser  string
	lastSld   *sldSum
}

type waitGroup struct {
	index   int32 // order of first appearance
	jobs    int
	started int
}

type sldSum struct {
	sum float64
	n   int
}

// grow makes room for n more jobs.
func (d *derived) grow(n int) {
	d.waits = slices.Grow(d.waits, n)
	for k := range d.waitGroup {
		d.waitGroup[k] = slices.Grow(d.waitGroup[k], n)
	}
	d.responses = slices.Grow(d.responses, n)
}

func (d *derived) init() {
	if d.userSld == nil {
		d.groups = [4]map[string]*waitGroup{{}, {}, {}, {}}
		d.userSld = map[string]*sldSum{}
		d.accountGPU = map[string]int64{}
	}
}

func (d *derived) add(r *JobRow) {
	d.init()
	gt := r.GPUType
	if gt == "" {
		gt = "any"
	}
	started := r.Wait != workload.Unknown
	if started {
		d.waits = append(d.waits, int64(r.Wait))
	}
	for k, name := range [4]string{r.User, r.Account, r.SizeClass, gt} {
		g := d.lastGroup[k]
		if g == nil || name != d.lastName[k] {
			if g = d.groups[k][name]; g == nil {
				g = &waitGroup{index: int32(len(d.groups[k]))}
				d.groups[k][name] = g
			}
			d.lastName[k], d.lastGroup[k] = name, g
		}
		g.jobs++
		if started {
			g.started++
			d.waitGroup[k] = append(d.waitGroup[k], g.index)
		}
	}
	if r.Response != workload.Unknown {
		d.responses = append(d.responses, int64(r.Response))
	}
	if r.HasSlowdown {
		u := d.lastSld
		if u == nil || r.User != d.lastUser {
			if u = d.userSld[r.User]; u == nil {
				u = &sldSum{}
				d.userSld[r.User] = u
			}
			d.lastUser, d.lastSld = r.User, u
		}
		u.sum += r.Slowdown
		u.n++
	}
	d.accountGPU[r.Account] += r.GPUSeconds
	d.gpuSec += r.GPUSeconds
	d.disruption.Preemptions += int(r.Preemptions)
	d.disruption.Requeues += int(r.Requeues)
	d.disruption.LostGPUSeconds += r.LostGPUSeconds
	d.disruption.NodeFailRuns += int(r.NodeFails)
}

// finish computes the Summary fields that come from the job rows. It
// needs the base summary's window and allocation, not the timeline, so the
// rows' waits are freed before the timeline is built.
func (d *derived) finish(s *Summary) {
	d.init()
	groups, responses, accountGPU, gpuSec := d.groups, d.responses, d.accountGPU, d.gpuSec
	s.Disruption = d.disruption
	s.Response = statsOf(responses)
	s.Throughput.Finished = len(responses)
	// Each grouping's waits, split by group in job order into one buffer.
	buf := make([]int64, len(d.waits))
	// A group of every wait (one account, no GPU type) has the Stats of
	// all of them, computed once: Stats depend only on the values.
	var whole *Stats
	groupStats := func(xs []int64) Stats {
		if len(xs) < len(d.waits) {
			return statsOf(xs)
		}
		if whole == nil {
			st := statsOf(xs)
			whole = &st
		}
		return *whole
	}
	stats := func(k int, order []string) []GroupStats {
		m := groups[k]
		at := make([]int, len(m)) // where each group's waits begin in buf
		first := make([]int, len(m))
		off := 0
		for _, g := range m {
			first[g.index] = g.started
		}
		for i, n := range first {
			first[i], at[i] = off, off
			off += n
		}
		for i, g := range d.waitGroup[k] {
			buf[at[g]] = d.waits[i]
			at[g]++
		}
		var out []GroupStats
		for _, name := range order {
			if g := m[name]; g != nil {
				out = append(out, GroupStats{Name: name, Jobs: g.jobs, Wait: groupStats(buf[first[g.index]:at[g.index]])})
			}
		}
		return out
	}
	s.WaitBy.Users = stats(0, slices.Sorted(maps.Keys(groups[0])))
	s.WaitBy.Accounts = stats(1, slices.Sorted(maps.Keys(groups[1])))
	s.WaitBy.SizeClasses = stats(2, SizeClasses())
	s.WaitBy.GPUTypes = stats(3, slices.Sorted(maps.Keys(groups[3])))

	if s.Makespan > 0 {
		days := float64(s.Makespan) / 86400
		s.Throughput.JobsPerDay = float64(s.Throughput.Finished) / days
		s.Throughput.GPUHoursPerDay = float64(s.GPU.Allocated) / 3600 / days
	}
	s.Throughput.GPUHours = float64(s.GPU.Allocated) / 3600

	// Jain's index over users' mean slowdowns, users in name order.
	var sum, sumSq float64
	for _, u := range slices.Sorted(maps.Keys(d.userSld)) {
		m := d.userSld[u].sum / float64(d.userSld[u].n)
		sum += m
		sumSq += m * m
		s.Fairness.Users++
	}
	if sumSq > 0 {
		s.Fairness.JainUserSlowdown = sum * sum / (float64(s.Fairness.Users) * sumSq)
	}
	accounts := slices.Sorted(maps.Keys(accountGPU))
	for _, a := range accounts {
		s.Fairness.Accounts = append(s.Fairness.Accounts, AccountShare{
			Name: a, GPUSeconds: accountGPU[a], Share: ratio(accountGPU[a], gpuSec),
			Target: 1 / float64(len(accounts)),
		})
	}

}

// fillTimelineDerived computes the Summary fields that come from the
// timeline: fragmentation and the time spent with each pending reason.
func fillTimelineDerived(s *Summary, tr *timelineResult) {
	var free, unusable, freeMIG, unusableMIG int64
	for i := range tr.tl.Samples {
		free += int64(tr.tl.Samples[i].FreeGPUs)
		unusable += int64(tr.tl.Samples[i].UnusableFreeGPUs)
		freeMIG += int64(tr.tl.Samples[i].FreeMIGSlices)
		unusableMIG += int64(tr.tl.Samples[i].UnusableMIGSlices)
	}
	s.Fragmentation.MIG = tr.tl.MIG
	if n := len(tr.tl.Samples); n > 0 {
		s.Fragmentation = Fragmentation{
			Samples:              n,
			MeanFreeGPUs:         float64(free) / float64(n),
			MeanUnusableFreeGPUs: float64(unusable) / float64(n),
			UnusableFraction:     ratio(unusable, free),
			MIG:                  tr.tl.MIG,
		}
		if tr.tl.MIG {
			s.Fragmentation.MeanFreeMIGSlices = float64(freeMIG) / float64(n)
			s.Fragmentation.MeanUnusableMIGSlices = float64(unusableMIG) / float64(n)
			s.Fragmentation.MIGUnusableFraction = ratio(unusableMIG, freeMIG)
		}
	}
	for r, sec := range tr.reasonSeconds {
		if sec > 0 {
			s.PendingReasons = append(s.PendingReasons, ReasonTime{Reason: sim.PendingReason(r).String(), JobSeconds: sec})
		}
	}
}
