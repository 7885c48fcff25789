package schedsim

import (
	"fmt"
	"math"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Limits bound the work in-range scenario values may ask for, so that a
// valid-looking scenario cannot exhaust memory or time: scale_load on a
// large trace, or a failure model that fails nodes every few seconds over
// the run's horizon. Each is checked against the workload before the run,
// and a value over its limit is an error naming the key, the figure and
// the limit. Zero means the default.
type Limits struct {
	// MaxJobs is the most jobs trace.transforms.scale_load may make the
	// trace hold (default 2,000,000: about 2 GB of jobs and records).
	MaxJobs int64 `yaml:"max_jobs,omitempty"`
	// MaxFailures is the most node failures the failure model may be
	// expected to draw over the run's horizon (default 200,000: on the
	// example cluster and the built-in trace, a run that never settles
	// took 26 s and 159 MB with about 200,000 failures, and 367 s and
	// 784 MB with 960,000).
	MaxFailures int64 `yaml:"max_failures,omitempty"`
	// MaxNodeEvents is the most node availability changes the run may
	// log (sim.Config.MaxNodeEvents; default sim.DefaultMaxNodeEvents,
	// 4,194,304: 64 MiB of the record). A run that passes it stops with
	// an error naming this key.
	MaxNodeEvents int `yaml:"max_node_events,omitempty"`
}

// Default limits.
const (
	DefaultMaxJobs     = 2_000_000
	DefaultMaxFailures = 200_000
)

func (l Limits) maxJobs() int64 {
	if l.MaxJobs > 0 {
		return l.MaxJobs
	}
	return DefaultMaxJobs
}

func (l Limits) maxFailures() int64 {
	if l.MaxFailures > 0 {
		return l.MaxFailures
	}
	return DefaultMaxFailures
}

// validateLimits checks the limits section.
func (s *Scenario) validateLimits() error {
	if s.Limits.MaxJobs < 0 {
		return s.lifecycleError(fmt.Sprintf("must be >= 0 (0: the default %d), got %d", DefaultMaxJobs, s.Limits.MaxJobs), "limits", "max_jobs")
	}
	if s.Limits.MaxNodeEvents < 0 {
		return s.lifecycleError(fmt.Sprintf("must be >= 0 (0: the default %d), got %d", sim.DefaultMaxNodeEvents, s.Limits.MaxNodeEvents), "limits", "max_node_events")
	}
	if s.Limits.MaxFailures < 0 {
		return s.lifecycleError(fmt.Sprintf("must be >= 0 (0: the default %d), got %d", DefaultMaxFailures, s.Limits.MaxFailures), "limits", "max_failures")
	}
	return nil
}

// checkScale refuses a scale_load that would make the trace's jobs more
// than limits.max_jobs, before any copy is made.
func (s *Scenario) checkScale(jobs int, factor float64) error {
	limit := s.Limits.maxJobs()
	if want := float64(jobs) * factor; want > float64(limit) {
		return s.lifecycleError(fmt.Sprintf("%g would make the trace's %d jobs about %.0f, more than limits.max_jobs (%d); want scale_load at most %.4g, a trace.transforms.window, or a larger limits.max_jobs",
			factor, jobs, want, limit, math.Floor(float64(limit)/float64(jobs)*1e4)/1e4), "trace", "transforms", "scale_load")
	}
	return nil
}

// checkFailures refuses a failure model expected to draw more than
// limits.max_failures failures over the run's horizon: every node cycles
// through a failure and a repair every MTBF + MTTR seconds on average,
// from the first submit to the horizon (sim.DefaultHorizon: the last
// submit plus four times the submit span, at least a year; the run stops
// there if it has not settled, which a failure model that keeps killing
// long jobs prevents).
func (s *Scenario) checkFailures(c *hwmodels.Cluster, t *workload.Trace, f *sim.FailureModel) error {
	if f == nil || t.Len() == 0 || len(c.Nodes) == 0 {
		return nil
	}
	h := sim.DefaultHorizon(t)
	if h < 0 {
		return nil
	}
	span := float64(h - t.Submit(0))
	nodes := float64(len(c.Nodes))
	limit := s.Limits.maxFailures()
	want := nodes * span / float64(f.MTBF+f.MTTR)
	if want <= float64(limit) {
		return nil
	}
	minMTBF := math.Ceil(nodes*span/float64(limit)) - float64(f.MTTR)
	return s.lifecycleError(fmt.Sprintf("%s on %d nodes (mttr %s) over the run's horizon of %s would draw about %.3g failures, more than limits.max_failures (%d); want mtbf of at least %s, or a larger limits.max_failures",
		s.Failures.MTBF, len(c.Nodes), s.Failures.MTTR, humanSeconds(span), want, limit, humanSeconds(max(minMTBF, 1))), "failures", "mtbf")
}

// humanSeconds writes a duration in the largest unit that keeps it
// readable: "375.2d", "26.0m", "45s".
func humanSeconds(secs float64) string {
	switch {
	case secs >= 2*86400:
		return fmt.Sprintf("%.1fd", secs/86400)
	case secs >= 2*3600:
		return fmt.Sprintf("%.1fh", secs/3600)
	case secs >= 120:
		return fmt.Sprintf("%.1fm", secs/60)
	}
	return fmt.Sprintf("%.0fs", secs)
}
