// Package schedsim is the scenario layer: it turns a scenario file, one
// YAML document that names everything a run needs (cluster, trace, policy
// and its parameters, seed, lifecycle, outputs), into a simulation and its
// analysis, so that a run is reproducible from one file. It is what
// `schedsim run` does, as a library for Go programs and tests:
//
//	s, err := schedsim.Load("study.yaml")  // or Parse, or Default
//	err = s.Override("policy", "fifo")     // what a flag does
//	res, err := s.Run()                    // build, simulate, analyze
//	fmt.Println(res.Analysis.Summary.Wait.P95)
//
// Run is Build (read the trace and cluster, construct the policy from a
// policies.Registry), Run.Simulate (the engine) and Run.Analyze (reports'
// metrics, timeline and job rows, with the scenario's config hash); call
// them one by one to use another registry, cut the trace (Run.Head),
// apply a calibration (Run.Calibrate) or watch progress (Run.Progress).
// Scenario files and their keys are described in docs/scenario.md.
//
// # Place in the design
//
// DESIGN.md fixes the top level (cmd, sim, workload, policies, hwmodels,
// traces, reports) and the data flow: traces and hwmodels feed the
// workload and the cluster, policies and sim run them, reports reads the
// record. The scenario layer composes all of them, so it must sit above
// every one and below cmd alone: the module's root package is that place.
// It imports sim, workload, policies, hwmodels, traces and reports (and
// their sub-packages); only cmd imports it (the import-graph test in
// cmd/schedsim holds both), so every arrow still points down and no
// top-level package is added. Under cmd/schedsim/internal, where it was,
// neither library users nor Go tests outside cmd could import it; in any
// one of the fixed packages it would need imports that package may not
// have (policies may not import traces or reports, reports may not import
// policies).
//
// The embedded default scenario (Default: the example cluster replaying
// a slice of the LLNL Thunder log under EASY) lives in defaults/.
package schedsim
