package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/sim"
)

// runOptions are the run's scale options: a progress hook for the engine
// and the note a cut trace adds to the recorded scenario.
type runOptions struct {
	progress func(now sim.Time, done, total int)
	done     func() // ends the progress line
	note     []byte // appended to scenario.yaml (and so to the config hash)
	// summaryOnly keeps no job rows: nothing will write them.
	summaryOnly bool
}

// scaleOptions applies --jobs to the built run and sets up the progress
// bar: simulated time reached over the trace's submit span, jobs ended,
// and the rate in jobs per second of wall time. The bar is drawn only on
// a terminal and not with --quiet.
func scaleOptions(cmd *cobra.Command, f *runFlags, run *scenario.Run) (runOptions, error) {
	var o runOptions
	if f.jobs < 0 {
		return o, fmt.Errorf("--jobs must be >= 0, got %d", f.jobs)
	}
	if n := f.jobs; n > 0 && n < len(run.Trace.Jobs) {
		total := len(run.Trace.Jobs)
		run.Trace.Jobs = slices.Clone(run.Trace.Jobs[:n]) // frees the rest
		run.Trace.Notes = append(run.Trace.Notes, fmt.Sprintf("--jobs %d: replayed the first %d of %d jobs (submit order)", n, n, total))
		o.note = fmt.Appendf(nil, "# --jobs %d: the trace was cut to its first %d jobs\n", n, n)
	}
	pr := newProgress(cmd.ErrOrStderr(), f.quiet, false, 0)
	if pr.off || len(run.Trace.Jobs) == 0 {
		return o, nil
	}
	span := run.Trace.Jobs[len(run.Trace.Jobs)-1].Submit - run.Trace.Jobs[0].Submit
	o.progress = func(now sim.Time, done, total int) {
		el := pr.elapsed()
		pct := 100.0
		if span > 0 {
			pct = min(100, 100*float64(now-run.Trace.Jobs[0].Submit)/float64(span))
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
	o.done = func() {
		pr.update(fmt.Sprintf("simulated in %s", pr.elapsed().Round(time.Millisecond)), true)
	}
	return o, nil
}
