package reports

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"

	xdraw "golang.org/x/image/draw"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// thinFigures returns the figures of a synthetic run whose timeline has
// 2,400-odd bins of 10 s (about 6 vertices of each step line per pixel
// column), and those of an empty run.
func thinFigures() []Figure {
	a := Analyze(benchRecord(20000), SummaryOptions{SampleInterval: 10})
	figs := figures(a.waitRows(), &a.Timeline, "easy")
	return append(figs, Figures(nil, &Timeline{}, "")...)
}

// pngPixels returns f's PNG (WritePNG) decoded.
func pngPixels(t *testing.T, f *Figure) image.Image {
	t.Helper()
	var b bytes.Buffer
	if err := f.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
	m, err := png.Decode(&b)
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	return m
}

// TestFigurePNGTextInterpolator draws each figure's PNG with the text
// placed by nearest-neighbour sampling (pngTextInterpolator) and by gg's
// default, bilinear, and wants the same pixels but for rounding: the text
// lies at whole pixels, where both sample the glyph masks alike, and the
// two compositors (image/draw's DrawMask, x/image/draw's Over) may round
// a blend 1 apart (1 pixel of the 14 figures' 6.3 million here).
func TestFigurePNGTextInterpolator(t *testing.T) {
	a := Analyze(fixtureRecord(), fixtureOptions)
	figs := append(thinFigures(), figures(a.waitRows(), &a.Timeline, "fifo")...)
	for _, f := range figs {
		nn := pngPixels(t, &f)
		saved := pngTextInterpolator
		pngTextInterpolator = xdraw.BiLinear
		bl := pngPixels(t, &f)
		pngTextInterpolator = saved
		if n, most := pixelDiff(nn, bl); most > 1 || n > 10 {
			t.Errorf("%s: %d pixels differ, by %d at most; want at most 10, by 1", f.Name, n, most)
		}
	}
}

// pixelDiff returns how many pixels of a and b (of the same bounds)
// differ and by how much at most in a channel (0 to 255).
func pixelDiff(a, b image.Image) (n, most int) {
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p, q := color.NRGBAModel.Convert(a.At(x, y)).(color.NRGBA), color.NRGBAModel.Convert(b.At(x, y)).(color.NRGBA)
			if p == q {
				continue
			}
			n++
			for _, d := range []int{int(p.R) - int(q.R), int(p.G) - int(q.G), int(p.B) - int(q.B), int(p.A) - int(q.A)} {
				most = max(most, d, -d)
			}
		}
	}
	return n, most
}

// TestRingGlyphDrawsAlike draws wait_by_size's PNG with the box plots'
// outlier rings filled as annuli (ringGlyph) and stroked (draw.RingGlyph),
// for the 2,500 outliers of outlierWaits (one ring per quarter pixel row,
// as the figures draw them, and every ring) and the fixture's, and wants
// under 0.1 % of the pixels different, within 16 of 255 (a lone ring's
// edge differs by up to 4; where a few overlap, by up to 10; the HPC2N
// log's wait_by_size: 41 pixels, by 4 at most), or 48 where hundreds of
// rings are drawn over one another.
func TestRingGlyphDrawsAlike(t *testing.T) {
	a := Analyze(fixtureRecord(), fixtureOptions)
	saved := boxPlotter
	defer func() { boxPlotter = saved }()
	every := func(b *plotter.BoxPlot) plot.Plotter { return b }
	differ := 0
	for _, tc := range []struct {
		w    *waitRows
		box  func(*plotter.BoxPlot) plot.Plotter
		most int
	}{{outlierWaits(), every, 48}, {outlierWaits(), saved, 16}, {a.waitRows(), saved, 16}} {
		boxPlotter = tc.box // the plots are built at their first draw
		f := figures(tc.w, &Timeline{}, "easy")[3]
		filled := pngPixels(t, &f)
		ringFill = false
		stroked := pngPixels(t, &f)
		ringFill = true
		n, most := pixelDiff(filled, stroked)
		r := filled.Bounds()
		if n > r.Dx()*r.Dy()/1000 || most > tc.most {
			t.Errorf("%s: %d pixels differ, by %d at most; want under %d, by %d", f.Name, n, most, r.Dx()*r.Dy()/1000, tc.most)
		}
		t.Logf("%s: %d pixels differ, by %d at most", f.Name, n, most)
		differ += n
	}
	if differ == 0 {
		t.Error("no pixel differs: the figures draw no rings")
	}
}

// TestFigurePNGBlankFills draws each figure through WritePNG (whose
// canvas leaves out the white fills on the blank image) and on a plain
// vgimg canvas, and wants the same pixels.
func TestFigurePNGBlankFills(t *testing.T) {
	// The plain canvas places text as gg does by default
	// (TestFigurePNGTextInterpolator compares the two).
	saved := pngTextInterpolator
	defer func() { pngTextInterpolator = saved }()
	pngTextInterpolator = xdraw.BiLinear
	for _, f := range thinFigures() {
		got := pngPixels(t, &f)
		c := vgimg.NewWith(vgimg.UseWH(figWidth, figHeight), vgimg.UseDPI(figDPI), vgimg.UseBackgroundColor(color.White))
		f.draw(draw.New(c))
		want := c.Image()
		if got.Bounds() != want.Bounds() {
			t.Fatalf("%s: bounds %v, want %v", f.Name, got.Bounds(), want.Bounds())
		}
		r := want.Bounds()
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if g, w := color.NRGBAModel.Convert(got.At(x, y)), color.NRGBAModel.Convert(want.At(x, y)); g != w {
					t.Fatalf("%s: pixel (%d, %d) = %v, want %v", f.Name, x, y, g, w)
				}
			}
		}
	}
}

// TestThinLinesDrawAlike draws each figure with its lines thinned to the
// pixel grid and as they are, and wants them alike: at most 1 % of the
// pixels differ, and each of those lies within a pixel, across, of
// one that is not white in both (the edge of a line drawn in both).
func TestThinLinesDrawAlike(t *testing.T) {
	draw := func(thin bool) []image.Image {
		saved := thinLines
		defer func() { thinLines = saved }()
		thinLines = thin
		var ms []image.Image
		for _, f := range thinFigures() {
			ms = append(ms, pngPixels(t, &f))
		}
		return ms
	}
	thin, full := draw(true), draw(false)
	names := thinFigures()
	white := func(m image.Image, x, y int) bool {
		r, g, b, _ := m.At(x, y).RGBA()
		return r == 0xffff && g == 0xffff && b == 0xffff
	}
	var differ int
	for k := range thin {
		a, b := thin[k], full[k]
		r := a.Bounds()
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if color.NRGBAModel.Convert(a.At(x, y)) == color.NRGBAModel.Convert(b.At(x, y)) {
					continue
				}
				n++
				near := false
				for dx := -1; dx <= 1 && !near; dx++ {
					if xx := x + dx; xx >= r.Min.X && xx < r.Max.X {
						near = !white(a, xx, y) && !white(b, xx, y)
					}
				}
				if !near {
					t.Errorf("%s: pixel (%d, %d) differs (%v thinned, %v not) away from the lines", names[k].Name, x, y, a.At(x, y), b.At(x, y))
				}
			}
		}
		if n > r.Dx()*r.Dy()/100 {
			t.Errorf("%s: %d of %d pixels differ", names[k].Name, n, r.Dx()*r.Dy())
		}
		t.Logf("%s: %d pixels differ", names[k].Name, n)
		differ += n
	}
	if differ == 0 {
		t.Error("no figure's pixels changed: the test does not thin")
	}
}

// TestFigureLineDashedDrawsAlike draws dashed lines (left unthinned),
// with fills and on linear and log axes, through newFigureLine and as
// plotter.Line, and wants the same SVG: Plot's own placement of the
// points is plt.Transforms's.
func TestFigureLineDashedDrawsAlike(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for iter := range 50 {
		xys := make(plotter.XYs, 1+rng.IntN(400))
		for i := range xys {
			xys[i] = plotter.XY{X: 1 + rng.Float64()*1e4, Y: rng.Float64()*30 - 3}
		}
		logX := iter%2 == 1
		svg := func(wrap bool) []byte {
			p := plot.New()
			if logX {
				p.X.Scale = plot.LogScale{}
				p.X.Tick.Marker = plot.LogTicks{}
			}
			line, err := plotter.NewLine(xys)
			if err != nil {
				t.Fatal(err)
			}
			line.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			if iter%3 == 0 {
				line.FillColor = color.Gray{Y: 200}
			}
			if wrap {
				p.Add(newFigureLine(line))
			} else {
				p.Add(line)
			}
			p.Y.Min, p.Y.Max = 0, 25
			return plotSVG(t, p, figWidth, figHeight)
		}
		if !bytes.Equal(svg(false), svg(true)) {
			t.Fatalf("plot %d (log x %v): the SVGs differ", iter, logX)
		}
	}
}
