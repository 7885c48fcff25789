package conformance

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schedsim/schedsim/hwmodels"

	"github.com/schedsim/schedsim/traces"
	"github.com/schedsim/schedsim/workload"
)

// ParseError is a bad record: the file, the 1-based line (0 when the
// whole file is at fault) and the field, and what was expected.
type ParseError struct {
	Path  string
	Line  int
	Field string
	Err   error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

func perr(path string, line int, field, format string, args ...any) error {
	return &ParseError{Path: path, Line: line, Field: field, Err: fmt.Errorf(format, args...)}
}

// Record is one recorded run of a scenario on a real Slurm.
type Record struct {
	// Dir is the run's directory; Scenario and Run are its parent's name
	// and its own ("tier-order", "run1").
	Dir, Scenario, Run string
	// T0 is the replay's time 0 (Unix seconds): the scenario's "at"
	// times count from it, and so does the simulation clock.
	T0 int64
	// CtldPrimary is when slurmctld became the primary controller (Unix
	// seconds, fractional): its 30 s time-limit sweep and its priority
	// recalculations are timed from it. Zero when the record says neither
	// in run-info.txt nor in logs/slurmctld.log.
	CtldPrimary float64
	// MainPass is when slurmctld's main scheduler first ran (Unix
	// seconds; its "SchedulerParameters=" log line), 0 when the log does
	// not say; it then runs every sched_min_interval.
	MainPass float64
	// MainSame and MainLater count the main scheduler's starts just
	// after a job's end in the second of its start plus its sleep and in
	// the second after (mainAfterEnds).
	MainSame, MainLater int
	// SubmitAt is when slurmctld registered each batch job (Unix
	// seconds, from its log), by job id (an array's by the array's id);
	// nil when the log does not say.
	SubmitAt map[string]float64
	// BfCycles are the times of the log's backfill starts: the cycle's
	// phase within the second drifts as cycles take time.
	BfCycles []float64
	// Responding is, by the events.tsv line of a resume, when slurmctld
	// logged the last of its nodes "now responding" after it (Unix
	// seconds); absent when the log does not say.
	Responding map[int]float64
	// KillWait is, by job id, how long the job's first kill by
	// preemption took, whole seconds: from slurmd's "CANCELLED ... DUE
	// TO PREEMPTION" to its "done with job" (logs/slurmd.*.log); the
	// replay's kills of the job by preemption take as long.
	KillWait map[string]int64
	// SlurmConf and GresConf are the configuration used, with @RUN@ in
	// place of the run's temporary directory.
	SlurmConf, GresConf []byte
	// Jobs are the recorded jobs (array tasks one by one), by submit time
	// then job id.
	Jobs []Job
	// NodeEvents and Reservations are what the scenario's commands did.
	NodeEvents   []NodeEvent
	Reservations []Reservation
	// Assocs is the sacctmgr association tree (assoc.txt), in
	// sacctmgr's order, and QOS the QOS (qos.txt); empty for records
	// made before run.sh recorded them.
	Assocs []traces.Assoc
	QOS    []traces.QOS
}

// Job is one recorded job with the ground truth of its sbatch line.
type Job struct {
	// ID is sacct's JobID ("4", "5_3"); ArrayJob is the array's id ("5")
	// and ArrayTask the task index, or "" and -1.
	ID        string
	ArrayJob  string
	ArrayTask int32
	Name      string
	User      string
	Account   string
	Partition string
	// Submit is the sbatch time in Unix seconds (whole, rounded down),
	// also for a requeued job (whose sacct Submit is its requeue).
	Submit int64
	// Nodes and GPUsPerNode are the request; CPUs and MemMB the totals
	// Slurm allocated (AllocTRES), or, for a job that never started,
	// what DefCpuPerGPU and DefMemPerCPU give.
	Nodes, GPUsPerNode int32
	CPUs               int32
	MemMB              int64
	// ReqCPUs and ReqMemMB are what the job asked for (ReqTRES: one CPU
	// per node and DefMemPerCPU for it, with these sbatch lines); 0 when
	// sacct does not say.
	ReqCPUs  int32
	ReqMemMB int64
	// Limit is --time in seconds; Work the job's `sleep` in seconds;
	// Fails is true for `sleep S; exit 1`.
	Limit, Work int64
	Fails       bool
	// Throttle is the array's %N (0 none).
	Throttle int32
	Deps     []workload.Dependency
	// Requeue is --requeue (true), --no-requeue (false), or neither (nil:
	// slurm.conf's JobRequeue decides).
	Requeue *bool
	// Runs are the recorded runs, in start order (sacct -D lists a
	// requeued job's earlier runs); empty for a job that never started.
	// The last is the final one.
	Runs []Run
	// State is the final state sacct shows.
	State string
	// Line is the job's line in sacct.txt, for messages.
	Line int
}

// Run is one recorded run of a job (Unix seconds, whole).
type Run struct {
	Start, End int64
	State      string
	Nodes      string // sacct NodeList, when the record has the column
}

// NodeEvent is a node state change the scenario commanded.
type NodeEvent struct {
	At    float64 // Unix seconds
	Nodes string  // hostlist
	State string  // down, drain or resume
	Line  int
}

// Reservation is an advance reservation the scenario created.
type Reservation struct {
	Name       string
	Start, End int64 // Unix seconds
	Nodes      string
	Line       int
}

// sacctTime is sacct's timestamp layout; the records are made in UTC.
const sacctTime = "2006-01-02T15:04:05"

// LoadRecord reads a run directory.
func LoadRecord(dir string) (*Record, error) {
	r := &Record{Dir: dir, Run: filepath.Base(dir), Scenario: filepath.Base(filepath.Dir(dir))}
	if err := r.readRunInfo(); err != nil {
		return nil, err
	}
	var err error
	if r.SlurmConf, err = os.ReadFile(filepath.Join(dir, "config", "slurm.conf")); err != nil {
		return nil, err
	}
	if r.GresConf, err = os.ReadFile(filepath.Join(dir, "config", "gres.conf")); err != nil {
		return nil, err
	}
	subs, err := r.readSubmissions()
	if err != nil {
		return nil, err
	}
	if err := r.readSacct(subs); err != nil {
		return nil, err
	}
	r.MainSame, r.MainLater = r.mainAfterEnds()
	r.KillWait = r.preemptKills()
	if err := r.readEvents(); err != nil {
		return nil, err
	}
	r.Responding = r.responding()
	if err := r.readAssoc(); err != nil {
		return nil, err
	}
	if err := r.checkAssocs(); err != nil {
		return nil, err
	}
	if err := r.readQOS(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Record) readRunInfo() error {
	path := filepath.Join(r.Dir, "run-info.txt")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for i, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "t0_epoch":
			if r.T0, err = strconv.ParseInt(v, 10, 64); err != nil || r.T0 <= 0 {
				return perr(path, i+1, "t0_epoch", "%q: want Unix seconds", v)
			}
		case "ctld_primary_epoch":
			if v == "" {
				continue
			}
			if r.CtldPrimary, err = strconv.ParseFloat(v, 64); err != nil || !(r.CtldPrimary > 0) {
				return perr(path, i+1, "ctld_primary_epoch", "%q: want Unix seconds", v)
			}
		}
	}
	if r.T0 == 0 {
		return perr(path, 0, "t0_epoch", "missing")
	}
	log := filepath.Join(r.Dir, "logs", "slurmctld.log")
	if r.CtldPrimary == 0 {
		r.CtldPrimary = logTime(log, "Running as primary controller")
	}
	r.MainPass = logTime(log, "SchedulerParameters=")
	r.SubmitAt = logSubmits(log)
	r.BfCycles = logTimes(log, "sched/backfill: _start_job")
	return nil
}

// logTimes returns the times of slurmctld's log lines that contain what,
// in order (Unix seconds to the millisecond).
func logTimes(path, what string) []float64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []float64
	for l := range strings.SplitSeq(string(data), "\n") {
		if !strings.Contains(l, what) || !strings.HasPrefix(l, "[") {
			continue
		}
		ts, _, _ := strings.Cut(l[1:], "]")
		if t, err := time.Parse("2006-01-02T15:04:05.000", ts); err == nil {
			out = append(out, float64(t.UnixMilli())/1000)
		}
	}
	return out
}

// logSubmits returns when slurmctld registered each batch job
// (_slurm_rpc_submit_batch_job: JobId=N, Unix seconds to the
// millisecond), by job id; nil when the log does not say.
func logSubmits(path string) map[string]float64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var at map[string]float64
	const key = "_slurm_rpc_submit_batch_job: JobId="
	for l := range strings.SplitSeq(string(data), "\n") {
		_, rest, ok := strings.Cut(l, key)
		if !ok || !strings.HasPrefix(l, "[") {
			continue
		}
		id, _, _ := strings.Cut(rest, " ")
		ts, _, _ := strings.Cut(l[1:], "]")
		t, err := time.Parse("2006-01-02T15:04:05.000", ts)
		if err != nil || id == "" {
			continue
		}
		if at == nil {
			at = map[string]float64{}
		}
		at[id] = float64(t.UnixMilli()) / 1000
	}
	return at
}

// logTime finds the first line of slurmctld's log that contains what
// (timestamps in UTC, milliseconds) and returns its time, or 0.
func logTime(path, what string) float64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(data), "\n") {
		if !strings.Contains(l, what) || !strings.HasPrefix(l, "[") {
			continue
		}
		ts, _, _ := strings.Cut(l[1:], "]")
		t, err := time.Parse("2006-01-02T15:04:05.000", ts)
		if err != nil {
			return 0
		}
		return float64(t.UnixMilli()) / 1000
	}
	return 0
}

// submission is one sbatch line of submissions.tsv.
type submission struct {
	line      int
	name      string
	jobID     string
	submit    int64
	part      string
	nodes     int32
	gpn       int32
	limit     int64
	work      int64
	fails     bool
	throttle  int32
	arraySpec string
	deps      []workload.Dependency
	requeue   *bool
	account   string
	used      bool
}

var wrapRe = regexp.MustCompile(`--wrap '(.*)'\s*$`)
var sleepRe = regexp.MustCompile(`^sleep (\d+)(; exit 1)?$`)

func (r *Record) readSubmissions() (map[string]*submission, error) {
	path := filepath.Join(r.Dir, "submissions.tsv")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	subs := map[string]*submission{}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] != "name\tjobid\tat\tsubmit_epoch\tcommand" {
		return nil, perr(path, 1, "header", "want name, jobid, at, submit_epoch, command (tab-separated)")
	}
	for i, l := range lines[1:] {
		ln := i + 2
		f := strings.Split(l, "\t")
		if len(f) != 5 {
			return nil, perr(path, ln, "", "%d fields, want 5 (name, jobid, at, submit_epoch, command)", len(f))
		}
		s := &submission{line: ln, name: f[0], jobID: f[1]}
		if _, err := strconv.ParseUint(s.jobID, 10, 32); err != nil {
			return nil, perr(path, ln, "jobid", "%q: want a job id", f[1])
		}
		ep, err := strconv.ParseFloat(f[3], 64)
		if err != nil || !(ep > 0) {
			return nil, perr(path, ln, "submit_epoch", "%q: want Unix seconds", f[3])
		}
		s.submit = int64(math.Floor(ep))
		if err := s.parseCommand(f[4]); err != nil {
			return nil, perr(path, ln, "command", "%v", err)
		}
		if subs[s.jobID] != nil {
			return nil, perr(path, ln, "jobid", "%s listed twice", s.jobID)
		}
		subs[s.jobID] = s
	}
	return subs, nil
}

// parseCommand reads the sbatch line run.sh wrote.
func (s *submission) parseCommand(cmd string) error {
	m := wrapRe.FindStringSubmatch(cmd)
	loc := wrapRe.FindStringIndex(cmd)
	if m == nil || !strings.HasPrefix(cmd, "sbatch ") {
		return fmt.Errorf("want \"sbatch ... --wrap 'sleep S'\"")
	}
	w := sleepRe.FindStringSubmatch(m[1])
	if w == nil {
		return fmt.Errorf("--wrap %q: want 'sleep S' or 'sleep S; exit 1'", m[1])
	}
	s.work, _ = strconv.ParseInt(w[1], 10, 64)
	s.fails = w[2] != ""
	s.nodes, s.gpn = 1, 0
	for _, a := range strings.Fields(cmd[len("sbatch "):loc[0]]) {
		key, val, _ := strings.Cut(a, "=")
		var err error
		switch key {
		case "--parsable", "--chdir", "--output", "--error", "--job-name":
		case "--account":
			s.account = val
		case "--partition":
			s.part = val
		case "--nodes":
			s.nodes, err = atoi32(val)
		case "--gpus-per-node":
			s.gpn, err = atoi32(val)
		case "--time":
			var min int64
			min, err = strconv.ParseInt(val, 10, 64)
			if err != nil || min <= 0 {
				return fmt.Errorf("--time=%s: want whole minutes > 0", val)
			}
			s.limit = 60 * min
		case "--dependency":
			s.deps, err = parseDeps(val)
		case "--array":
			s.arraySpec = val
			if _, t, ok := strings.Cut(val, "%"); ok {
				s.throttle, err = atoi32(t)
			}
		case "--requeue":
			t := true
			s.requeue = &t
		case "--no-requeue":
			f := false
			s.requeue = &f
		default:
			return fmt.Errorf("sbatch option %s is not modeled by the conformance replay", a)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", a, err)
		}
	}
	if s.limit == 0 {
		return fmt.Errorf("no --time")
	}
	return nil
}

func atoi32(s string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a count >= 0", s)
	}
	return int32(n), nil
}

var depTypes = map[string]workload.DepType{
	"after": workload.DepAfter, "afterany": workload.DepAfterAny, "afterok": workload.DepAfterOK,
	"afternotok": workload.DepAfterNotOK, "singleton": workload.DepSingleton,
}

// parseDeps reads sbatch's --dependency value: "singleton",
// "afterok:2:3", several joined by ",".
func parseDeps(v string) ([]workload.Dependency, error) {
	var out []workload.Dependency
	for part := range strings.SplitSeq(v, ",") {
		f := strings.Split(part, ":")
		t, ok := depTypes[f[0]]
		if !ok {
			return nil, fmt.Errorf("%q: unknown dependency type (want after, afterany, afterok, afternotok or singleton)", f[0])
		}
		if t == workload.DepSingleton {
			if len(f) != 1 {
				return nil, fmt.Errorf("%q: singleton takes no job id", part)
			}
			out = append(out, workload.Dependency{Type: t})
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("%q: want TYPE:JOBID[:JOBID...]", part)
		}
		for _, id := range f[1:] {
			if id == "" {
				return nil, fmt.Errorf("%q: empty job id", part)
			}
			out = append(out, workload.Dependency{Type: t, JobID: id})
		}
	}
	return out, nil
}

// sacctColumns are the columns the comparison reads.
var sacctColumns = []string{"JobID", "JobName", "User", "Account", "Partition", "State", "Submit", "Start", "End", "Timelimit", "NNodes", "AllocTRES", "ReqTRES"}

func (r *Record) readSacct(subs map[string]*submission) error {
	path := filepath.Join(r.Dir, "sacct.txt")
	rows, err := readSacctRows(path)
	if err != nil {
		return err
	}
	// sacct -D (written only when it differs) lists every run.
	dpath := filepath.Join(r.Dir, "sacct-D.txt")
	all := rows
	if _, err := os.Stat(dpath); err == nil {
		if all, err = readSacctRows(dpath); err != nil {
			return err
		}
	}
	runs := map[string][]Run{}
	for _, row := range all {
		if row.start > 0 {
			runs[row.id] = append(runs[row.id], Run{Start: row.start, End: row.end, State: row.state, Nodes: row.nodes})
		}
	}
	defCPG, defMPC := confInt(r.SlurmConf, "DefCpuPerGPU", 0), confInt(r.SlurmConf, "DefMemPerCPU", 0)
	seen := map[string]bool{}
	for _, row := range rows {
		if seen[row.id] {
			return perr(path, row.line, "JobID", "%s listed twice", row.id)
		}
		seen[row.id] = true
		base, task, isTask := strings.Cut(row.id, "_")
		s := subs[base]
		if s == nil {
			return perr(path, row.line, "JobID", "%s: no sbatch line for job %s in submissions.tsv", row.id, base)
		}
		s.used = true
		j := Job{ID: row.id, ArrayTask: -1, Name: row.name, User: row.user, Account: row.account, Partition: row.part,
			Submit: s.submit, Nodes: s.nodes, GPUsPerNode: s.gpn, Limit: s.limit, Work: s.work, Fails: s.fails,
			Deps: s.deps, Requeue: s.requeue, State: row.state, Line: row.line}
		if s.account != "" && s.account != row.account {
			return perr(path, row.line, "Account", "%q, but the sbatch line says --account=%s", row.account, s.account)
		}
		if s.part != "" && s.part != row.part {
			return perr(path, row.line, "Partition", "%q, but the sbatch line says --partition=%s", row.part, s.part)
		}
		if isTask {
			n, err := strconv.ParseInt(task, 10, 32)
			if err != nil || s.arraySpec == "" {
				return perr(path, row.line, "JobID", "%q: an array task of a job submitted without --array", row.id)
			}
			j.ArrayJob, j.ArrayTask, j.Throttle = base, int32(n), s.throttle
		}
		gpus := int64(s.nodes) * int64(s.gpn)
		j.CPUs, j.MemMB = int32(gpus*defCPG), gpus*defCPG*defMPC
		if row.cpus > 0 {
			j.CPUs, j.MemMB = row.cpus, row.memMB
		}
		j.ReqCPUs, j.ReqMemMB = row.reqCPUs, row.reqMemMB
		if j.CPUs == 0 {
			j.CPUs = s.nodes
		}
		j.Runs = runs[row.id]
		slices.SortFunc(j.Runs, func(a, b Run) int { return int(a.Start - b.Start) })
		r.Jobs = append(r.Jobs, j)
	}
	for _, s := range subs {
		if !s.used {
			return perr(filepath.Join(r.Dir, "submissions.tsv"), s.line, "jobid", "job %s is not in sacct.txt", s.jobID)
		}
	}
	slices.SortStableFunc(r.Jobs, func(a, b Job) int {
		if a.Submit != b.Submit {
			return int(a.Submit - b.Submit)
		}
		return cmpID(a.ID, b.ID)
	})
	return nil
}

// cmpID orders job ids numerically: "2" < "5_0" < "5_1" < "10".
func cmpID(a, b string) int {
	ab, at, _ := strings.Cut(a, "_")
	bb, bt, _ := strings.Cut(b, "_")
	an, _ := strconv.Atoi(ab)
	bn, _ := strconv.Atoi(bb)
	if an != bn {
		return an - bn
	}
	ai, _ := strconv.Atoi(at)
	bi, _ := strconv.Atoi(bt)
	return ai - bi
}

type sacctRow struct {
	line                          int
	id, name, user, account, part string
	state, nodes                  string
	start, end                    int64
	cpus, reqCPUs                 int32
	memMB, reqMemMB               int64
}

func readSacctRows(path string) ([]sacctRow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	col := map[string]int{}
	var rows []sacctRow
	ln := 0
	for sc.Scan() {
		ln++
		f := strings.Split(sc.Text(), "|")
		if ln == 1 {
			for i, h := range f {
				col[h] = i
			}
			for _, c := range sacctColumns {
				if _, ok := col[c]; !ok {
					return nil, perr(path, 1, c, "column missing from the header (want sacct -P with %s)", strings.Join(sacctColumns, ","))
				}
			}
			continue
		}
		if len(f) != len(col) {
			return nil, perr(path, ln, "", "%d fields, want %d", len(f), len(col))
		}
		get := func(c string) string { return f[col[c]] }
		row := sacctRow{line: ln, id: get("JobID"), name: get("JobName"), user: get("User"), account: get("Account"),
			part: get("Partition"), state: strings.Fields(get("State") + " ")[0]}
		if i, ok := col["NodeList"]; ok { // optional: only show --runs prints it
			row.nodes = f[i]
		}
		if row.id == "" || strings.ContainsAny(row.id, ".+[") {
			return nil, perr(path, ln, "JobID", "%q: want a job or array task id (sacct -X, finished jobs)", row.id)
		}
		for _, c := range []struct {
			name string
			dst  *int64
		}{{"Start", &row.start}, {"End", &row.end}} {
			v := get(c.name)
			if v == "Unknown" || v == "None" || v == "" {
				continue
			}
			t, err := time.Parse(sacctTime, v)
			if err != nil {
				return nil, perr(path, ln, c.name, "%q: want %s or Unknown", v, sacctTime)
			}
			*c.dst = t.Unix()
		}
		if row.start > 0 && row.end < row.start {
			return nil, perr(path, ln, "End", "%q is before Start %q", get("End"), get("Start"))
		}
		for _, tc := range []struct {
			col  string
			cpus *int32
			mem  *int64
		}{{"AllocTRES", &row.cpus, &row.memMB}, {"ReqTRES", &row.reqCPUs, &row.reqMemMB}} {
			tres := get(tc.col)
			if tres == "" {
				continue
			}
			for kv := range strings.SplitSeq(tres, ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "cpu":
					n, err := strconv.ParseInt(v, 10, 32)
					if err != nil || n < 0 {
						return nil, perr(path, ln, tc.col, "cpu=%q: want a count", v)
					}
					*tc.cpus = int32(n)
				case "mem":
					mb, err := parseMem(v)
					if err != nil {
						return nil, perr(path, ln, tc.col, "mem=%q: %v", v, err)
					}
					*tc.mem = mb
				}
			}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, perr(path, ln, "", "%v", err)
	}
	if ln == 0 {
		return nil, perr(path, 0, "", "empty (want sacct -P output with a header)")
	}
	return rows, nil
}

// parseMem reads sacct's memory figures: "250G", "62.50G", "8000M".
func parseMem(v string) (int64, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(v, "T"):
		mult = 1024 * 1024
	case strings.HasSuffix(v, "G"):
		mult = 1024
	case strings.HasSuffix(v, "M"):
	case strings.HasSuffix(v, "K"):
		mult = 1.0 / 1024
	default:
		return 0, errors.New("want a size with a unit (K, M, G, T)")
	}
	x, err := strconv.ParseFloat(v[:len(v)-1], 64)
	if err != nil || !(x >= 0) {
		return 0, errors.New("want a size with a unit (K, M, G, T)")
	}
	return int64(math.Round(x * mult)), nil
}

// confInt returns a global integer setting of slurm.conf, or def.
func confInt(conf []byte, key string, def int64) int64 {
	if v, ok := confValue(conf, key); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

// confValue is hwmodels.SlurmConfValue.
func confValue(conf []byte, key string) (string, bool) {
	return hwmodels.SlurmConfValue(conf, key)
}

var (
	nodeCmdRe  = regexp.MustCompile(`scontrol update\s+nodename=(\S+)\s+state=(\S+)`)
	resvOutRe  = regexp.MustCompile(`ReservationName=(\S+) StartTime=(\S+) EndTime=(\S+) .*?Nodes=(\S+)`)
	nodeStates = map[string]string{"down": "down", "drain": "drain", "resume": "resume", "undrain": "resume", "idle": "resume"}
)

func (r *Record) readEvents() error {
	path := filepath.Join(r.Dir, "events.tsv")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // records made before the harness ran commands
	} else if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if lines[0] != "at\tepoch\trc\tcommand\toutput" {
		return perr(path, 1, "header", "want at, epoch, rc, command, output (tab-separated)")
	}
	for i, l := range lines[1:] {
		ln := i + 2
		f := strings.Split(l, "\t")
		if len(f) != 5 {
			return perr(path, ln, "", "%d fields, want 5 (at, epoch, rc, command, output)", len(f))
		}
		ep, err := strconv.ParseFloat(f[1], 64)
		if err != nil || !(ep > 0) {
			return perr(path, ln, "epoch", "%q: want Unix seconds", f[1])
		}
		if f[2] != "0" {
			return perr(path, ln, "rc", "%q: the command failed (%s), so the record does not say what Slurm did", f[2], strings.TrimSpace(f[4]))
		}
		cmd := f[3]
		switch {
		case strings.Contains(cmd, "scontrol create reservation"):
			m := resvOutRe.FindStringSubmatch(f[4])
			if m == nil {
				return perr(path, ln, "output", "want the reservation as `scontrol show reservation -o` prints it (ReservationName=... StartTime=... EndTime=... Nodes=...)")
			}
			st, err1 := time.Parse(sacctTime, m[2])
			en, err2 := time.Parse(sacctTime, m[3])
			if err1 != nil || err2 != nil || !en.After(st) {
				return perr(path, ln, "output", "StartTime=%s EndTime=%s: want %s times, end after start", m[2], m[3], sacctTime)
			}
			r.Reservations = append(r.Reservations, Reservation{Name: m[1], Start: st.Unix(), End: en.Unix(), Nodes: m[4], Line: ln})
		case strings.Contains(cmd, "scontrol update"):
			m := nodeCmdRe.FindStringSubmatch(cmd)
			if m == nil {
				return perr(path, ln, "command", "want `scontrol update nodename=LIST state=STATE ...`")
			}
			st, ok := nodeStates[strings.ToLower(m[2])]
			if !ok {
				return perr(path, ln, "command", "state=%s: want down, drain, resume, undrain or idle", m[2])
			}
			r.NodeEvents = append(r.NodeEvents, NodeEvent{At: ep, Nodes: m[1], State: st, Line: ln})
		default:
			return perr(path, ln, "command", "%q: not a command the conformance replay models (scontrol update nodename=... state=..., scontrol create reservation ...)", cmd)
		}
	}
	return nil
}

var logJobID = regexp.MustCompile(`JobId=([0-9]+(?:_[0-9]+)?)`)

// mainAfterEnds counts, from logs/slurmctld.log, the main scheduler's
// starts that follow a job's end within two seconds by the second they
// fall in: same, the second of the end's start plus its sleep (the
// replay's end), or later, the second after. 0 and 0 when the log shows
// none.
func (r *Record) mainAfterEnds() (same, later int) {
	data, err := os.ReadFile(filepath.Join(r.Dir, "logs", "slurmctld.log"))
	if err != nil {
		return 0, 0
	}
	work := make(map[string]int64, len(r.Jobs))
	for i := range r.Jobs {
		work[r.Jobs[i].ID] = r.Jobs[i].Work
	}
	start := map[string]float64{}
	lastEnd, simEnd := -1.0, 0.0
	for l := range strings.SplitSeq(string(data), "\n") {
		m := logJobID.FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(l, "[") {
			continue
		}
		ts, _, _ := strings.Cut(l[1:], "]")
		t, err := time.Parse("2006-01-02T15:04:05.000", ts)
		if err != nil {
			continue
		}
		at := float64(t.UnixMilli()) / 1000
		switch {
		case strings.Contains(l, "_start_job: Started"):
			start[m[1]] = at
		case strings.Contains(l, "sched: Allocate"):
			start[m[1]] = at
			if lastEnd >= 0 && at-lastEnd < 2 {
				switch math.Floor(at) - simEnd {
				case 0:
					same++
				case 1:
					later++
				}
			}
		case strings.Contains(l, "WEXITSTATUS"):
			// Only a job that ran its sleep out (not one killed).
			if st, ok := start[m[1]]; ok {
				if w, ok := work[m[1]]; ok && at >= st+float64(w) {
					lastEnd, simEnd = at, math.Floor(st)+float64(w)
				}
			}
		}
	}
	return same, later
}

var (
	slurmdBatch = regexp.MustCompile(`^\[([0-9T:.-]+)\] \[([0-9]+)\.batch\] (.*)$`)
	logArrayID  = regexp.MustCompile(`JobId=([0-9]+_[0-9]+)\(([0-9]+)\)`)
)

// preemptKills reads, from the slurmd logs, how long each job's first
// kill by preemption took: slurmd's "CANCELLED AT ... DUE TO
// PREEMPTION" line to its "done with job" line of the job's batch step,
// rounded to whole seconds, by sacct job id (an array task's raw id
// mapped through the controller log's "JobId=A_T(RAW)"). A batch script
// that ends on SIGTERM is done in milliseconds; one that does not waits
// KillWait for SIGKILL (about KillWait + 1 s: 3.0 s with KillWait=2 in
// gen-41/run1's job 1, 6 ms for its job 14).
func (r *Record) preemptKills() map[string]int64 {
	logs, _ := filepath.Glob(filepath.Join(r.Dir, "logs", "slurmd.*.log"))
	if len(logs) == 0 {
		return nil
	}
	raw := map[string]string{}
	if data, err := os.ReadFile(filepath.Join(r.Dir, "logs", "slurmctld.log")); err == nil {
		for _, m := range logArrayID.FindAllStringSubmatch(string(data), -1) {
			raw[m[2]] = m[1]
		}
	}
	cancel := map[string]float64{}
	var out map[string]int64
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for l := range strings.SplitSeq(string(data), "\n") {
			m := slurmdBatch.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			t, err := time.Parse("2006-01-02T15:04:05.000", m[1])
			if err != nil {
				continue
			}
			at := float64(t.UnixMilli()) / 1000
			id := m[2]
			if a, ok := raw[id]; ok {
				id = a
			}
			switch {
			case strings.Contains(m[3], "DUE TO PREEMPTION"):
				if _, seen := cancel[id]; !seen {
					cancel[id] = at
				}
			case strings.HasPrefix(m[3], "done with job"):
				if c, ok := cancel[id]; ok && at >= c {
					if out == nil {
						out = map[string]int64{}
					}
					if _, done := out[id]; !done {
						out[id] = int64(math.Round(at - c))
					}
				}
			}
		}
	}
	return out
}

var logResponding = regexp.MustCompile(`Node (\S+) now responding`)

// responding finds, for each resume of the record's node events, when
// the last of its nodes answered after it: the first "Node N now
// responding" line of each node at or after the resume (within a
// minute).
func (r *Record) responding() map[int]float64 {
	var out map[int]float64
	data, err := os.ReadFile(filepath.Join(r.Dir, "logs", "slurmctld.log"))
	if err != nil {
		return nil
	}
	type answer struct {
		node string
		at   float64
	}
	var answers []answer
	for l := range strings.SplitSeq(string(data), "\n") {
		m := logResponding.FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(l, "[") {
			continue
		}
		ts, _, _ := strings.Cut(l[1:], "]")
		t, err := time.Parse("2006-01-02T15:04:05.000", ts)
		if err != nil {
			continue
		}
		answers = append(answers, answer{m[1], float64(t.UnixMilli()) / 1000})
	}
	for _, ev := range r.NodeEvents {
		if ev.State != "resume" {
			continue
		}
		nodes, err := hwmodels.ExpandHostlist(ev.Nodes)
		if err != nil || len(nodes) == 0 {
			continue
		}
		last, all := 0.0, true
		for _, n := range nodes {
			found := false
			for _, a := range answers {
				if a.node == n && a.at >= ev.At && a.at < ev.At+60 {
					last, found = max(last, a.at), true
					break
				}
			}
			all = all && found
		}
		if all {
			if out == nil {
				out = map[int]float64{}
			}
			out[ev.Line] = last
		}
	}
	return out
}
