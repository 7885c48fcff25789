package sweep

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/traces"
)

// PlotsDir is the directory of a sweep's plots under its output directory.
const PlotsDir = "plots"

// Figures returns one figure per plotted metric and swept parameter, named
// METRIC_vs_PARAM: the metric's mean over seeds against the parameter,
// with the seeds' minimum-maximum band, one series per combination of the
// other swept parameters. Cluster and policy are categories in the order
// the sweep file lists them; load scale is numeric. Rows must hold every
// point of sw.
func Figures(sw *Sweep, rows []Row) []reports.Figure {
	var figs []reports.Figure
	for _, axis := range sw.Axes {
		for _, m := range sw.Plots {
			figs = append(figs, figure(sw, rows, axis, m))
		}
	}
	return figs
}

func paramOf(r *Row, axis string) string {
	switch axis {
	case ParamCluster:
		return r.Cluster
	case ParamPolicy:
		return r.Policy
	}
	return formatFloat(r.LoadScale)
}

// axisValues lists an axis's values in sweep order (points are expanded in
// that order, so first appearance is the order of the file).
func axisValues(rows []Row, axis string) []string {
	var vals []string
	for i := range rows {
		if v := paramOf(&rows[i], axis); !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	return vals
}

func figure(sw *Sweep, rows []Row, axis, metric string) reports.Figure {
	mi := metricIndex(metric)
	var others []string
	for _, a := range sw.Axes {
		if a != axis {
			others = append(others, a)
		}
	}
	xs := axisValues(rows, axis)
	var categories []string
	if axis != ParamLoad {
		categories = xs
	}
	// Series keyed by the other parameters, in first-appearance order.
	type acc struct {
		label string
		vals  map[int][]float64 // x index → values over seeds
	}
	var series []*acc
	for i := range rows {
		r := &rows[i]
		var parts []string
		for _, a := range others {
			parts = append(parts, a+"="+paramOf(r, a))
		}
		label := strings.Join(parts, ", ")
		if label == "" {
			label = metric
		}
		k := slices.IndexFunc(series, func(s *acc) bool { return s.label == label })
		if k < 0 {
			series = append(series, &acc{label: label, vals: map[int][]float64{}})
			k = len(series) - 1
		}
		xi := slices.Index(xs, paramOf(r, axis))
		series[k].vals[xi] = append(series[k].vals[xi], r.Values[mi])
	}
	out := make([]reports.BandSeries, 0, len(series))
	reps := 0
	for _, s := range series {
		bs := reports.BandSeries{Label: s.label}
		idx := make([]int, 0, len(s.vals))
		for xi := range s.vals {
			idx = append(idx, xi)
		}
		x := func(xi int) float64 {
			if categories != nil {
				return float64(xi)
			}
			return rows[slices.IndexFunc(rows, func(r Row) bool { return formatFloat(r.LoadScale) == xs[xi] })].LoadScale
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(x(a), x(b)) })
		for _, xi := range idx {
			v := s.vals[xi]
			sum := 0.0
			for _, f := range v {
				sum += f
			}
			bs.X = append(bs.X, x(xi))
			bs.Mean = append(bs.Mean, sum/float64(len(v)))
			bs.Lo = append(bs.Lo, slices.Min(v))
			bs.Hi = append(bs.Hi, slices.Max(v))
			bs.Replications = max(bs.Replications, len(v))
		}
		reps = max(reps, bs.Replications)
		out = append(out, bs)
	}
	doc := Metrics[mi].Doc
	yLabel := metric + " (" + doc + ")"
	if strings.HasSuffix(metric, "_s") {
		// Durations in the unit that suits their largest value.
		var top float64
		for _, s := range out {
			for _, v := range s.Hi {
				top = max(top, v)
			}
		}
		scale, unit := reports.DurationUnit(top)
		for _, s := range out {
			for _, vs := range [][]float64{s.Mean, s.Lo, s.Hi} {
				for i := range vs {
					vs[i] /= scale
				}
			}
		}
		yLabel = strings.TrimSuffix(metric, "_s") + ", " + unit + " (" + strings.TrimSuffix(strings.TrimSuffix(doc, ", seconds"), " (s)") + ")"
	}
	if strings.HasPrefix(metric, "util_") || metric == "frag_unusable" {
		for _, s := range out {
			for _, vs := range [][]float64{s.Mean, s.Lo, s.Hi} {
				for i := range vs {
					vs[i] *= 100
				}
			}
		}
		yLabel = metric + ", % (" + doc + ")"
	}
	title := fmt.Sprintf("%s vs %s", metric, axis)
	if sw.Name != "" {
		title = sw.Name + ": " + title
	}
	if reps > 1 {
		title += fmt.Sprintf("; mean and min-max band of %d seeds", reps)
	}
	return reports.BandFigure(metric+"_vs_"+axis, title, axis, yLabel, categories, out)
}

// WriteResults writes sweep.parquet, the plots and sweep.html into dir:
// the plots first, then the page, sweep.parquet last, each atomically, so
// a directory with a new sweep.parquet has the matching plots and page.
func WriteResults(dir string, sw *Sweep, rows []Row) error {
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return err
	}
	figs := Figures(sw, rows)
	for _, f := range figs {
		if err := traces.WriteFileAtomic(filepath.Join(dir, PlotsDir, f.Name+".png"), f.WritePNG); err != nil {
			return err
		}
		if err := traces.WriteFileAtomic(filepath.Join(dir, PlotsDir, f.Name+".svg"), f.WriteSVG); err != nil {
			return err
		}
	}
	if err := traces.WriteFileAtomic(filepath.Join(dir, reports.SweepPageFile), func(w io.Writer) error {
		return reports.WriteSweepPage(w, PageInput(sw, rows, figs))
	}); err != nil {
		return err
	}
	return traces.WriteFileAtomic(filepath.Join(dir, ParquetFile), func(w io.Writer) error {
		return WriteParquet(w, rows, sw.Meta())
	})
}

// metricBetter says which way each metric is better: -1 lower, +1
// higher; those absent (trace counts, events) have no best.
var metricBetter = map[string]int{
	"started": 1, "completed": 1, "timeout": -1, "rejected": -1, "unfinished": -1,
	"makespan_s": -1, "util_gpu": 1, "util_node": 1,
	"wait_mean_s": -1, "wait_p50_s": -1, "wait_p90_s": -1, "wait_p95_s": -1, "wait_p99_s": -1, "wait_max_s": -1,
	"bsld_mean": -1, "bsld_max": -1, "response_mean_s": -1, "response_p95_s": -1,
	"jobs_per_day": 1, "gpu_hours": 1, "jain_user_slowdown": 1, "frag_unusable": -1, "preemptions": -1,
}

// PageInput is sweep.html's content: the plotted metrics of every
// combination of the swept parameters, in sweep order, aggregated over
// its seeds, and the figures.
func PageInput(sw *Sweep, rows []Row, figs []reports.Figure) reports.SweepPageInput {
	in := reports.SweepPageInput{Name: sw.Name, Params: sw.Axes, Scenarios: len(rows), Figures: figs}
	var idx []int
	for _, name := range sw.Plots {
		mi := metricIndex(name)
		if mi < 0 {
			continue
		}
		idx = append(idx, mi)
		in.Metrics = append(in.Metrics, reports.SweepMetric{Name: name, Doc: Metrics[mi].Doc,
			Seconds: strings.HasSuffix(name, "_s"), Fraction: strings.HasPrefix(name, "util_") || name == "frag_unusable",
			Better: metricBetter[name]})
	}
	var keys []string
	values := map[string][][]float64{} // configuration → metric → values over seeds
	for i := range rows {
		r := &rows[i]
		var parts []string
		for _, a := range sw.Axes {
			parts = append(parts, a+"="+paramOf(r, a))
		}
		key := strings.Join(parts, ", ")
		if _, ok := values[key]; !ok {
			keys = append(keys, key)
			values[key] = make([][]float64, len(idx))
		}
		for k, mi := range idx {
			values[key][k] = append(values[key][k], r.Values[mi])
		}
	}
	for _, key := range keys {
		c := reports.SweepConfig{Label: key}
		if key == "" {
			c.Label = "the one configuration"
		}
		for _, vs := range values[key] {
			sum := 0.0
			for _, v := range vs {
				sum += v
			}
			c.Mean = append(c.Mean, sum/float64(len(vs)))
			c.Lo = append(c.Lo, slices.Min(vs))
			c.Hi = append(c.Hi, slices.Max(vs))
			c.Seeds = len(vs)
		}
		in.Configs = append(in.Configs, c)
	}
	return in
}
