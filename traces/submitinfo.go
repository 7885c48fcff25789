package traces

import "github.com/schedsim/schedsim/workload"

// SubmitLineInfo is what a SubmitLine says about a submission, for
// callers that must tell an option given from one left out (the records
// bundle replay: --requeue, --no-requeue or slurm.conf's JobRequeue).
type SubmitLineInfo struct {
	// Requeue is 1 for --requeue, -1 for --no-requeue, 0 for neither.
	Requeue int8
	// Throttle is --array's %N (0 none).
	Throttle int32
	// Deps are --dependency's; HasDeps says it was given.
	Deps    []workload.Dependency
	HasDeps bool
	// Begin is --begin as given ("" none); Hold is -H/--hold.
	Begin string
	Hold  bool
	// TimeLimit is -t/--time (HasTime says it was given; Unknown for
	// no limit).
	TimeLimit workload.Time
	HasTime   bool
}

// ParseSubmitLine reads a SubmitLine as the sacct reader does (see
// parseSubmitLine).
func ParseSubmitLine(s string) (SubmitLineInfo, error) {
	sl, err := parseSubmitLine(s)
	if err != nil {
		return SubmitLineInfo{}, err
	}
	return SubmitLineInfo{Requeue: sl.requeue, Throttle: sl.throttle, Deps: sl.deps, HasDeps: sl.hasDeps,
		Begin: sl.begin, Hold: sl.hold, TimeLimit: sl.timeLimit, HasTime: sl.hasTime}, nil
}
