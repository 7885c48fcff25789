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
		if bs.Replications > 1 {
			bs.Label += fmt.Sprintf(" (mean, band: min-max of %d seeds)", bs.Replications)
		}
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
	title := fmt.Sprintf("%s vs %s", metric, axis)
	if sw.Name != "" {
		title = sw.Name + ": " + title
	}
	return reports.BandFigure(metric+"_vs_"+axis, title, axis, yLabel, categories, out)
}

// WriteResults writes sweep.parquet and the plots into dir: the plots
// first, sweep.parquet last, each atomically, so a directory with a new
// sweep.parquet has the matching plots.
func WriteResults(dir string, sw *Sweep, rows []Row) error {
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return err
	}
	for _, f := range Figures(sw, rows) {
		if err := traces.WriteFileAtomic(filepath.Join(dir, PlotsDir, f.Name+".png"), f.WritePNG); err != nil {
			return err
		}
		if err := traces.WriteFileAtomic(filepath.Join(dir, PlotsDir, f.Name+".svg"), f.WriteSVG); err != nil {
			return err
		}
	}
	return traces.WriteFileAtomic(filepath.Join(dir, ParquetFile), func(w io.Writer) error {
		return WriteParquet(w, rows, sw.Meta())
	})
}
