package reports

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Figure is one plot of a run, drawable as PNG and SVG.
type Figure struct {
	// Name is the file name without extension ("gpu_utilization").
	Name string
	// Title is the plot's title, for the HTML report.
	Title string
	draw  func(c draw.Canvas)
	svg   []byte // the SVG, once drawn
}

// Figure size: 9 × 5 inches; PNGs at 100 dots per inch (900 × 500 px).
const (
	figWidth  = 9 * vg.Inch
	figHeight = 5 * vg.Inch
	figDPI    = 100
)

// WriteSVG writes the figure as SVG (fonts referenced by name, not
// embedded). The same figure gives the same bytes.
func (f *Figure) WriteSVG(w io.Writer) error {
	if f.svg == nil {
		// Drawn once: plots/*.svg and report.html write the same bytes.
		c := vgsvg.New(figWidth, figHeight)
		f.draw(draw.New(c))
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			return err
		}
		f.svg = []byte(svgFontFallback.Replace(b.String()))
	}
	_, err := w.Write(f.svg)
	return err
}

// svgFontFallback names fonts with Liberation Sans's metrics after it
// (Arial, Helvetica), so a viewer without it draws text of the widths the
// layout was measured with, not a wider default sans-serif that runs
// legends off the plot.
var svgFontFallback = strings.NewReplacer("font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")

// WritePNG writes the figure as a PNG of 900 × 500 pixels on white.
func (f *Figure) WritePNG(w io.Writer) error {
	c := newPNGCanvas()
	f.draw(draw.New(&blankCanvas{Canvas: c}))
	if m, ok := c.Image().(*image.RGBA); ok {
		err := encodePNG(w, m)
		pngImages.Put(m)
		return err
	}
	b := bufio.NewWriter(w)
	if err := pngEncoder.Encode(b, c.Image()); err != nil {
		return err
	}
	return b.Flush()
}

// svgBody returns the figure's SVG without the XML declaration, for
// inlining in HTML.
func (f *Figure) svgBody() ([]byte, error) {
	var b bytes.Buffer
	if err := f.WriteSVG(&b); err != nil {
		return nil, err
	}
	out := b.Bytes()
	if i := bytes.Index(out, []byte("<svg")); i >= 0 {
		out = out[i:]
	}
	return out, nil
}

// Figures returns the plots of a run from its job rows and timeline (what
// jobs.parquet and timeline.parquet hold), in a fixed order:
//
//   - gpu_utilization: allocated GPUs as a percentage of the cluster's,
//     per bin, stacked by the partition the jobs ran in;
//   - queue: queued jobs (top) and the GPUs they ask for (bottom), bin
//     averages, with the cluster's GPU count for scale;
//   - wait_cdf: the cumulative distribution of waits of started jobs, per
//     partition and overall, on a logarithmic time axis (waits under one
//     second are drawn at one second);
//   - wait_by_size: box plots of waits by job-size class (SizeClassOf),
//     logarithmic, same floor; boxes span the quartiles, whiskers reach
//     the furthest point within 1.5 IQR, points beyond are drawn;
//   - fragmentation: free GPUs and free GPUs no eligible queued job could
//     use, at each bin's start;
//   - energy, only when the cluster has a power model (Timeline.Power):
//     the cluster's mean IT power per bin in kW (Sample.EnergyKWh over the
//     bin's hours), with its cumulative energy in the title.
//
// label heads every title (the run's policy, say).
func Figures(jobs []JobRow, tl *Timeline, label string) []Figure {
	return figures(waitRowsOf(jobs), tl, label)
}

// waitRows is what the wait figures read of the started jobs' rows, in
// job order: 16 bytes a job, the partition and size class as indices (a
// million jobs' rows are kept from the analysis until the plots).
type waitRows struct {
	rows  []waitRow
	parts []string       // partition names, by index
	index map[string]int // into parts
}

type waitRow struct {
	Wait sim.Time
	part uint32 // index into waitRows.parts
	size uint8  // index into SizeClasses()
}

// add appends a row of a started job.
func (w *waitRows) add(partition, sizeClass string, wait sim.Time) {
	k, ok := w.index[partition]
	if !ok {
		if w.index == nil {
			w.index = map[string]int{}
		}
		k = len(w.parts)
		w.index[partition] = k
		w.parts = append(w.parts, partition)
	}
	w.rows = append(w.rows, waitRow{Wait: wait, part: uint32(k), size: uint8(sizeClassIndex(sizeClass))})
}

// partition and sizeClass return row i's names.
func (w *waitRows) partition(i int) string { return w.parts[w.rows[i].part] }

func (w *waitRows) sizeClass(i int) string {
	if k := int(w.rows[i].size); k < len(sizeClasses) {
		return sizeClasses[k].name
	}
	return "" // not a class of SizeClasses (a row read from a file): not drawn
}

// sizeClassIndex returns the index of a SizeClassOf name, or 255 for
// any other.
func sizeClassIndex(name string) int {
	for i, c := range sizeClasses {
		if c.name == name {
			return i
		}
	}
	return 255
}

// waitRowsOf returns the wait rows of jobs' started jobs, in order.
func waitRowsOf(jobs []JobRow) *waitRows {
	out := &waitRows{}
	for i := range jobs {
		if r := &jobs[i]; r.Wait != workload.Unknown {
			out.add(r.Partition, r.SizeClass, r.Wait)
		}
	}
	return out
}

// figures is Figures over the started jobs' waits.
func figures(jobs *waitRows, tl *Timeline, label string) []Figure {
	prefix := ""
	if label != "" {
		prefix = label + ": "
	}
	figs := []Figure{
		{Name: "gpu_utilization", Title: prefix + "GPU utilization by partition", draw: drawOnce(func() *plot.Plot {
			return plotUtilization(tl, prefix+"GPU utilization by partition")
		})},
		{Name: "queue", Title: prefix + "Queue length and pending GPU demand", draw: queueDraw(tl, prefix+"Queue length and pending GPU demand")},
		{Name: "wait_cdf", Title: prefix + "Wait-time CDF by partition", draw: drawOnce(func() *plot.Plot {
			return plotWaitCDF(jobs, prefix+"Wait-time CDF by partition")
		})},
		{Name: "wait_by_size", Title: prefix + "Wait by job size", draw: drawOnce(func() *plot.Plot {
			return plotWaitBySize(jobs, prefix+"Wait by job size (GPUs requested)")
		})},
		{Name: "fragmentation", Title: prefix + "Free and unusable GPUs", draw: drawOnce(func() *plot.Plot {
			return plotFragmentation(tl, prefix+"Fragmentation: free GPUs no queued job can use")
		})},
	}
	if tl.Power {
		figs = append(figs, Figure{Name: "energy", Title: prefix + "IT power", draw: drawOnce(func() *plot.Plot {
			return plotEnergy(tl, prefix+"IT power")
		})})
	}
	return figs
}

// drawOnce returns a Figure's draw that builds its plot on the first
// call and draws the same plot on every call: the PNG and the SVG of a
// figure are drawn from one plot, its data (sorted waits, step lines)
// made once. Drawing does not change a plot, so both are as if drawn from
// plots of their own.
func drawOnce(build func() *plot.Plot) func(c draw.Canvas) {
	var p *plot.Plot
	return func(c draw.Canvas) {
		if p == nil {
			p = build()
		}
		p.Draw(c)
	}
}

// plotEnergy draws the mean IT power of each bin, in kW.
func plotEnergy(tl *Timeline, title string) *plot.Plot {
	var total float64
	for i := range tl.Samples {
		total += tl.Samples[i].EnergyKWh
	}
	p := newPlot(fmt.Sprintf("%s (%.1f kWh in all)", title, total), "", "kW (bin mean)")
	timeAxis(p, tl)
	p.Y.Min = 0
	if len(tl.Samples) == 0 {
		noData(p)
		return p
	}
	line, _ := plotter.NewLine(steps(tl, func(s *Sample) float64 {
		if s.Len() <= 0 {
			return 0
		}
		return s.EnergyKWh / (float64(s.Len()) / 3600)
	}))
	styleLine(&line.LineStyle, 1)
	p.Add(newFigureLine(line))
	var peak float64
	for _, xy := range line.XYs {
		peak = max(peak, xy.Y)
	}
	p.Y.Max = max(peak, 1) * 1.2
	return p
}

// percentTicks labels 0 to 100 % on an axis with headroom above 100.
var percentTicks = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 25, Label: "25"},
	{Value: 50, Label: "50"}, {Value: 75, Label: "75"}, {Value: 100, Label: "100"}})

// timeAxis sets the x axis of p to dates in UTC for Unix times.
func timeAxis(p *plot.Plot, tl *Timeline) {
	p.X.Tick.Marker = dateTicker{}
	year := ""
	if len(tl.Samples) > 0 {
		year = ", " + time.Unix(tl.Epoch+int64(tl.Samples[0].Start), 0).UTC().Format("2006")
	}
	p.X.Label.Text = "Date (UTC" + year + ")"
}

// dateTicker puts ticks on whole hours or days (UTC), 4 to 10 of them.
type dateTicker struct{}

func (dateTicker) Ticks(lo, hi float64) []plot.Tick {
	steps := []int64{900, 1800, 3600, 2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400,
		7 * 86400, 14 * 86400, 28 * 86400, 91 * 86400, 182 * 86400, 364 * 86400}
	span := hi - lo
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/float64(s) <= 9 {
			step = s
			break
		}
	}
	format := "Jan 2"
	if step < 86400 {
		format = "Jan 2 15:04"
	}
	var ticks []plot.Tick
	for t := int64(math.Ceil(lo/float64(step))) * step; float64(t) <= hi; t += step {
		ticks = append(ticks, plot.Tick{Value: float64(t), Label: time.Unix(t, 0).UTC().Format(format)})
	}
	return ticks
}

// durationTicker labels a logarithmic axis of seconds with round
// durations.
type durationTicker struct{}

var durationTicks = []struct {
	v     float64
	label string
}{
	{1, "1 s"}, {10, "10 s"}, {60, "1 min"}, {600, "10 min"}, {3600, "1 h"}, {6 * 3600, "6 h"},
	{86400, "1 d"}, {7 * 86400, "7 d"}, {28 * 86400, "28 d"}, {365 * 86400, "1 y"},
}

func (durationTicker) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for _, t := range durationTicks {
		if t.v >= lo && t.v <= hi {
			ticks = append(ticks, plot.Tick{Value: t.v, Label: t.label})
		}
	}
	return ticks
}

// steps returns the points of a step line: value v[i] over bin i.
func steps(tl *Timeline, v func(s *Sample) float64) plotter.XYs {
	xy := make(plotter.XYs, 0, 2*len(tl.Samples))
	for i := range tl.Samples {
		s := &tl.Samples[i]
		y := v(s)
		xy = append(xy,
			plotter.XY{X: float64(tl.Epoch + int64(s.Start)), Y: y},
			plotter.XY{X: float64(tl.Epoch + int64(s.End)), Y: y})
	}
	return xy
}

func plotUtilization(tl *Timeline, title string) *plot.Plot {
	p := newPlot(title, "", "GPUs allocated (% of cluster)")
	timeAxis(p, tl)
	// Room above 100 % for the legend.
	p.Y.Min, p.Y.Max = 0, 100+12*float64(len(tl.Partitions)+1)
	p.Y.Tick.Marker = percentTicks
	p.Legend.Top = true
	n := len(tl.Samples)
	cum := make([]float64, n) // stacked so far, percent
	type layer struct {
		name string
		poly *plotter.Polygon
	}
	var layers []layer
	for k, name := range tl.Partitions {
		var used bool
		lower := slices.Clone(cum)
		for i := range tl.Samples {
			s := &tl.Samples[i]
			if s.PartGPUSeconds[k] > 0 {
				used = true
			}
			cum[i] += 100 * ratio(s.PartGPUSeconds[k], tl.GPUs*s.Len())
		}
		if !used {
			continue
		}
		var ring plotter.XYs
		for i := range tl.Samples {
			s := &tl.Samples[i]
			ring = append(ring, plotter.XY{X: float64(tl.Epoch + int64(s.Start)), Y: cum[i]},
				plotter.XY{X: float64(tl.Epoch + int64(s.End)), Y: cum[i]})
		}
		for i := n - 1; i >= 0; i-- {
			s := &tl.Samples[i]
			ring = append(ring, plotter.XY{X: float64(tl.Epoch + int64(s.End)), Y: lower[i]},
				plotter.XY{X: float64(tl.Epoch + int64(s.Start)), Y: lower[i]})
		}
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			continue
		}
		poly.Color = fade(seriesColor(len(layers)))
		poly.LineStyle.Width = 0
		layers = append(layers, layer{name, poly})
		p.Add(poly)
	}
	// Legend in stacking order, top layer first.
	for i := len(layers) - 1; i >= 0; i-- {
		p.Legend.Add(layers[i].name, layers[i].poly)
	}
	if n > 0 {
		total := steps(tl, func(s *Sample) float64 { return 100 * tl.GPUUtil(s) })
		if l, err := plotter.NewLine(total); err == nil {
			l.LineStyle.Width = vg.Points(0.8)
			l.LineStyle.Color = color.Black
			p.Add(newFigureLine(l))
			p.Legend.Add("all partitions", l)
		}
	} else {
		noData(p)
	}
	return p
}

// fade lightens c for filled areas.
func fade(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8)*3/4 + 255/4) }
	return color.RGBA{mix(r), mix(g), mix(b), 255}
}

// queueDraw returns the queue figure's draw: its two plots built on the
// first call (as drawOnce), aligned and drawn on every call.
func queueDraw(tl *Timeline, title string) func(c draw.Canvas) {
	var top, bottom *plot.Plot
	return func(c draw.Canvas) {
		if top == nil {
			top, bottom = queuePlots(tl, title)
		}
		tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(2), PadBottom: vg.Points(2), PadLeft: vg.Points(2), PadRight: vg.Points(8), PadY: vg.Points(6)}
		canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, c)
		top.Draw(canvases[0][0])
		bottom.Draw(canvases[1][0])
	}
}

// queuePlots returns the queue figure's plots: the mean queue length above
// the pending GPU demand.
func queuePlots(tl *Timeline, title string) (top, bottom *plot.Plot) {
	top = newPlot(title, "", "Queued jobs (mean)")
	bottom = newPlot("", "", "Pending GPU demand (GPUs)")
	for _, p := range []*plot.Plot{top, bottom} {
		timeAxis(p, tl)
		p.Y.Min = 0
		p.Legend.Top = true
	}
	top.X.Label.Text = ""
	if len(tl.Samples) > 0 {
		q, _ := plotter.NewLine(steps(tl, func(s *Sample) float64 { return ratio(s.QueueSeconds, s.Len()) }))
		styleLine(&q.LineStyle, 0)
		top.Add(newFigureLine(q))
		top.Legend.Add("queued jobs", q)
		d, _ := plotter.NewLine(steps(tl, func(s *Sample) float64 { return ratio(s.PendingGPUSeconds, s.Len()) }))
		styleLine(&d.LineStyle, 1)
		bottom.Add(newFigureLine(d))
		bottom.Legend.Add("GPUs requested by queued jobs", d)
		capLine, _ := plotter.NewLine(plotter.XYs{
			{X: float64(tl.Epoch + int64(tl.Samples[0].Start)), Y: float64(tl.GPUs)},
			{X: float64(tl.Epoch + int64(tl.Samples[len(tl.Samples)-1].End)), Y: float64(tl.GPUs)},
		})
		capLine.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		capLine.LineStyle.Color = color.Gray{Y: 90}
		bottom.Add(newFigureLine(capLine))
		bottom.Legend.Add(fmt.Sprintf("cluster GPUs (%d)", tl.GPUs), capLine)
		var maxQ, maxD float64
		for i := range tl.Samples {
			s := &tl.Samples[i]
			maxQ = max(maxQ, ratio(s.QueueSeconds, s.Len()))
			maxD = max(maxD, ratio(s.PendingGPUSeconds, s.Len()))
		}
		top.Y.Max = max(maxQ, 1) * 1.3
		bottom.Y.Max = max(maxD, float64(tl.GPUs), 1) * 1.35
	} else {
		noData(top)
		noData(bottom)
	}
	return top, bottom
}

// waitsByPartition returns the waits (seconds, at least 1) of started
// jobs per partition in first-seen order, and over all jobs.
func waitsByPartition(jobs *waitRows) (names []string, by map[string][]float64, all []float64) {
	by = map[string][]float64{}
	for i := range jobs.rows {
		r := &jobs.rows[i]
		if r.Wait == workload.Unknown {
			continue
		}
		w := max(float64(r.Wait), 1)
		p := jobs.partition(i)
		if _, ok := by[p]; !ok {
			names = append(names, p)
		}
		by[p] = append(by[p], w)
		all = append(all, w)
	}
	slices.Sort(names)
	return names, by, all
}

// cdf returns the empirical CDF of xs (which it sorts) as a step line's
// points: one point per distinct value.
func cdf(xs []float64) plotter.XYs {
	slices.Sort(xs)
	n := float64(len(xs))
	var xy plotter.XYs
	for i, x := range xs {
		if i+1 < len(xs) && xs[i+1] == x {
			continue
		}
		if len(xy) > 0 {
			xy = append(xy, plotter.XY{X: x, Y: xy[len(xy)-1].Y})
		} else {
			xy = append(xy, plotter.XY{X: x, Y: 0})
		}
		xy = append(xy, plotter.XY{X: x, Y: float64(i+1) / n})
	}
	return xy
}

func plotWaitCDF(jobs *waitRows, title string) *plot.Plot {
	p := newPlot(title, "Wait (log scale; waits under 1 s drawn at 1 s)", "Fraction of started jobs")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = durationTicker{}
	p.Y.Min, p.Y.Max = 0, 1
	// The lower right stays empty: a CDF rises to the right.
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.XOffs = -vg.Points(15)
	p.Legend.YOffs = vg.Points(20)
	names, by, all := waitsByPartition(jobs)
	if len(all) == 0 {
		noData(p)
		p.X.Min, p.X.Max = 1, 86400
		return p
	}
	// At least a minute of axis: a log axis needs Max > Min, and when every
	// job started at once every wait is drawn at 1 s.
	maxW := 60.0
	for k, name := range names {
		l, err := plotter.NewLine(cdf(by[name]))
		if err != nil {
			continue
		}
		styleLine(&l.LineStyle, k)
		p.Add(newFigureLine(l))
		p.Legend.Add(fmt.Sprintf("%s (%d jobs)", orNone(name), len(by[name])), l)
	}
	l, err := plotter.NewLine(cdf(all))
	if err == nil {
		l.LineStyle.Color = color.Black
		l.LineStyle.Width = vg.Points(1.5)
		l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(newFigureLine(l))
		p.Legend.Add(fmt.Sprintf("all (%d jobs)", len(all)), l)
	}
	maxW = max(maxW, all[len(all)-1])
	p.X.Min, p.X.Max = 1, 60
	for _, t := range durationTicks {
		if p.X.Max = t.v; t.v >= maxW {
			break
		}
	}
	return p
}

func plotWaitBySize(jobs *waitRows, title string) *plot.Plot {
	p := newPlot(title, "Job size (GPUs requested; n = started jobs)", "Wait (log scale)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = durationTicker{}
	by := map[string]plotter.Values{}
	for i := range jobs.rows {
		if w := jobs.rows[i].Wait; w != workload.Unknown {
			by[jobs.sizeClass(i)] = append(by[jobs.sizeClass(i)], max(float64(w), 1))
		}
	}
	var names []string
	maxW := 60.0
	for _, class := range SizeClasses() {
		vs := by[class]
		if len(vs) == 0 {
			continue
		}
		b, err := plotter.NewBoxPlot(vg.Points(28), float64(len(names)), vs)
		if err != nil {
			continue
		}
		b.FillColor = fade(seriesColor(len(names)))
		b.GlyphStyle.Radius = vg.Points(1.5)
		b.GlyphStyle.Shape = ringGlyph{}
		p.Add(boxPlotter(b))
		label := class + " GPUs"
		if class == "1" {
			label = "1 GPU"
		}
		names = append(names, fmt.Sprintf("%s\nn = %d", label, len(vs)))
		maxW = max(maxW, slices.Max(vs))
	}
	if len(names) == 0 {
		noData(p)
		names = []string{""}
	}
	p.NominalX(names...)
	p.Y.Min, p.Y.Max = 1, maxW*1.5
	return p
}

// sparseBoxPlot is a box plot that draws one outlier glyph per quarter
// pixel row of the PNG (1/(4·figDPI) inch) rather than one per outlier:
// a class of thousands of jobs has thousands of outliers, and the rings
// that land on one row cover one another. Each row's ring is its first
// outlier's, at that outlier's position; where many anti-aliased rings
// were drawn over one another the edges come out lighter (under 0.2 % of
// the pixels differ, all in the outlier columns: see
// TestSparseBoxPlotRaster). The SVG draws the same rings. Its glyph boxes, which only the outermost
// outliers shape, lay the plot out as plotter.BoxPlot's do.
type sparseBoxPlot struct{ *plotter.BoxPlot }

// boxPlotter wraps the wait figure's box plots (a test hook).
var boxPlotter = func(b *plotter.BoxPlot) plot.Plotter { return sparseBoxPlot{b} }

func (b sparseBoxPlot) Plot(c draw.Canvas, plt *plot.Plot) {
	all := b.Outside
	_, trY := plt.Transforms(&c)
	seen := map[int64]bool{}
	var keep []int
	for _, out := range all {
		y := trY(b.Value(out))
		if !c.ContainsY(y) {
			continue
		}
		row := int64(math.Floor(float64(y) * 4 * figDPI / vg.Inch.Points()))
		if !seen[row] {
			seen[row] = true
			keep = append(keep, out)
		}
	}
	b.Outside = keep
	b.BoxPlot.Plot(c, plt)
	b.Outside = all
}

// GlyphBoxes returns BoxPlot's boxes for the median and for three
// outliers: the first, the lowest inside the axis and the highest inside
// it. plot.Plot pads its data area from the outermost glyph boxes inside
// the axes (and the outliers' boxes differ only in height), so the
// layout is the one all outliers give.
func (b sparseBoxPlot) GlyphBoxes(plt *plot.Plot) []plot.GlyphBox {
	all := b.Outside
	if len(all) > 3 {
		lo, hi := -1, -1
		for _, out := range all {
			v := b.Value(out)
			if n := plt.Y.Norm(v); n < 0 || n > 1 {
				continue
			}
			if lo < 0 || v < b.Value(lo) {
				lo = out
			}
			if hi < 0 || v > b.Value(hi) {
				hi = out
			}
		}
		keep := []int{all[0]}
		for _, k := range []int{lo, hi} {
			if k >= 0 {
				keep = append(keep, k)
			}
		}
		b.Outside = keep
	}
	boxes := b.BoxPlot.GlyphBoxes(plt)
	b.Outside = all
	return boxes
}

func plotFragmentation(tl *Timeline, title string) *plot.Plot {
	p := newPlot(title, "", "GPUs (at each sample)")
	timeAxis(p, tl)
	p.Y.Min = 0
	p.Legend.Top = true
	if len(tl.Samples) == 0 {
		noData(p)
		return p
	}
	free, _ := plotter.NewLine(steps(tl, func(s *Sample) float64 { return float64(s.FreeGPUs) }))
	styleLine(&free.LineStyle, 2)
	unusable, _ := plotter.NewLine(steps(tl, func(s *Sample) float64 { return float64(s.UnusableFreeGPUs) }))
	unusable.LineStyle.Width = 0
	unusable.FillColor = fade(seriesColor(0))
	// The area first, so the free line stays visible on top of it.
	p.Add(newFigureLine(unusable), newFigureLine(free))
	p.Legend.Add("free GPUs", free)
	p.Legend.Add("free GPUs no eligible queued job can use", unusable)
	var maxFree float64
	for i := range tl.Samples {
		maxFree = max(maxFree, float64(tl.Samples[i].FreeGPUs))
	}
	p.Y.Max = max(maxFree, 1) * 1.25
	return p
}

// noData marks an empty plot.
func noData(p *plot.Plot) {
	p.Title.Text += " (no data)"
	p.X.Min, p.X.Max = 0, 1
	if p.Y.Max <= p.Y.Min {
		p.Y.Min, p.Y.Max = 0, 1
	}
}

// OverlayFigures draws A and B together: their wait-time CDFs and their
// GPU utilization over time (bin averages, against days since each run's
// first submit, so runs of different traces line up).
func OverlayFigures(a, b *CompareRun) []Figure {
	runs := []*CompareRun{a, b}
	return []Figure{
		{Name: "wait_cdf", Title: "Wait-time CDF, A vs B", draw: func(c draw.Canvas) {
			p := newPlot("Wait-time CDF: "+a.Label+" vs "+b.Label, "Wait (log scale; waits under 1 s drawn at 1 s)", "Fraction of started jobs")
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = durationTicker{}
			p.Y.Min, p.Y.Max = 0, 1
			p.Legend.Top, p.Legend.Left = false, false
			p.Legend.XOffs, p.Legend.YOffs = -vg.Points(15), vg.Points(20)
			maxW := 60.0
			for k, r := range runs {
				_, _, all := waitsByPartition(waitRowsOf(r.Jobs))
				if len(all) == 0 {
					continue
				}
				addLine(p, cdf(all), k, fmt.Sprintf("%s (%d jobs)", r.Label, len(all)))
				maxW = max(maxW, slices.Max(all))
			}
			p.X.Min, p.X.Max = 1, 60
			for _, t := range durationTicks {
				if p.X.Max = t.v; t.v >= maxW {
					break
				}
			}
			p.Draw(c)
		}},
		{Name: "gpu_utilization", Title: "GPU utilization, A vs B", draw: func(c draw.Canvas) {
			p := newPlot("GPU utilization: "+a.Label+" vs "+b.Label, "Days since first submit", "GPUs allocated (% of cluster)")
			p.Y.Min, p.Y.Max = 0, 125 // room above 100 % for the legend
			p.Y.Tick.Marker = percentTicks
			p.Legend.Top = true
			for k, r := range runs {
				tl := r.Timeline
				if tl == nil || len(tl.Samples) == 0 {
					continue
				}
				t0 := float64(tl.Samples[0].Start)
				var xy plotter.XYs
				for i := range tl.Samples {
					s := &tl.Samples[i]
					u := 100 * tl.GPUUtil(s)
					xy = append(xy, plotter.XY{X: (float64(s.Start) - t0) / 86400, Y: u}, plotter.XY{X: (float64(s.End) - t0) / 86400, Y: u})
				}
				addLine(p, xy, k, r.Label)
			}
			p.Draw(c)
		}},
	}
}

// addLine adds a line of xys in the k-th colour to p and its legend.
func addLine(p *plot.Plot, xys plotter.XYs, k int, label string) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return
	}
	styleLine(&l.LineStyle, k)
	if k > 0 {
		l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
	}
	p.Add(newFigureLine(l))
	p.Legend.Add(label, l)
}
