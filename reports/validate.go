package reports

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// ValidateOptions shape a Validation.
type ValidateOptions struct {
	// BfInterval is the tolerance of the first agreement band, in seconds
	// (the policy's bf_interval); 30 when zero.
	BfInterval sim.Time
	// Worst is how many jobs with the largest |Δstart| to list; 10 when
	// zero.
	Worst int
	// TauMax bounds the jobs Kendall's tau is computed over (the first
	// TauMax compared jobs in trace order; O(n²)); 5000 when zero.
	TauMax int
}

// Agreement is how close simulated starts are to recorded ones over a set
// of jobs.
type Agreement struct {
	Jobs int `json:"jobs"`
	// Shares of jobs whose |simulated - recorded start| is within one
	// bf_interval, 5 minutes and 1 hour.
	WithinBfInterval float64 `json:"within_bf_interval"`
	Within5Min       float64 `json:"within_5min"`
	Within1Hour      float64 `json:"within_1h"`
	// MedianAbsDelta and P95AbsDelta are |Δstart| quantiles in seconds
	// (type 7, workload.Quantile).
	MedianAbsDelta float64 `json:"median_abs_delta_s"`
	P95AbsDelta    float64 `json:"p95_abs_delta_s"`
}

// PartitionAgreement is the Agreement of the jobs of one partition.
type PartitionAgreement struct {
	Partition string `json:"partition"`
	Agreement
}

// WorstJob is a job with a large start error and why it waited in the
// simulation.
type WorstJob struct {
	ID        string   `json:"id"`
	Partition string   `json:"partition"`
	Submit    sim.Time `json:"submit_s"`
	Recorded  sim.Time `json:"recorded_start_s"`
	Simulated sim.Time `json:"simulated_start_s"`
	Delta     sim.Time `json:"delta_s"` // simulated - recorded
	// Reasons are the job's pending reasons in the simulation, as
	// "REASON@t" with t in seconds after submit, in order.
	Reasons []string `json:"reasons"`
}

// Validation compares the simulated start of every job with the start the
// trace recorded (workload.Job.TraceStart), for `schedsim validate`.
type Validation struct {
	Policy string `json:"policy"`
	// BfInterval is the tolerance used for WithinBfInterval, seconds.
	BfInterval sim.Time `json:"bf_interval_s"`
	// Compared counts jobs with a recorded start that also started in the
	// simulation; NoRecordedStart those the trace shows never starting;
	// NotStarted those that started in the trace but not in the run.
	Compared        int `json:"compared"`
	NoRecordedStart int `json:"no_recorded_start"`
	NotStarted      int `json:"not_started"`
	Agreement
	// KendallTau is Kendall's tau-b between the simulated and recorded
	// start orders over TauJobs jobs (NaN with fewer than 2).
	KendallTau float64              `json:"kendall_tau"`
	TauJobs    int                  `json:"tau_jobs"`
	Partitions []PartitionAgreement `json:"partitions"`
	Worst      []WorstJob           `json:"worst"`

	points []waitPoint
}

type waitPoint struct{ recorded, simulated float64 }

// Validate compares rec's simulated starts with its trace's recorded ones.
func Validate(rec *sim.Record, opt ValidateOptions) *Validation {
	if opt.BfInterval <= 0 {
		opt.BfInterval = 30
	}
	if opt.Worst <= 0 {
		opt.Worst = 10
	}
	if opt.TauMax <= 0 {
		opt.TauMax = 5000
	}
	v := &Validation{Policy: rec.Policy, BfInterval: opt.BfInterval}
	type cmpJob struct {
		ref       int
		part      string
		rec, sim  sim.Time
		absDelta  float64
		submitted sim.Time
	}
	var jobs []cmpJob
	for i := range rec.Jobs {
		r := &rec.Jobs[i]
		j := rec.Trace.At(i)
		switch {
		case j.TraceStart == workload.Unknown:
			v.NoRecordedStart++
			continue
		case r.Start == workload.Unknown:
			v.NotStarted++
			continue
		}
		part := ""
		if r.Part >= 0 && int(r.Part) < len(rec.Cluster.Partitions) {
			part = rec.Cluster.Partitions[r.Part].Name
		}
		d := float64(r.Start - j.TraceStart)
		jobs = append(jobs, cmpJob{ref: i, part: part, rec: j.TraceStart, sim: r.Start, absDelta: math.Abs(d), submitted: j.Submit})
		v.points = append(v.points, waitPoint{float64(j.TraceStart - j.Submit), float64(r.Start - j.Submit)})
	}
	v.Compared = len(jobs)
	abs := func(js []cmpJob) Agreement {
		a := Agreement{Jobs: len(js)}
		if len(js) == 0 {
			a.MedianAbsDelta, a.P95AbsDelta = math.NaN(), math.NaN()
			return a
		}
		ds := make([]float64, len(js))
		for i, j := range js {
			ds[i] = j.absDelta
			if j.absDelta <= float64(opt.BfInterval) {
				a.WithinBfInterval++
			}
			if j.absDelta <= 300 {
				a.Within5Min++
			}
			if j.absDelta <= 3600 {
				a.Within1Hour++
			}
		}
		n := float64(len(js))
		a.WithinBfInterval /= n
		a.Within5Min /= n
		a.Within1Hour /= n
		slices.Sort(ds)
		a.MedianAbsDelta = workload.Quantile(ds, 0.5)
		a.P95AbsDelta = workload.Quantile(ds, 0.95)
		return a
	}
	v.Agreement = abs(jobs)
	byPart := map[string][]cmpJob{}
	for _, j := range jobs {
		byPart[j.part] = append(byPart[j.part], j)
	}
	names := make([]string, 0, len(byPart))
	for k := range byPart {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, n := range names {
		v.Partitions = append(v.Partitions, PartitionAgreement{Partition: n, Agreement: abs(byPart[n])})
	}
	tj := jobs[:min(len(jobs), opt.TauMax)]
	v.TauJobs = len(tj)
	xs := make([]float64, len(tj))
	ys := make([]float64, len(tj))
	for i, j := range tj {
		xs[i], ys[i] = float64(j.sim), float64(j.rec)
	}
	v.KendallTau = KendallTauB(xs, ys)

	// Worst jobs, with their reasons.
	worst := slices.Clone(jobs)
	slices.SortStableFunc(worst, func(a, b cmpJob) int {
		if c := cmp.Compare(b.absDelta, a.absDelta); c != 0 {
			return c
		}
		return cmp.Compare(a.ref, b.ref)
	})
	worst = worst[:min(len(worst), opt.Worst)]
	idx := map[sim.JobRef]int{}
	for k, w := range worst {
		j := rec.Trace.At(w.ref)
		idx[sim.JobRef(w.ref)] = k
		v.Worst = append(v.Worst, WorstJob{ID: j.ID, Partition: w.part, Submit: j.Submit, Recorded: w.rec,
			Simulated: w.sim, Delta: w.sim - w.rec, Reasons: []string{}})
	}
	for rc := range rec.Reasons.All() {
		if k, ok := idx[rc.Job]; ok {
			w := &v.Worst[k]
			w.Reasons = append(w.Reasons, fmt.Sprintf("%s@%d", rc.Reason, rc.At-w.Submit))
		}
	}
	return v
}

// KendallTauB returns Kendall's tau-b rank correlation of x and y (equal
// lengths), accounting for ties in either; NaN when there are fewer than
// two pairs or one side is constant. It is O(n²).
func KendallTauB(x, y []float64) float64 {
	n := len(x)
	if n < 2 || len(y) != n {
		return math.NaN()
	}
	var conc, disc, tx, ty float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			dx := cmp.Compare(x[i], x[j])
			dy := cmp.Compare(y[i], y[j])
			switch {
			case dx == 0 && dy == 0:
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case dx == dy:
				conc++
			default:
				disc++
			}
		}
	}
	den := math.Sqrt((conc + disc + tx) * (conc + disc + ty))
	if den == 0 {
		return math.NaN()
	}
	return (conc - disc) / den
}

// WriteValidationTable writes v as plain-text tables.
func WriteValidationTable(w io.Writer, v *Validation) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	pct := func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
	secs := func(f float64) string {
		if math.IsNaN(f) {
			return "-"
		}
		return fmt.Sprintf("%.0f s", f)
	}
	fmt.Fprintf(tw, "policy\t%s\n", v.Policy)
	fmt.Fprintf(tw, "jobs compared\t%d\t(%d never started in the trace, %d started in the trace but not in the run)\n", v.Compared, v.NoRecordedStart, v.NotStarted)
	fmt.Fprintf(tw, "within ±%d s (bf_interval)\t%s\n", v.BfInterval, pct(v.WithinBfInterval))
	fmt.Fprintf(tw, "within ±5 min\t%s\n", pct(v.Within5Min))
	fmt.Fprintf(tw, "within ±1 h\t%s\n", pct(v.Within1Hour))
	fmt.Fprintf(tw, "median |Δstart|\t%s\n", secs(v.MedianAbsDelta))
	fmt.Fprintf(tw, "p95 |Δstart|\t%s\n", secs(v.P95AbsDelta))
	tau := "-"
	if !math.IsNaN(v.KendallTau) {
		tau = fmt.Sprintf("%.3f", v.KendallTau)
	}
	fmt.Fprintf(tw, "Kendall's tau (start order)\t%s\t(over %d jobs)\n", tau, v.TauJobs)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintf(tw, "partition\tjobs\t±bf_interval\t±5 min\t±1 h\tmedian |Δ|\tp95 |Δ|\n")
	for _, p := range v.Partitions {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", p.Partition, p.Jobs, pct(p.WithinBfInterval), pct(p.Within5Min),
			pct(p.Within1Hour), secs(p.MedianAbsDelta), secs(p.P95AbsDelta))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(v.Worst) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(tw, "worst job\tpartition\trecorded wait\tsimulated wait\tΔstart\tsimulated pending reasons (reason@s after submit)\n")
		for _, j := range v.Worst {
			fmt.Fprintf(tw, "%s\t%s\t%d s\t%d s\t%+d s\t%s\n", j.ID, j.Partition, j.Recorded-j.Submit, j.Simulated-j.Submit, j.Delta, strings.Join(j.Reasons, " "))
		}
	}
	return tw.Flush()
}

// ValidationFigure is the scatter plot of simulated against recorded wait
// of every compared job, with the dashed line of perfect agreement; waits
// under one second are drawn at one second on the logarithmic axes. The
// title names the line, so no legend covers the points.
func ValidationFigure(v *Validation) Figure {
	title := "Simulated vs recorded wait (" + v.Policy + ")"
	return Figure{Name: "validate_wait", Title: title, draw: func(c draw.Canvas) {
		p := newPlot(title+"; dashed: simulated = recorded",
			"Recorded wait (log scale; under 1 s drawn at 1 s)", "Simulated wait (log scale)")
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = durationTicker{}, durationTicker{}
		pts := make(plotter.XYs, len(v.points))
		hi := 60.0
		for i, q := range v.points {
			pts[i].X, pts[i].Y = max(q.recorded, 1), max(q.simulated, 1)
			hi = max(hi, pts[i].X, pts[i].Y)
		}
		// The axes end at the first round duration past the longest wait.
		for _, t := range durationTicks {
			if t.v >= hi {
				hi = t.v
				break
			}
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 1, hi, 1, hi
		if l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: hi, Y: hi}}); err == nil {
			l.Color = textColor
			l.Width = vg.Points(1)
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
			p.Add(l)
		}
		if s, err := plotter.NewScatter(pts); err == nil && len(pts) > 0 {
			s.GlyphStyle.Radius = vg.Points(2)
			s.GlyphStyle.Color = seriesColor(0)
			p.Add(s)
		} else {
			p.Title.Text += " (no data)"
		}
		p.Draw(c)
	}}
}

// ValidationFigures are the figures of validate.html: the wait scatter
// (ValidationFigure) and the distribution of |Δstart|.
func ValidationFigures(v *Validation) []Figure {
	return []Figure{ValidationFigure(v), validationDeltaFigure(v)}
}

// validationDeltaFigure is the empirical CDF of |simulated − recorded
// start| over the compared jobs (|Δstart| = |simulated wait − recorded
// wait|), on a logarithmic axis with errors under one second drawn at one
// second, with the bf_interval, 5 min and 1 h marks of the agreement
// table.
func validationDeltaFigure(v *Validation) Figure {
	title := "Start error |simulated − recorded| (" + v.Policy + ")"
	return Figure{Name: "validate_delta", Title: title, draw: func(c draw.Canvas) {
		p := newPlot(title+"; dotted: ±bf_interval, 5 min, 1 h", "|Δstart| (log scale; under 1 s drawn at 1 s)", "Fraction of compared jobs")
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = durationTicker{}
		p.Y.Min, p.Y.Max = 0, 1
		ds := make([]float64, len(v.points))
		hi := 3600.0
		for i, q := range v.points {
			ds[i] = max(math.Abs(q.simulated-q.recorded), 1)
			hi = max(hi, ds[i])
		}
		for _, t := range durationTicks {
			if t.v >= hi {
				hi = t.v
				break
			}
		}
		p.X.Min, p.X.Max = 1, hi
		for _, m := range []float64{float64(v.BfInterval), 300, 3600} {
			if l, err := plotter.NewLine(plotter.XYs{{X: max(m, 1), Y: 0}, {X: max(m, 1), Y: 1}}); err == nil {
				l.Width = vg.Points(1.5)
				l.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
				l.Color = textColor
				p.Add(l)
			}
		}
		if len(ds) == 0 {
			p.Title.Text += " (no data)"
		} else if l, err := plotter.NewLine(cdf(ds)); err == nil {
			styleLine(&l.LineStyle, 0)
			p.Add(l)
		}
		p.Draw(c)
	}}
}
