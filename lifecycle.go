package schedsim

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/hwmodels/strictyaml"
	"github.com/schedsim/schedsim/sim"
)

// The scenario sections of the job lifecycle: controller settings, node
// failures, node events and advance reservations. docs/lifecycle.md
// describes them for users.
//
// Durations are whole seconds: a bare integer (seconds), an integer with a
// unit s, m, h or d ("90s", "5m", "4h", "30d"), or a Go duration of whole
// seconds ("1h30m"). Times are seconds since the trace's epoch (its first
// submit, the run's time zero) as a bare integer, or an RFC 3339 date-time
// ("2007-05-06T08:00:00Z"; without a zone it is read as UTC, as sacct
// times are).

// Controller holds the simulator's Slurm-controller settings.
type Controller struct {
	// TimeLimitSweep is the period of the time-limit check ("30s" as
	// slurmctld; empty or 0 = jobs are killed exactly at their limit).
	TimeLimitSweep string `yaml:"time_limit_sweep"`
	// TimeLimitSweepPhase is where the checks fall: at this offset plus
	// multiples of the period (default 0; slurmctld times them from its
	// start). It must be less than the period.
	TimeLimitSweepPhase string `yaml:"time_limit_sweep_phase"`
	// KillWait is how long a job killed at its time limit keeps its
	// resources (Slurm's KillWait plus the epilog; default 0).
	KillWait string `yaml:"kill_wait"`
	// OverTimeLimit is how long a job may run past its limit (Slurm's
	// OverTimeLimit, in minutes there: write "5m"). Default: the cluster
	// spec's slurm setting OverTimeLimit, else 0.
	OverTimeLimit string `yaml:"over_time_limit"`
	// RequeueDelay is how long a requeued job is held (default 120s; 0 =
	// no hold).
	RequeueDelay string `yaml:"requeue_delay"`
	// PreemptGraceTime is Slurm's GraceTime for preempted jobs (default 0).
	PreemptGraceTime string `yaml:"preempt_grace_time"`
	// JobRequeue is Slurm's JobRequeue: every job may be requeued after a
	// preemption or node failure. Default: the cluster spec's slurm
	// setting JobRequeue (from slurm.conf), else true, as in Slurm
	// (traces do not record --requeue).
	JobRequeue *bool `yaml:"job_requeue,omitempty"`
	// KillInvalidDepend cancels jobs whose dependency can never be met
	// (DependencyParameters=kill_invalid_depend). Default false; true
	// when the cluster spec's slurm setting DependencyParameters holds
	// kill_invalid_depend.
	KillInvalidDepend bool `yaml:"kill_invalid_depend"`
	// EnforcePartLimits is Slurm's EnforcePartLimits: NO (jobs over a
	// partition's MaxTime or MaxNodes wait, held), ANY or YES (rejected
	// when over the limits of every partition they list), ALL (rejected
	// when over the limits of any). Default: the cluster spec's slurm
	// setting EnforcePartLimits (from slurm.conf), else NO.
	EnforcePartLimits string `yaml:"enforce_part_limits"`
}

// partLimits maps EnforcePartLimits values to the simulator's.
var partLimits = map[string]sim.PartLimits{"NO": sim.PartLimitsNo, "ANY": sim.PartLimitsAny, "YES": sim.PartLimitsAny, "ALL": sim.PartLimitsAll}

func parsePartLimits(v string) (sim.PartLimits, error) {
	if l, ok := partLimits[strings.ToUpper(strings.TrimSpace(v))]; ok {
		return l, nil
	}
	return 0, fmt.Errorf("%q: want NO, ANY, YES or ALL", v)
}

// Failures is the random node-failure model.
type Failures struct {
	MTBF string `yaml:"mtbf"` // mean time between failures of one node
	MTTR string `yaml:"mttr"` // mean time to repair
}

// NodeEventSpec changes the state of a set of nodes at a time.
type NodeEventSpec struct {
	At    string `yaml:"at"`
	Nodes string `yaml:"nodes"` // a Slurm hostlist: "gpu[001-004],gpu010"
	// State is down (a failure: running jobs end NODE_FAIL or are
	// requeued), drain (running jobs go on, no new ones) or up.
	State string `yaml:"state"`
}

// ReservationSpec is an advance reservation (maintenance window).
type ReservationSpec struct {
	Name  string `yaml:"name"`
	Start string `yaml:"start"`
	// Exactly one of End and Duration.
	End      string `yaml:"end"`
	Duration string `yaml:"duration"`
	Nodes    string `yaml:"nodes"` // a Slurm hostlist
}

var nodeStates = []string{"down", "drain", "up"}

var durUnit = regexp.MustCompile(`^(\d+)([smhd])$`)

// parseDur parses a scenario duration into whole seconds.
func parseDur(s string) (sim.Time, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("%q: must be >= 0", s)
		}
		return sim.Time(n), nil
	}
	if m := durUnit.FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		mult := map[string]int64{"s": 1, "m": 60, "h": 3600, "d": 86400}[m[2]]
		if err != nil || n > (1<<62)/mult {
			return 0, fmt.Errorf("%q: out of range", s)
		}
		return sim.Time(n * mult), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d%time.Second != 0 {
		return 0, fmt.Errorf("%q: want a duration of whole seconds (90, \"90s\", \"5m\", \"4h\", \"30d\", \"1h30m\")", s)
	}
	return sim.Time(d / time.Second), nil
}

// parseTime parses a scenario time: seconds since the trace epoch, or an
// RFC 3339 date-time (UTC when it has no zone) made relative to epoch.
func parseTime(s string, epoch int64) (sim.Time, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return sim.Time(n), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return sim.Time(t.Unix() - epoch), nil
		}
	}
	return 0, fmt.Errorf("%q: want seconds since the trace epoch or an RFC 3339 time (\"2007-05-06T08:00:00Z\")", s)
}

// lineAt finds the line of a value under a path of mapping keys (string)
// and sequence indices (int), or of the deepest part found.
func lineAt(n *yaml.Node, path ...any) int { return strictyaml.Line(n, path...) }

// lifecycleError returns an error at a path of the scenario.
func (s *Scenario) lifecycleError(msg string, path ...any) error {
	var field []string
	for _, p := range path {
		switch k := p.(type) {
		case string:
			field = append(field, k)
		case int:
			field[len(field)-1] += fmt.Sprintf("[%d]", k)
		}
	}
	return &Error{Path: s.pathOr("scenario"), Line: lineAt(s.root, path...), Field: strings.Join(field, "."), Msg: msg}
}

// validateLifecycle checks the lifecycle sections as far as they can be
// checked without the cluster and trace.
func (s *Scenario) validateLifecycle() error {
	durs := []struct {
		v    string
		path []any
	}{
		{s.Controller.TimeLimitSweep, []any{"controller", "time_limit_sweep"}},
		{s.Controller.TimeLimitSweepPhase, []any{"controller", "time_limit_sweep_phase"}},
		{s.Controller.KillWait, []any{"controller", "kill_wait"}},
		{s.Controller.OverTimeLimit, []any{"controller", "over_time_limit"}},
		{s.Controller.RequeueDelay, []any{"controller", "requeue_delay"}},
		{s.Controller.PreemptGraceTime, []any{"controller", "preempt_grace_time"}},
	}
	if f := s.Failures; f != nil {
		durs = append(durs, struct {
			v    string
			path []any
		}{f.MTBF, []any{"failures", "mtbf"}}, struct {
			v    string
			path []any
		}{f.MTTR, []any{"failures", "mttr"}})
		for _, d := range []struct{ v, key string }{{f.MTBF, "mtbf"}, {f.MTTR, "mttr"}} {
			if d.v == "" {
				return s.lifecycleError("missing (want a duration such as \"30d\" or \"4h\")", "failures", d.key)
			}
			if v, err := parseDur(d.v); err == nil && v == 0 {
				return s.lifecycleError("must be > 0", "failures", d.key)
			}
		}
	}
	for _, d := range durs {
		if d.v == "" {
			continue
		}
		if _, err := parseDur(d.v); err != nil {
			return s.lifecycleError(err.Error(), d.path...)
		}
	}
	if ph := s.Controller.TimeLimitSweepPhase; ph != "" {
		p, _ := parseDur(ph)
		sw, _ := parseDur(s.Controller.TimeLimitSweep)
		if p > 0 && p >= sw {
			return s.lifecycleError(fmt.Sprintf("%q: must be less than time_limit_sweep (%q)", ph, s.Controller.TimeLimitSweep), "controller", "time_limit_sweep_phase")
		}
	}
	if v := s.Controller.EnforcePartLimits; v != "" {
		if _, err := parsePartLimits(v); err != nil {
			return s.lifecycleError(err.Error(), "controller", "enforce_part_limits")
		}
	}
	for i, ev := range s.NodeEvents {
		if ev.At == "" {
			return s.lifecycleError("missing (want a time)", "node_events", i, "at")
		}
		if _, err := parseTime(ev.At, 0); err != nil {
			return s.lifecycleError(err.Error(), "node_events", i, "at")
		}
		if !slices.Contains(nodeStates, ev.State) {
			return s.lifecycleError(fmt.Sprintf("%q: want one of %s", ev.State, strings.Join(nodeStates, ", ")), "node_events", i, "state")
		}
		if err := checkHostlist(ev.Nodes); err != nil {
			return s.lifecycleError(err.Error(), "node_events", i, "nodes")
		}
	}
	names := map[string]bool{}
	for i, r := range s.Reservations {
		if r.Name == "" {
			return s.lifecycleError("missing (want a name)", "reservations", i, "name")
		}
		if names[r.Name] {
			return s.lifecycleError(fmt.Sprintf("%q: named twice", r.Name), "reservations", i, "name")
		}
		names[r.Name] = true
		if r.Start == "" {
			return s.lifecycleError("missing (want a time)", "reservations", i, "start")
		}
		if _, err := parseTime(r.Start, 0); err != nil {
			return s.lifecycleError(err.Error(), "reservations", i, "start")
		}
		switch {
		case (r.End == "") == (r.Duration == ""):
			return s.lifecycleError("give exactly one of end or duration", "reservations", i)
		case r.End != "":
			if _, err := parseTime(r.End, 0); err != nil {
				return s.lifecycleError(err.Error(), "reservations", i, "end")
			}
		default:
			d, err := parseDur(r.Duration)
			if err != nil {
				return s.lifecycleError(err.Error(), "reservations", i, "duration")
			}
			if d == 0 {
				return s.lifecycleError("must be > 0", "reservations", i, "duration")
			}
		}
		if err := checkHostlist(r.Nodes); err != nil {
			return s.lifecycleError(err.Error(), "reservations", i, "nodes")
		}
	}
	return nil
}

func checkHostlist(s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("missing (want a hostlist such as \"gpu[001-004]\")")
	}
	_, err := hwmodels.ExpandHostlist(s)
	return err
}

// nodeIndices resolves a hostlist against the cluster's node names.
func nodeIndices(c *hwmodels.Cluster, list string) ([]int32, error) {
	names, err := hwmodels.ExpandHostlist(list)
	if err != nil {
		return nil, err
	}
	idx := make(map[string]int32, len(c.Nodes))
	for i := range c.Nodes {
		idx[c.Nodes[i].Name] = int32(i)
	}
	var out []int32
	for _, n := range names {
		i, ok := idx[n]
		if !ok {
			return nil, fmt.Errorf("node %q is not in cluster %s", n, c.Name)
		}
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Lifecycle is the simulator configuration the lifecycle sections give,
// resolved against the cluster and the trace's epoch.
type Lifecycle struct {
	Reservations      []sim.AdvanceReservation
	NodeEvents        []sim.NodeEvent
	Failures          *sim.FailureModel
	TimeLimitSweep    sim.Time
	SweepPhase        sim.Time
	KillWait          sim.Time
	OverTimeLimit     sim.Time
	RequeueDelay      sim.Time
	PreemptGraceTime  sim.Time
	JobRequeue        bool
	KillInvalidDepend bool
	EnforcePartLimits sim.PartLimits
}

// buildLifecycle resolves the lifecycle sections; Validate has checked
// their syntax.
func (s *Scenario) buildLifecycle(c *hwmodels.Cluster, epoch int64) (Lifecycle, error) {
	ct := &s.Controller
	l := Lifecycle{JobRequeue: ct.JobRequeue == nil || *ct.JobRequeue, KillInvalidDepend: ct.KillInvalidDepend}
	dur := func(v string) sim.Time {
		d, _ := parseDur(v) // validated; empty gives 0
		return d
	}
	l.TimeLimitSweep = dur(ct.TimeLimitSweep)
	l.SweepPhase = dur(ct.TimeLimitSweepPhase)
	l.KillWait = dur(ct.KillWait)
	l.OverTimeLimit = dur(ct.OverTimeLimit)
	l.PreemptGraceTime = dur(ct.PreemptGraceTime)
	if v := ct.EnforcePartLimits; v != "" {
		l.EnforcePartLimits, _ = parsePartLimits(v) // validated
	} else if v, ok := c.Slurm.Get("EnforcePartLimits"); ok {
		pl, err := parsePartLimits(v)
		if err != nil {
			return l, s.lifecycleError("the cluster's slurm setting EnforcePartLimits "+err.Error(), "controller", "enforce_part_limits")
		}
		l.EnforcePartLimits = pl
	}
	if err := s.slurmDefaults(&l, c); err != nil {
		return l, err
	}
	if ct.RequeueDelay != "" {
		if l.RequeueDelay = dur(ct.RequeueDelay); l.RequeueDelay == 0 {
			l.RequeueDelay = -1 // no hold (sim reads 0 as the default)
		}
	}
	if f := s.Failures; f != nil {
		l.Failures = &sim.FailureModel{MTBF: dur(f.MTBF), MTTR: dur(f.MTTR)}
	}
	for i, ev := range s.NodeEvents {
		at, err := parseTime(ev.At, epoch)
		if err != nil {
			return l, s.lifecycleError(err.Error(), "node_events", i, "at")
		}
		if at < 0 {
			return l, s.lifecycleError(fmt.Sprintf("%q is before the trace's first submit", ev.At), "node_events", i, "at")
		}
		nodes, err := nodeIndices(c, ev.Nodes)
		if err != nil {
			return l, s.lifecycleError(err.Error(), "node_events", i, "nodes")
		}
		for _, n := range nodes {
			l.NodeEvents = append(l.NodeEvents, sim.NodeEvent{At: at, Node: n, Down: ev.State != "up", Drain: ev.State == "drain"})
		}
	}
	for i, r := range s.Reservations {
		start, err := parseTime(r.Start, epoch)
		if err != nil {
			return l, s.lifecycleError(err.Error(), "reservations", i, "start")
		}
		end := start + dur(r.Duration)
		if r.End != "" {
			if end, err = parseTime(r.End, epoch); err != nil {
				return l, s.lifecycleError(err.Error(), "reservations", i, "end")
			}
			if end <= start {
				return l, s.lifecycleError(fmt.Sprintf("%q is not after start %q", r.End, r.Start), "reservations", i, "end")
			}
		}
		nodes, err := nodeIndices(c, r.Nodes)
		if err != nil {
			return l, s.lifecycleError(err.Error(), "reservations", i, "nodes")
		}
		l.Reservations = append(l.Reservations, sim.AdvanceReservation{Name: r.Name, Start: start, End: end, Nodes: nodes})
	}
	return l, nil
}

// Config returns the simulator configuration of the run.
func (r *Run) Config() sim.Config {
	l := &r.Lifecycle
	return sim.Config{
		Cluster: r.Cluster, Trace: r.Trace, Policy: r.Policy, Seed: r.Seed,
		Reservations: l.Reservations, NodeEvents: l.NodeEvents, Failures: l.Failures,
		TimeLimitSweep: l.TimeLimitSweep, TimeLimitSweepPhase: l.SweepPhase, KillWait: l.KillWait, OverTimeLimit: l.OverTimeLimit, RequeueDelay: l.RequeueDelay,
		PreemptGraceTime: l.PreemptGraceTime, JobRequeue: l.JobRequeue, KillInvalidDepend: l.KillInvalidDepend,
		EnforcePartLimits: l.EnforcePartLimits,
		Runtime:           r.Runtime,
		MaxNodeEvents:     r.maxNodeEvents,
	}
}

// unlimitedOverTime stands for OverTimeLimit=UNLIMITED: far beyond any
// trace, and far from overflowing start + limit + it.
const unlimitedOverTime = sim.Time(1) << 50

// slurmDefaults takes the controller settings the scenario leaves unset
// from the cluster spec's slurm section (slurm.conf, kept by cluster
// import): JobRequeue (read_config.c: unset is 1, any value above 1 is
// 1), OverTimeLimit (minutes, or UNLIMITED) and DependencyParameters'
// kill_invalid_depend. KillWait is not taken: kill_wait models KillWait
// plus the epilog and slurmd's report, which slurm.conf does not say. A
// bad value is an error at the controller key it stands for.
func (s *Scenario) slurmDefaults(l *Lifecycle, c *hwmodels.Cluster) error {
	ct := &s.Controller
	bad := func(key, setting, v, want string) error {
		return s.lifecycleError(fmt.Sprintf("the cluster's slurm setting %s=%q: want %s", setting, v, want), "controller", key)
	}
	uint16Of := func(v string) (int64, bool) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n, err == nil && n >= 0 && n <= 65535
	}
	if v, ok := c.Slurm.Get("JobRequeue"); ok && ct.JobRequeue == nil {
		n, ok := uint16Of(v)
		if !ok {
			return bad("job_requeue", "JobRequeue", v, "0 or 1")
		}
		l.JobRequeue = n != 0
	}
	if v, ok := c.Slurm.Get("OverTimeLimit"); ok && ct.OverTimeLimit == "" {
		switch n, ok := uint16Of(v); {
		case strings.EqualFold(strings.TrimSpace(v), "UNLIMITED"), strings.EqualFold(strings.TrimSpace(v), "INFINITE"):
			l.OverTimeLimit = unlimitedOverTime
		case ok:
			l.OverTimeLimit = sim.Time(n * 60)
		default:
			return bad("over_time_limit", "OverTimeLimit", v, "minutes (0 to 65535) or UNLIMITED")
		}
	}
	if v, ok := c.Slurm.Get("DependencyParameters"); ok {
		for item := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(item), "kill_invalid_depend") {
				l.KillInvalidDepend = true
			}
		}
	}
	return nil
}
