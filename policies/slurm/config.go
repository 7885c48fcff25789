package slurm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/priority"
	"github.com/schedsim/schedsim/sim"
)

// Args are the arguments of the "slurm" policy, named as slurm.conf
// (SchedulerParameters, Priority*), sacctmgr (accounts, users, QOS) name
// them. Every field is optional; the defaults are Slurm 22.05's
// (slurm-gpu-facts.md §2.4, §3): note that every PriorityWeight* defaults
// to 0, so without weights all jobs have priority 1 and the queue is in
// PriorityTier, submit-time and job order.
type Args struct {
	// SchedulerParameters.
	BfInterval        int64 `yaml:"bf_interval"`         // seconds between backfill cycles (30); -1 disables backfill
	BfWindow          int64 `yaml:"bf_window"`           // minutes ahead reservations are planned (1440)
	BfResolution      int64 `yaml:"bf_resolution"`       // seconds of the reservation map's granularity (60)
	BfMaxJobTest      int   `yaml:"bf_max_job_test"`     // queue records tested per cycle (500 since 21.08)
	BfMaxJobUser      int   `yaml:"bf_max_job_user"`     // records tested per user per cycle (0 = no cap)
	BfMaxJobPart      int   `yaml:"bf_max_job_part"`     // records tested per partition per cycle (0 = no cap)
	BfMinAgeReserve   int64 `yaml:"bf_min_age_reserve"`  // seconds pending before a job may reserve (0)
	BfContinue        bool  `yaml:"bf_continue"`         // accepted; a simulated cycle never yields locks
	BfBusyNodes       bool  `yaml:"bf_busy_nodes"`       // reserve busy nodes first
	BfWindowLinear    int64 `yaml:"bf_window_linear"`    // seconds added to the end-time grouping window per step (0 = doubling)
	DefaultQueueDepth int   `yaml:"default_queue_depth"` // records per event-triggered main pass (100)
	SchedInterval     int64 `yaml:"sched_interval"`      // seconds between full main passes (60); -1 disables them
	MaxSwitchWait     int64 `yaml:"max_switch_wait"`     // seconds a --switches job waits for its leaf switch count at most (300)

	// Placement names the node choice (NewPlacer): first-fit (default:
	// lowest-numbered nodes first) or best-fit (the nodes the job leaves
	// fullest, as select/cons_tres chooses for a one-node job: the
	// sufficient node with the fewest free resources, ties by index).
	Placement string `yaml:"placement"`

	// priority/multifactor.
	PriorityType             string  `yaml:"PriorityType"` // priority/multifactor or priority/basic
	PriorityWeightAge        float64 `yaml:"PriorityWeightAge"`
	PriorityWeightFairshare  float64 `yaml:"PriorityWeightFairshare"`
	PriorityWeightJobSize    float64 `yaml:"PriorityWeightJobSize"`
	PriorityWeightPartition  float64 `yaml:"PriorityWeightPartition"`
	PriorityWeightQOS        float64 `yaml:"PriorityWeightQOS"`
	PriorityWeightAssoc      float64 `yaml:"PriorityWeightAssoc"`
	PriorityWeightTRES       string  `yaml:"PriorityWeightTRES"`       // "CPU=1000,Mem=2000,GRES/gpu=3000"
	PriorityMaxAge           string  `yaml:"PriorityMaxAge"`           // Slurm time (7-0)
	PriorityDecayHalfLife    string  `yaml:"PriorityDecayHalfLife"`    // Slurm time (7-0); 0 = no decay
	PriorityCalcPeriod       string  `yaml:"PriorityCalcPeriod"`       // Slurm time, minutes when bare (5)
	PriorityUsageResetPeriod string  `yaml:"PriorityUsageResetPeriod"` // NONE|NOW|DAILY|WEEKLY|MONTHLY|QUARTERLY|YEARLY
	PriorityFavorSmall       string  `yaml:"PriorityFavorSmall"`       // YES or NO
	PriorityFlags            string  `yaml:"PriorityFlags"`            // comma list
	FairShareDampeningFactor float64 `yaml:"FairShareDampeningFactor"` // >= 1 (1)
	TRESBillingWeights       string  `yaml:"TRESBillingWeights"`       // default: CPUs

	// AccountingStorageEnforce is slurm.conf's comma list (associations,
	// limits, qos, safe, wckeys, nojobs, nosteps, all; default none). The
	// policy takes one thing from it: with limits (which safe and all
	// imply) a job's usage since the last priority recalculation is
	// charged to its association when it ends (priority_p_job_end, called
	// from _adjust_limit_usage in acct_policy.c only then); without, it
	// is never charged: the decay thread charges running jobs only
	// (decay_apply_new_usage in priority_multifactor.c), so a job's usage
	// after the last recalculation it ran through is lost.
	AccountingStorageEnforce string `yaml:"AccountingStorageEnforce"`

	// DefCpuPerGPU is slurm.conf's: the CPUs cons_tres allocates per GPU
	// of a job that names no CPU count (0: none). A partition's
	// DefCpuPerGPU in the cluster spec's slurm section overrides it. The
	// job size factor counts, once a job has been tested against the
	// nodes, the CPUs it would be allocated (set_priority_factors'
	// total_cpus): at least this many per GPU.
	DefCpuPerGPU int64 `yaml:"DefCpuPerGPU"`

	// PriorityCalcPhase (seconds, in [0, PriorityCalcPeriod)) is where the
	// recalculations fall: at PriorityCalcPhase + k·PriorityCalcPeriod.
	// slurmctld times them from its own start, which a trace does not
	// record; default 0 (multiples of the period from time 0).
	PriorityCalcPhase int64 `yaml:"priority_calc_phase"`

	// WillRunPhase (seconds, in [0, 30)) is where the 30 s grid of the
	// will-run test's end-time windows falls: at WillRunPhase + k·30.
	// cons_tres aligns the windows on the Unix clock (end_time % 30), so
	// a replay sets it to (−epoch) mod 30 for the Unix time of its time
	// zero; default 0 (the trace epoch on the grid).
	WillRunPhase int64 `yaml:"will_run_phase"`

	// slurmctld's timing within the second, for replays of real runs
	// (docs/slurm-policy.md, "Time within a second"); each is off by
	// default.
	//
	// EndsAfterPass applies a job's end after the scheduling passes of
	// its second, so the next job starts at the next cycle
	// (sim.Timing.EndsAfterPasses). MainPassEvery and MainPassPhase
	// (seconds; with EndsAfterPass) are the grid of slurmctld's main
	// scheduler after job ends, every sched_min_interval: an end at
	// MainPassPhase + k·MainPassEvery is followed by a main pass at its
	// own second, after the ends (0: never). EndAtLimit plans backfill
	// with running jobs' end_time, start + limit, not the time-limit
	// sweep's kill (sim.Timing.EndAtLimit).
	EndsAfterPass bool  `yaml:"ends_after_pass"`
	MainPassEvery int64 `yaml:"main_pass_every"`
	MainPassPhase int64 `yaml:"main_pass_phase"`
	EndAtLimit    bool  `yaml:"end_at_limit"`

	// Preemption (slurm.conf PreemptType, PreemptMode, PreemptExemptTime).
	// PreemptType is preempt/none (default), preempt/partition_prio (a
	// job of a higher-PriorityTier partition preempts jobs of lower tiers
	// on shared nodes) or preempt/qos (a job preempts jobs whose QOS its
	// QOS lists in Preempt). PreemptMode is the cluster default mode of a
	// preempted job: OFF (default: not preemptable), CANCEL or REQUEUE; a
	// partition's PreemptMode (cluster spec slurm section) or a QOS's
	// overrides it. PreemptExemptTime is a Slurm time a job must have run
	// before it may be preempted. GraceTime is the scenario's
	// controller.preempt_grace_time.
	PreemptType       string `yaml:"PreemptType"`
	PreemptMode       string `yaml:"PreemptMode"`
	PreemptExemptTime string `yaml:"PreemptExemptTime"`
	// PreemptParameters is slurm.conf's comma list; youngest_first takes
	// the preemption candidates latest start first, whatever their tier
	// (_sort_by_youngest in src/slurmctld/preempt.c), as does
	// SchedulerParameters' preempt_youngest_first; strict_order and
	// reorder_count=N set PreemptStrictOrder and PreemptReorderCount.
	// min_exempt_priority, reclaim_licenses and send_user_signal are
	// accepted and not modeled.
	PreemptParameters    string `yaml:"PreemptParameters"`
	PreemptYoungestFirst bool   `yaml:"preempt_youngest_first"`
	// PreemptReorderCount is SchedulerParameters' preempt_reorder_count
	// (PreemptParameters' reorder_count): how many times cons_tres's
	// _run_now reorders the candidates to preempt fewer jobs (default 1);
	// PreemptStrictOrder (preempt_strict_order, PreemptParameters'
	// strict_order) reorders by moving the last one needed to the front.
	PreemptReorderCount int  `yaml:"preempt_reorder_count"`
	PreemptStrictOrder  bool `yaml:"preempt_strict_order"`

	// EnforcePartLimits: only NO (hold jobs over a partition limit, the
	// default) is accepted here; ALL, ANY and YES reject jobs at submit,
	// which the controller does (sim.Config.EnforcePartLimits, the
	// scenario's controller.enforce_part_limits).
	EnforcePartLimits string `yaml:"EnforcePartLimits"`

	// Associations. Without any, the tree is derived from the jobs: one
	// account per account seen (shares 1) under root, one user association
	// per (user, account) seen (shares 1), plus root's own user
	// association "root", as sacctmgr creates it.
	Accounts []AccountArgs `yaml:"accounts"`
	Users    []UserArgs    `yaml:"users"`
	// QOS definitions; a job names one in workload.Job.QOS, and jobs
	// without one (or naming an undefined one) get "normal" (priority 0,
	// no limits, unless defined here).
	QOS []QOSArgs `yaml:"qos"`
}

// AccountArgs is a sacctmgr account association.
type AccountArgs struct {
	Name      string  `yaml:"name"`
	Parent    string  `yaml:"parent"`    // default root
	Fairshare float64 `yaml:"fairshare"` // raw shares (1)
}

// UserArgs is a sacctmgr user association.
type UserArgs struct {
	Name      string  `yaml:"name"`
	Account   string  `yaml:"account"`
	Fairshare float64 `yaml:"fairshare"` // raw shares (1)
}

// QOSArgs is a sacctmgr QOS.
type QOSArgs struct {
	Name           string `yaml:"name"`
	Priority       int64  `yaml:"priority"`
	MaxJobsPerUser int    `yaml:"MaxJobsPerUser"` // 0 = no limit
	MaxTRESPerUser string `yaml:"MaxTRESPerUser"` // "cpu=64,gres/gpu=8,node=2,mem=500G"
	GrpTRES        string `yaml:"GrpTRES"`        // same syntax, all running jobs of the QOS
	// Preempt lists the QOS whose jobs this QOS's jobs may preempt
	// (preempt/qos), comma separated; PreemptMode overrides the cluster's
	// for jobs of this QOS (OFF, CANCEL or REQUEUE).
	Preempt     string `yaml:"Preempt"`
	PreemptMode string `yaml:"PreemptMode"`
}

// slurmConfig is Args validated and in the units the policy works in.
type slurmConfig struct {
	bfInterval, bfWindow, bfResolution       sim.Time // seconds; bfInterval <= 0 disables
	bfMaxJobTest, bfMaxJobUser, bfMaxJobPart int
	bfMinAgeReserve                          sim.Time
	bfBusyNodes                              bool
	bfWindowLinear                           sim.Time
	defCpuPerGPU                             int64
	queueDepth                               int
	schedInterval                            sim.Time // <= 0 disables full passes
	maxSwitchWait                            sim.Time

	basic        bool
	weights      priority.Weights
	maxAge       sim.Time
	halfLife     sim.Time
	calcPeriod   sim.Time
	calcPhase    sim.Time
	willRunPhase sim.Time
	// slurmctld's timing within the second (Args.EndsAfterPass ...).
	endsAfterPass, endAtLimit bool
	mainEvery, mainPhase      sim.Time
	reset                     sim.Time
	jobSize                   priority.JobSize
	classic                   bool
	noNormPart                bool
	noNormQOS                 bool
	noNormTRES                bool
	damp                      float64
	billing                   []priority.TRESWeight
	enforce                   string
	chargeEnd                 bool // AccountingStorageEnforce has limits: charge a job's last partial period at its end

	preempt     preemptType
	preemptMode preemptMode // cluster default
	exempt      sim.Time
	youngest    bool // preemption candidates by latest start (youngest_first)
	reorder     int  // preempt_reorder_count
	strict      bool // preempt_strict_order

	accounts []AccountArgs
	users    []UserArgs
	qos      []qosDef
}

type qosDef struct {
	name     string
	priority int64
	maxJobs  int
	maxUser  limitTRES
	grp      limitTRES
	preempt  []string    // QOS names it may preempt
	mode     preemptMode // modeUnset: the cluster's
}

// preemptType is slurm.conf PreemptType.
type preemptType uint8

const (
	preemptNone preemptType = iota
	preemptPartPrio
	preemptQOS
)

// preemptMode is a PreemptMode: what happens to a preempted job.
type preemptMode uint8

const (
	modeUnset preemptMode = iota
	modeOff
	modeCancel
	modeRequeue
)

// parsePreemptMode reads a PreemptMode; SUSPEND and GANG are not modeled.
func parsePreemptMode(s string) (preemptMode, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "OFF":
		return modeOff, nil
	case "CANCEL":
		return modeCancel, nil
	case "REQUEUE":
		return modeRequeue, nil
	case "SUSPEND", "GANG", "SUSPEND,GANG", "GANG,SUSPEND":
		return 0, fmt.Errorf("%q is not modeled (suspension cannot free GPUs; want OFF, CANCEL or REQUEUE)", s)
	}
	return 0, fmt.Errorf("unknown %q (want OFF, CANCEL or REQUEUE)", s)
}

// limitTRES is a TRES limit; -1 = none for that resource.
type limitTRES struct {
	cpu, node, gpu int64
	memMB          int64
	set            bool
}

func noLimit() limitTRES { return limitTRES{cpu: -1, node: -1, gpu: -1, memMB: -1} }

// defaultArgs returns the Slurm 22.05 defaults.
func defaultArgs() Args {
	return Args{
		BfInterval:               30,
		BfWindow:                 1440,
		BfResolution:             60,
		BfMaxJobTest:             500,
		DefaultQueueDepth:        100,
		SchedInterval:            60,
		MaxSwitchWait:            300,
		PriorityType:             "priority/multifactor",
		PriorityMaxAge:           "7-0",
		PriorityDecayHalfLife:    "7-0",
		PriorityCalcPeriod:       "5",
		PriorityUsageResetPeriod: "NONE",
		PriorityFavorSmall:       "NO",
		PriorityFlags:            "",
		FairShareDampeningFactor: 1,
		EnforcePartLimits:        "NO",
		PreemptType:              "preempt/none",
		PreemptMode:              "OFF",
		PreemptExemptTime:        "0",
		PreemptReorderCount:      1,
	}
}

// argError is a bad argument value, with the line of its key when known.
type argError struct {
	line  int
	field string
	msg   string
}

func (e *argError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("line %d: %s: %s", e.line, e.field, e.msg)
	}
	return e.field + ": " + e.msg
}

// keyLines maps every key of the args mapping ("bf_window",
// "accounts[2]", "accounts[2].name") to its line.
func keyLines(n *yaml.Node) map[string]int {
	lines := map[string]int{}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if prefix != "" {
					k = prefix + "." + k
				}
				lines[k] = n.Content[i].Line
				walk(n.Content[i+1], k)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				k := fmt.Sprintf("%s[%d]", prefix, i)
				lines[k] = c.Line
				walk(c, k)
			}
		}
	}
	walk(n, "")
	return lines
}

// Factory is the Factory of "slurm": Args decoded strictly,
// validated, FirstFit placement.
func Factory(decode func(into any) error) (sim.Policy, error) {
	a := defaultArgs()
	var lines map[string]int
	if decode != nil {
		if err := decode(&a); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		var n yaml.Node
		if err := decode(&n); err == nil {
			lines = keyLines(&n)
		}
	}
	cfg, err := a.config(lines, false)
	if err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	// Keep the shares as resolved (a missing fairshare is 1, an explicit
	// 0 stays 0), so that Begin's merge with the cluster's settings takes
	// them as given.
	a.Accounts, a.Users = cfg.accounts, cfg.users
	var explicit map[string]bool
	if decode == nil || lines != nil {
		explicit = map[string]bool{}
		for k := range lines {
			if !strings.ContainsAny(k, ".[") {
				explicit[k] = true
			}
		}
	}
	placer, err := policies.NewPlacer(a.Placement)
	if err != nil {
		return nil, fmt.Errorf("args: placement: %w", err)
	}
	return newSlurm(cfg, a, explicit, placer), nil
}

// New returns a slurm policy with args (missing values: zero values
// are taken as given, so start from DefaultArgs; but an association's
// fairshare 0 is 1, the sacctmgr default) placing with placer (FirstFit
// when nil).
func New(args Args, placer policies.Placer) (*Policy, error) {
	cfg, err := args.config(nil, false)
	if err != nil {
		return nil, err
	}
	args.Accounts, args.Users = cfg.accounts, cfg.users
	if placer == nil {
		placer = policies.FirstFit{}
	}
	return newSlurm(cfg, args, nil, placer), nil
}

// DefaultArgs returns Slurm 22.05's defaults, the arguments the
// "slurm" policy has when a scenario gives none.
func DefaultArgs() Args { return defaultArgs() }

// config validates a and converts it to the policy's units. lines maps
// the keys given to their lines (nil: not decoded from YAML). An
// association's fairshare is 1 when it is missing (lines given) or, with
// lines nil, when it is 0, unless sharesResolved: the shares were
// resolved before (by a config call whose result's accounts and users
// replaced a's) and are taken as given.
func (a *Args) config(lines map[string]int, sharesResolved bool) (*slurmConfig, error) {
	bad := func(field, format string, args ...any) error {
		return &argError{line: lines[field], field: field, msg: fmt.Sprintf(format, args...)}
	}
	c := &slurmConfig{}
	intRange := func(field string, v, lo, hi int64) error {
		if v < lo || v > hi {
			return bad(field, "must be in [%d, %d], got %d", lo, hi, v)
		}
		return nil
	}
	switch {
	case a.BfInterval == -1:
		c.bfInterval = 0
	default:
		if err := intRange("bf_interval", a.BfInterval, 1, 10800); err != nil {
			return nil, bad("bf_interval", "must be -1 (no backfill) or in [1, 10800] seconds, got %d", a.BfInterval)
		}
		c.bfInterval = sim.Time(a.BfInterval)
	}
	if err := intRange("bf_window", a.BfWindow, 1, 43200); err != nil {
		return nil, err
	}
	c.bfWindow = sim.Time(a.BfWindow * 60)
	if err := intRange("bf_resolution", a.BfResolution, 1, 3600); err != nil {
		return nil, err
	}
	c.bfResolution = sim.Time(a.BfResolution)
	if err := intRange("bf_max_job_test", int64(a.BfMaxJobTest), 1, 1_000_000); err != nil {
		return nil, err
	}
	c.bfMaxJobTest = a.BfMaxJobTest
	if err := intRange("bf_max_job_user", int64(a.BfMaxJobUser), 0, int64(a.BfMaxJobTest)); err != nil {
		return nil, bad("bf_max_job_user", "must be in [0, bf_max_job_test=%d], got %d", a.BfMaxJobTest, a.BfMaxJobUser)
	}
	c.bfMaxJobUser = a.BfMaxJobUser
	if err := intRange("bf_max_job_part", int64(a.BfMaxJobPart), 0, int64(a.BfMaxJobTest)); err != nil {
		return nil, bad("bf_max_job_part", "must be in [0, bf_max_job_test=%d], got %d", a.BfMaxJobTest, a.BfMaxJobPart)
	}
	c.bfMaxJobPart = a.BfMaxJobPart
	if err := intRange("bf_min_age_reserve", a.BfMinAgeReserve, 0, 30*86400); err != nil {
		return nil, err
	}
	c.bfMinAgeReserve = sim.Time(a.BfMinAgeReserve)
	c.bfBusyNodes = a.BfBusyNodes
	if err := intRange("bf_window_linear", a.BfWindowLinear, 0, 86400); err != nil {
		return nil, err
	}
	c.bfWindowLinear = sim.Time(a.BfWindowLinear)
	if c.defCpuPerGPU = a.DefCpuPerGPU; c.defCpuPerGPU < 0 {
		return nil, bad("DefCpuPerGPU", "must be >= 0, got %d", a.DefCpuPerGPU)
	}
	if err := intRange("default_queue_depth", int64(a.DefaultQueueDepth), 1, 1_000_000); err != nil {
		return nil, err
	}
	c.queueDepth = a.DefaultQueueDepth
	// job_mgr.c _max_switch_wait: atoi of max_switch_wait=, default 300.
	if err := intRange("max_switch_wait", a.MaxSwitchWait, 0, 365*86400); err != nil {
		return nil, err
	}
	c.maxSwitchWait = sim.Time(a.MaxSwitchWait)
	switch {
	case a.SchedInterval == -1:
		c.schedInterval = 0
	default:
		if a.SchedInterval < 1 || a.SchedInterval > 86400 {
			return nil, bad("sched_interval", "must be -1 (no periodic full pass) or in [1, 86400] seconds, got %d", a.SchedInterval)
		}
		c.schedInterval = sim.Time(a.SchedInterval)
	}

	switch a.PriorityType {
	case "priority/multifactor":
	case "priority/basic":
		c.basic = true
	default:
		return nil, bad("PriorityType", "unknown %q (want priority/multifactor or priority/basic)", a.PriorityType)
	}
	for _, w := range []struct {
		field string
		v     float64
		into  *float64
	}{
		{"PriorityWeightAge", a.PriorityWeightAge, &c.weights.Age},
		{"PriorityWeightFairshare", a.PriorityWeightFairshare, &c.weights.Fairshare},
		{"PriorityWeightJobSize", a.PriorityWeightJobSize, &c.weights.JobSize},
		{"PriorityWeightPartition", a.PriorityWeightPartition, &c.weights.Partition},
		{"PriorityWeightQOS", a.PriorityWeightQOS, &c.weights.QOS},
		{"PriorityWeightAssoc", a.PriorityWeightAssoc, &c.weights.Assoc},
	} {
		if !(w.v >= 0 && w.v <= math.MaxUint32) {
			return nil, bad(w.field, "must be in [0, 4294967295], got %v", w.v)
		}
		*w.into = w.v
	}
	var err error
	if c.weights.TRES, err = priority.ParseTRESWeights(a.PriorityWeightTRES); err != nil {
		return nil, bad("PriorityWeightTRES", "%v", err)
	}
	dur := func(field, s string) (sim.Time, error) {
		secs, unlimited, err := hwmodels.ParseSlurmDuration(strings.TrimSpace(s))
		if err != nil {
			return 0, bad(field, "%v", err)
		}
		if unlimited {
			return 0, bad(field, "must be a finite Slurm time, got %q", s)
		}
		return sim.Time(secs), nil
	}
	if c.maxAge, err = dur("PriorityMaxAge", a.PriorityMaxAge); err != nil {
		return nil, err
	}
	if c.halfLife, err = dur("PriorityDecayHalfLife", a.PriorityDecayHalfLife); err != nil {
		return nil, err
	}
	if c.calcPeriod, err = dur("PriorityCalcPeriod", a.PriorityCalcPeriod); err != nil {
		return nil, err
	}
	if c.calcPeriod < 60 {
		return nil, bad("PriorityCalcPeriod", "must be at least 1 minute, got %q", a.PriorityCalcPeriod)
	}
	if c.calcPhase = sim.Time(a.PriorityCalcPhase); !(c.calcPhase >= 0 && c.calcPhase < c.calcPeriod) {
		return nil, bad("priority_calc_phase", "must be in [0, PriorityCalcPeriod = %d s), got %d", c.calcPeriod, a.PriorityCalcPhase)
	}
	if c.willRunPhase = sim.Time(a.WillRunPhase); !(c.willRunPhase >= 0 && c.willRunPhase < 30) {
		return nil, bad("will_run_phase", "must be in [0, 30) seconds, got %d", a.WillRunPhase)
	}
	c.endsAfterPass, c.endAtLimit = a.EndsAfterPass, a.EndAtLimit
	if err := intRange("main_pass_every", a.MainPassEvery, 0, 86400); err != nil {
		return nil, err
	}
	if a.MainPassEvery > 0 && !a.EndsAfterPass {
		return nil, bad("main_pass_every", "needs ends_after_pass: true (the main pass after the ends of its second)")
	}
	if c.mainEvery, c.mainPhase = sim.Time(a.MainPassEvery), sim.Time(a.MainPassPhase); c.mainPhase != 0 && !(c.mainPhase > 0 && c.mainPhase < c.mainEvery) {
		return nil, bad("main_pass_phase", "must be in [0, main_pass_every = %d s), got %d", c.mainEvery, a.MainPassPhase)
	}
	resets := map[string]sim.Time{"NONE": 0, "NOW": 0, "DAILY": 86400, "WEEKLY": 7 * 86400,
		"MONTHLY": 30 * 86400, "QUARTERLY": 91 * 86400, "YEARLY": 365 * 86400}
	r, ok := resets[strings.ToUpper(a.PriorityUsageResetPeriod)]
	if !ok {
		return nil, bad("PriorityUsageResetPeriod", "unknown %q (want NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY)", a.PriorityUsageResetPeriod)
	}
	if r%c.calcPeriod != 0 {
		return nil, bad("PriorityUsageResetPeriod", "%s (%d s) is not a multiple of PriorityCalcPeriod (%d s)", a.PriorityUsageResetPeriod, r, c.calcPeriod)
	}
	c.reset = r
	if c.jobSize.FavorSmall, err = yesNo(a.PriorityFavorSmall); err != nil {
		return nil, bad("PriorityFavorSmall", "%v", err)
	}
	for f := range strings.SplitSeq(a.PriorityFlags, ",") {
		switch f = strings.ToUpper(strings.TrimSpace(f)); f {
		case "", "FAIR_TREE":
		case "NO_FAIR_TREE":
			c.classic = true
		case "SMALL_RELATIVE_TO_TIME":
			c.jobSize.SmallRelativeToTime = true
		case "NO_NORMAL_PART":
			c.noNormPart = true
		case "NO_NORMAL_QOS":
			c.noNormQOS = true
		case "NO_NORMAL_TRES":
			c.noNormTRES = true
		case "ACCRUE_ALWAYS":
			// Age accrues from eligibility, which the controller sets at
			// submit: the flag changes nothing here.
		default:
			return nil, bad("PriorityFlags", "unsupported flag %q (want FAIR_TREE, NO_FAIR_TREE, SMALL_RELATIVE_TO_TIME, NO_NORMAL_PART, NO_NORMAL_QOS, NO_NORMAL_TRES or ACCRUE_ALWAYS)", f)
		}
	}
	if !(a.FairShareDampeningFactor >= 1 && a.FairShareDampeningFactor <= 10000) {
		return nil, bad("FairShareDampeningFactor", "must be in [1, 10000], got %v", a.FairShareDampeningFactor)
	}
	c.damp = a.FairShareDampeningFactor
	if c.billing, err = priority.ParseTRESWeights(a.TRESBillingWeights); err != nil {
		return nil, bad("TRESBillingWeights", "%v", err)
	}
	switch e := strings.ToUpper(strings.TrimSpace(a.EnforcePartLimits)); e {
	case "NO", "":
		c.enforce = "NO"
	case "ALL", "ANY", "YES":
		// Rejecting at submit is the controller's: a policy cannot
		// reject a job.
		return nil, bad("EnforcePartLimits", "%s rejects jobs at submit, which the controller does: set it as the scenario's controller.enforce_part_limits (or in the cluster's slurm settings)", e)
	default:
		return nil, bad("EnforcePartLimits", "unknown %q (want NO, ALL, ANY or YES)", a.EnforcePartLimits)
	}

	if c.chargeEnd, err = enforceLimits(a.AccountingStorageEnforce); err != nil {
		return nil, bad("AccountingStorageEnforce", "%v", err)
	}

	switch strings.ToLower(strings.TrimSpace(a.PreemptType)) {
	case "preempt/none", "":
		c.preempt = preemptNone
	case "preempt/partition_prio":
		c.preempt = preemptPartPrio
	case "preempt/qos":
		c.preempt = preemptQOS
	default:
		return nil, bad("PreemptType", "unknown %q (want preempt/none, preempt/partition_prio or preempt/qos)", a.PreemptType)
	}
	if c.preemptMode, err = parsePreemptMode(a.PreemptMode); err != nil {
		return nil, bad("PreemptMode", "%v", err)
	}
	if c.exempt, err = dur("PreemptExemptTime", a.PreemptExemptTime); err != nil {
		return nil, err
	}
	c.youngest = a.PreemptYoungestFirst
	c.reorder, c.strict = a.PreemptReorderCount, a.PreemptStrictOrder
	if err := intRange("preempt_reorder_count", int64(c.reorder), 0, 1000); err != nil {
		return nil, err
	}
	for f := range strings.SplitSeq(a.PreemptParameters, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		name, val, _ := strings.Cut(f, "=")
		switch name {
		case "youngest_first":
			c.youngest = true
		case "strict_order":
			c.strict = true
		case "reorder_count":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 1000 {
				return nil, bad("PreemptParameters", "reorder_count: want a count from 0 to 1000, got %q", val)
			}
			c.reorder = n
		case "", "min_exempt_priority", "reclaim_licenses", "send_user_signal":
		default:
			return nil, bad("PreemptParameters", "unknown %q (want youngest_first, strict_order, reorder_count=N, min_exempt_priority=N, reclaim_licenses or send_user_signal)", f)
		}
	}

	// Associations: check them by building a throwaway tree.
	if len(a.Users) > 0 && len(a.Accounts) == 0 {
		// Users in root only is allowed.
	}
	t, _ := priority.NewTree(c.calcPeriod, 0, 0)
	for i, ac := range a.Accounts {
		f := fmt.Sprintf("accounts[%d]", i)
		sh := ac.Fairshare
		if _, set := lines[f+".fairshare"]; !sharesResolved && (!set && lines != nil || lines == nil && sh == 0) {
			sh = 1
		}
		if _, err := t.AddAccount(ac.Name, ac.Parent, sh); err != nil {
			return nil, bad(f, "%v", err)
		}
		ac.Fairshare = sh
		c.accounts = append(c.accounts, ac)
	}
	for i, u := range a.Users {
		f := fmt.Sprintf("users[%d]", i)
		sh := u.Fairshare
		if _, set := lines[f+".fairshare"]; !sharesResolved && (!set && lines != nil || lines == nil && sh == 0) {
			sh = 1
		}
		if _, err := t.AddUser(u.Name, u.Account, sh); err != nil {
			return nil, bad(f, "%v", err)
		}
		u.Fairshare = sh
		c.users = append(c.users, u)
	}
	names := map[string]bool{}
	for i, q := range a.QOS {
		f := fmt.Sprintf("qos[%d]", i)
		if q.Name == "" {
			return nil, bad(f, "name is missing")
		}
		if names[q.Name] {
			return nil, bad(f+".name", "QOS %q is defined twice", q.Name)
		}
		names[q.Name] = true
		if q.Priority < 0 || q.Priority > math.MaxUint32 {
			return nil, bad(f+".priority", "must be in [0, 4294967295], got %d", q.Priority)
		}
		if q.MaxJobsPerUser < 0 {
			return nil, bad(f+".MaxJobsPerUser", "must be >= 0 (0 = no limit), got %d", q.MaxJobsPerUser)
		}
		d := qosDef{name: q.Name, priority: q.Priority, maxJobs: q.MaxJobsPerUser}
		if d.maxUser, err = parseLimitTRES(q.MaxTRESPerUser); err != nil {
			return nil, bad(f+".MaxTRESPerUser", "%v", err)
		}
		if d.grp, err = parseLimitTRES(q.GrpTRES); err != nil {
			return nil, bad(f+".GrpTRES", "%v", err)
		}
		for name := range strings.SplitSeq(q.Preempt, ",") {
			if name = strings.TrimSpace(name); name != "" {
				d.preempt = append(d.preempt, name)
			}
		}
		if q.PreemptMode != "" {
			if d.mode, err = parsePreemptMode(q.PreemptMode); err != nil {
				return nil, bad(f+".PreemptMode", "%v", err)
			}
		}
		c.qos = append(c.qos, d)
	}
	for i, q := range c.qos {
		for _, name := range q.preempt {
			if !names[name] && name != "normal" {
				return nil, bad(fmt.Sprintf("qos[%d].Preempt", i), "names QOS %q, which is not defined", name)
			}
		}
	}
	if !names["normal"] {
		c.qos = append(c.qos, qosDef{name: "normal", maxUser: noLimit(), grp: noLimit()})
	}
	slices.SortStableFunc(c.qos, func(x, y qosDef) int { return strings.Compare(x.name, y.name) })
	return c, nil
}

// enforceLimits reads AccountingStorageEnforce and reports whether it
// sets ACCOUNTING_ENFORCE_LIMITS: limits does, and so do safe (limits
// and safe) and all, as _validate_accounting_storage_enforce
// (src/common/read_config.c) sets the flags.
func enforceLimits(s string) (bool, error) {
	limits := false
	for f := range strings.SplitSeq(s, ",") {
		switch f = strings.ToLower(strings.TrimSpace(f)); f {
		case "", "associations", "qos", "wckeys", "nojobs", "nosteps":
		case "limits", "safe", "all":
			limits = true
		default:
			return false, fmt.Errorf("unknown %q (want a comma list of associations, limits, qos, safe, wckeys, nojobs, nosteps or all)", f)
		}
	}
	return limits, nil
}

func yesNo(s string) (bool, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "YES", "TRUE", "1":
		return true, nil
	case "NO", "FALSE", "0", "":
		return false, nil
	}
	return false, fmt.Errorf("want YES or NO, got %q", s)
}

// parseLimitTRES parses "cpu=64,gres/gpu=8,node=2,mem=500G"; -1 clears a
// resource. Memory takes a K/M/G/T suffix (MiB without).
func parseLimitTRES(s string) (limitTRES, error) {
	l := noLimit()
	if strings.TrimSpace(s) == "" {
		return l, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return l, fmt.Errorf("%q: want NAME=COUNT", item)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		val = strings.TrimSpace(val)
		mult := int64(1)
		if name == priority.TRESMem && val != "" && val != "-1" {
			switch val[len(val)-1] {
			case 'K', 'k':
				val = val[:len(val)-1]
				mult = -1024 // divide
			case 'M', 'm':
				val = val[:len(val)-1]
			case 'G', 'g':
				val, mult = val[:len(val)-1], 1024
			case 'T', 't':
				val, mult = val[:len(val)-1], 1024*1024
			}
		}
		v, err := strconv.ParseInt(val, 10, 64)
		if err != nil || v < -1 {
			return l, fmt.Errorf("%q: count %q is not an integer >= -1", item, val)
		}
		if v >= 0 {
			if mult > 0 {
				v *= mult
			} else {
				v /= -mult
			}
		}
		switch name {
		case priority.TRESCPU:
			l.cpu = v
		case priority.TRESNode:
			l.node = v
		case priority.TRESGPU:
			l.gpu = v
		case priority.TRESMem:
			l.memMB = v
		default:
			return l, fmt.Errorf("%q: unknown TRES %q (want cpu, mem, node or gres/gpu)", item, name)
		}
	}
	l.set = l.cpu >= 0 || l.node >= 0 || l.gpu >= 0 || l.memMB >= 0
	return l, nil
}
