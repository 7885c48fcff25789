package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/workload"
)

// The pages an operator forwards: report.html of a run (WriteReport),
// compare.html (WriteComparePage), sweep.html (WriteSweepPage) and
// validate.html (WriteValidatePage). Each is one self-contained file:
// inline CSS and SVG, no script, nothing fetched, so it opens from a mail
// attachment or a CI artifact as it is. They share one look (pageCSS and
// the plot style of style.go) and open with a headline: what the page
// says, in at most three sentences computed from the figures it shows.

// Page file names.
const (
	ComparePageFile  = "compare.html"
	SweepPageFile    = "sweep.html"
	ValidatePageFile = "validate.html"
)

const pageCSS = `body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 2em auto; max-width: 1000px; color: #222; padding: 0 1em; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.3em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
p.headline { font-size: 1.1em; background: #f2f6fa; border-left: 4px solid #0072b2; padding: 0.7em 1em; margin: 1em 0; }
table { border-collapse: collapse; margin: 0.5em 0; max-width: 100%; }
.wide { overflow-x: auto; } #compare-table, #sweep-table { font-size: 0.9em; }
td, th { padding: 0.2em 0.8em; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; overflow-wrap: break-word; }
.hash { font-family: "Liberation Mono", Menlo, Consolas, monospace; word-break: break-all; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.note { color: #666; font-size: 0.9em; }
code { font-family: "Liberation Mono", Menlo, Consolas, monospace; font-size: 0.9em; white-space: nowrap; }
td.better { color: #00734f; font-weight: bold; } td.worse { color: #b34700; font-weight: bold; } td.verdict { overflow-wrap: normal; min-width: 7em; }
.sides { display: flex; gap: 1em; flex-wrap: wrap; } .sides > div { flex: 1 1 300px; border: 1px solid #ddd; padding: 0.5em 1em; min-width: 0; }
figure { margin: 1em 0 2em 0; } figure svg { width: 100%; height: auto; display: block; }
figcaption { color: #555; font-size: 0.9em; }
details { margin: 1em 0; } summary { cursor: pointer; color: #0072b2; }
pre { background: #f6f6f6; padding: 1em; overflow-x: auto; font-size: 0.85em; }
p.note { color: #555; font-size: 0.9em; }
`

// pageTmpl holds the pieces every page uses: "head" (from <!DOCTYPE> to
// the headline, given a pageHead) and "figures" (a []htmlFigure).
var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"dur": func(f fixed) string { return FormatSeconds(float64(f)) },
	"pct": func(f fixed) string { return strconv.FormatFloat(100*float64(f), 'f', 1, 64) + " %" },
}).Parse(`{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
` + pageCSS + `</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="headline" id="headline">{{.Headline}}</p>
{{end}}{{define "figures"}}{{range .}}<figure class="plot" id="plot-{{.Name}}">
{{.SVG}}
<figcaption>{{.Title}}</figcaption>
</figure>
{{end}}{{end}}`))

// pageHead is what "head" shows.
type pageHead struct{ Title, Headline string }

// pageTemplate returns the page template body parsed along with the
// shared pieces.
func pageTemplate(name, body string) *template.Template {
	return template.Must(template.Must(pageTmpl.Clone()).New(name).Parse(body))
}

// inlineFigures draws figs as SVG for inlining.
func inlineFigures(figs []Figure) ([]htmlFigure, error) {
	out := make([]htmlFigure, 0, len(figs))
	for i := range figs {
		f := &figs[i]
		body, err := f.svgBody()
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.Name, err)
		}
		out = append(out, htmlFigure{Name: f.Name, Title: f.Title, SVG: template.HTML(body)})
	}
	return out, nil
}

// executePage renders t with data and writes it to w in one piece.
func executePage(w io.Writer, t *template.Template, data any) error {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// HumanDuration writes seconds for a sentence: "45 s", "12 min",
// "3 h 05 min", "2 d 4 h", rounded to the unit shown last.
func HumanDuration(seconds float64) string {
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) {
		return "-"
	}
	sign := ""
	if seconds < 0 {
		sign, seconds = "−", -seconds
	}
	s := int64(math.Round(seconds))
	m := (s + 30) / 60
	switch {
	case s < 60:
		return fmt.Sprintf("%s%d s", sign, s)
	case m < 60:
		return fmt.Sprintf("%s%d min", sign, m)
	case m < 24*60:
		return fmt.Sprintf("%s%d h %02d min", sign, m/60, m%60)
	}
	h := (s + 1800) / 3600
	return fmt.Sprintf("%s%d d %d h", sign, h/24, h%24)
}

// countWord writes n with thousands separators and the noun, plural
// unless n is 1: "1 job", "5,303 jobs".
func countWord(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	return groupDigits(int64(n)) + " " + noun
}

func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func pct1(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + " %" }

// ComparePageInput is what compare.html shows.
type ComparePageInput struct {
	A, B       *CompareRun
	Comparison *Comparison
	Gates      []GateResult
}

type compareSide struct {
	Label                  string
	Jobs, Started          int
	GPUs, CPUs             int64
	Makespan, Util, P95    string
	MeanWait, EnergyFigure string
}

type compareRow struct {
	Name, Doc, A, B, Diff, CI, Change, Verdict, Class string
}

type gateRow struct{ Spec, Change, Result, Class string }

type comparePage struct {
	Head    pageHead
	Method  string
	Sides   []compareSide
	Rows    []compareRow
	Gates   []gateRow
	Figures []htmlFigure
}

var compareTmpl = pageTemplate("compare", `{{template "head" .Head}}<div class="sides" id="sides">
{{range .Sides}}<div class="side"><h3>{{.Label}}</h3>
<table><tr><th>Jobs</th><td class="num">{{.Jobs}}</td></tr>
<tr><th>Started</th><td class="num">{{.Started}}</td></tr>
<tr><th>Cluster</th><td class="num">{{.GPUs}} GPUs, {{.CPUs}} CPUs</td></tr>
<tr><th>Makespan</th><td class="num">{{.Makespan}}</td></tr>
<tr><th>GPU utilization</th><td class="num">{{.Util}}</td></tr>
<tr><th>Wait mean</th><td class="num">{{.MeanWait}}</td></tr>
<tr><th>Wait p95</th><td class="num">{{.P95}}</td></tr>
{{if .EnergyFigure}}<tr><th>Facility energy</th><td class="num">{{.EnergyFigure}}</td></tr>
{{end}}</table></div>
{{end}}</div>
<h2 id="metrics">Differences, B − A</h2>
<p class="note">{{.Method}}</p>
<div class="wide"><table id="compare-table">
<tr><th>Metric</th><th class="num">A</th><th class="num">B</th><th class="num">B − A</th><th class="num">95 % interval</th><th class="num">Change</th><th>Verdict for B</th></tr>
{{range .Rows}}<tr><td title="{{.Doc}}"><code>{{.Name}}</code></td><td class="num">{{.A}}</td><td class="num">{{.B}}</td><td class="num">{{.Diff}}</td><td class="num">{{.CI}}</td><td class="num">{{.Change}}</td><td class="verdict {{.Class}}">{{.Verdict}}</td></tr>
{{end}}</table></div>
{{if .Gates}}<h2 id="gates">Gates</h2>
<table id="gate-table">
<tr><th>Gate</th><th class="num">Change</th><th>Result</th></tr>
{{range .Gates}}<tr><td><code>{{.Spec}}</code></td><td class="num">{{.Change}}</td><td class="{{.Class}}">{{.Result}}</td></tr>
{{end}}</table>
{{end}}<h2 id="plots">Plots</h2>
{{template "figures" .Figures}}</body>
</html>
`)

// WriteComparePage writes compare.html: the two runs side by side, every
// metric of the comparison with its difference, bootstrap interval and
// verdict, the gates, and the overlaid wait CDFs and GPU utilization
// (OverlayFigures). The same input gives the same bytes.
func WriteComparePage(w io.Writer, in ComparePageInput) error {
	c := in.Comparison
	metric := func(name string) MetricResult { return c.Metrics[metricIndex(name)] }
	var better, worse int
	page := comparePage{Method: fmt.Sprintf("Difference B − A with a bootstrap 95 %% percentile interval (%d resamples, seed %d, %s); the verdict is better or worse when the interval excludes zero.",
		c.Resamples, c.Seed, map[bool]string{true: "paired by job: both runs replay the same jobs", false: "unpaired: each run resampled on its own"}[c.Paired])}
	for _, r := range c.Metrics {
		class := ""
		switch r.Verdict {
		case Better:
			better++
			class = "better"
		case Worse:
			worse++
			class = "worse"
		}
		page.Rows = append(page.Rows, compareRow{Name: r.Name, Doc: r.Doc,
			A: pageValue(r.MetricSpec, r.A, false), B: pageValue(r.MetricSpec, r.B, false),
			Diff:   pageValue(r.MetricSpec, r.Diff, true),
			CI:     "[" + pageValue(r.MetricSpec, r.CILow, true) + ", " + pageValue(r.MetricSpec, r.CIHigh, true) + "]",
			Change: relChange(r), Verdict: r.Verdict, Class: class})
	}
	var broken []string
	for _, g := range in.Gates {
		row := gateRow{Spec: g.Spec, Change: gateChange(g), Result: "pass", Class: "better"}
		if g.Broken {
			row.Result, row.Class = "BROKEN", "worse"
			broken = append(broken, g.Spec)
		}
		page.Gates = append(page.Gates, row)
	}
	for k, r := range []*CompareRun{in.A, in.B} {
		side := compareSide{Label: r.Label, Jobs: len(r.Jobs), GPUs: r.GPUs, CPUs: r.CPUs}
		for i := range r.Jobs {
			if r.Jobs[i].Wait != workload.Unknown {
				side.Started++
			}
		}
		v := func(name string) string {
			m := metric(name)
			return pageValue(m.MetricSpec, []float64{m.A, m.B}[k], false)
		}
		side.Makespan = HumanDuration([]float64{metric("makespan").A, metric("makespan").B}[k])
		side.Util, side.MeanWait, side.P95 = v("gpu_util"), v("mean_wait"), v("p95_wait")
		if r.PUE > 0 {
			side.EnergyFigure = v("energy_kwh")
		}
		page.Sides = append(page.Sides, side)
	}
	p95, util := metric("p95_wait"), metric("gpu_util")
	headline := fmt.Sprintf("%s against %s: better on %d of %d metrics, worse on %d, no significant difference on the rest. "+
		"The 95th-percentile wait went from %s to %s (%s) and GPU utilization from %s to %s (%s).",
		in.B.Label, in.A.Label, better, len(c.Metrics), worse,
		HumanDuration(p95.A), HumanDuration(p95.B), p95.Verdict, pct1(util.A), pct1(util.B), util.Verdict)
	switch {
	case len(in.Gates) == 0:
	case len(broken) == 0:
		headline += fmt.Sprintf(" All %d gates pass.", len(in.Gates))
	default:
		headline += fmt.Sprintf(" %d of %d gates broken: %s.", len(broken), len(in.Gates), strings.Join(broken, ", "))
	}
	page.Head = pageHead{Title: "schedsim compare: " + in.A.Label + " vs " + in.B.Label, Headline: headline}
	figs, err := inlineFigures(OverlayFigures(in.A, in.B))
	if err != nil {
		return fmt.Errorf("compare page: %w", err)
	}
	page.Figures = figs
	return executePage(w, compareTmpl, page)
}

// pageValue is formatValue with durations in human units (HumanDuration;
// a difference signed).
func pageValue(spec MetricSpec, v float64, diff bool) string {
	if spec.Unit != "s" {
		return formatValue(spec, v, diff)
	}
	if diff {
		return signedDuration(v)
	}
	return HumanDuration(v)
}

// ValidatePageInput is what validate.html shows besides the validation.
type ValidatePageInput struct {
	Validation *Validation
	// Trace and Cluster name what was replayed, for the title.
	Trace, Cluster string
	// Breakdown, when not nil, is a records bundle's breakdown of the
	// error (validate BUNDLE): its headline replaces the page's, and its
	// tables follow the agreement table.
	Breakdown *PageBreakdown
}

// PageBreakdown is the error breakdown validate.html shows for a records
// bundle (the bundle package computes it; Headline and Meaning are its
// sentences, Tables its tables, Notes what the replay read from where).
type PageBreakdown struct {
	Headline, Meaning string
	Tables            []PageTable
	Notes             []string
}

// PageTable is a table of text cells: Header names the columns, Num
// marks the numeric ones (right-aligned); ID is the table's element id.
type PageTable struct {
	ID, Title string
	Header    []string
	Num       []bool
	Rows      [][]string
}

type validateRow struct {
	Name                        string
	Jobs                        int
	WithinBf, Within5, Within1h string
	Median, P95                 string
}

type worstRow struct {
	ID, Partition, Recorded, Simulated, Delta, Reasons string
}

type validatePage struct {
	Head       pageHead
	Breakdown  *PageBreakdown
	BfInterval int64
	Counts     string
	Tau        string
	Overall    validateRow
	Partitions []validateRow
	Worst      []worstRow
	Figures    []htmlFigure
}

var validateTmpl = pageTemplate("validate", `{{template "head" .Head}}<h2 id="agreement">Agreement of simulated and recorded starts</h2>
<p class="note">{{.Counts}} The columns give the share of jobs whose simulated start is within ±{{.BfInterval}} s (one bf_interval), ±5 min and ±1 h of the recorded one, and quantiles of |Δstart|. Kendall's tau-b of the start order: {{.Tau}}.</p>
<div class="wide"><table id="agreement-table">
<tr><th>Partition</th><th class="num">Jobs</th><th class="num" title="bf_interval">±{{.BfInterval}} s</th><th class="num">±5 min</th><th class="num">±1 h</th><th class="num">median |Δ|</th><th class="num">p95 |Δ|</th></tr>
{{with .Overall}}<tr><th>all</th><td class="num">{{.Jobs}}</td><td class="num">{{.WithinBf}}</td><td class="num">{{.Within5}}</td><td class="num">{{.Within1h}}</td><td class="num">{{.Median}}</td><td class="num">{{.P95}}</td></tr>
{{end}}{{range .Partitions}}<tr><td>{{.Name}}</td><td class="num">{{.Jobs}}</td><td class="num">{{.WithinBf}}</td><td class="num">{{.Within5}}</td><td class="num">{{.Within1h}}</td><td class="num">{{.Median}}</td><td class="num">{{.P95}}</td></tr>
{{end}}</table></div>
{{with .Breakdown}}<h2 id="breakdown">Where the error comes from</h2>
<p class="note">{{.Meaning}}</p>
{{range .Tables}}<h3>{{.Title}}</h3>
<div class="wide"><table id="{{.ID}}">
<tr>{{$num := .Num}}{{range $i, $h := .Header}}<th{{if index $num $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if index $num $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table></div>
{{end}}{{if .Notes}}<details id="bundle-notes"><summary>What the replay read from the bundle</summary>
<ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>
</details>
{{end}}{{end}}<h2 id="plots">Plots</h2>
{{template "figures" .Figures}}{{if .Worst}}<h2 id="worst">Jobs with the largest start error</h2>
<div class="wide"><table id="worst-table">
<tr><th>Job</th><th>Partition</th><th class="num">Recorded wait</th><th class="num">Simulated wait</th><th class="num">Δstart</th><th>Simulated pending reasons (reason@s after submit)</th></tr>
{{range .Worst}}<tr><td>{{.ID}}</td><td>{{.Partition}}</td><td class="num">{{.Recorded}}</td><td class="num">{{.Simulated}}</td><td class="num">{{.Delta}}</td><td class="note">{{.Reasons}}</td></tr>
{{end}}</table></div>
{{end}}</body>
</html>
`)

// WriteValidatePage writes validate.html: the agreement of simulated and
// recorded starts overall and per partition, the wait scatter and the
// distribution of |Δstart| (ValidationFigures), and the worst jobs with
// their simulated pending reasons. The same input gives the same bytes.
func WriteValidatePage(w io.Writer, in ValidatePageInput) error {
	v := in.Validation
	row := func(name string, a Agreement) validateRow {
		return validateRow{Name: orNone(name), Jobs: a.Jobs, WithinBf: pct1(a.WithinBfInterval), Within5: pct1(a.Within5Min),
			Within1h: pct1(a.Within1Hour), Median: HumanDuration(a.MedianAbsDelta), P95: HumanDuration(a.P95AbsDelta)}
	}
	tau := "-"
	if !math.IsNaN(v.KendallTau) {
		tau = strconv.FormatFloat(v.KendallTau, 'f', 3, 64) + " over " + countWord(v.TauJobs, "job")
	}
	page := validatePage{
		BfInterval: int64(v.BfInterval),
		Counts: fmt.Sprintf("%s compared (started in the trace and in the run); %s never started in the trace; %s started in the trace but not in the run.",
			countWord(v.Compared, "job"), groupDigits(int64(v.NoRecordedStart)), groupDigits(int64(v.NotStarted))),
		Tau:     tau,
		Overall: row("all", v.Agreement),
	}
	worstPart := -1
	for i, p := range v.Partitions {
		page.Partitions = append(page.Partitions, row(p.Partition, p.Agreement))
		if worstPart < 0 || p.Within5Min < v.Partitions[worstPart].Within5Min {
			worstPart = i
		}
	}
	for _, j := range v.Worst {
		page.Worst = append(page.Worst, worstRow{ID: j.ID, Partition: orNone(j.Partition),
			Recorded: HumanDuration(float64(j.Recorded - j.Submit)), Simulated: HumanDuration(float64(j.Simulated - j.Submit)),
			Delta: signedDuration(float64(j.Delta)), Reasons: strings.Join(j.Reasons, " ")})
	}
	var b strings.Builder
	if v.Compared == 0 {
		b.WriteString("No job started both in the trace and in the run, so there are no starts to compare.")
	} else {
		fmt.Fprintf(&b, "Of %s compared, %s started within ±%d s (bf_interval) of their recorded start, %s within 5 min and %s within 1 h; the median |Δstart| is %s, the 95th percentile %s.",
			countWord(v.Compared, "job"), pct1(v.WithinBfInterval), v.BfInterval, pct1(v.Within5Min), pct1(v.Within1Hour),
			HumanDuration(v.MedianAbsDelta), HumanDuration(v.P95AbsDelta))
		if !math.IsNaN(v.KendallTau) {
			fmt.Fprintf(&b, " The simulated start order agrees with the recorded one at Kendall's tau %s.", strconv.FormatFloat(v.KendallTau, 'f', 3, 64))
		}
		if len(v.Partitions) > 1 {
			p := v.Partitions[worstPart]
			fmt.Fprintf(&b, " Partition %s agrees least: %s of its %s within 5 min.", orNone(p.Partition), pct1(p.Within5Min), countWord(p.Jobs, "job"))
		}
	}
	title := "schedsim validate: " + orNone(v.Policy)
	if in.Trace != "" {
		title += " replaying " + in.Trace
	}
	if in.Cluster != "" {
		title += " on " + in.Cluster
	}
	headline := b.String()
	if in.Breakdown != nil {
		page.Breakdown = in.Breakdown
		page.Worst = nil // the breakdown lists them, with the recorded reasons
		if in.Breakdown.Headline != "" {
			headline = in.Breakdown.Headline
		}
		for _, t := range in.Breakdown.Tables {
			if len(t.Num) != len(t.Header) {
				return fmt.Errorf("validate page: table %s: %d columns, %d numeric flags", t.ID, len(t.Header), len(t.Num))
			}
			for _, r := range t.Rows {
				if len(r) != len(t.Header) {
					return fmt.Errorf("validate page: table %s: a row of %d cells under %d columns", t.ID, len(r), len(t.Header))
				}
			}
		}
	}
	page.Head = pageHead{Title: title, Headline: headline}
	figs, err := inlineFigures(ValidationFigures(v))
	if err != nil {
		return fmt.Errorf("validate page: %w", err)
	}
	page.Figures = figs
	return executePage(w, validateTmpl, page)
}

func signedDuration(v float64) string {
	if v > 0 {
		return "+" + HumanDuration(v)
	}
	return HumanDuration(v)
}

// SweepMetric is one metric of a sweep page.
type SweepMetric struct {
	Name, Doc string
	// Seconds marks a duration (shown in human units); Fraction a share
	// (shown in percent).
	Seconds, Fraction bool
	// Better is -1 when lower is better, +1 when higher is, 0 when
	// neither (no best configuration is named).
	Better int
}

// SweepConfig is one combination of the swept parameters, its seeds
// aggregated: Mean, Lo and Hi hold each metric's mean, minimum and
// maximum over Seeds runs, indexed like SweepPageInput.Metrics.
type SweepConfig struct {
	Label        string // "policy=easy, load_scale=0.8"
	Seeds        int
	Mean, Lo, Hi []float64
}

// SweepPageInput is what sweep.html shows.
type SweepPageInput struct {
	Name      string
	Params    []string // the swept parameters
	Scenarios int
	Metrics   []SweepMetric
	Configs   []SweepConfig
	Figures   []Figure
}

type sweepBest struct {
	Metric, Doc, Best, BestValue, Worst, WorstValue string
}

type sweepPage struct {
	Head    pageHead
	Method  string
	Best    []sweepBest
	Metrics []SweepMetric
	Rows    []sweepRow
	Figures []htmlFigure
}

type sweepRow struct {
	Label  string
	Seeds  int
	Values []string
}

var sweepTmpl = pageTemplate("sweep", `{{template "head" .Head}}<p class="note">{{.Method}}</p>
{{if .Best}}<h2 id="best">Best configuration per metric</h2>
<div class="wide"><table id="best-table">
<tr><th>Metric</th><th>Best</th><th class="num">Mean (seed range)</th><th>Worst</th><th class="num">Mean (seed range)</th></tr>
{{range .Best}}<tr><td title="{{.Doc}}"><code>{{.Metric}}</code></td><td>{{.Best}}</td><td class="num">{{.BestValue}}</td><td>{{.Worst}}</td><td class="num">{{.WorstValue}}</td></tr>
{{end}}</table></div>
{{end}}<h2 id="configurations">Configurations</h2>
<div class="wide"><table id="sweep-table">
<tr><th>Configuration</th><th class="num">Seeds</th>{{range .Metrics}}<th class="num" title="{{.Doc}}"><code>{{.Name}}</code></th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Label}}</td><td class="num">{{.Seeds}}</td>{{range .Values}}<td class="num">{{.}}</td>{{end}}</tr>
{{end}}</table></div>
<h2 id="plots">Plots</h2>
{{template "figures" .Figures}}</body>
</html>
`)

// WriteSweepPage writes sweep.html: the best and worst configuration for
// each metric with a direction (by the mean over seeds; ties go to the
// first in sweep order), every configuration's means, and the figures
// (each metric against each swept parameter with its seed band). The
// same input gives the same bytes.
func WriteSweepPage(w io.Writer, in SweepPageInput) error {
	value := func(m SweepMetric, v float64) string {
		switch {
		case math.IsNaN(v):
			return "-"
		case m.Seconds:
			return HumanDuration(v)
		case m.Fraction:
			return pct1(v)
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	withRange := func(m SweepMetric, c *SweepConfig, k int) string {
		s := value(m, c.Mean[k])
		if c.Seeds > 1 {
			s += " (" + value(m, c.Lo[k]) + " – " + value(m, c.Hi[k]) + ")"
		}
		return s
	}
	page := sweepPage{Metrics: in.Metrics}
	seeds := 0
	for i := range in.Configs {
		c := &in.Configs[i]
		seeds = max(seeds, c.Seeds)
		row := sweepRow{Label: c.Label, Seeds: c.Seeds}
		for k, m := range in.Metrics {
			row.Values = append(row.Values, withRange(m, c, k))
		}
		page.Rows = append(page.Rows, row)
	}
	var sentences []string
	for k, m := range in.Metrics {
		if m.Better == 0 || len(in.Configs) < 2 {
			continue
		}
		best, worst := 0, 0
		for i := range in.Configs {
			v := in.Configs[i].Mean[k] * float64(m.Better)
			if v > in.Configs[best].Mean[k]*float64(m.Better) {
				best = i
			}
			if v < in.Configs[worst].Mean[k]*float64(m.Better) {
				worst = i
			}
		}
		b, wc := &in.Configs[best], &in.Configs[worst]
		page.Best = append(page.Best, sweepBest{Metric: m.Name, Doc: m.Doc, Best: b.Label, BestValue: withRange(m, b, k),
			Worst: wc.Label, WorstValue: withRange(m, wc, k)})
		if len(sentences) < 2 {
			dir := map[int]string{-1: "Lowest", 1: "Highest"}[m.Better]
			sentences = append(sentences, fmt.Sprintf("%s %s: %s (%s; worst %s, %s).",
				dir, m.Name, b.Label, value(m, b.Mean[k]), wc.Label, value(m, wc.Mean[k])))
		}
	}
	params := "nothing (one configuration)"
	if len(in.Params) > 0 {
		params = strings.Join(in.Params, ", ")
	}
	headline := fmt.Sprintf("%s swept %s: %s of up to %s each, %s in all.",
		orNone(in.Name), params, countWord(len(in.Configs), "configuration"), countWord(seeds, "seed"), countWord(in.Scenarios, "scenario"))
	if len(sentences) > 0 {
		headline += " " + strings.Join(sentences, " ")
	}
	page.Head = pageHead{Title: "schedsim sweep: " + orNone(in.Name), Headline: headline}
	page.Method = "Each value is the mean over the configuration's seeds, with the seeds' minimum – maximum in brackets; the plots draw the same mean as a line and the range as a band."
	figs, err := inlineFigures(in.Figures)
	if err != nil {
		return fmt.Errorf("sweep page: %w", err)
	}
	page.Figures = figs
	return executePage(w, sweepTmpl, page)
}
