package reports

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// edgeLine is a line whose GlyphBoxes holds only the boxes the plot's
// padding can choose, instead of one per vertex: a step line of a long
// timeline has tens of thousands of vertices, and gonum/plot collects
// their boxes twice per plot (padX, padY) to find the left-, right-,
// bottom- and top-most. The plot is drawn exactly as with the line
// itself.
//
// Why the result is the same: every box of one line has the same
// rectangle (half the line width around its vertex), so a box's reach
// past the canvas edge grows with its normalized X (or Y) alone. padX
// takes the first box, in order, whose left edge is the smallest (right
// edge the largest), and plot.Plot.GlyphBoxes has already dropped the
// boxes outside [0, 1]; that box is among those whose X lies within
// edgeSlack of the line's smallest (largest) X, which are kept in their
// order, as are those near the Y extremes for padY (of boxes with equal
// X only the first, see firsts; likewise for Y). A box further in
// lies a canvas position strictly inside the extreme one's (edgeSlack
// times the canvas size is far above the rounding of the canvas
// transform) and is never chosen. Boxes with a NaN coordinate are never
// chosen either (every comparison with them is false), and neither are
// boxes without size (a line of width 0), so both are left out.
type edgeLine struct {
	*plotter.Line
	memo *edgeMemo
	thin bool // draw through thinPixels (newFigureLine)
}

// edgeMemo keeps a line's boxes for the axes they were found on: a
// plot's Draw asks for them four times (padX and padY, for the data
// canvas and again for drawing).
type edgeMemo struct {
	ok                     bool
	xmin, xmax, ymin, ymax float64
	xlog, ylog             bool
	boxes                  []plot.GlyphBox
}

// newEdgeLine returns l as an edgeLine, drawn as l.
func newEdgeLine(l *plotter.Line) edgeLine { return edgeLine{Line: l, memo: new(edgeMemo)} }

// newFigureLine returns l as an edgeLine drawn with its vertices thinned
// to the figures' pixel grid (Plot).
func newFigureLine(l *plotter.Line) edgeLine {
	return edgeLine{Line: l, memo: new(edgeMemo), thin: thinLines}
}

// thinLines is whether newFigureLine's lines are thinned (tests draw
// figures both ways).
var thinLines = true

// firsts remembers the values seen at an extreme, so that only the first
// box with each is kept: padX reads only a box's X and rectangle (padY
// its Y), and of boxes equal in those it picks the first. Past
// maxFirsts values it keeps every box.
type firsts struct {
	vals []float64
	all  bool
}

const maxFirsts = 16

// first reports whether the box at v is to be kept: v was not seen yet,
// or too many values were.
func (f *firsts) first(v float64) bool {
	if f.all {
		return true
	}
	for _, w := range f.vals {
		if w == v {
			return false
		}
	}
	if len(f.vals) == maxFirsts {
		f.all = true
		return true
	}
	f.vals = append(f.vals, v)
	return true
}

// edgeSlack is the distance in normalized coordinates (0 to 1 across the
// axis) within which a box counts as at an extreme.
const edgeSlack = 1e-6

// scaleKind tells the two scales the figures use apart: linear, log, or
// another (not memoized).
func scaleKind(s plot.Normalizer) (log, known bool) {
	switch s.(type) {
	case plot.LinearScale:
		return false, true
	case plot.LogScale:
		return true, true
	}
	return false, false
}

// axisNorm is a.Norm (a.Scale.Normalize(a.Min, a.Max, v)) without
// copying the Axis per value: the linear scale's arithmetic inlined, and
// the log scale's with the logarithms of Min and Max taken once
// (LogScale.Normalize takes three a value, the same results).
type axisNorm struct {
	a              *plot.Axis
	linear, log    bool
	logMin, logMax float64
}

func newAxisNorm(a *plot.Axis) axisNorm {
	log, known := scaleKind(a.Scale)
	n := axisNorm{a: a, linear: known && !log, log: log && a.Min > 0 && a.Max > 0}
	if n.log {
		n.logMin, n.logMax = math.Log(a.Min), math.Log(a.Max)
	}
	return n
}

func (n *axisNorm) at(v float64) float64 {
	switch {
	case n.linear:
		return (v - n.a.Min) / (n.a.Max - n.a.Min)
	case n.log && v > 0:
		return (math.Log(v) - n.logMin) / (n.logMax - n.logMin)
	}
	return n.a.Scale.Normalize(n.a.Min, n.a.Max, v) // panics as a.Norm would
}

// GlyphBoxes returns the boxes of plotter.Line.GlyphBoxes that the
// padding may choose, in their order.
func (l edgeLine) GlyphBoxes(plt *plot.Plot) []plot.GlyphBox {
	r := 0.5 * l.LineStyle.Width
	if !(r > 0) {
		return nil
	}
	xlog, xknown := scaleKind(plt.X.Scale)
	ylog, yknown := scaleKind(plt.Y.Scale)
	m := l.memo
	memo := m != nil && xknown && yknown
	if memo && m.ok && m.xmin == plt.X.Min && m.xmax == plt.X.Max && m.ymin == plt.Y.Min && m.ymax == plt.Y.Max && m.xlog == xlog && m.ylog == ylog {
		return m.boxes
	}
	nX, nY := newAxisNorm(&plt.X), newAxisNorm(&plt.Y)
	rect := vg.Rectangle{Min: vg.Point{X: -r, Y: -r}, Max: vg.Point{X: +r, Y: +r}}
	in := func(v float64) bool { return v >= 0 && v <= 1 } // false for NaN
	minX, maxX, minY, maxY := 2.0, -1.0, 2.0, -1.0
	xys := l.XYs
	for i := range xys {
		nx, ny := nX.at(xys[i].X), nY.at(xys[i].Y)
		if !in(nx) || !in(ny) {
			continue
		}
		minX, maxX = min(minX, nx), max(maxX, nx)
		minY, maxY = min(minY, ny), max(maxY, ny)
	}
	var bs []plot.GlyphBox
	var xs, ys firsts
	for i := range xys {
		nx, ny := nX.at(xys[i].X), nY.at(xys[i].Y)
		if !in(nx) || !in(ny) {
			continue
		}
		atX := (nx <= minX+edgeSlack || nx >= maxX-edgeSlack) && xs.first(nx)
		atY := (ny <= minY+edgeSlack || ny >= maxY-edgeSlack) && ys.first(ny)
		if atX || atY {
			bs = append(bs, plot.GlyphBox{X: nx, Y: ny, Rectangle: rect})
		}
	}
	if memo {
		*m = edgeMemo{ok: true, xmin: plt.X.Min, xmax: plt.X.Max, ymin: plt.Y.Min, ymax: plt.Y.Max, xlog: xlog, ylog: ylog, boxes: bs}
	}
	return bs
}

// figPixel is a pixel of the figures' PNG (figDPI) in canvas units; the
// SVG is laid out on the same 900 × 500 grid.
const figPixel = vg.Inch / figDPI

// Plot draws the line as plotter.Line.Plot does, with its vertices
// thinned to the pixel grid (thinPixels) when l.thin, the line has no
// step style and no dashes: a step line of a long timeline has about a
// dozen vertices per pixel column (5,347 hourly bins of the 20k-job
// HPC2N run across 800 columns), each stroked and rasterized. A dashed
// line is drawn as it is: its dashes are laid along the path's length,
// which thinning shortens.
//
// The points are placed as plt.Transforms places them, without its copy
// of the plot.Axis per point (norm), for the lines drawn as they are too.
func (l edgeLine) Plot(c draw.Canvas, plt *plot.Plot) {
	if !l.thin || l.StepStyle != plotter.NoStep {
		l.Line.Plot(c, plt)
		return
	}
	nX, nY := newAxisNorm(&plt.X), newAxisNorm(&plt.Y)
	trX := func(x float64) vg.Length { return c.X(nX.at(x)) }
	trY := func(y float64) vg.Length { return c.Y(nY.at(y)) }
	ps := make([]vg.Point, len(l.XYs))
	for i, p := range l.XYs {
		ps[i] = vg.Point{X: trX(p.X), Y: trY(p.Y)}
	}
	if len(l.LineStyle.Dashes) == 0 {
		ps = thinPixels(ps, figPixel)
	}
	if l.FillColor != nil && len(ps) > 0 {
		minY := trY(plt.Y.Min)
		fill := make([]vg.Point, 0, len(ps)+2)
		fill = append(fill, vg.Point{X: ps[0].X, Y: minY})
		fill = append(fill, ps...)
		fill = append(fill, vg.Point{X: ps[len(ps)-1].X, Y: minY})
		if fill = c.ClipPolygonXY(fill); len(fill) > 0 {
			c.SetColor(l.FillColor)
			pa := make(vg.Path, 0, len(fill)+1)
			pa.Move(fill[0])
			for _, pt := range fill[1:] {
				pa.Line(pt)
			}
			pa.Close()
			c.Fill(pa)
		}
	}
	if l.LineStyle.Width == 0 {
		return
	}
	lines := c.ClipLinesXY(ps)
	if len(lines) == 0 {
		return
	}
	c.SetLineStyle(l.LineStyle)
	for _, ln := range lines {
		if len(ln) == 0 {
			continue
		}
		pa := make(vg.Path, 0, len(ln))
		pa.Move(ln[0])
		for _, pt := range ln[1:] {
			pa.Line(pt)
		}
		c.Stroke(pa)
	}
}

// thinPixels returns ps (reusing its array) with each run of more than
// four consecutive points in one pixel column (floor(X / px)) cut to its
// first point, its lowest and highest (the first of each, in their
// order) and its last. The path still enters and leaves the column where
// it did and spans the same heights in it, so its stroke (at least a
// pixel wide) and the area under it differ only within the column, in
// the anti-aliasing of a few of its pixels. A point between two others
// on one horizontal or vertical line is left out too (a step line's
// long stretches at one value): the path covers the same segment.
func thinPixels(ps []vg.Point, px vg.Length) []vg.Point {
	out := ps[:0]
	add := func(p vg.Point) {
		if n := len(out); n >= 2 && between(out[n-2], out[n-1], p) {
			out[n-1] = p
			return
		}
		out = append(out, p)
	}
	for i := 0; i < len(ps); {
		col := math.Floor(float64(ps[i].X / px))
		j := i + 1
		lo, hi := i, i
		for j < len(ps) && math.Floor(float64(ps[j].X/px)) == col {
			if ps[j].Y < ps[lo].Y {
				lo = j
			}
			if ps[j].Y > ps[hi].Y {
				hi = j
			}
			j++
		}
		if j-i <= 4 {
			for k := i; k < j; k++ {
				add(ps[k])
			}
			i = j
			continue
		}
		first, last := ps[i], ps[j-1]
		a, b := min(lo, hi), max(lo, hi)
		pa, pb := ps[a], ps[b]
		add(first)
		if a != i && a != j-1 {
			add(pa)
		}
		if b != a && b != i && b != j-1 {
			add(pb)
		}
		add(last)
		i = j
	}
	return out
}

// between reports whether b lies on the horizontal or vertical segment
// from a to c.
func between(a, b, c vg.Point) bool {
	in := func(lo, v, hi vg.Length) bool { return min(lo, hi) <= v && v <= max(lo, hi) }
	return a.Y == b.Y && b.Y == c.Y && in(a.X, b.X, c.X) ||
		a.X == b.X && b.X == c.X && in(a.Y, b.Y, c.Y)
}

// ringGlyph is draw.RingGlyph (a circle stroked 0.5 pt wide) but on a
// PNG canvas, where it fills the annulus the stroke covers instead: the
// same ring to within the rasterizer's curve flattening, at a sixth of
// the instructions (gg strokes the flattened circle through freetype's
// stroker, round joins and all: 120 k instructions a ring, 57 M for the
// HPC2N run's wait_by_size outliers). TestRingGlyphDrawsAlike bounds the
// difference.
type ringGlyph struct{}

// ringFill makes ringGlyph fill its rings on PNG canvases (a test hook).
var ringFill = true

func (ringGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	if !ringFill || !onPNG(c) {
		draw.RingGlyph{}.DrawGlyph(c, sty, pt)
		return
	}
	w := vg.Points(0.5)
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: w})
	ro, ri := sty.Radius+w/2, sty.Radius-w/2
	p := make(vg.Path, 0, 6)
	p.Move(vg.Point{X: pt.X + ro, Y: pt.Y})
	p.Arc(pt, ro, 0, 2*math.Pi)
	p.Close()
	p.Move(vg.Point{X: pt.X + ri, Y: pt.Y})
	p.Arc(pt, ri, 0, -2*math.Pi)
	p.Close()
	c.Fill(p)
}

// onPNG reports whether c draws on a PNG canvas (a blankCanvas, under
// any draw.Canvas wrappers).
func onPNG(c *draw.Canvas) bool {
	var v vg.Canvas = c.Canvas
	for {
		switch cv := v.(type) {
		case *blankCanvas:
			return true
		case draw.Canvas:
			v = cv.Canvas
		case *draw.Canvas:
			v = cv.Canvas
		default:
			return false
		}
	}
}
