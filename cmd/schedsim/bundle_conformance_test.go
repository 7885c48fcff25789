package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/bundle"
	"github.com/schedsim/schedsim/cmd/schedsim/internal/conformance"
)

var validateDoc = filepath.Join("..", "..", "docs", "validate.md")

// bundleRun is one record replayed two ways: the ground-truth replay
// (conformance, with submissions.tsv) and validate's replay of the
// record's bundle (recordBundle, without it).
type bundleRun struct {
	record *conformance.Record
	truth  conformance.Figures
	bd     *bundle.Breakdown
	// noSL is the bundle's replay without the SubmitLine column.
	noSL *bundle.Breakdown
}

func replayBundleRun(t *testing.T, dir string) bundleRun {
	t.Helper()
	r, err := conformance.LoadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Simulate(conformance.Model{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.CompareSim(rec)
	if err != nil {
		t.Fatal(err)
	}
	out := bundleRun{record: r, truth: conformance.Figure(st)}
	for _, noSL := range []bool{false, true} {
		files, err := recordBundle(r, noSL)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := files["submissions.tsv"]; ok {
			t.Fatal("the bundle holds the ground truth")
		}
		b, err := bundle.FromFiles(dir+" (bundle)", files)
		if err != nil {
			t.Fatal(err)
		}
		rp, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		run, brec, err := simulateReplay(rp, dir+" (bundle scenario)")
		if err != nil {
			t.Fatalf("%v\n%s", err, rp.Scenario)
		}
		bd, err := bundle.Analyze(rp, brec, run.Cluster, bundle.BreakdownOptions{Worst: 5})
		if err != nil {
			t.Fatal(err)
		}
		if noSL {
			out.noSL = bd
		} else {
			out.bd = bd
		}
	}
	return out
}

// bundleScenario is a scenario's runs, pooled.
type bundleScenario struct {
	name                 string
	runs                 []bundleRun
	starts, truth, valid int     // starts, within ±5 s (ground truth, bundle)
	noSL, noSLStarts     int     // within ±5 s and starts, the bundle without SubmitLine
	real                 float64 // real vs real share within ±5 s; -1 with one run
}

// stable says whether Slurm agrees with itself on the scenario job by job
// (its real runs within ±5 s of each other on at least 90 % of starts):
// the scenarios the target holds on.
func (s bundleScenario) stable() bool { return s.real >= 0.9 }

func replayBundles(t *testing.T) []bundleScenario {
	t.Helper()
	runs, err := conformance.FindRuns(recordsDir)
	if err != nil || len(runs) == 0 {
		t.Skipf("no conformance records under %s (conformance/run.sh makes them on a machine with root): %v", recordsDir, err)
	}
	var out []bundleScenario
	for _, dir := range runs {
		br := replayBundleRun(t, dir)
		if len(out) == 0 || out[len(out)-1].name != br.record.Scenario {
			out = append(out, bundleScenario{name: br.record.Scenario, real: -1})
		}
		s := &out[len(out)-1]
		s.runs = append(s.runs, br)
		s.starts += br.bd.All.Starts
		s.truth += br.truth.Within5
		s.valid += br.bd.All.Within
		s.noSL += br.noSL.All.Within
		s.noSLStarts += br.noSL.All.Starts
		if br.truth.N != br.bd.All.Starts {
			t.Errorf("%s: the ground-truth replay compares %d starts, the bundle's %d", dir, br.truth.N, br.bd.All.Starts)
		}
	}
	for i := range out {
		s := &out[i]
		if len(s.runs) < 2 {
			continue
		}
		var f conformance.Figures
		for k := 1; k < len(s.runs); k++ {
			f = f.Add(conformance.Figure(conformance.CompareReal(s.runs[0].record, s.runs[k].record)))
		}
		s.real = f.Share5()
	}
	return out
}

// bundleTable is docs/validate.md's table of the figures.
func bundleTable(ss []bundleScenario) string {
	var b strings.Builder
	b.WriteString("| scenario | runs | starts | real vs real ±5 s | ground-truth replay ±5 s | bundle replay ±5 s | bundle / ground truth | stable | inputs not recovered | bundle without SubmitLine: starts, ±5 s |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|---|---|--:|\n")
	for _, s := range ss {
		real := "-"
		if s.real >= 0 {
			real = fmt.Sprintf("%.0f%%", 100*s.real)
		}
		causes := map[string]int{}
		for _, r := range s.runs {
			for _, c := range r.bd.Unrecovered {
				causes[c.Cause] += c.Jobs
			}
		}
		var cs []string
		for c, n := range causes {
			cs = append(cs, fmt.Sprintf("%s: %d", c, n))
		}
		slices.Sort(cs)
		lost := "none"
		if len(cs) > 0 {
			lost = strings.Join(cs, "; ")
		}
		stable := "no"
		if s.stable() {
			stable = "yes"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %d (%.0f%%) | %d (%.0f%%) | %.2f | %s | %s | %d, %d (%.0f%%) |\n", s.name, len(s.runs), s.starts, real,
			s.truth, 100*float64(s.truth)/float64(s.starts), s.valid, 100*float64(s.valid)/float64(s.starts), ratio(s.valid, s.truth), stable, lost,
			s.noSLStarts, s.noSL, 100*float64(s.noSL)/float64(s.noSLStarts))
	}
	return b.String()
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// TestBundleConformance builds the records bundle of every committed
// conformance record (its sacct -D with the SubmitLine sbatch wrote and
// the Eligible Slurm recorded, its configuration, scontrol's BOOT_TIME,
// the association tree, its node events and reservations as slurmdbd
// records them; no submissions.tsv), replays it as `schedsim validate
// BUNDLE` does, and compares the share of starts within ±5 s with the
// ground-truth replay's (the conformance replay, which reads the sbatch
// lines): on every stable scenario (real runs agreeing within ±5 s on
// at least 90 % of starts) the bundle's must reach 0.9 × the ground
// truth's, pooled over the runs, with every job's inputs recovered. It
// also checks docs/validate.md's table (-update rewrites it).
// bundleShortOf lists the stable scenarios whose bundle replay is known
// to fall below 0.9 × the ground truth, with why; issue 17 is not done
// while it is not empty.
var bundleShortOf = map[string]string{
	"gen-19": "the ground truth reads from slurmctld's log when resumed nodes answered (gen-19/run1: gn2 resumed at 35:17.396, responding at 35:18.026, after that second's cycle) and returns them a second later; a bundle has no log, and its replay (43 of 50 starts within ±5 s) trails the ground truth's 50",
	"gen-41": "the ground truth reads from slurmctld's and slurmd's logs when each job was registered (_slurm_rpc_submit_batch_job: gen-41/run1's G01 after the second's backfill cycle, first seen by the next second's) and how long each kill by preemption took (its job 14 was done 6 ms after the cancel, not KillWait + 1 s); a bundle has no logs, and its replay (41 of 70 starts within ±5 s) is where the ground truth was without them (44; 57 with them)",
	"gen-23": "the ground truth reads from slurmctld's log that its main scheduler starts no job in the second of an end (gen-23/run2: 9 of 9 main-scheduler starts after an end fell in the second after); a bundle has no log, and its replay (46 of 54 starts within ±5 s) is where the ground truth was before (47)",
}

func TestBundleConformance(t *testing.T) {
	ss := replayBundles(t)
	for _, s := range ss {
		t.Logf("%s: %d runs, %d starts: ground truth %d within ±5 s, bundle %d (%.2f×); real vs real %.2f", s.name, len(s.runs), s.starts, s.truth, s.valid, ratio(s.valid, s.truth), s.real)
		if !s.stable() {
			continue
		}
		if why, ok := bundleShortOf[s.name]; ok {
			// Known to miss the mark: it must still miss it (else drop
			// it from the list), and is reported, not failed.
			if s.valid*10 >= s.truth*9 {
				t.Errorf("%s: now at %.2f× of the ground truth: remove it from bundleShortOf", s.name, ratio(s.valid, s.truth))
			} else {
				t.Logf("%s: below 0.9 × the ground truth, known: %s", s.name, why)
			}
		} else if s.valid*10 < s.truth*9 {
			var sb strings.Builder
			for _, r := range s.runs {
				_ = bundle.WriteText(&sb, r.bd)
			}
			t.Errorf("%s: bundle replay %d of %d starts within ±5 s, below 0.9 × the ground truth's %d\n%s", s.name, s.valid, s.starts, s.truth, sb.String())
		}
		for _, r := range s.runs {
			if len(r.bd.UnrecoveredJobs) > 0 {
				t.Errorf("%s: inputs not recovered: %+v", r.record.Dir, r.bd.UnrecoveredJobs)
			}
		}
	}
	want := bundleTable(ss)
	data, err := os.ReadFile(validateDoc)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- bundle-table:begin -->\n", "<!-- bundle-table:end -->"
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q markers", validateDoc, strings.TrimSpace(begin), end)
	}
	have := doc[i+len(begin) : j]
	if have == want {
		return
	}
	if *updateGolden {
		if err := os.WriteFile(validateDoc, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's table is stale; run `go test ./cmd/schedsim -run TestBundleConformance -update`\nhave:\n%s\nwant:\n%s", validateDoc, have, want)
}
