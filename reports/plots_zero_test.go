package reports

import (
	"io"
	"testing"

	"github.com/schedsim/schedsim/sim"
)

// TestFiguresAllWaitsZero: when every job starts the moment it is submitted
// the log-scale wait axes have a single value (waits are drawn at 1 s); the
// figures must still draw instead of panicking (gonum's log scale needs
// Max > Min).
func TestFiguresAllWaitsZero(t *testing.T) {
	rec := fixtureRecord()
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		if j.Start != sim.Time(-1) {
			d := j.Start - j.Submit
			j.Start -= d
			if j.End != sim.Time(-1) {
				j.End -= d
			}
		}
	}
	a := Analyze(rec, fixtureOptions)
	for _, f := range Figures(a.Jobs, &a.Timeline, "zero") {
		if err := f.WritePNG(io.Discard); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		if err := f.WriteSVG(io.Discard); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}
