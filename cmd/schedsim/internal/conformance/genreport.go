package conformance

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The generated corpus's report (CONFORMANCE.md, docs/conformance.md):
// the development and validation sets apart, each scenario classified by
// how well Slurm agrees with itself, and the done-when figures of issue
// 14 checked.
const (
	// StableShare is the least share of starts within ±5 s between two
	// real runs for a scenario to be stable (judged job by job); below
	// it a scenario is loaded (judged by its wait distribution).
	StableShare = 0.95
	// StableMin is the least share within ±5 s schedsim must reach on a
	// stable scenario.
	StableMin = 0.90
	// PooledSlack is how far below Slurm's own pooled share within ±5 s
	// schedsim's may fall.
	PooledSlack = 0.03
	// KSSlack is how far above Slurm's own KS distance schedsim's may be
	// on a loaded scenario.
	KSSlack = 0.05
)

// Set names the corpus a scenario belongs to: "hand" for the hand-written
// ones, else the set of the seed of "gen-N" (SeedSet).
func Set(scenario string) string {
	n, ok := strings.CutPrefix(scenario, "gen-")
	if !ok {
		return "hand"
	}
	seed, err := strconv.ParseUint(n, 10, 64)
	if err != nil {
		return "hand"
	}
	return SeedSet(seed)
}

// Class is "stable" or "loaded" by the real runs' agreement (StableShare),
// or "" with a single run.
func (s *ScenarioResult) Class() string {
	switch {
	case len(s.Pairs) == 0:
		return ""
	case s.Real.Share5() >= StableShare-1e-9:
		return "stable"
	}
	return "loaded"
}

// Meets says whether the scenario meets its class's mark: a stable one
// StableMin of starts within ±5 s, a loaded one a KS distance at most
// Slurm's own plus KSSlack. ok is false with a single run.
func (s *ScenarioResult) Meets() (meets, ok bool) {
	switch s.Class() {
	case "stable":
		return s.Sim.Share5() >= StableMin-1e-9, true
	case "loaded":
		return s.Sim.KS <= s.Real.KS+KSSlack+1e-9, true
	}
	return false, false
}

// Only returns the results of the scenarios of set, generated ones by
// seed.
func Only(res []ScenarioResult, set string) []ScenarioResult {
	var out []ScenarioResult
	for _, s := range res {
		if Set(s.Name) == set {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b ScenarioResult) int {
		na, ea := strconv.ParseUint(strings.TrimPrefix(a.Name, "gen-"), 10, 64)
		nb, eb := strconv.ParseUint(strings.TrimPrefix(b.Name, "gen-"), 10, 64)
		if ea != nil || eb != nil {
			return 0
		}
		return cmp.Compare(na, nb)
	})
	return out
}

// Runs lists the runs of the results as SCENARIO/runN.
func Runs(res []ScenarioResult) []string {
	var out []string
	for _, s := range res {
		for _, r := range s.Runs {
			out = append(out, s.Name+"/"+r.Record.Run)
		}
	}
	return out
}

// recordsPrefix starts the generated block's line listing the runs it
// covers.
const recordsPrefix = "Records: "

// GenRuns reads the runs a generated block covers (its "Records:" line)
// as directories under dir, in FindRuns's order. It returns nil when the
// block lists none.
func GenRuns(block, dir string) []string {
	for l := range strings.SplitSeq(block, "\n") {
		rest, ok := strings.CutPrefix(l, recordsPrefix)
		if !ok {
			continue
		}
		var out []string
		for f := range strings.SplitSeq(strings.TrimSuffix(rest, "."), ", ") {
			if f = strings.TrimSpace(f); f != "" && f != "none" {
				out = append(out, filepath.Join(dir, filepath.FromSlash(f)))
			}
		}
		return out
	}
	return nil
}

// GenBlock renders the generated corpus's part of CONFORMANCE.md: the runs
// it covers, then for the development and the validation set a table per
// scenario with Slurm's own run-to-run figures beside schedsim's, the
// pooled figures, and the done-when checks.
func GenBlock(res []ScenarioResult) string {
	var b strings.Builder
	runs := Runs(slices.Concat(Only(res, "dev"), Only(res, "validation")))
	if len(runs) == 0 {
		runs = []string{"none"}
	}
	b.WriteString(recordsPrefix + strings.Join(runs, ", ") + ".\n")
	for _, set := range []struct{ name, title string }{
		{"dev", "Development set (seeds below 100: changes may be tuned on them)"},
		{"validation", "Validation set (seeds 101–106: reported, never tuned on)"},
	} {
		fmt.Fprintf(&b, "\n#### %s\n\n", set.title)
		writeGenSet(&b, Only(res, set.name))
	}
	return b.String()
}

func writeGenSet(b *strings.Builder, res []ScenarioResult) {
	if len(res) == 0 {
		b.WriteString("No record yet.\n")
		return
	}
	b.WriteString("| scenario | jobs | runs | class | schedsim vs real: ±2 s | ±5 s | mean wait err | KS | real vs real: ±2 s | ±5 s | mean wait err | KS | mark | met |\n")
	b.WriteString("|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n")
	var simAll, sim2, real2 Figures
	n2 := 0
	var stable, stableMet, loaded, loadedMet int
	var single []string
	for i := range res {
		s := &res[i]
		simAll = simAll.Add(s.Sim)
		class, mark := s.Class(), "–"
		switch class {
		case "stable":
			mark = fmt.Sprintf("±5 s ≥ %s", pct(StableMin))
		case "loaded":
			mark = fmt.Sprintf("KS ≤ %.2f", s.Real.KS+KSSlack)
		default:
			class = "one run"
			single = append(single, s.Name)
		}
		fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %s | %s | %.2f |", s.Name, s.Jobs(), len(s.Runs), class,
			pct(s.Sim.Share2()), pct(s.Sim.Share5()), secs(s.Sim.MeanErr), s.Sim.KS)
		if len(s.Pairs) > 0 {
			fmt.Fprintf(b, " %s | %s | %s | %.2f |", pct(s.Real.Share2()), pct(s.Real.Share5()), secs(s.Real.MeanErr), s.Real.KS)
			sim2, real2 = sim2.Add(s.Sim), real2.Add(s.Real)
			n2++
		} else {
			b.WriteString(" – | – | – | – |")
		}
		met, ok := s.Meets()
		switch {
		case !ok:
			fmt.Fprintf(b, " %s | – |\n", mark)
		case met:
			fmt.Fprintf(b, " %s | yes |\n", mark)
		default:
			fmt.Fprintf(b, " %s | **no** |\n", mark)
		}
		if class == "stable" {
			stable++
			if met {
				stableMet++
			}
		} else if class == "loaded" {
			loaded++
			if met {
				loadedMet++
			}
		}
	}
	if n2 > 0 {
		fmt.Fprintf(b, "| pooled, the %d with two runs | | | | %s | %s | %s | %.2f | %s | %s | %s | %.2f | ±5 s ≥ %s | %s |\n", n2,
			pct(sim2.Share2()), pct(sim2.Share5()), secs(sim2.MeanErr), sim2.KS,
			pct(real2.Share2()), pct(real2.Share5()), secs(real2.MeanErr), real2.KS,
			pct(real2.Share5()-PooledSlack), yesNo(sim2.Share5() >= real2.Share5()-PooledSlack-1e-9))
	}
	fmt.Fprintf(b, "| pooled, all %d | | | | %s | %s | %s | %.2f | – | – | – | – | – | – |\n", len(res),
		pct(simAll.Share2()), pct(simAll.Share5()), secs(simAll.MeanErr), simAll.KS)
	b.WriteString("\n")
	fmt.Fprintf(b, "- stable scenarios with ≥ %s of starts within ±5 s: %d of %d\n", pct(StableMin), stableMet, stable)
	fmt.Fprintf(b, "- loaded scenarios with a KS distance ≤ Slurm's own + %.2f: %d of %d\n", KSSlack, loadedMet, loaded)
	if n2 > 0 {
		fmt.Fprintf(b, "- pooled share within ±5 s over the %d scenarios with two runs: %.1f %% against Slurm's own %.1f %% (%+.1f points; the mark is −%.0f)\n",
			n2, 100*sim2.Share5(), 100*real2.Share5(), 100*(sim2.Share5()-real2.Share5()), 100*PooledSlack)
	}
	if len(single) > 0 {
		fmt.Fprintf(b, "- not classified yet (one run recorded): %s\n", strings.Join(single, ", "))
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}
