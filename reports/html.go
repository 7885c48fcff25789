package reports

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
)

// ReportInput is what report.html shows: the summary (as summary.json
// holds it), the figures and the scenario text.
type ReportInput struct {
	Summary  []byte // summary.json
	Figures  []Figure
	Scenario []byte // the effective scenario, YAML; may be empty
}

type htmlRow struct{ Label, Value, Note, Class string }

type htmlFigure struct {
	Name, Title string
	SVG         template.HTML
}

type htmlPage struct {
	Head       pageHead
	Rows       []htmlRow
	Partitions []jsonPartition
	// Idle names the partitions no job went to, left out of the table.
	Idle      string
	SizeClass []jsonGroup
	Accounts  []jsonAccount
	Figures   []htmlFigure
	Scenario  string
}

var reportTmpl = pageTemplate("report", `{{template "head" .Head}}<h2 id="summary">Summary</h2>
<table id="summary-table">
{{range .Rows}}<tr><th>{{.Label}}</th><td class="num">{{.Value}}</td><td class="note{{with .Class}} {{.}}{{end}}">{{.Note}}</td></tr>
{{end}}</table>
<h2 id="partitions">Partitions</h2>
<table id="partition-table">
<tr><th>Partition</th><th class="num">Jobs</th><th class="num">Started</th><th class="num">Wait mean</th><th class="num">p50</th><th class="num">p90</th><th class="num">p95</th><th class="num">p99</th><th class="num">max</th></tr>
{{range .Partitions}}<tr><td>{{.Name}}</td><td class="num">{{.Jobs}}</td><td class="num">{{.Started}}</td>{{if .Started}}<td class="num">{{dur .Wait.Mean}}</td><td class="num">{{dur .Wait.P50}}</td><td class="num">{{dur .Wait.P90}}</td><td class="num">{{dur .Wait.P95}}</td><td class="num">{{dur .Wait.P99}}</td><td class="num">{{dur .Wait.Max}}</td>{{else}}<td class="num" colspan="6">no job started</td>{{end}}</tr>
{{end}}</table>
{{if .Idle}}<p class="note" id="idle-partitions">No job went to {{.Idle}}.</p>
{{end}}<h2 id="sizes">Wait by job size</h2>
<table id="size-table">
<tr><th>GPUs requested</th><th class="num">Jobs</th><th class="num">Started</th><th class="num">Wait mean</th><th class="num">p50</th><th class="num">p90</th><th class="num">p95</th><th class="num">p99</th><th class="num">max</th></tr>
{{range .SizeClass}}<tr><td>{{.Name}}</td><td class="num">{{.Jobs}}</td><td class="num">{{.Wait.Count}}</td><td class="num">{{dur .Wait.Mean}}</td><td class="num">{{dur .Wait.P50}}</td><td class="num">{{dur .Wait.P90}}</td><td class="num">{{dur .Wait.P95}}</td><td class="num">{{dur .Wait.P99}}</td><td class="num">{{dur .Wait.Max}}</td></tr>
{{end}}</table>
<h2 id="accounts">GPU-hours by account</h2>
<table id="account-table">
<tr><th>Account</th><th class="num">GPU-hours</th><th class="num">Share</th><th class="num">Fair-share target</th></tr>
{{range .Accounts}}<tr><td>{{.Name}}</td><td class="num">{{printf "%.1f" .GPUHours}}</td><td class="num">{{pct .Share}}</td><td class="num">{{pct .Target}}</td></tr>
{{end}}</table>
<h2 id="plots">Plots</h2>
{{template "figures" .Figures}}<h2 id="scenario">Scenario</h2>
<details id="scenario-details"><summary>The effective scenario (YAML), as scenario.yaml holds it</summary>
<pre id="scenario-text">{{.Scenario}}</pre>
</details>
</body>
</html>
`)

// WriteReport writes report.html: one self-contained page (inline CSS and
// SVG, no script, nothing fetched) with the summary, per-partition,
// job-size and account tables, every figure and the scenario. The same
// input gives the same bytes.
func WriteReport(w io.Writer, in ReportInput) error {
	var s jsonSummary
	if err := json.Unmarshal(in.Summary, &s); err != nil {
		return fmt.Errorf("report: summary: %w", err)
	}
	page := htmlPage{
		Head:      pageHead{Title: fmt.Sprintf("schedsim report: %s on %s", orNone(s.Policy), orNone(s.Cluster.Name)), Headline: runHeadline(&s)},
		SizeClass: s.WaitBy.SizeClass,
		Accounts:  s.Fairness.Accounts,
		Scenario:  string(in.Scenario),
	}
	var idle []string
	for _, p := range s.Partitions {
		if p.Jobs == 0 {
			idle = append(idle, p.Name)
			continue
		}
		page.Partitions = append(page.Partitions, p)
	}
	page.Idle = strings.Join(idle, ", ")
	if page.Scenario == "" {
		page.Scenario = "(not recorded)"
	}
	pct := func(f fixed) string { return strconv.FormatFloat(100*float64(f), 'f', 2, 64) + " %" }
	num := func(f fixed, d int) string { return strconv.FormatFloat(float64(f), 'f', d, 64) }
	row := func(label, value, note string) {
		page.Rows = append(page.Rows, htmlRow{Label: label, Value: value, Note: note})
	}
	row("Policy", orNone(s.Policy), fmt.Sprintf("seed %d", s.Seed))
	row("Config hash", "", orNone(s.ConfigHash))
	page.Rows[len(page.Rows)-1].Class = "hash"
	row("Cluster", orNone(s.Cluster.Name), fmt.Sprintf("%d nodes, %d GPUs, %d CPUs, %d partitions",
		s.Cluster.Nodes, s.Cluster.GPUs, s.Cluster.CPUs, s.Cluster.Partitions))
	row("Trace", strconv.Itoa(s.Trace.Jobs)+" jobs", orNone(s.Trace.Source))
	row("Epoch", s.Trace.EpochUTC, "simulated time 0")
	bs := s.Jobs.ByState
	row("Started", strconv.Itoa(s.Jobs.Started), fmt.Sprintf("completed %d, timeout %d, cancelled %d, rejected %d, unfinished %d, preempted %d, node fail %d, failed %d, out of memory %d, boot fail %d, deadline %d",
		bs.Completed, bs.Timeout, bs.Cancelled, bs.Rejected, bs.Unfinished, bs.Preempted, bs.NodeFail,
		bs.Failed, bs.OutOfMemory, bs.BootFail, bs.Deadline))
	row("Makespan", FormatSeconds(float64(s.Window.MakespanS)), "first submit to last end")
	row("GPU utilization", pct(s.Utilization.GPU.Fraction), "allocated / available over the makespan")
	if e := s.Utilization.GPUEffective; e != nil {
		row("GPU utilization, effective", pct(e.Fraction), fmt.Sprintf("less %s GPU-hours lost to communication stretch in %d runs",
			num(fixed(float64(e.LostToStretchS)/3600), 1), e.StretchedRuns))
	}
	row("Node utilization", pct(s.Utilization.Node.Fraction), "")
	row("CPU utilization", pct(s.Utilization.CPU.Fraction), "")
	for _, q := range []struct {
		name string
		v    fixed
	}{{"mean", s.Wait.Mean}, {"p50", s.Wait.P50}, {"p90", s.Wait.P90}, {"p95", s.Wait.P95}, {"p99", s.Wait.P99}, {"max", s.Wait.Max}} {
		row("Wait "+q.name, FormatSeconds(float64(q.v)), num(q.v, 1)+" s")
	}
	if s.WaitDef != "" {
		row("Wait definition", "", s.WaitDef)
	}
	row("Response mean", FormatSeconds(float64(s.Response.Mean)), "end − submit")
	row("Bounded slowdown mean", num(s.Slowdown.Mean, 3), fmt.Sprintf("τ = %d s, max %s", s.Slowdown.TauS, num(s.Slowdown.Max, 3)))
	row("Throughput", num(s.Throughput.JobsPerDay, 1)+" jobs/day", num(s.Throughput.GPUHoursPerDay, 1)+" GPU-hours/day")
	row("Fairness (Jain, users' slowdown)", num(s.Fairness.JainUserSlowdown, 3), fmt.Sprintf("%d users", s.Fairness.Users))
	row("Unusable free GPUs", num(s.Fragmentation.MeanUnusableFreeGPUs, 1), fmt.Sprintf("mean of %s free GPUs; %s of free GPU time",
		num(s.Fragmentation.MeanFreeGPUs, 1), pct(s.Fragmentation.UnusableFraction)))
	if m := s.Fragmentation.MIG; m != nil {
		row("Unusable free MIG slices", num(m.MeanUnusableSlices, 1), fmt.Sprintf("mean of %s free MIG compute slices; %s of free slice time",
			num(m.MeanFreeSlices, 1), pct(m.UnusableFraction)))
	}
	row("Preemptions", strconv.Itoa(s.Preemption.Preemptions), fmt.Sprintf("%d requeues", s.Preemption.Requeues))
	row("Lost GPU-hours", num(s.Failures.LostGPUHours, 1), fmt.Sprintf("%d runs ended by node failures; the time after each run's last checkpoint", s.Failures.NodeFailRuns))
	row("Timeline", strconv.Itoa(s.Timeline.Samples)+" samples", fmt.Sprintf("every %s", FormatSeconds(float64(s.Timeline.IntervalS))))
	figs, err := inlineFigures(in.Figures)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	page.Figures = figs
	return executePage(w, reportTmpl, page)
}

// runHeadline says what a run shows in three sentences: what ran and how
// much of it started, how busy the GPUs were and how long jobs waited,
// and where the waits were longest (the size class with the largest p95
// wait) with the share of free GPU time no queued job could use.
func runHeadline(s *jsonSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s replayed %s on %s (%s) over %s; %s started",
		orNone(s.Policy), countWord(s.Jobs.Total, "job"), orNone(s.Cluster.Name), countWord(int(s.Cluster.GPUs), "GPU"),
		HumanDuration(float64(s.Window.MakespanS)), groupDigits(int64(s.Jobs.Started)))
	if n := s.Jobs.ByState.Completed; n != s.Jobs.Started {
		fmt.Fprintf(&b, " and %s completed", groupDigits(int64(n)))
	}
	b.WriteString(". ")
	fmt.Fprintf(&b, "GPUs were %s allocated", pct1(float64(s.Utilization.GPU.Fraction)))
	if s.Wait.Count > 0 {
		fmt.Fprintf(&b, "; jobs waited %s on average, %s at the median and %s at the 95th percentile",
			HumanDuration(float64(s.Wait.Mean)), HumanDuration(float64(s.Wait.P50)), HumanDuration(float64(s.Wait.P95)))
	} else {
		b.WriteString("; no job started")
	}
	b.WriteString(". ")
	worst := -1
	for i, g := range s.WaitBy.SizeClass {
		if g.Wait.Count > 0 && (worst < 0 || g.Wait.P95 > s.WaitBy.SizeClass[worst].Wait.P95) {
			worst = i
		}
	}
	if worst >= 0 {
		g := s.WaitBy.SizeClass[worst]
		fmt.Fprintf(&b, "Jobs asking for %s GPUs waited longest (p95 %s over %s)", g.Name, HumanDuration(float64(g.Wait.P95)), countWord(g.Wait.Count, "job"))
	} else {
		b.WriteString("No wait to break down by job size")
	}
	fmt.Fprintf(&b, ", and %s of free GPU time was on nodes no eligible queued job could use.", pct1(float64(s.Fragmentation.UnusableFraction)))
	return b.String()
}

// SummaryHeader holds the fields of summary.json that compare and plot
// need.
type SummaryHeader struct {
	Policy     string
	Seed       uint64
	ConfigHash string
	Epoch      int64
	GPUs, CPUs int64
	Nodes      int
	TauS       int64
	Makespan   int64
	// EnergyITKWh and EnergyPUE are the run's IT energy and PUE (summary
	// energy section); zero when the cluster had no power model.
	EnergyITKWh, EnergyPUE float64
}

// ParseSummaryHeader decodes the identity and cluster totals from
// summary.json data.
func ParseSummaryHeader(data []byte) (SummaryHeader, error) {
	var s jsonSummary
	if err := json.Unmarshal(data, &s); err != nil {
		return SummaryHeader{}, err
	}
	if s.SchemaVersion != SchemaVersion {
		return SummaryHeader{}, fmt.Errorf("schema_version %d, this build reads %d", s.SchemaVersion, SchemaVersion)
	}
	h := SummaryHeader{
		Policy: s.Policy, Seed: s.Seed, ConfigHash: s.ConfigHash, Epoch: s.Trace.Epoch,
		GPUs: s.Cluster.GPUs, CPUs: s.Cluster.CPUs, Nodes: s.Cluster.Nodes, TauS: s.Slowdown.TauS,
		Makespan: s.Window.MakespanS,
	}
	if s.Energy != nil {
		h.EnergyITKWh, h.EnergyPUE = float64(s.Energy.ITKWh), float64(s.Energy.PUE)
	}
	return h, nil
}
