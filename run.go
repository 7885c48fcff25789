package schedsim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/schedsim/schedsim/hwmodels/calibrate"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/traces"
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
	r, err := s.Build(catalog.Builtin())
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
// invariant) and the engine's own errors (a policy's invalid decision)
// come back as errors wrapping ErrInternal, with the policy and seed; a
// run past one of its bounds (sim.ErrLimit) is the inputs' fault and
// comes back as that error, naming the scenario key that raises it. So
// does a run whose up-front allocation (sim.UpFrontBytes) would take the
// heap past the process's memory budget (traces.SetMemoryBudget, `run
// --max-memory`): it is refused before it starts, with the
// *traces.LimitError naming the budget.
func (r *Run) Simulate() (rec *sim.Record, err error) {
	if r.Policy == nil {
		return nil, fmt.Errorf("%w: the run was released (Run.ReleasePolicy) and cannot simulate again", ErrInternal)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w (policy %s, seed %d): %v", ErrInternal, r.Policy.Name(), r.Seed, p)
		}
	}()
	if n := r.Trace.Len(); n > 0 {
		if err := traces.ReserveMemory(sim.UpFrontBytes(n), "simulating "+groupDigits(n)+" jobs"); err != nil {
			return nil, budgetError{err}
		}
	}
	cfg := r.Config()
	cfg.Progress = r.Progress
	rec, err = sim.Run(cfg)
	if errors.Is(err, sim.ErrLimit) {
		// The inputs asked for more than a bound allows: their fault,
		// not the engine's.
		return nil, fmt.Errorf("%w (the bound is the scenario's limits.max_node_events, default %d)", err, sim.DefaultMaxNodeEvents)
	}
	if err != nil {
		return nil, fmt.Errorf("%w (policy %s, seed %d): %w", ErrInternal, r.Policy.Name(), r.Seed, err)
	}
	return rec, nil
}

// budgetError is a run refused by the memory budget before it started
// (traces.ReserveMemory): its message is the *traces.LimitError's, and it
// counts as a run past its bounds (sim.ErrLimit), the inputs' fault.
type budgetError struct{ err error }

func (e budgetError) Error() string        { return e.err.Error() }
func (e budgetError) Unwrap() error        { return e.err }
func (e budgetError) Is(target error) bool { return target == sim.ErrLimit }

// groupDigits writes n >= 0 with commas between groups of three digits,
// as the trace readers' messages count jobs.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ReleasePolicy lets go of r's policy after r's last Simulate: a policy
// keeps state per job (the slurm policy 48 bytes a job, sized for the
// whole trace) that the analysis and the writers never read, and r would
// otherwise hold it while a long trace is analyzed and written. Simulate
// refuses to run again afterwards; Analyze is unaffected.
func (r *Run) ReleasePolicy() { r.Policy = nil }

// Analyze checks rec, a record of r, and computes its metrics, timeline
// and (unless r.NoJobRows) per-job rows, with the scenario's sample
// interval and config hash.
func (r *Run) Analyze(rec *sim.Record) (*Result, error) {
	text := slices.Concat(r.text, r.notes)
	sum := sha256.Sum256(text)
	a, err := reports.CheckAndAnalyze(rec, reports.SummaryOptions{
		SampleInterval: r.sample,
		ConfigHash:     "sha256:" + hex.EncodeToString(sum[:]),
		Build:          reports.ReadBuild(),
		NoJobRows:      r.NoJobRows,
		StreamJobRows:  r.StreamJobRows,
		TextOnly:       r.TextOnly,
	})
	if err != nil {
		return nil, fmt.Errorf("%w (policy %s, seed %d): inconsistent record: %w", ErrInternal, rec.Policy, r.Seed, err)
	}
	return &Result{Record: rec, Analysis: a, Scenario: text}, nil
}

// Head cuts r's trace to its first n jobs in submit order, as the
// scenario key trace.transforms.head does (which the recorded scenario
// then holds: a cut trace is another configuration, with another config
// hash); n <= 0, or at least the trace's length, leaves it whole.
func (r *Run) Head(n int) {
	if headTrace(r.Trace, n) {
		r.scen.Trace.Transforms.Head = n
		r.rerender()
	}
}

// Calibrate applies the calibration file at path (from `schedsim
// calibrate`, hwmodels/calibrate) to r's cluster, as the scenario key
// cluster.calibration does (which the recorded scenario then holds, with
// the file's SHA-256): its speed ratios and GPU power replace the
// datasheet defaults. It returns the calibration and calibrate.Apply's
// notes (what it could not apply). A scenario that already names a
// calibration takes no second one.
func (r *Run) Calibrate(path string) (*calibrate.Calibration, []string, error) {
	if r.Calibration != nil {
		return nil, nil, fmt.Errorf("calibration %s: the run already applies %s (cluster.calibration)", path, r.scen.Cluster.Calibration)
	}
	if err := r.applyCalibration(path); err != nil {
		return nil, nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	r.scen.Cluster.Calibration = path
	r.rerender()
	return r.Calibration, r.CalibrationNotes, nil
}

func (r *Run) applyCalibration(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	c, err := calibrate.Parse(data, path)
	if err != nil {
		return err
	}
	notes, err := calibrate.Apply(r.Cluster, c)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	r.notes = fmt.Appendf(nil, "# calibration: %s sha256:%s\n", filepath.Base(path), hex.EncodeToString(sum[:]))
	r.Calibration, r.CalibrationFile, r.CalibrationNotes = c, path, notes
	return nil
}

// rerender renders r's scenario again after Head or Calibrate changed it
// (it rendered at Build, so it cannot fail here).
func (r *Run) rerender() {
	if text, _, err := r.scen.Effective(); err == nil {
		r.text = text
	}
}
