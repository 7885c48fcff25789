package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/traces"
)

// Threshold is a scenario's pass mark for the conformance test: the least
// share of starts within ±5 s of the real ones (over every recorded run),
// and, when MaxKS > 0, the largest KS distance of the wait distributions.
// Scenario may be a pattern (path.Match: "gen-*"), for the scenarios
// without a line of their own.
type Threshold struct {
	Scenario   string
	MinWithin5 float64
	MaxKS      float64
	Line       int
}

// LoadThresholds reads conformance/thresholds.tsv: a header line
// "scenario	min_within5	max_ks", then one line per scenario or pattern
// (max_ks "-" for none); # comments.
func LoadThresholds(path string) (map[string]Threshold, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]Threshold{}
	header := false
	for i, l := range strings.Split(string(data), "\n") {
		ln := i + 1
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		f := strings.Split(l, "\t")
		if !header {
			if strings.Join(f, "\t") != "scenario\tmin_within5\tmax_ks" {
				return nil, perr(path, ln, "header", "want scenario, min_within5, max_ks (tab-separated)")
			}
			header = true
			continue
		}
		if len(f) != 3 {
			return nil, perr(path, ln, "", "%d fields, want 3 (scenario, min_within5, max_ks)", len(f))
		}
		t := Threshold{Scenario: f[0], Line: ln}
		if _, err := pathpkg.Match(t.Scenario, ""); err != nil || t.Scenario == "" {
			return nil, perr(path, ln, "scenario", "%q: want a scenario name or a pattern (gen-*)", f[0])
		}
		if t.MinWithin5, err = strconv.ParseFloat(f[1], 64); err != nil || !(t.MinWithin5 >= 0 && t.MinWithin5 <= 1) {
			return nil, perr(path, ln, "min_within5", "%q: want a share in [0, 1]", f[1])
		}
		if f[2] != "-" {
			if t.MaxKS, err = strconv.ParseFloat(f[2], 64); err != nil || !(t.MaxKS > 0 && t.MaxKS <= 1) {
				return nil, perr(path, ln, "max_ks", "%q: want a distance in (0, 1], or - for none", f[2])
			}
		}
		if _, dup := out[t.Scenario]; dup {
			return nil, perr(path, ln, "scenario", "%q listed twice", t.Scenario)
		}
		out[t.Scenario] = t
	}
	if !header {
		return nil, perr(path, 0, "", "empty (want a header line and one line per scenario)")
	}
	return out, nil
}

// LookupThreshold returns the threshold of scenario: its own line, else
// the longest pattern that matches it (ties: the first in byte order).
func LookupThreshold(th map[string]Threshold, scenario string) (Threshold, bool) {
	if t, ok := th[scenario]; ok {
		return t, true
	}
	var best Threshold
	found := false
	for pat, t := range th {
		if ok, _ := pathpkg.Match(pat, scenario); !ok {
			continue
		}
		if !found || len(pat) > len(best.Scenario) || len(pat) == len(best.Scenario) && pat < best.Scenario {
			best, found = t, true
		}
	}
	return best, found
}

// RunResult is one recorded run replayed.
type RunResult struct {
	Record *Record
	Starts []Start
	Fig    Figures
}

// PairResult is two real runs of one scenario compared.
type PairResult struct {
	A, B   string // run names
	Starts []Start
	Fig    Figures
}

// ScenarioResult is every run of one scenario replayed, and the real runs
// compared with each other.
type ScenarioResult struct {
	Name  string
	Runs  []RunResult
	Pairs []PairResult
	// Sim pools the runs' figures (schedsim vs each real run); Real pools
	// the pairs' (real vs real; N 0 with a single run).
	Sim, Real Figures
}

// Jobs is the number of jobs of the scenario's first run.
func (s *ScenarioResult) Jobs() int { return len(s.Runs[0].Record.Jobs) }

// StartsPerRun is the number of compared starts per run (jobs plus reruns).
func (s *ScenarioResult) StartsPerRun() int { return s.Sim.N / len(s.Runs) }

// WithinNoise says whether schedsim's distance to the real runs is within
// the real runs' distance to each other: its share within ±5 s is at least
// theirs less one start's worth, and its KS distance at most theirs plus
// one start's worth (the records are small: one start is a large share).
// ok is false when the scenario has a single run.
func (s *ScenarioResult) WithinNoise() (within, ok bool) {
	if len(s.Pairs) == 0 {
		return false, false
	}
	one := 1 / float64(s.StartsPerRun())
	return s.Sim.Share5() >= s.Real.Share5()-one-1e-9 && s.Sim.KS <= s.Real.KS+one+1e-9, true
}

var runName = regexp.MustCompile(`^run\d+$`)

// FindRuns lists the run directories under a records directory
// (SCENARIO/runN with a sacct.txt; runs still being recorded, such as
// run1.new, are left out), by scenario then run.
func FindRuns(dir string) ([]string, error) {
	scen, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range scen {
		if !s.IsDir() {
			continue
		}
		runs, err := os.ReadDir(filepath.Join(dir, s.Name()))
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			p := filepath.Join(dir, s.Name(), r.Name())
			if !r.IsDir() || !runName.MatchString(r.Name()) {
				continue
			}
			if _, err := os.Stat(filepath.Join(p, "sacct.txt")); err == nil {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if c := strings.Compare(filepath.Dir(a), filepath.Dir(b)); c != 0 {
			return c
		}
		na, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(a), "run"))
		nb, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(b), "run"))
		return na - nb
	})
	return out, nil
}

// Evaluate replays every run under dir with model m and compares each
// with its real run, and the real runs of a scenario with each other.
func Evaluate(dir string, m Model) ([]ScenarioResult, error) {
	runs, err := FindRuns(dir)
	if err != nil {
		return nil, err
	}
	return EvaluateRuns(runs, m)
}

// EvaluateRuns is Evaluate of the given run directories (FindRuns's
// order: by scenario, then run).
func EvaluateRuns(runs []string, m Model) ([]ScenarioResult, error) {
	var out []ScenarioResult
	for _, p := range runs {
		rec, err := LoadRecord(p)
		if err != nil {
			return nil, err
		}
		srec, err := rec.Simulate(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		starts, err := rec.CompareSim(srec)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].Name != rec.Scenario {
			out = append(out, ScenarioResult{Name: rec.Scenario})
		}
		s := &out[len(out)-1]
		fig := Figure(starts)
		s.Runs = append(s.Runs, RunResult{Record: rec, Starts: starts, Fig: fig})
		s.Sim = s.Sim.Add(fig)
	}
	for i := range out {
		s := &out[i]
		for a := 0; a < len(s.Runs); a++ {
			for b := a + 1; b < len(s.Runs); b++ {
				st := CompareReal(s.Runs[a].Record, s.Runs[b].Record)
				fig := Figure(st)
				s.Pairs = append(s.Pairs, PairResult{A: s.Runs[a].Record.Run, B: s.Runs[b].Record.Run, Starts: st, Fig: fig})
				s.Real = s.Real.Add(fig)
			}
		}
	}
	return out, nil
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

func secs(x float64) string {
	if math.Abs(x) < 0.05 {
		return "0.0 s"
	}
	return fmt.Sprintf("%+.1f s", x)
}

// Table renders the results as CONFORMANCE.md's Markdown table.
func Table(res []ScenarioResult, th map[string]Threshold) string {
	var b strings.Builder
	b.WriteString("| scenario | jobs | runs | schedsim vs real: ±2 s | ±5 s | mean wait err | KS | real vs real: ±2 s | ±5 s | mean wait err | KS | threshold ±5 s (KS) | within Slurm's noise |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for i := range res {
		s := &res[i]
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %.2f |", s.Name, s.Jobs(), len(s.Runs),
			pct(s.Sim.Share2()), pct(s.Sim.Share5()), secs(s.Sim.MeanErr), s.Sim.KS)
		if len(s.Pairs) > 0 {
			fmt.Fprintf(&b, " %s | %s | %s | %.2f |", pct(s.Real.Share2()), pct(s.Real.Share5()), secs(s.Real.MeanErr), s.Real.KS)
		} else {
			b.WriteString(" – | – | – | – |")
		}
		if t, ok := LookupThreshold(th, s.Name); ok {
			fmt.Fprintf(&b, " %s", pct(t.MinWithin5))
			if t.MaxKS > 0 {
				fmt.Fprintf(&b, " (%.2f)", t.MaxKS)
			}
			b.WriteString(" |")
		} else {
			b.WriteString(" none |")
		}
		switch w, ok := s.WithinNoise(); {
		case !ok:
			b.WriteString(" one run |\n")
		case w:
			b.WriteString(" yes |\n")
		default:
			b.WriteString(" **no** |\n")
		}
	}
	return b.String()
}

// Markers delimit the generated table in CONFORMANCE.md.
const (
	BeginMarker = "<!-- table:begin -->"
	EndMarker   = "<!-- table:end -->"
)

// GenBeginMarker and GenEndMarker delimit the generated corpus's block.
const (
	GenBeginMarker = "<!-- gen:begin -->"
	GenEndMarker   = "<!-- gen:end -->"
)

// ErrNoMarkers and ErrNoGenMarkers are returned when a document lacks the
// table's or the generated corpus's markers.
var (
	ErrNoMarkers    = errors.New("no " + BeginMarker + " … " + EndMarker + " markers")
	ErrNoGenMarkers = errors.New("no " + GenBeginMarker + " … " + GenEndMarker + " markers")
)

func noMarkers(begin string) error {
	if begin == GenBeginMarker {
		return ErrNoGenMarkers
	}
	return ErrNoMarkers
}

// Splice returns doc with the text between the markers replaced by table.
func Splice(doc []byte, table string) ([]byte, error) {
	return spliceBlock(doc, BeginMarker, EndMarker, table)
}

// Between returns the text between the markers.
func Between(doc []byte) (string, error) {
	return betweenBlock(doc, BeginMarker, EndMarker)
}

// GenBetween returns the text between the generated corpus's markers.
func GenBetween(doc []byte) (string, error) {
	return betweenBlock(doc, GenBeginMarker, GenEndMarker)
}

func spliceBlock(doc []byte, begin, end, text string) ([]byte, error) {
	i := bytes.Index(doc, []byte(begin))
	j := bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		return nil, noMarkers(begin)
	}
	var b bytes.Buffer
	b.Write(doc[:i+len(begin)])
	b.WriteString("\n")
	b.WriteString(text)
	b.Write(doc[j:])
	return b.Bytes(), nil
}

func betweenBlock(doc []byte, begin, end string) (string, error) {
	i := bytes.Index(doc, []byte(begin))
	j := bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		return "", noMarkers(begin)
	}
	return strings.TrimPrefix(string(doc[i+len(begin):j]), "\n"), nil
}

// UpdateFile rewrites the table between the markers of path, and the
// generated corpus's block between its markers when gen is not empty,
// atomically (traces.WriteFileAtomic).
func UpdateFile(path, table, gen string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := Splice(doc, table)
	if err == nil && gen != "" {
		out, err = spliceBlock(out, GenBeginMarker, GenEndMarker, gen)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return traces.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := w.Write(out)
		return err
	})
}
