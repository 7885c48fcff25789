package bundle

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Tolerance is the agreement the breakdown counts: a start within ±5 s
// of the recorded one (the conformance figure).
const Tolerance = 5

// Start is one compared start: a job's first run, and a requeued job's
// final run as well (when either side requeued it), on the replay clock;
// -1 when that side never started it.
type Start struct {
	Job       int // index in the replay's trace
	Rerun     bool
	Recorded  int64
	Simulated int64
}

// Delta is Simulated − Recorded; ok is false when one side never started.
func (s Start) Delta() (int64, bool) {
	if s.Recorded < 0 || s.Simulated < 0 {
		return 0, false
	}
	return s.Simulated - s.Recorded, true
}

// Compare pairs the replay's recorded starts with the simulated ones.
// Jobs the replay made for runs it does not model are left out.
func Compare(rp *Replay, rec *sim.Record) ([]Start, error) {
	if len(rec.Jobs) != len(rp.Jobs) {
		return nil, fmt.Errorf("simulated %d jobs, the replay has %d", len(rec.Jobs), len(rp.Jobs))
	}
	firstRun := map[sim.JobRef]sim.Time{}
	for _, seg := range rec.Runs {
		if _, ok := firstRun[seg.Job]; !ok {
			firstRun[seg.Job] = seg.Start
		}
	}
	var out []Start
	for i := range rp.Jobs {
		rj := &rp.Jobs[i]
		if rec.Trace != nil && rec.Trace.Jobs[i].ID != rj.ID {
			return nil, fmt.Errorf("simulated job %d is %s, the replay's is %s", i, rec.Trace.Jobs[i].ID, rj.ID)
		}
		if rj.Occupancy {
			continue
		}
		rf, rl := int64(-1), int64(-1)
		if n := len(rj.Runs); n > 0 {
			rf, rl = int64(rj.Runs[0].Start), int64(rj.Runs[n-1].Start)
		}
		sl := int64(-1)
		if st := rec.Jobs[i].Start; st != workload.Unknown {
			sl = int64(st)
		}
		sf := sl
		st, simRequeued := firstRun[sim.JobRef(i)]
		if simRequeued {
			sf = int64(st)
		}
		out = append(out, Start{Job: i, Recorded: rf, Simulated: sf})
		if len(rj.Runs) > 1 || simRequeued {
			out = append(out, Start{Job: i, Rerun: true, Recorded: rl, Simulated: sl})
		}
	}
	return out, nil
}

// Breakdown is validate's account of a bundle replay's error: the share
// of starts within ±5 s overall, per partition, per user and per size
// class; every start off by more than that put down to a cause; the
// starts of largest error with their recorded and simulated reasons; and
// the jobs whose inputs could not be recovered, by cause.
type Breakdown struct {
	Bundle string `json:"bundle"`
	Policy string `json:"policy"`
	// Epoch is the Unix time of the replay clock's 0; times below count
	// from it.
	Epoch int64 `json:"epoch"`
	// Jobs counts the replayed jobs (not the runs made to occupy nodes),
	// Starts the compared starts (first runs, and final runs of requeued
	// jobs).
	Jobs   int   `json:"jobs"`
	Starts int   `json:"starts"`
	All    Group `json:"all"`
	// Partitions, Users and Sizes break All down; a job of several
	// partitions counts under the one it ran in.
	Partitions []Group `json:"partitions"`
	Users      []Group `json:"users"`
	Sizes      []Group `json:"sizes"`
	// Causes puts every start down to one cause, largest first.
	Causes []CauseGroup `json:"causes"`
	// Worst are the starts of largest |Δ| (never-started first).
	Worst []WorstStart `json:"worst"`
	// Unrecovered counts the jobs whose inputs could not all be
	// recovered, by cause; UnrecoveredJobs lists them.
	Unrecovered     []CauseCount  `json:"unrecovered"`
	UnrecoveredJobs []Unrecovered `json:"unrecovered_jobs"`
	Notes           []string      `json:"notes"`
}

// Group is the agreement of a set of starts.
type Group struct {
	Name string `json:"name"`
	// Starts compared, Within those within ±5 s, Share = Within/Starts.
	Starts int     `json:"starts"`
	Within int     `json:"within_5s"`
	Share  float64 `json:"share_within_5s"`
	// Late and Early count starts more than 5 s after or before the
	// recorded one; Missing those one side never made.
	Late    int `json:"late"`
	Early   int `json:"early"`
	Missing int `json:"missing"`
	// MeanDelta is the mean simulated − recorded start (s) and
	// MedianAbsDelta, P95AbsDelta the type 7 quantiles of |Δ|, over the
	// starts both sides made; -1 when there are none.
	MeanDelta      float64 `json:"mean_delta_s"`
	MedianAbsDelta float64 `json:"median_abs_delta_s"`
	P95AbsDelta    float64 `json:"p95_abs_delta_s"`
}

// CauseGroup counts the starts put down to one cause.
type CauseGroup struct {
	Cause  string `json:"cause"`
	Starts int    `json:"starts"`
	// MeanDelta is their mean simulated − recorded start (s); 0 for
	// starts one side never made.
	MeanDelta float64 `json:"mean_delta_s"`
}

// WorstStart is one start of large error.
type WorstStart struct {
	Job       string `json:"job"`
	Rerun     bool   `json:"rerun"`
	Name      string `json:"name"`
	User      string `json:"user"`
	Partition string `json:"partition"`
	// Submit is the recorded sbatch time (UTC); the starts count from the
	// replay's epoch (-1: never started on that side), Delta is their
	// difference.
	Submit    string `json:"submit"`
	Recorded  int64  `json:"recorded_start_s"`
	Simulated int64  `json:"simulated_start_s"`
	Delta     int64  `json:"delta_s"`
	// RecordedReason is sacct's Reason (the last reason Slurm had it
	// pending for); SimulatedReasons the simulation's pending reasons as
	// REASON@SECONDS after submit.
	RecordedReason   string   `json:"recorded_reason"`
	SimulatedReasons []string `json:"simulated_reasons"`
	Cause            string   `json:"cause"`
}

// Cause names.
const (
	CauseWithin       = "within ±5 s"
	CauseLatePriority = "later: simulated priority ranked it lower"
	CauseLateBusy     = "later: resources were busy"
	CauseSimOnly      = "started in the simulation only"
	CauseRecOnly      = "never started in the simulation"
)

// modeledReasons are the pending reasons the simulation has (sim's
// PendingReason names); a recorded reason outside them is one the model
// lacks.
var modeledReasons = map[string]bool{
	"None": true, "Priority": true, "Resources": true, "Dependency": true, "DependencyNeverSatisfied": true,
	"JobArrayTaskLimit": true, "QOSMaxJobsPerUserLimit": true, "QOSMaxTRESPerUserLimit": true,
	"QOSGrpTRESLimit": true, "PartitionTimeLimit": true, "PartitionNodeLimit": true, "ReqNodeNotAvail": true,
	"BeginTime": true, "JobHeldUser": true, "JobHoldMaxRequeue": true, "": true,
}

// sizeClass names a job's size by its GPUs (CPU-only jobs by nodes).
func sizeClass(q workload.Request) string {
	g := q.GPUs
	switch {
	case g <= 0 && q.Nodes <= 1:
		return "CPU only, 1 node"
	case g <= 0:
		return "CPU only, 2+ nodes"
	case g == 1:
		return "1 GPU"
	case g <= 4:
		return "2-4 GPUs"
	case g <= 8:
		return "5-8 GPUs"
	case g <= 32:
		return "9-32 GPUs"
	case g <= 128:
		return "33-128 GPUs"
	}
	return "129+ GPUs"
}

// BreakdownOptions tunes Analyze.
type BreakdownOptions struct {
	// Worst is how many starts of largest error to list (0: 10; < 0:
	// none).
	Worst int
}

// Analyze breaks a replay's error down (rec is the simulation of rp).
func Analyze(rp *Replay, rec *sim.Record, cluster *hwmodels.Cluster, opt BreakdownOptions) (*Breakdown, error) {
	starts, err := Compare(rp, rec)
	if err != nil {
		return nil, err
	}
	if opt.Worst == 0 {
		opt.Worst = 10
	}
	bd := &Breakdown{Policy: rec.Policy, Epoch: rp.Epoch, Starts: len(starts), Notes: rp.Notes,
		Unrecovered: rp.Causes(), UnrecoveredJobs: rp.Unrecovered}
	if bd.UnrecoveredJobs == nil {
		bd.UnrecoveredJobs = []Unrecovered{}
	}
	if bd.Unrecovered == nil {
		bd.Unrecovered = []CauseCount{}
	}
	if bd.Notes == nil {
		bd.Notes = []string{}
	}
	for i := range rp.Jobs {
		if !rp.Jobs[i].Occupancy {
			bd.Jobs++
		}
	}
	// The simulation's reasons of each job, in time order.
	reasons := map[int][]sim.ReasonChange{}
	for rc := range rec.Reasons.All() {
		reasons[int(rc.Job)] = append(reasons[int(rc.Job)], rc)
	}
	reasonAt := func(job int, at int64) string {
		last := ""
		for _, rc := range reasons[job] {
			if int64(rc.At) > at {
				break
			}
			last = rc.Reason.String()
		}
		return last
	}
	partOf := func(i int) string {
		if p := rec.Jobs[i].Part; cluster != nil && p >= 0 && int(p) < len(cluster.Partitions) {
			return cluster.Partitions[p].Name
		}
		return rp.Trace.Jobs[i].Partition
	}
	cause := make([]string, len(starts))
	byPart, byUser, bySize := map[string][]Start{}, map[string][]Start{}, map[string][]Start{}
	causeStarts := map[string][]Start{}
	for k, s := range starts {
		j := &rp.Trace.Jobs[s.Job]
		rj := &rp.Jobs[s.Job]
		d, ok := s.Delta()
		switch {
		case !ok && s.Recorded >= 0:
			cause[k] = CauseRecOnly
		case !ok && s.Simulated >= 0:
			cause[k] = CauseSimOnly
		case !ok:
			cause[k] = "started on neither side"
		case d >= -Tolerance && d <= Tolerance:
			cause[k] = CauseWithin
		case !modeledReasons[rj.Reason]:
			dir := "later"
			if d < 0 {
				dir = "earlier"
			}
			cause[k] = fmt.Sprintf("%s: the record's reason %s is not modeled", dir, rj.Reason)
		case d > 0:
			switch r := reasonAt(s.Job, s.Recorded); r {
			case "Priority":
				cause[k] = CauseLatePriority
			case "Resources":
				cause[k] = CauseLateBusy
			case "", "None":
				cause[k] = "later: not yet pending at the recorded start"
			default:
				cause[k] = "later: pending for " + r + " in the simulation"
			}
		default:
			r := rj.Reason
			if r == "" || r == "None" {
				cause[k] = "earlier: the record shows no reason it waited"
			} else {
				cause[k] = "earlier: the record waited for " + r
			}
		}
		byPart[partOf(s.Job)] = append(byPart[partOf(s.Job)], s)
		byUser[j.User] = append(byUser[j.User], s)
		bySize[sizeClass(j.Request)] = append(bySize[sizeClass(j.Request)], s)
		causeStarts[cause[k]] = append(causeStarts[cause[k]], s)
	}
	bd.All = group("all", starts)
	for _, m := range []struct {
		in  map[string][]Start
		out *[]Group
	}{{byPart, &bd.Partitions}, {byUser, &bd.Users}, {bySize, &bd.Sizes}} {
		*m.out = []Group{}
		for _, name := range sortedKeys(m.in) {
			*m.out = append(*m.out, group(name, m.in[name]))
		}
	}
	bd.Causes = []CauseGroup{}
	for _, c := range sortedKeys(causeStarts) {
		ss := causeStarts[c]
		g := CauseGroup{Cause: c, Starts: len(ss)}
		n := 0
		for _, s := range ss {
			if d, ok := s.Delta(); ok {
				g.MeanDelta += float64(d)
				n++
			}
		}
		if n > 0 {
			g.MeanDelta /= float64(n)
		}
		bd.Causes = append(bd.Causes, g)
	}
	slices.SortStableFunc(bd.Causes, func(a, b CauseGroup) int { return cmp.Compare(b.Starts, a.Starts) })
	// The worst starts: never-started first, then by |Δ|, then by job.
	order := make([]int, 0, len(starts))
	for k, s := range starts {
		if cause[k] != CauseWithin && (s.Recorded >= 0 || s.Simulated >= 0) {
			order = append(order, k)
		}
	}
	score := func(s Start) int64 {
		if d, ok := s.Delta(); ok {
			return max(d, -d)
		}
		return math.MaxInt64
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(score(starts[b]), score(starts[a])), cmp.Compare(a, b))
	})
	if opt.Worst > 0 {
		order = order[:min(len(order), opt.Worst)]
	} else {
		order = nil
	}
	bd.Worst = []WorstStart{}
	for _, k := range order {
		s := starts[k]
		j := &rp.Trace.Jobs[s.Job]
		rj := &rp.Jobs[s.Job]
		d, _ := s.Delta()
		w := WorstStart{Job: j.ID, Rerun: s.Rerun, Name: j.Name, User: j.User, Partition: partOf(s.Job),
			Submit: rp.ClockTime(rj.Submit), Recorded: s.Recorded, Simulated: s.Simulated, Delta: d,
			RecordedReason: rj.Reason, SimulatedReasons: []string{}, Cause: cause[k]}
		if w.RecordedReason == "" {
			w.RecordedReason = "-"
		}
		for _, rc := range reasons[s.Job] {
			w.SimulatedReasons = append(w.SimulatedReasons, fmt.Sprintf("%s@%d", rc.Reason, int64(rc.At)-int64(rj.Submit)))
		}
		bd.Worst = append(bd.Worst, w)
	}
	return bd, nil
}

// group computes the agreement of starts.
func group(name string, ss []Start) Group {
	g := Group{Name: name, Starts: len(ss), MeanDelta: -1, MedianAbsDelta: -1, P95AbsDelta: -1}
	var abs []float64
	var sum float64
	for _, s := range ss {
		d, ok := s.Delta()
		if !ok {
			if s.Recorded >= 0 || s.Simulated >= 0 {
				g.Missing++
			}
			continue
		}
		sum += float64(d)
		abs = append(abs, math.Abs(float64(d)))
		switch {
		case d > Tolerance:
			g.Late++
		case d < -Tolerance:
			g.Early++
		default:
			g.Within++
		}
	}
	if g.Starts > 0 {
		g.Share = float64(g.Within) / float64(g.Starts)
	}
	if len(abs) > 0 {
		slices.Sort(abs)
		g.MeanDelta = sum / float64(len(abs))
		g.MedianAbsDelta = workload.Quantile(abs, 0.5)
		g.P95AbsDelta = workload.Quantile(abs, 0.95)
	}
	return g
}

// Table is one table of a breakdown, as text cells: Header names the
// columns (the first one the table's title in the text form), Num marks
// the numeric ones. The text form and validate.html show the same
// tables.
type Table struct {
	ID, Title string
	Header    []string
	Num       []bool
	Rows      [][]string
}

// Tables returns the breakdown's tables: the agreement overall, per
// partition, user and size class, the causes, the starts of largest
// error (when any) and the unrecovered inputs (when any).
func (bd *Breakdown) Tables() []Table {
	var out []Table
	groups := func(id, title, col string, gs []Group) {
		t := Table{ID: id, Title: title,
			Header: []string{col, "starts", "within ±5 s", "late", "early", "missing", "mean Δ", "median |Δ|", "p95 |Δ|"},
			Num:    []bool{false, true, true, true, true, true, true, true, true}}
		for _, g := range gs {
			n := g.Starts - g.Missing
			t.Rows = append(t.Rows, []string{g.Name, strconv.Itoa(g.Starts), fmt.Sprintf("%d (%.0f%%)", g.Within, 100*g.Share),
				strconv.Itoa(g.Late), strconv.Itoa(g.Early), strconv.Itoa(g.Missing),
				secs(g.MeanDelta, n, true), secs(g.MedianAbsDelta, n, false), secs(g.P95AbsDelta, n, false)})
		}
		out = append(out, t)
	}
	groups("bundle-all", "All starts", "", []Group{bd.All})
	groups("bundle-partitions", "Per partition", "partition", bd.Partitions)
	groups("bundle-users", "Per user", "user", bd.Users)
	groups("bundle-sizes", "Per size class", "size", bd.Sizes)
	causes := Table{ID: "bundle-causes", Title: "Per cause", Header: []string{"cause", "starts", "mean Δ"}, Num: []bool{false, true, true}}
	for _, c := range bd.Causes {
		causes.Rows = append(causes.Rows, []string{c.Cause, strconv.Itoa(c.Starts), fmt.Sprintf("%+.1f s", c.MeanDelta)})
	}
	out = append(out, causes)
	if len(bd.Worst) > 0 {
		t := Table{ID: "bundle-worst", Title: "Starts of largest error",
			Header: []string{"largest errors", "submit (UTC)", "recorded start", "simulated start", "Δ", "recorded reason", "simulated reasons (s after submit)", "cause"},
			Num:    []bool{false, false, true, true, true, false, false, false}}
		for _, ws := range bd.Worst {
			id := ws.Job
			if ws.Rerun {
				id += " (rerun)"
			}
			d := fmt.Sprintf("%+d s", ws.Delta)
			if ws.Recorded < 0 || ws.Simulated < 0 {
				d = "-"
			}
			rs := ws.SimulatedReasons
			if len(rs) > maxShownReasons {
				rs = append([]string{fmt.Sprintf("(%d earlier)", len(rs)-maxShownReasons)}, rs[len(rs)-maxShownReasons:]...)
			}
			t.Rows = append(t.Rows, []string{id, ws.Submit, startStr(ws.Recorded), startStr(ws.Simulated), d, ws.RecordedReason, strings.Join(rs, " "), ws.Cause})
		}
		out = append(out, t)
	}
	if len(bd.Unrecovered) > 0 {
		t := Table{ID: "bundle-unrecovered", Title: "Inputs not recovered", Header: []string{"inputs not recovered", "jobs", "first jobs"}, Num: []bool{false, true, false}}
		for _, c := range bd.Unrecovered {
			var first []string
			for _, u := range bd.UnrecoveredJobs {
				if u.Cause == c.Cause && len(first) < 5 {
					s := u.Job
					if u.Detail != "" {
						s += " (" + u.Detail + ")"
					}
					first = append(first, s)
				}
			}
			t.Rows = append(t.Rows, []string{c.Cause, strconv.Itoa(c.Jobs), strings.Join(first, ", ")})
		}
		out = append(out, t)
	}
	return out
}

// Meaning says what the breakdown's figures mean, for the text form and
// the page.
func (bd *Breakdown) Meaning() string { return strings.Join(bd.meaningLines(), " ") }

// meaningLines is Meaning as the text form breaks it.
func (bd *Breakdown) meaningLines() []string {
	return []string{
		fmt.Sprintf("%d jobs replayed, %d starts compared (every job's first run, and the final run of a requeued job).", bd.Jobs, bd.Starts),
		fmt.Sprintf("A start agrees when the simulated one is within ±%d s of the one sacct recorded; late/early: more than %d s after/before it;", Tolerance, Tolerance),
		fmt.Sprintf("missing: one side never started it. Δ is simulated − recorded, in seconds; starts count from the first submit, %s UTC.",
			time.Unix(bd.Epoch, 0).UTC().Format("2006-01-02T15:04:05")),
	}
}

// Headline says in at most three sentences what the breakdown finds: the
// share of starts within ±5 s, the largest cause of the rest, and the
// jobs whose inputs were not recovered.
func (bd *Breakdown) Headline() string {
	var b strings.Builder
	if bd.Starts == 0 {
		b.WriteString("The bundle has no start to compare.")
	} else {
		fmt.Fprintf(&b, "Replayed from the records bundle alone under %s, %d of %d starts (%.0f %%) are within ±%d s of the recorded ones.",
			bd.Policy, bd.All.Within, bd.Starts, 100*bd.All.Share, Tolerance)
	}
	for _, c := range bd.Causes {
		if c.Cause != CauseWithin {
			fmt.Fprintf(&b, " Of the other %d, %d (mean Δ %+.0f s) fall under the largest cause, “%s”.", bd.Starts-bd.All.Within, c.Starts, c.MeanDelta, c.Cause)
			break
		}
	}
	if n := len(bd.UnrecoveredJobs); n == 0 {
		b.WriteString(" Every job's inputs were recovered.")
	} else {
		jobs := map[string]bool{}
		for _, u := range bd.UnrecoveredJobs {
			jobs[u.Job] = true
		}
		fmt.Fprintf(&b, " %d jobs' inputs were not all recovered (%d causes; see the table).", len(jobs), len(bd.Unrecovered))
	}
	return b.String()
}

// WriteText writes the breakdown as plain-text tables, with what the
// figures mean.
func WriteText(w io.Writer, bd *Breakdown) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	m := bd.meaningLines()
	fmt.Fprintf(tw, "%s\n%s\n%s\n\n", m[0], m[1], m[2])
	for _, t := range bd.Tables() {
		fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
		for _, r := range t.Rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		if t.ID != "bundle-unrecovered" {
			fmt.Fprintln(tw)
		}
	}
	if len(bd.Unrecovered) == 0 {
		fmt.Fprintln(tw, "Every job's inputs were recovered from the bundle.")
	}
	if len(bd.Notes) > 0 {
		fmt.Fprintln(tw, "\nread from the bundle:")
		for _, n := range bd.Notes {
			fmt.Fprintf(tw, "  %s\n", n)
		}
	}
	return tw.Flush()
}

// maxShownReasons is how many of a job's last simulated reasons the text
// table shows (the JSON has them all).
const maxShownReasons = 5

func secs(v float64, n int, signed bool) string {
	if n <= 0 {
		return "-"
	}
	if signed {
		return fmt.Sprintf("%+.1f s", v)
	}
	return fmt.Sprintf("%.0f s", v)
}

func startStr(t int64) string {
	if t < 0 {
		return "never"
	}
	return fmt.Sprintf("%d s", t)
}
