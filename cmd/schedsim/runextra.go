package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/sim"
)

// scaleOptions sets up the progress bar: simulated time reached over the trace's submit span, jobs ended,
// and the rate in jobs per second of wall time. The bar is drawn only on
// a terminal and not with --quiet. It returns what ends the bar's line
// (nil without a bar).
func scaleOptions(cmd *cobra.Command, f *runFlags, run *scenario.Run) (func(), error) {
	pr := newProgress(cmd.ErrOrStderr(), f.quiet, false, 0)
	if pr.off || run.Trace.Len() == 0 {
		return nil, nil
	}
	first := run.Trace.Submit(0)
	span := run.Trace.Submit(run.Trace.Len()-1) - first
	run.Progress = func(now sim.Time, done, total int) {
		el := pr.elapsed()
		pct := 100.0
		if span > 0 {
			pct = min(100, 100*float64(now-first)/float64(span))
		}
		const width = 24
		fill := int(pct / 100 * width)
		bar := make([]byte, width)
		for i := range bar {
			bar[i] = '.'
			if i < fill {
				bar[i] = '#'
			}
		}
		pr.update(fmt.Sprintf("[%s] %5.1f%% of trace span, day %.1f, %d/%d jobs done, %.0f jobs/s, ETA %s",
			bar, pct, float64(now)/86400, done, total, float64(done)/el.Seconds(), eta(el, float64(done), float64(total))), false)
	}
	return func() {
		pr.update(fmt.Sprintf("simulated in %s", pr.elapsed().Round(time.Millisecond)), true)
	}, nil
}
