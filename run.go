package schedsim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/schedsim/schedsim/hwmodels/calibrate"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/sim"
)

// ErrInternal is in the chain of an error of Simulate or Analyze: the
// engine refused a policy's decision, a broken invariant panicked, or the
// record is inconsistent. Such an error is a bug (of a policy, of the
// engine, or of the scenario layer, which should have refused the
// configuration), not the input's fault; its message names the policy and
// seed, so the run can be replayed.
var ErrInternal = errors.New("internal error")

// Result is a simulated and analyzed scenario.
type Result struct {
	Record   *sim.Record
	Analysis *reports.Analysis
	// Scenario is the effective scenario as the run records it
	// (OUT/scenario.yaml; see Scenario.Effective) with the notes of what
	// changed the run after Build (Head, Calibrate) as YAML comments. Its
	// SHA-256 is the config hash of Analysis.Summary.
	Scenario []byte
}

// Run builds s with the built-in policies (policies.Builtin), simulates
// it and analyzes the record: what `schedsim run` does before it prints
// or writes anything. Errors of the input (the scenario, its files) are
// *Error values or name their file; an error of the run itself wraps
// ErrInternal.
func (s *Scenario) Run() (*Result, error) {
	r, err := s.Build(policies.Builtin())
	if err != nil {
		return nil, err
	}
	rec, err := r.Simulate()
	if err != nil {
		return nil, err
	}
	return r.Analyze(rec)
}

// Simulate runs the engine on r. A panic inside the run (a broken
// invariant) and the engine's own errors (a policy's invalid decision, a
// run past one of its limits) come back as errors wrapping ErrInternal,
// with the policy and seed.
func (r *Run) Simulate() (rec *sim.Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w (policy %s, seed %d): %v", ErrInternal, r.Policy.Name(), r.Seed, p)
		}
	}()
	cfg := r.Config()
	cfg.Progress = r.Progress
	rec, err = sim.Run(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w (policy %s, seed %d): %w", ErrInternal, r.Policy.Name(), r.Seed, err)
	}
	return rec, nil
}

// Analyze checks rec, a record of r, and computes its metrics, timeline
// and (unless r.NoJobRows) per-job rows, with the scenario's sample
// interval and config hash.
func (r *Run) Analyze(rec *sim.Record) (*Result, error) {
	if err := reports.CheckRecord(rec); err != nil {
		return nil, fmt.Errorf("%w (policy %s, seed %d): inconsistent record: %w", ErrInternal, r.Policy.Name(), r.Seed, err)
	}
	text := slices.Concat(r.text, r.notes)
	sum := sha256.Sum256(text)
	a := reports.Analyze(rec, reports.SummaryOptions{
		SampleInterval: r.sample,
		ConfigHash:     "sha256:" + hex.EncodeToString(sum[:]),
		Build:          reports.ReadBuild(),
		NoJobRows:      r.NoJobRows,
	})
	return &Result{Record: rec, Analysis: a, Scenario: text}, nil
}

// Head cuts r's trace to its first n jobs in submit order, for a quick
// look at a long trace; n <= 0, or at least the trace's length, leaves it
// whole. The trace's notes and the recorded scenario say so (a cut trace
// is another configuration, with another config hash).
func (r *Run) Head(n int) {
	total := len(r.Trace.Jobs)
	if n <= 0 || n >= total {
		return
	}
	r.Trace.Jobs = slices.Clone(r.Trace.Jobs[:n]) // frees the rest
	r.Trace.Notes = append(r.Trace.Notes, fmt.Sprintf("--jobs %d: replayed the first %d of %d jobs (submit order)", n, n, total))
	r.notes = fmt.Appendf(r.notes, "# --jobs %d: the trace was cut to its first %d jobs\n", n, n)
}

// Calibrate applies the calibration file at path (from `schedsim
// calibrate`, hwmodels/calibrate) to r's cluster: its speed ratios and GPU
// power replace the datasheet defaults. It returns the calibration and
// calibrate.Apply's notes (what it could not apply); the recorded scenario
// names the file and its SHA-256.
func (r *Run) Calibrate(path string) (*calibrate.Calibration, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	c, err := calibrate.Parse(data, path)
	if err != nil {
		return nil, nil, err
	}
	notes, err := calibrate.Apply(r.Cluster, c)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	r.notes = fmt.Appendf(r.notes, "# calibration: %s sha256:%s\n", filepath.Base(path), hex.EncodeToString(sum[:]))
	return c, notes, nil
}
