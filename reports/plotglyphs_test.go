package reports

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// TestEdgeLineDrawsAlike draws random plots of lines twice, once with the
// lines themselves and once through edgeLine, and wants the same SVG:
// lines of many widths whose vertices reach past the axis ranges set
// (and so are left out of the padding), stay inside them, tie at the
// extremes, or run on a log axis.
func TestEdgeLineDrawsAlike(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for iter := range 200 {
		type spec struct {
			xys   plotter.XYs
			width vg.Length
		}
		var lines []spec
		for range 1 + rng.IntN(3) {
			n := 1 + rng.IntN(300)
			xys := make(plotter.XYs, n)
			for i := range xys {
				xys[i] = plotter.XY{X: 1 + float64(rng.IntN(50)), Y: float64(rng.IntN(20)) - 2}
			}
			lines = append(lines, spec{xys, vg.Points(float64(rng.IntN(6)))})
		}
		logX := rng.IntN(4) == 0
		limits := rng.IntN(2) == 0
		svg := func(wrap bool) []byte {
			p := plot.New()
			p.Title.Text = "t"
			if logX {
				p.X.Scale = plot.LogScale{}
				p.X.Tick.Marker = plot.LogTicks{}
			}
			for _, l := range lines {
				line, err := plotter.NewLine(l.xys)
				if err != nil {
					t.Fatal(err)
				}
				line.LineStyle.Width = l.width
				if wrap {
					p.Add(newEdgeLine(line))
				} else {
					p.Add(line)
				}
			}
			if limits {
				p.X.Min, p.X.Max = 3, 40
				p.Y.Min, p.Y.Max = 0, 12
			}
			return plotSVG(t, p, 4*vg.Inch, 3*vg.Inch)
		}
		if !bytes.Equal(svg(false), svg(true)) {
			t.Fatalf("plot %d (log x %v, limits %v): the SVGs differ", iter, logX, limits)
		}
	}
}

// plotSVG draws p on a w × h SVG canvas and returns the file's bytes.
func plotSVG(t *testing.T, p *plot.Plot, w, h vg.Length) []byte {
	t.Helper()
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
