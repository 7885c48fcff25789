package sweep

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/schedsim/schedsim/policies"
)

// PilotPoint picks the scenario a pilot runs: the first of those with the
// largest load scale (most jobs), the best guess at the heaviest without
// building every scenario.
func (sw *Sweep) PilotPoint() int {
	best := 0
	for i, p := range sw.Points {
		if p.LoadScale > sw.Points[best].LoadScale {
			best = i
		}
	}
	return best
}

// Pilot runs point i with its outputs in dir/runs (so the array task that
// owns it will skip it), and returns its wall time and the process's peak
// resident memory, the inputs of EstimateTask. Wall-clock time is read
// here, outside the simulation, only to size the array's requests.
func Pilot(sw *Sweep, i int, dir string, reg policies.Registry) (wallS float64, peakBytes int64, err error) {
	if !(i >= 0 && i < len(sw.Points)) {
		return 0, 0, fmt.Errorf("pilot scenario %d: the sweep has scenarios 0 to %d", i, len(sw.Points)-1)
	}
	pt := &sw.Points[i]
	start := time.Now()
	r := RunPoint(pt, filepath.Join(dir, RunsDir, pt.Dir), reg, true)
	wallS = time.Since(start).Seconds()
	if r.Err != nil {
		return 0, 0, fmt.Errorf("pilot: %w", r.Err)
	}
	return wallS, peakRSS(), nil
}
