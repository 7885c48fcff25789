package conformance

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Model says which of slurmctld's behaviours the replay models. The zero
// value models all of them; each field turns one off, for the before and
// after figures of CONFORMANCE.md and for mutation checks.
type Model struct {
	// SubmitAtSecond submits every job at the start of its sbatch
	// second, before that second's passes, instead of after the passes
	// slurmctld ran before it registered the job (arrival).
	SubmitAtSecond bool
	// ResumeAtCommand returns resumed nodes to service at the second of
	// scontrol's resume, not when slurmd answers (Record.resumeAt).
	ResumeAtCommand bool
	// NoPreemptKills keeps a preempted job's batch host KillWait + 1 s
	// (kill_wait) after the kill, also where the slurmd log says how long
	// its kill took (Record.KillWait).
	NoPreemptKills bool
	// NoEndCarry ends every job that runs to its end after the passes of
	// the second of its start plus its sleep, also one whose recorded
	// end carried into the next second (Job.carried).
	NoEndCarry bool
	// NoSweep kills TIMEOUT jobs exactly at their limit instead of at
	// slurmctld's 30 s time-limit sweep.
	NoSweep bool
	// NoSweepPhase times the sweep from time 0 instead of from
	// slurmctld's start.
	NoSweepPhase bool
	// NoKillWait frees a TIMEOUT job's resources at the kill instead of
	// KillWait + 1 s later.
	NoKillWait bool
	// EndsBeforePass applies job ends before the pass of their instant
	// (the simulator's default) instead of after it.
	EndsBeforePass bool
	// LatestEnd gives policies running jobs' latest end (the sweep's kill
	// plus KillWait) instead of Slurm's end_time.
	LatestEnd bool
	// NoMainPass makes every end late under ends_after_pass, ignoring the
	// main scheduler's same-second starts.
	NoMainPass bool
	// MainPhaseOnly decides whether the main scheduler follows the ends
	// of its seconds from the phase of its first run alone, ignoring the
	// log's main-scheduler starts after ends (Record.MainSame).
	MainPhaseOnly bool
	// NoCalcPhase times the priority recalculations from time 0 instead
	// of from slurmctld's start.
	NoCalcPhase bool
	// FirstFit places jobs on the lowest-numbered nodes that fit instead
	// of cons_tres's best fit.
	FirstFit bool
	// AllocCPUs gives jobs the CPUs and memory Slurm allocated as their
	// request, instead of the CPUs they asked for with GPU billing.
	AllocCPUs bool
	// NoDeps drops the jobs' dependencies.
	NoDeps bool
	// NoThrottle drops the arrays' %N throttles.
	NoThrottle bool
}

// SweepPeriod is slurmctld's time-limit check period (PERIODIC_TIMEOUT,
// a compiled-in constant in 22.05's controller.c).
const SweepPeriod = 30

// RequeueHold is how long a requeued job is held before it may start
// again: on 22.05 its new begin time was the requeue plus 121 s in both
// records that requeue (node-down-requeue/run1: requeued 09:07:51.02,
// eligible 09:09:52; preempt-requeue/run1: 09:11:31.29, 09:13:32) — the
// job credential's lifetime (120 s) and a second.
const RequeueHold = 121

// ScenarioYAML returns the scenario file text the record replays with: the
// cluster imported from the record's slurm.conf and gres.conf (inline),
// the slurm policy (its settings from that slurm.conf), the controller
// settings that model slurmctld (its timing within the second among the
// policy's arguments), and the scenario's node events and
// reservations. The trace is the record's jobs, given in memory.
func (r *Record) ScenarioYAML(m Model) ([]byte, error) {
	clusterYAML, err := r.importCluster()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated from the real-Slurm record %s.\nversion: 1\nname: %s/%s\nseed: 1\n", r.Dir, r.Scenario, r.Run)
	b.WriteString("cluster:\n  inline:\n")
	for l := range strings.SplitSeq(strings.TrimRight(string(clusterYAML), "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("    " + l + "\n")
	}
	fmt.Fprintf(&b, "trace:\n  file: %s\n", strconv.Quote(filepath.Join(r.Dir, "sacct.txt")))
	b.WriteString("policy:\n  name: slurm\n")
	var args []string
	if !m.FirstFit {
		// select/cons_tres's node choice (_eval_nodes, policies.ConsTres):
		// the tightest set of consecutive nodes, then in it the node with
		// the fewest free CPUs (gen-77/run1: job 19_2 took the idle gn4,
		// a set of its own, over the partly used gn1 beside the idle
		// gn2; array-throttle-singleton/run1: X's tasks joined Y's node
		// before taking the empty one).
		args = append(args, "placement: cons-tres")
	}
	if ph := r.calcPhase(); !m.NoCalcPhase && ph > 0 {
		// The decay thread recalculates every PriorityCalcPeriod from
		// slurmctld's start.
		args = append(args, fmt.Sprintf("priority_calc_phase: %d", ph))
	}
	args = append(args, fmt.Sprintf("will_run_phase: %d", mod(-r.T0, 30))) // cons_tres's will-run grid: 30 s boundaries of the Unix clock
	if r.requestedCPUs(m) {
		// Slurm bills the CPUs it allocated, DefCpuPerGPU per GPU.
		args = append(args, fmt.Sprintf("TRESBillingWeights: \"GRES/gpu=%d\"", confInt(r.SlurmConf, "DefCpuPerGPU", 0)))
	}
	if !m.LatestEnd {
		// Backfill plans with end_time = start + limit, not the sweep.
		args = append(args, "end_at_limit: true")
	}
	if !m.EndsBeforePass {
		// A job a cycle started ends just after that cycle's phase:
		// the next one starts at the next cycle.
		args = append(args, "ends_after_pass: true")
		if ph, ok := r.mainPassPhase(m); ok && !m.NoMainPass {
			args = append(args, fmt.Sprintf("main_pass_every: %d, main_pass_phase: %d", r.mainPassEvery(), ph))
		}
	}
	// Fair Tree's shares and the QOS, as sacctmgr had them.
	args = append(args, r.assocArgs()...)
	if len(args) > 0 {
		fmt.Fprintf(&b, "  args: {%s}\n", strings.Join(args, ", "))
	}
	b.WriteString("controller:\n")
	if !m.NoSweep {
		fmt.Fprintf(&b, "  time_limit_sweep: %ds\n", SweepPeriod)
		if !m.NoSweepPhase && r.CtldPrimary > 0 {
			fmt.Fprintf(&b, "  time_limit_sweep_phase: %ds\n", r.sweepPhase())
		}
	}
	if !m.NoKillWait {
		// slurmd waits KillWait between SIGTERM and SIGKILL, then reports
		// the job done about a second later (3.0 s after the kill with
		// KillWait=2 in timeout-deps-array/run1's slurmd log).
		fmt.Fprintf(&b, "  kill_wait: %ds # KillWait + 1 s\n", confInt(r.SlurmConf, "KillWait", 30)+1)
	}
	fmt.Fprintf(&b, "  over_time_limit: %dm\n", confInt(r.SlurmConf, "OverTimeLimit", 0))
	fmt.Fprintf(&b, "  requeue_delay: %ds\n", RequeueHold)
	b.WriteString("  job_requeue: false # per job: --requeue, --no-requeue, else slurm.conf's JobRequeue\n")
	if len(r.NodeEvents) > 0 {
		b.WriteString("node_events:\n")
		for _, ev := range r.NodeEvents {
			st := map[string]string{"down": "down", "drain": "drain", "resume": "up"}[ev.State]
			at := int64(math.Floor(ev.At))
			if ev.State == "resume" && !m.ResumeAtCommand {
				at = r.resumeAt(ev)
			}
			fmt.Fprintf(&b, "  - {at: %d, nodes: %q, state: %s} # events.tsv:%d\n", at-r.T0, ev.Nodes, st, ev.Line)
		}
	}
	if len(r.Reservations) > 0 {
		b.WriteString("reservations:\n")
		for _, rv := range r.Reservations {
			fmt.Fprintf(&b, "  - {name: %q, start: %d, end: %d, nodes: %q} # events.tsv:%d\n", rv.Name, rv.Start-r.T0, rv.End-r.T0, rv.Nodes, rv.Line)
		}
	}
	return []byte(b.String()), nil
}

// sweepPhase is where slurmctld's time-limit sweep falls on the replay
// clock, in [0, 30): the controller checks limits in its background loop
// when 30 whole seconds (time_t) have passed since the last check, the
// first period counted from its start, so the checks fall on the whole
// second of its start plus multiples of 30 s.
func (r *Record) sweepPhase() int64 {
	return mod(int64(math.Floor(r.CtldPrimary))-r.T0, SweepPeriod)
}

// calcPhase is where slurmctld's priority recalculations fall on the
// replay clock, in [0, PriorityCalcPeriod): its decay thread runs at its
// start and every PriorityCalcPeriod (minutes in slurm.conf, default 5)
// after. 0 when the record does not say when slurmctld started.
func (r *Record) calcPhase() int64 {
	if r.CtldPrimary == 0 {
		return 0
	}
	return mod(int64(math.Floor(r.CtldPrimary))-r.T0, 60*confInt(r.SlurmConf, "PriorityCalcPeriod", 5))
}

// requestedCPUs says whether the replay gives jobs the CPUs and memory
// they asked for (ReqTRES: one CPU per node) rather than what Slurm
// allocated (DefCpuPerGPU per GPU, DefMemPerCPU per CPU). Slurm's job
// size factor counts the CPUs asked for (22.05: M24's 8 GPUs on one node
// and M36's 4 had the same job size priority, 64 of 500, in
// mixed-load/run1), while schedsim has one CPU count per job. With
// DefCpuPerGPU set and every job asking for GPUs, the CPUs and memory
// allocated are proportional to the GPUs and never bind before them, so
// the request is exact for placement, and billing GPUs × DefCpuPerGPU
// (TRESBillingWeights) charges fair share what Slurm charged.
func (r *Record) requestedCPUs(m Model) bool {
	if m.AllocCPUs || confInt(r.SlurmConf, "DefCpuPerGPU", 0) <= 0 {
		return false
	}
	if _, set := confValue(r.SlurmConf, "TRESBillingWeights"); set {
		return false
	}
	for i := range r.Jobs {
		if j := &r.Jobs[i]; j.GPUsPerNode <= 0 || j.ReqCPUs <= 0 {
			return false
		}
	}
	return true
}

// mainPassEvery is how often slurmctld's main scheduler runs, in whole
// seconds: SchedulerParameters' sched_min_interval (µs; 2000000 in the
// records). Under a second, including its default of 2 µs
// (job_scheduler.c's `static int sched_min_interval = 2`), the
// event-driven main scheduler runs right after every end: 1. 0 when the
// interval is over a second but not whole seconds.
func (r *Record) mainPassEvery() int64 {
	us := r.schedMinInterval()
	switch {
	case us < 1000000:
		return 1
	case us%1000000 == 0:
		return us / 1000000
	}
	return 0
}

// schedMinInterval is SchedulerParameters' sched_min_interval in µs, or
// Slurm's default, 2.
func (r *Record) schedMinInterval() int64 {
	v, _ := confValue(r.SlurmConf, "SchedulerParameters")
	for item := range strings.SplitSeq(v, ",") {
		if k, us, ok := strings.Cut(strings.TrimSpace(item), "="); ok && k == "sched_min_interval" {
			if n, err := strconv.ParseInt(us, 10, 64); err == nil && n >= 0 {
				return n
			}
		}
	}
	return 2
}

// mainPassPhase returns the seconds (mod mainPassEvery, on the replay
// clock) at which slurmctld's main scheduler runs after the ends of its
// second, so that a job ending in that second is found by it: ok is
// false when it does not. With a sched_min_interval under a second it
// runs after every end: phase 0. Over a second, _sched_agent
// (job_scheduler.c) runs it sched_min_interval after its last run ended,
// and the backfill agent sleeps bf_interval after each cycle
// (backfill.c's backfill_agent), so both phases drift through a run as
// the passes take time, and an end comes 0.02 to 0.7 s after its start
// plus its sleep (the launch and the epilog on a loaded host): the phase
// of the main scheduler's first run against slurmctld's start says
// little about where it falls against the ends later. The log's own
// main-scheduler starts just after ends decide (Record.MainSame,
// MainLater: in the second of the replay's end or the next), the phase
// of the first run only where they are even: then it must come after
// the backfill cycle's (slurmctld's start's) plus 0.05 s.
func (r *Record) mainPassPhase(m Model) (int64, bool) {
	every := r.mainPassEvery()
	if every == 1 && r.schedMinInterval() < 1000000 {
		return 0, true
	}
	if r.MainPass == 0 || r.CtldPrimary == 0 || every == 0 {
		return 0, false
	}
	frac := func(x float64) float64 { return x - math.Floor(x) }
	switch {
	case !m.MainPhaseOnly && r.MainSame != r.MainLater:
		if r.MainSame < r.MainLater {
			return 0, false
		}
	case frac(r.MainPass) <= frac(r.CtldPrimary)+0.05:
		return 0, false
	}
	return mod(int64(math.Floor(r.MainPass))-r.T0, every), true
}

func mod(a, m int64) int64 { return ((a % m) + m) % m }

// arrival returns the second (Unix) from which the replay lets job j be
// scheduled. The replay's clock is whole seconds and submits come before
// the passes of their second; slurmctld's passes have a phase within the
// second (the backfill cycle's is its start's, CtldPrimary, with
// bf_interval 1; the main scheduler's MainPass, every mainPassEvery
// seconds), and sbatch's RPC reaches it some 10-300 ms into the second.
// A job registered after the second's backfill cycle, and not before a
// main scheduler pass of that second, is first seen by the next second's
// cycle: it arrives then (gen-41/run1: G01 registered at 51.042 after
// the cycle of 51.011, started by the cycle of 52.011).
func (r *Record) arrival(j *Job, m Model) int64 {
	id := j.ID
	if j.ArrayJob != "" {
		id = j.ArrayJob
	}
	at, ok := r.SubmitAt[id]
	if !ok || r.CtldPrimary == 0 || r.bfInterval() != 1 {
		return j.Submit
	}
	frac := func(x float64) float64 { return x - math.Floor(x) }
	sec := int64(math.Floor(at))
	if !r.afterCycle(at) {
		return sec // before the second's cycle
	}
	if every := r.mainPassEvery(); every > 0 && r.MainPass > 0 && frac(at) < frac(r.MainPass) {
		if ph, ok := r.mainPassPhase(m); ok && mod(sec-r.T0-ph, every) == 0 {
			return sec // the main scheduler runs after it in its second
		}
	}
	return sec + 1
}

// afterCycle reports whether slurmctld's backfill cycle of at's second
// ran before at: its phase is that of the last backfill start the log
// shows before at (within a minute; the cycles drift), else slurmctld's
// start's.
func (r *Record) afterCycle(at float64) bool {
	frac := func(x float64) float64 { return x - math.Floor(x) }
	phase := frac(r.CtldPrimary)
	if k, _ := slices.BinarySearch(r.BfCycles, at); k > 0 && at-r.BfCycles[k-1] < 60 {
		phase = frac(r.BfCycles[k-1])
	}
	return frac(at) >= phase
}

// resumeAt returns the second (Unix) from which the replay's passes may
// use the nodes a resume event returned to service. scontrol's resume
// sets a DOWN node IDLE but not responding, and slurmctld schedules on
// it only once slurmd answers ("Node gnN now responding", 0.4-1 s later
// in the records): gen-77/run1 resumed gn4 at 71.115, the cycle of 71.237
// preempted G06 on gn3 for G15 (short, gn[3-4]) as gn4 was not yet
// usable, and the main scheduler started G15 on gn4 at 71.523, after
// gn4 answered at 71.501. So the nodes come back at the second of the
// last of their answers, or the next when that is after the second's
// cycle. ev.At, whole, when the log does not say.
func (r *Record) resumeAt(ev NodeEvent) int64 {
	resp, ok := r.Responding[ev.Line]
	if !ok || r.CtldPrimary == 0 || r.bfInterval() != 1 {
		return int64(math.Floor(ev.At))
	}
	if r.afterCycle(resp) {
		return int64(math.Floor(resp)) + 1
	}
	return int64(math.Floor(resp))
}

// carried reports whether the job's final run ran its sleep out and
// sacct recorded its end in the second after its start plus the sleep:
// slurmctld registers an end 0.02-0.7 s after start + sleep (the launch
// and the epilog), so a job started late in its second by a cycle
// (gen-19/run1: G11_1 at 64.907, sleep 8, registered done at 73.44 and
// recorded 64-73) ends early in that next second, where that second's
// passes, main scheduler and backfill cycle alike, find it; the replay's
// end at start + sleep would come after the passes of the second before
// it (ends_after_pass) and be found by a main scheduler pass there
// (main_pass_every) that could not have seen it.
func (j *Job) carried() bool {
	n := len(j.Runs)
	if n == 0 {
		return false
	}
	last := j.Runs[n-1]
	return (last.State == "COMPLETED" || last.State == "FAILED") && last.End-last.Start == j.Work+1
}

// bfInterval is SchedulerParameters' bf_interval in seconds, or Slurm's
// default, 30.
func (r *Record) bfInterval() int64 {
	v, _ := confValue(r.SlurmConf, "SchedulerParameters")
	for item := range strings.SplitSeq(v, ",") {
		if k, s, ok := strings.Cut(strings.TrimSpace(item), "="); ok && k == "bf_interval" {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
				return n
			}
		}
	}
	return 30
}

func (r *Record) importCluster() ([]byte, error) {
	conf := strings.ReplaceAll(string(r.SlurmConf), "@RUN@", "/nonexistent")
	gres := strings.ReplaceAll(string(r.GresConf), "@RUN@", "/nonexistent")
	out, _, err := hwmodels.ImportSlurm(hwmodels.SlurmFiles{
		SlurmConf: []byte(conf), SlurmPath: filepath.Join(r.Dir, "config", "slurm.conf"),
		GresConf: []byte(gres), GresPath: filepath.Join(r.Dir, "config", "gres.conf"),
	})
	return out, err
}

// Trace returns the record's jobs as the simulation's workload: submit
// times relative to T0, the work each job's sleep did, the request Slurm
// allocated, and the dependencies, throttles and requeue flags of the
// sbatch lines.
func (r *Record) Trace(m Model) *workload.Trace {
	jobRequeue := confInt(r.SlurmConf, "JobRequeue", 1) != 0
	reqCPUs := r.requestedCPUs(m)
	t := &workload.Trace{Epoch: r.T0, Source: "real-Slurm record " + r.Dir}
	for _, rj := range r.Jobs {
		j := workload.NewJob(rj.ID)
		j.Name, j.User, j.Account, j.Partition = rj.Name, rj.User, rj.Account, rj.Partition
		if rj.ArrayJob != "" {
			j.ArrayJobID, j.ArrayTaskID = rj.ArrayJob, rj.ArrayTask
			if !m.NoThrottle {
				j.ArrayThrottle = rj.Throttle
			}
		}
		j.Request = workload.Request{Nodes: rj.Nodes, GPUs: rj.Nodes * rj.GPUsPerNode, CPUs: rj.CPUs, MemMB: rj.MemMB}
		if reqCPUs {
			j.Request.CPUs, j.Request.MemMB = rj.ReqCPUs, rj.ReqMemMB
		}
		j.TimeLimit = workload.Time(rj.Limit)
		j.Runtime = workload.Time(rj.Work)
		j.Submit = workload.Time(rj.Submit - r.T0)
		if kw, ok := r.KillWait[rj.ID]; ok && !m.NoPreemptKills && kw < math.MaxInt16 {
			// Its kill by preemption took that long on the real run
			// (Record.KillWait), not KillWait + 1 s.
			j.KillWait = int16(kw) + 1
		}
		if !m.NoEndCarry && rj.carried() {
			// Its end came early in the second after start + sleep, before
			// that second's passes.
			j.Runtime, j.EndEarly = workload.Time(rj.Work+1), true
		}
		if !m.SubmitAtSecond {
			j.Submit = workload.Time(r.arrival(&rj, m) - r.T0)
		}
		if !m.NoDeps {
			j.Deps = rj.Deps
		}
		j.Requeue = jobRequeue
		if rj.Requeue != nil {
			j.Requeue = *rj.Requeue
		}
		// Work is the job's true work, and its outcome (TIMEOUT, a node
		// failure or not) is what the replay must simulate; a run that
		// ends on its own ends FAILED for `sleep S; exit 1` (afterok
		// children then never run, afternotok ones do), else COMPLETED.
		if rj.Fails {
			j.TraceState = "FAILED"
		}
		if n := len(rj.Runs); n > 0 {
			j.TraceStart = workload.Time(rj.Runs[n-1].Start - r.T0)
			j.TraceEnd = workload.Time(rj.Runs[n-1].End - r.T0)
		}
		t.Jobs = append(t.Jobs, j)
	}
	return t
}

// Simulate replays the record under the slurm policy, building the run
// through the scenario package as `schedsim run --policy slurm` does.
func (r *Record) Simulate(m Model) (*sim.Record, error) {
	text, err := r.ScenarioYAML(m)
	if err != nil {
		return nil, err
	}
	s, err := scenario.Parse(text, filepath.Join(r.Dir, "(generated scenario)"))
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, text)
	}
	s.Trace.Jobs = r.Trace(m)
	run, err := s.Build(catalog.Builtin())
	if err != nil {
		return nil, err
	}
	return sim.Run(run.Config())
}
