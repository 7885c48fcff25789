package reports

import (
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BandSeries is one line of a band plot: at each X, the mean of several
// replications (seeds) and the band from their minimum to their maximum.
// X, Mean, Lo and Hi have the same length, X ascending.
type BandSeries struct {
	Label        string
	X, Mean      []float64
	Lo, Hi       []float64
	Replications int // how many values each point summarizes, for the legend
}

// BandFigure draws series as lines with shaded min-max bands, for sweeps:
// a metric against a swept parameter, one series per combination of the
// other parameters, the band spanning the seeds. When categories is not
// nil the X values are 0, 1, ... and categories labels them.
func BandFigure(name, title, xLabel, yLabel string, categories []string, series []BandSeries) Figure {
	return Figure{Name: name, Title: title, draw: func(c draw.Canvas) {
		p := newPlot(title, xLabel, yLabel)
		p.Legend.Top = true
		if categories != nil {
			ticks := make([]plot.Tick, len(categories))
			for i, s := range categories {
				ticks[i] = plot.Tick{Value: float64(i), Label: s}
			}
			p.X.Tick.Marker = plot.ConstantTicks(ticks)
			p.X.Min, p.X.Max = -0.5, float64(len(categories))-0.5
		} else {
			sweptTicks(p, series)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for k, s := range series {
			if len(s.X) == 0 {
				continue
			}
			band := make(plotter.XYs, 0, 2*len(s.X))
			for i := range s.X {
				band = append(band, plotter.XY{X: s.X[i], Y: s.Lo[i]})
				lo = min(lo, s.Lo[i])
			}
			for i := len(s.X) - 1; i >= 0; i-- {
				band = append(band, plotter.XY{X: s.X[i], Y: s.Hi[i]})
				hi = max(hi, s.Hi[i])
			}
			if poly, err := plotter.NewPolygon(band); err == nil {
				r, g, b, _ := seriesColor(k).RGBA()
				poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 48}
				poly.LineStyle.Width = 0
				p.Add(poly)
			}
			mean := make(plotter.XYs, len(s.X))
			for i := range s.X {
				mean[i] = plotter.XY{X: s.X[i], Y: s.Mean[i]}
			}
			l, pts, err := plotter.NewLinePoints(mean)
			if err != nil {
				continue
			}
			styleLine(&l.LineStyle, k)
			pts.Color = seriesColor(k)
			pts.Radius = vg.Points(3)
			pts.Shape = plotutil.Shape(k)
			p.Add(newEdgeLine(l), pts)
			p.Legend.Add(s.Label, l, pts)
		}
		if hi >= lo {
			// Room above the data for the legend, a line per series.
			pad := (hi - lo) * (0.15 + 0.08*float64(len(series)))
			if pad == 0 {
				pad = math.Max(math.Abs(hi)*0.1, 1)
			}
			p.Y.Min, p.Y.Max = math.Min(0, lo), hi+pad // room for the legend
		} else {
			noData(p)
		}
		p.Draw(c)
	}}
}

// maxSweptTicks is how many distinct swept values get a tick each; with
// more, the axis falls back to round ticks.
const maxSweptTicks = 12

// sweptTicks puts the numeric x axis's ticks on the swept values
// themselves, with a margin of a tenth of their range either side.
func sweptTicks(p *plot.Plot, series []BandSeries) {
	var xs []float64
	for _, s := range series {
		xs = append(xs, s.X...)
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	if len(xs) == 0 || len(xs) > maxSweptTicks {
		return
	}
	ticks := make([]plot.Tick, len(xs))
	for i, x := range xs {
		ticks[i] = plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	pad := (xs[len(xs)-1] - xs[0]) / 10
	if pad == 0 {
		pad = math.Max(math.Abs(xs[0])/10, 0.5)
	}
	p.X.Min, p.X.Max = xs[0]-pad, xs[len(xs)-1]+pad
}
