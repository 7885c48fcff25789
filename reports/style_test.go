package reports

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

func tickLabels(ts []plot.Tick) string {
	var out []string
	for _, t := range ts {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return strings.Join(out, " ")
}

// TestNiceTicks checks the linear ticks on ranges worked by hand: the
// step is the 1, 2 or 5 × 10ⁿ that gives at most 8 parts (span / step),
// so the queue-demand axis of 0–1620 GPUs (1200 × 1.35) gets four ticks,
// not the two gonum's default left it.
func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 1620, "0 500 1000 1500"},             // raw 324, mag 100: 1→16.2 > 8, 2→8.1 > 8, 5→3.24
		{0, 13.5, "0 2 4 6 8 10 12"},             // raw 2.7, mag 1: 1→13.5 > 8, 2→6.75
		{0, 1.35, "0.0 0.2 0.4 0.6 0.8 1.0 1.2"}, // raw 0.27, mag 0.1: 1→13.5, 2→6.75
		{0, 7, "0 1 2 3 4 5 6 7"},                // raw 1.4, mag 1: 1→7
		{-3, 3, "-3 -2 -1 0 1 2 3"},              // raw 1.2, mag 1: 1→6
		{5, 5, "5"},
	} {
		if got := tickLabels(niceTicks{}.Ticks(c.lo, c.hi)); got != c.want {
			t.Errorf("ticks of [%g, %g] = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

// TestBandFigureTicksAtSweptValues checks that a numeric sweep axis has a
// tick at each swept value and nowhere else.
func TestBandFigureTicksAtSweptValues(t *testing.T) {
	fig := BandFigure("m_vs_load", "m vs load", "load scale", "m", nil, []BandSeries{{
		Label: "m", X: []float64{0.8, 1, 1.25}, Mean: []float64{1, 2, 3}, Lo: []float64{1, 2, 3}, Hi: []float64{1, 2, 3}, Replications: 1,
	}})
	var b bytes.Buffer
	if err := fig.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{">0.8<", ">1<", ">1.25<"} {
		if !strings.Contains(b.String(), v) {
			t.Errorf("no tick label %s on the swept axis", v)
		}
	}
	// A round tick like 0.9 or 1.2 would miss the swept values.
	if regexp.MustCompile(`>(0\.9|1\.1|1\.2)<`).MatchString(b.String()) {
		t.Errorf("the swept axis has ticks between the swept values")
	}
}

func TestDurationUnit(t *testing.T) {
	for _, c := range []struct {
		max  float64
		unit string
	}{{59, "s"}, {119, "s"}, {120, "min"}, {7199, "min"}, {7200, "h"}, {3 * 86400, "h"}, {4 * 86400, "d"}} {
		if _, u := DurationUnit(c.max); u != c.unit {
			t.Errorf("DurationUnit(%g) = %s, want %s", c.max, u, c.unit)
		}
	}
}
