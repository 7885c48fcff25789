package reports

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/workload"
)

// DefaultResamples is the number of bootstrap resamples Compare draws
// when CompareOptions leaves it zero. With 1000 resamples the 2.5th and
// 97.5th percentiles of the differences are read from the 25th and
// 975th of them, enough for a 95% interval (Efron and Tibshirani, "An
// Introduction to the Bootstrap", 1993, ch. 13).
const DefaultResamples = 1000

// CompareRun is one side of a comparison: a run's job rows, the
// cluster's totals and its timeline (for the overlay plots).
type CompareRun struct {
	// Label names the run in tables and legends ("A: easy").
	Label    string
	Jobs     []JobRow
	GPUs     int64
	CPUs     int64
	Timeline *Timeline
	// EnergyITKWh and PUE are the run's IT energy and PUE (Energy); zero
	// PUE means the cluster had no power model (energy_kwh is then 0).
	EnergyITKWh, PUE float64
}

// CompareOptions tunes Compare. The zero value selects the defaults.
type CompareOptions struct {
	// Resamples is the number of bootstrap resamples (default
	// DefaultResamples); Seed seeds them (the same seed gives the same
	// intervals).
	Resamples int
	Seed      uint64
}

// MetricSpec describes one compared metric.
type MetricSpec struct {
	// Name is the metric's key in gates and JSON ("p95_wait").
	Name string
	// Unit is "s", "fraction", "jobs/day", "kWh" or "" (a pure number).
	Unit string
	// LowerIsBetter says which way is better.
	LowerIsBetter bool
	// Doc says what the metric is.
	Doc string
}

// Metrics lists the metrics Compare reports, in order.
var Metrics = []MetricSpec{
	{"mean_wait", "s", true, "mean wait (start − submit) of started jobs"},
	{"p50_wait", "s", true, "median wait"},
	{"p90_wait", "s", true, "90th percentile of the wait"},
	{"p95_wait", "s", true, "95th percentile of the wait"},
	{"p99_wait", "s", true, "99th percentile of the wait"},
	{"mean_response", "s", true, "mean response (end − submit) of jobs that ended after starting"},
	{"mean_bsld", "", true, "mean bounded slowdown of finished jobs"},
	{"gpu_util", "fraction", false, "allocated GPU-seconds over the cluster's GPUs × makespan"},
	{"gpu_util_effective", "fraction", false, "allocated GPU-seconds less those lost to communication stretch, over the cluster's GPUs × makespan"},
	{"cpu_util", "fraction", false, "allocated CPU-seconds over the cluster's CPUs × makespan"},
	{"jobs_per_day", "jobs/day", false, "jobs that ended after starting, per day of makespan"},
	{"jain_fairness", "", false, "Jain's index over users' mean bounded slowdowns"},
	{"makespan", "s", true, "first submit to last end"},
	{"energy_kwh", "kWh", true, "facility energy: PUE × (the jobs' energy + the rest of the run's IT energy, held fixed when resampling)"},
}

// metricIndex returns the index of the metric called name, or -1.
func metricIndex(name string) int {
	return slices.IndexFunc(Metrics, func(m MetricSpec) bool { return m.Name == name })
}

// Verdicts.
const (
	Better        = "better"
	Worse         = "worse"
	NoSignificant = "no significant difference"
)

// MetricResult is one metric of a comparison. Diff is B − A; CILow and
// CIHigh bound its bootstrap 95% percentile interval. Verdict is Better
// or Worse (for B, against A) when the interval excludes zero, else
// NoSignificant.
type MetricResult struct {
	MetricSpec
	A, B, Diff, CILow, CIHigh float64
	Verdict                   string
}

// Comparison is the result of Compare.
type Comparison struct {
	A, B string // labels
	// Paired is true when both runs replay the same jobs (the same job
	// ids in the same order): each resample then draws the same jobs from
	// both runs. Otherwise each run is resampled on its own.
	Paired    bool
	Resamples int
	Seed      uint64
	Metrics   []MetricResult
}

// runData is a run reduced to what the metrics need, per job.
type runData struct {
	wait, resp    []float64 // NaN when absent
	sld           []float64 // NaN when absent
	gpuSec        []float64
	gpuEffSec     []float64 // gpuSec less the stretch loss
	cpuSec        []float64
	user          []int32
	users         int
	submit, end   []float64 // end NaN when the job never ran
	gpus, cpus    float64
	makespanPoint float64
	// jobKWh is each job's IT energy; restKWh the run's IT energy not
	// charged to jobs; pue its PUE (0: no power model).
	jobKWh       []float64
	restKWh, pue float64
}

func prepare(r *CompareRun) *runData {
	n := len(r.Jobs)
	d := &runData{
		wait: make([]float64, n), resp: make([]float64, n), sld: make([]float64, n),
		gpuSec: make([]float64, n), gpuEffSec: make([]float64, n), cpuSec: make([]float64, n), user: make([]int32, n),
		submit: make([]float64, n), end: make([]float64, n),
		gpus: float64(r.GPUs), cpus: float64(r.CPUs),
	}
	users := map[string]int32{}
	for i := range r.Jobs {
		j := &r.Jobs[i]
		d.wait[i], d.resp[i], d.sld[i], d.end[i] = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		if j.Wait != workload.Unknown {
			d.wait[i] = float64(j.Wait)
		}
		if j.Response != workload.Unknown {
			d.resp[i] = float64(j.Response)
		}
		if j.HasSlowdown {
			d.sld[i] = j.Slowdown
		}
		d.gpuSec[i], d.cpuSec[i] = float64(j.GPUSeconds), float64(j.CPUSeconds)
		d.gpuEffSec[i] = float64(j.GPUSeconds - j.StretchLostGPUSeconds)
		u, ok := users[j.User]
		if !ok {
			u = int32(len(users))
			users[j.User] = u
		}
		d.user[i] = u
		d.submit[i] = float64(j.Submit)
		switch {
		case j.End != workload.Unknown && j.Start != workload.Unknown:
			d.end[i] = float64(j.End)
		case j.Start != workload.Unknown:
			// Still running at the end: its run counts in GPUSeconds.
			d.end[i] = float64(j.Start) + float64(j.GPUSeconds)/math.Max(1, float64(j.AllocGPUs))
		}
	}
	d.users = len(users)
	if r.PUE > 0 {
		d.pue = r.PUE
		d.jobKWh = make([]float64, n)
		var sum float64
		for i := range r.Jobs {
			d.jobKWh[i] = r.Jobs[i].EnergyKWh
			sum += d.jobKWh[i]
		}
		d.restKWh = r.EnergyITKWh - sum
	}
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	d.makespanPoint = d.makespan(all)
	return d
}

func (d *runData) makespan(idx []int32) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, i := range idx {
		lo = math.Min(lo, d.submit[i])
		if !math.IsNaN(d.end[i]) {
			hi = math.Max(hi, d.end[i])
		}
	}
	if math.IsInf(hi, -1) || math.IsInf(lo, 1) || hi < lo {
		return 0
	}
	return hi - lo
}

// scratch is reused across resamples.
type scratch struct {
	waits    []float64
	userSum  []float64
	userN    []int32
	userSeen []int32
}

// eval computes every metric of Metrics over the jobs idx (with
// repetition) of d, into out.
func (d *runData) eval(idx []int32, sc *scratch, out []float64) {
	sc.waits = sc.waits[:0]
	var waitSum, respSum, sldSum, gpu, gpuEff, cpu float64
	var respN, sldN int
	if len(sc.userSum) < d.users {
		sc.userSum = make([]float64, d.users)
		sc.userN = make([]int32, d.users)
	}
	sc.userSeen = sc.userSeen[:0]
	for _, i := range idx {
		if w := d.wait[i]; !math.IsNaN(w) {
			sc.waits = append(sc.waits, w)
			waitSum += w
		}
		if r := d.resp[i]; !math.IsNaN(r) {
			respSum += r
			respN++
		}
		if s := d.sld[i]; !math.IsNaN(s) {
			sldSum += s
			sldN++
			u := d.user[i]
			if sc.userN[u] == 0 {
				sc.userSeen = append(sc.userSeen, u)
			}
			sc.userSum[u] += s
			sc.userN[u]++
		}
		gpu += d.gpuSec[i]
		gpuEff += d.gpuEffSec[i]
		cpu += d.cpuSec[i]
	}
	slices.Sort(sc.waits)
	q := func(p float64) float64 { return workload.Quantile(sc.waits, p) }
	mean := func(s float64, n int) float64 {
		if n == 0 {
			return 0
		}
		return s / float64(n)
	}
	// Jain's index over the users seen, in first-seen order of idx.
	var js, jq float64
	for _, u := range sc.userSeen {
		m := sc.userSum[u] / float64(sc.userN[u])
		js += m
		jq += m * m
		sc.userSum[u], sc.userN[u] = 0, 0
	}
	jain := 0.0
	if jq > 0 {
		jain = js * js / (float64(len(sc.userSeen)) * jq)
	}
	span := d.makespanPoint
	util := func(sec, total float64) float64 {
		if total*span <= 0 {
			return 0
		}
		return sec / (total * span)
	}
	perDay := 0.0
	if span > 0 {
		perDay = float64(respN) / (span / 86400)
	}
	energy := 0.0
	if d.pue > 0 {
		jobs := 0.0
		for _, i := range idx {
			jobs += d.jobKWh[i]
		}
		energy = d.pue * (d.restKWh + jobs)
	}
	copy(out, []float64{
		mean(waitSum, len(sc.waits)), q(0.50), q(0.90), q(0.95), q(0.99),
		mean(respSum, respN), mean(sldSum, sldN),
		util(gpu, d.gpus), util(gpuEff, d.gpus), util(cpu, d.cpus), perDay, jain, d.makespan(idx),
		energy,
	})
}

// Compare compares run b against run a on every metric of Metrics: the
// values over all jobs, their difference b − a, and a bootstrap 95%
// percentile interval of the difference from opts.Resamples resamples of
// the jobs (with replacement, seeded by opts.Seed). When both runs
// replay the same jobs the resamples are paired: the same jobs are drawn
// from both, so the interval reflects the policy's effect, not the
// workload's variability. Utilization and jobs per day divide by the full
// run's makespan in every resample.
func Compare(a, b *CompareRun, opts CompareOptions) *Comparison {
	if opts.Resamples <= 0 {
		opts.Resamples = DefaultResamples
	}
	da, db := prepare(a), prepare(b)
	c := &Comparison{A: a.Label, B: b.Label, Resamples: opts.Resamples, Seed: opts.Seed, Paired: samejobs(a.Jobs, b.Jobs)}
	m := len(Metrics)
	pa, pb := make([]float64, m), make([]float64, m)
	var sc scratch
	all := func(n int) []int32 {
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(i)
		}
		return idx
	}
	da.eval(all(len(a.Jobs)), &sc, pa)
	db.eval(all(len(b.Jobs)), &sc, pb)

	rng := rand.New(rand.NewPCG(opts.Seed, 0x636f6d70617265)) // "compare"
	diffs := make([][]float64, m)
	ia, ib := make([]int32, len(a.Jobs)), make([]int32, len(b.Jobs))
	va, vb := make([]float64, m), make([]float64, m)
	for range opts.Resamples {
		for i := range ia {
			ia[i] = int32(rng.IntN(len(ia)))
		}
		if c.Paired {
			copy(ib, ia)
		} else {
			for i := range ib {
				ib[i] = int32(rng.IntN(len(ib)))
			}
		}
		da.eval(ia, &sc, va)
		db.eval(ib, &sc, vb)
		for k := range m {
			diffs[k] = append(diffs[k], vb[k]-va[k])
		}
	}
	for k, spec := range Metrics {
		slices.Sort(diffs[k])
		r := MetricResult{MetricSpec: spec, A: pa[k], B: pb[k], Diff: pb[k] - pa[k],
			CILow: workload.Quantile(diffs[k], 0.025), CIHigh: workload.Quantile(diffs[k], 0.975), Verdict: NoSignificant}
		if len(diffs[k]) == 0 {
			r.CILow, r.CIHigh = r.Diff, r.Diff
		}
		if r.CILow > 0 || r.CIHigh < 0 {
			if (r.CIHigh < 0) == spec.LowerIsBetter {
				r.Verdict = Better
			} else {
				r.Verdict = Worse
			}
		}
		c.Metrics = append(c.Metrics, r)
	}
	return c
}

// samejobs reports whether a and b hold the same job ids in the same
// order.
func samejobs(a, b []JobRow) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

// Gate is a regression gate: metric Metric of B may not move past
// Threshold (in Unit) relative to A.
type Gate struct {
	Spec   string // as given: "p95_wait:+5%"
	Metric string
	// Threshold is signed: a positive one is broken when the change
	// exceeds it, a negative one when the change is below it.
	Threshold float64
	// Unit is "%" (relative to A), "pp" (percentage points, fraction
	// metrics only) or "" (absolute, in the metric's unit).
	Unit string
}

var gateRE = regexp.MustCompile(`^([a-z0-9_]+):([+-]?)([0-9]+(?:\.[0-9]+)?)(%|pp|s)?$`)

// ParseGate parses a gate "METRIC:[+|-]N[%|pp|s]": p95_wait:+5% allows B's
// p95 wait to exceed A's by at most 5%; gpu_util:-1pp allows B's GPU
// utilization to fall by at most one percentage point; mean_wait:+60s
// (or +60) by at most 60 seconds. Without a sign the threshold points
// the metric's worse way (+ for lower-is-better metrics).
func ParseGate(spec string) (Gate, error) {
	m := gateRE.FindStringSubmatch(strings.TrimSpace(spec))
	if m == nil {
		return Gate{}, fmt.Errorf("gate %q: want METRIC:[+|-]N[%%|pp|s], such as p95_wait:+5%% or gpu_util:-1pp", spec)
	}
	k := metricIndex(m[1])
	if k < 0 {
		names := make([]string, len(Metrics))
		for i, mt := range Metrics {
			names[i] = mt.Name
		}
		return Gate{}, fmt.Errorf("gate %q: unknown metric %q (want one of %s)", spec, m[1], strings.Join(names, ", "))
	}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil {
		return Gate{}, fmt.Errorf("gate %q: %w", spec, err)
	}
	switch {
	case m[2] == "-":
		v = -v
	case m[2] == "" && !Metrics[k].LowerIsBetter:
		v = -v
	}
	g := Gate{Spec: spec, Metric: m[1], Threshold: v, Unit: m[4]}
	switch {
	case g.Unit == "pp" && Metrics[k].Unit != "fraction":
		return Gate{}, fmt.Errorf("gate %q: pp applies to fraction metrics (gpu_util, gpu_util_effective, cpu_util), not %s", spec, m[1])
	case g.Unit == "s":
		if Metrics[k].Unit != "s" {
			return Gate{}, fmt.Errorf("gate %q: %s is not measured in seconds", spec, m[1])
		}
		g.Unit = ""
	}
	return g, nil
}

// GateResult is a gate checked against a comparison.
type GateResult struct {
	Gate
	// Change is B against A in the gate's unit: percent, percentage
	// points or absolute. Broken says whether it passes the threshold.
	Change float64
	Broken bool
}

// CheckGates checks gates against c. A relative gate on a metric whose A
// value is 0 counts any move in the threshold's direction as infinite.
func CheckGates(c *Comparison, gates []Gate) []GateResult {
	var out []GateResult
	for _, g := range gates {
		r := c.Metrics[metricIndex(g.Metric)]
		res := GateResult{Gate: g}
		switch g.Unit {
		case "%":
			switch {
			case r.A != 0:
				res.Change = 100 * r.Diff / math.Abs(r.A)
			case r.Diff > 0:
				res.Change = math.Inf(1)
			case r.Diff < 0:
				res.Change = math.Inf(-1)
			}
		case "pp":
			res.Change = 100 * r.Diff
		default:
			res.Change = r.Diff
		}
		if g.Threshold >= 0 {
			res.Broken = res.Change > g.Threshold
		} else {
			res.Broken = res.Change < g.Threshold
		}
		out = append(out, res)
	}
	return out
}

// formatValue formats a metric value for tables.
func formatValue(spec MetricSpec, v float64, diff bool) string {
	sign := ""
	if diff && v > 0 {
		sign = "+"
	}
	switch spec.Unit {
	case "s":
		return sign + strconv.FormatFloat(v, 'f', 1, 64) + " s"
	case "fraction":
		if diff {
			return sign + strconv.FormatFloat(100*v, 'f', 2, 64) + " pp"
		}
		return strconv.FormatFloat(100*v, 'f', 2, 64) + " %"
	case "jobs/day":
		return sign + strconv.FormatFloat(v, 'f', 1, 64)
	case "kWh":
		return sign + strconv.FormatFloat(v, 'f', 1, 64) + " kWh"
	}
	return sign + strconv.FormatFloat(v, 'f', 4, 64)
}

func relChange(r MetricResult) string {
	if r.A == 0 {
		if r.Diff == 0 {
			return "0.0 %"
		}
		return "n/a"
	}
	v := 100 * r.Diff / math.Abs(r.A)
	s := strconv.FormatFloat(v, 'f', 1, 64) + " %"
	if v > 0 {
		s = "+" + s
	}
	return s
}

func gateChange(g GateResult) string {
	unit := map[string]string{"%": " %", "pp": " pp", "": ""}[g.Unit]
	if math.IsInf(g.Change, 0) {
		return fmt.Sprintf("%v%s", g.Change, unit)
	}
	return strconv.FormatFloat(g.Change, 'f', 2, 64) + unit
}

// WriteComparison writes c and the gate results in format "table",
// "markdown" (a GitHub-flavoured table for a pull-request comment or a
// job summary) or "json".
func WriteComparison(w io.Writer, c *Comparison, gates []GateResult, format string) error {
	bw := bufio.NewWriter(w)
	head := fmt.Sprintf("A = %s, B = %s; difference B − A with a bootstrap 95%% interval (%d resamples, seed %d, %s)",
		c.A, c.B, c.Resamples, c.Seed, map[bool]string{true: "paired by job", false: "unpaired"}[c.Paired])
	switch format {
	case "json":
		return writeComparisonJSON(w, c, gates)
	case "markdown":
		fmt.Fprintf(bw, "### schedsim compare\n\n%s\n\n", head)
		fmt.Fprintln(bw, "| metric | A | B | B − A | 95% CI | change | verdict |")
		fmt.Fprintln(bw, "|---|---:|---:|---:|---:|---:|---|")
		for _, r := range c.Metrics {
			v := r.Verdict
			switch v {
			case Better:
				v = "✅ better"
			case Worse:
				v = "❌ worse"
			}
			fmt.Fprintf(bw, "| `%s` | %s | %s | %s | [%s, %s] | %s | %s |\n", r.Name,
				formatValue(r.MetricSpec, r.A, false), formatValue(r.MetricSpec, r.B, false),
				formatValue(r.MetricSpec, r.Diff, true), formatValue(r.MetricSpec, r.CILow, true),
				formatValue(r.MetricSpec, r.CIHigh, true), relChange(r), v)
		}
		if len(gates) > 0 {
			fmt.Fprintln(bw, "\n| gate | change | result |\n|---|---:|---|")
			for _, g := range gates {
				res := "pass"
				if g.Broken {
					res = "**BROKEN**"
				}
				fmt.Fprintf(bw, "| `%s` | %s | %s |\n", g.Spec, gateChange(g), res)
			}
		}
	case "table", "":
		fmt.Fprintln(bw, head)
		fmt.Fprintln(bw)
		var t textTable
		t.row("metric", "A", "B", "B − A", "95% CI", "change", "verdict")
		for _, r := range c.Metrics {
			t.row(r.Name, formatValue(r.MetricSpec, r.A, false), formatValue(r.MetricSpec, r.B, false),
				formatValue(r.MetricSpec, r.Diff, true),
				"["+formatValue(r.MetricSpec, r.CILow, true)+", "+formatValue(r.MetricSpec, r.CIHigh, true)+"]",
				relChange(r), r.Verdict)
		}
		t.flush(bw, "lrrrrrl")
		if len(gates) > 0 {
			fmt.Fprintln(bw)
			t.row("gate", "change", "result")
			for _, g := range gates {
				res := "pass"
				if g.Broken {
					res = "BROKEN"
				}
				t.row(g.Spec, gateChange(g), res)
			}
			t.flush(bw, "lrl")
		}
	default:
		return fmt.Errorf("unknown format %q (want table, markdown or json)", format)
	}
	return bw.Flush()
}

type jsonMetric struct {
	Name          string `json:"name"`
	Unit          string `json:"unit"`
	LowerIsBetter bool   `json:"lower_is_better"`
	A             fixed  `json:"a"`
	B             fixed  `json:"b"`
	Diff          fixed  `json:"diff"`
	CILow         fixed  `json:"ci_low"`
	CIHigh        fixed  `json:"ci_high"`
	RelChange     *fixed `json:"rel_change"`
	Verdict       string `json:"verdict"`
}

type jsonGate struct {
	Gate      string `json:"gate"`
	Metric    string `json:"metric"`
	Threshold fixed  `json:"threshold"`
	Unit      string `json:"unit"`
	Change    *fixed `json:"change"`
	Broken    bool   `json:"broken"`
}

type jsonComparison struct {
	A         string       `json:"a"`
	B         string       `json:"b"`
	Paired    bool         `json:"paired"`
	Resamples int          `json:"resamples"`
	Seed      uint64       `json:"seed"`
	Metrics   []jsonMetric `json:"metrics"`
	Gates     []jsonGate   `json:"gates"`
}

func writeComparisonJSON(w io.Writer, c *Comparison, gates []GateResult) error {
	j := jsonComparison{A: c.A, B: c.B, Paired: c.Paired, Resamples: c.Resamples, Seed: c.Seed,
		Metrics: []jsonMetric{}, Gates: []jsonGate{}}
	for _, r := range c.Metrics {
		m := jsonMetric{Name: r.Name, Unit: r.Unit, LowerIsBetter: r.LowerIsBetter, A: fixed(r.A), B: fixed(r.B),
			Diff: fixed(r.Diff), CILow: fixed(r.CILow), CIHigh: fixed(r.CIHigh), Verdict: r.Verdict}
		if r.A != 0 {
			v := fixed(r.Diff / math.Abs(r.A))
			m.RelChange = &v
		}
		j.Metrics = append(j.Metrics, m)
	}
	for _, g := range gates {
		jg := jsonGate{Gate: g.Spec, Metric: g.Metric, Threshold: fixed(g.Threshold), Unit: g.Unit, Broken: g.Broken}
		if !math.IsInf(g.Change, 0) {
			v := fixed(g.Change)
			jg.Change = &v
		}
		j.Gates = append(j.Gates, jg)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
