package reports

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/schedsim/schedsim/sim"
)

// TestSparseBoxPlotRaster draws wait_by_size with every outlier's ring
// (plotter.BoxPlot) and with one per pixel row (sparseBoxPlot), decodes
// both PNGs and compares them: the figures must differ only inside the
// outlier columns (so the layout, boxes, whiskers, axes and labels are
// the same pixels), and there only by the lighter edges of rings that
// had many others drawn over them.
func TestSparseBoxPlotRaster(t *testing.T) {
	w := outlierWaits()
	draw := func(wrap func(*plotter.BoxPlot) plot.Plotter) (image.Image, int) {
		saved := boxPlotter
		defer func() { boxPlotter = saved }()
		n := 0
		boxPlotter = func(b *plotter.BoxPlot) plot.Plotter { n += len(b.Outside); return wrap(b) }
		f := figures(w, &Timeline{}, "easy")[3]
		var buf bytes.Buffer
		if err := f.WritePNG(&buf); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return img, n
	}
	all, outliers := draw(func(b *plotter.BoxPlot) plot.Plotter { return b })
	sparse, _ := draw(func(b *plotter.BoxPlot) plot.Plotter { return sparseBoxPlot{b} })
	if outliers < 1000 {
		t.Fatalf("%d outliers; the test wants thousands", outliers)
	}
	if all.Bounds() != sparse.Bounds() {
		t.Fatalf("bounds %v vs %v", all.Bounds(), sparse.Bounds())
	}
	// The outlier columns: the two boxes' centres, found as the columns
	// where the images differ, must be at most 2 × (ring radius 1.5 pt +
	// line) ≈ 6 px wide each.
	b := all.Bounds()
	cols := map[int]bool{}
	var diff, maxd int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r1, g1, b1, _ := all.At(x, y).RGBA()
			r2, g2, b2, _ := sparse.At(x, y).RGBA()
			d := max(absDiff(r1, r2), absDiff(g1, g2), absDiff(b1, b2)) >> 8
			if d > 0 {
				diff++
				maxd = max(maxd, int(d))
				cols[x] = true
			}
		}
	}
	if len(cols) > 2*7 {
		t.Errorf("pixels differ in %d columns, want those of two rings of outliers (≤ 14)", len(cols))
	}
	t.Logf("%d outliers; %d of %d pixels differ (max %d/255 in a channel) in %d columns", outliers, diff, b.Dx()*b.Dy(), maxd, len(cols))
	if diff > b.Dx()*b.Dy()/200 {
		t.Errorf("%d pixels differ, more than 0.5 %%", diff)
	}
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// outlierWaits are two classes of 5,000 jobs: most start at once, a long
// tail of outliers spread log-uniformly over 10 min to 2 d, many per
// pixel.
func outlierWaits() *waitRows {
	rng := rand.New(rand.NewPCG(18, 4))
	var w waitRows
	for k := range 10000 {
		wait := sim.Time(0)
		if rng.IntN(4) == 0 {
			wait = sim.Time(600 * math.Pow(288, rng.Float64()))
		}
		w.add("all", []string{"0", "1"}[k%2], wait)
	}
	return &w
}
