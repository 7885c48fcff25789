package reports

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The one style of every plot schedsim draws (run, compare, sweep and
// validate figures): newPlot applies it, seriesColor and styleLine give
// the k-th series its colour and line. Text is Liberation Sans (metric
// compatible with Arial, so SVG viewers without it substitute a sans-serif
// of the same widths), the grid is light grey, and the palette is
// Okabe and Ito's, which stays distinct under the common colour-vision
// deficiencies (yellow left out: it is invisible on white).
var (
	sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

	palette = []color.Color{
		color.RGBA{0x00, 0x72, 0xB2, 0xFF}, // blue
		color.RGBA{0xE6, 0x9F, 0x00, 0xFF}, // orange
		color.RGBA{0x00, 0x9E, 0x73, 0xFF}, // bluish green
		color.RGBA{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
		color.RGBA{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
		color.RGBA{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
		color.RGBA{0x66, 0x66, 0x66, 0xFF}, // grey
	}

	gridColor = color.Gray{Y: 0xDD}
	textColor = color.Gray{Y: 0x22}
)

// Text sizes and line widths of the style.
var (
	titleSize  = vg.Points(13)
	labelSize  = vg.Points(11)
	tickSize   = vg.Points(9.5)
	legendSize = vg.Points(9.5)
	lineWidth  = vg.Points(1.3)
)

// seriesColor is the k-th series' colour; it cycles through the palette.
func seriesColor(k int) color.Color { return palette[k%len(palette)] }

// styleLine gives line style l the k-th series' colour and width; series
// after the first palette round are dashed, so none look alike.
func styleLine(l *draw.LineStyle, k int) {
	l.Color = seriesColor(k)
	l.Width = lineWidth
	if k >= len(palette) {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
	}
}

// newPlot returns a plot in the style: fonts, sizes, colours, a light
// grid, and round linear ticks (niceTicks) on both axes, which callers
// replace for time, duration, percent and category axes.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	for _, ts := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		ts.Typeface, ts.Variant = sans.Typeface, sans.Variant
	}
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = titleSize
	p.Title.TextStyle.Color = textColor
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = labelSize
		a.Label.TextStyle.Color = textColor
		a.Tick.Label.Font.Size = tickSize
		a.Tick.Label.Color = textColor
		a.Tick.Marker = niceTicks{}
		a.Color, a.Tick.Color = textColor, textColor
	}
	p.Legend.TextStyle.Font.Size = legendSize
	p.Legend.TextStyle.Color = textColor
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridColor, gridColor
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	p.Add(g)
	return p
}

// niceTicks puts 4 to 10 major ticks on a linear axis at multiples of 1,
// 2 or 5 × 10ⁿ, labelled with as many decimals as the step needs. (gonum's
// default aims at 3 and can leave an axis with 2.)
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: formatTick(lo, 0)}}
	}
	step := niceStep(hi-lo, 5)
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if v == 0 {
			v = 0 // no "-0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: formatTick(v, decimals)})
	}
	return ticks
}

// niceStep returns the 1, 2 or 5 × 10ⁿ step that cuts span into about
// target parts (at least 4).
func niceStep(span float64, target int) float64 {
	raw := span / float64(target)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if s := m * mag; span/s <= float64(target)+3 {
			return s
		}
	}
	return 10 * mag
}

func formatTick(v float64, decimals int) string { return strconv.FormatFloat(v, 'f', decimals, 64) }

// DurationUnit returns the unit to show durations of up to maxS seconds
// in, as its length in seconds and its name: s below 2 min, min below
// 2 h, h below 4 d, d above.
func DurationUnit(maxS float64) (float64, string) {
	switch m := math.Abs(maxS); {
	case m < 120:
		return 1, "s"
	case m < 2*3600:
		return 60, "min"
	case m < 4*86400:
		return 3600, "h"
	}
	return 86400, "d"
}
