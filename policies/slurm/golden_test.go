package slurm_test

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata from the current code (as datadriven's -rewrite)")

// rewriteGoldens makes -update rewrite datadriven files as -rewrite does.
func rewriteGoldens(t *testing.T) {
	t.Helper()
	if *update {
		if err := flag.Set("rewrite", "true"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSlurmGolden replays the workloads of testdata/golden.txt under
// the slurm policy and compares each run with the per-job table written
// there (policytest.JobTable: a summary of exact figures and the jobs'
// starts, ends, states, nodes and reasons, every job or a sample). Every
// run is also replayed with every backfill cycle run
// (Slurm.NoBackfillSkip), and the two records must agree on every
// decision: the skipped cycles provably repeat the last one that ran.
// Rewrite the tables (only for an intended change of behaviour) with
// go test ./policies -run SlurmGolden -update.
//
// The file's directives (cockroachdb/datadriven):
//
//	synthetic seed=S nodes=N jobs=J load=L [users=U] [tiers] [windows]
//	    policytest.Synthetic's trace; users: U users in 3 accounts;
//	    tiers: a partition "hi" of higher PriorityTier on half the nodes
//	    taking every fifth job (and JobRequeue); windows: two
//	    maintenance windows, node failures every 30 days per node,
//	    JobRequeue.
//	lifecycle seeds=N [tiers]
//	    policytest.Workload seeds 1..N, each with a maintenance window
//	    on n0, node failures (MTBF 6 h, MTTR 30 min), JobRequeue on
//	    even seeds and the 30 s time-limit sweep on every third.
//	policy
//	<slurm policy args, YAML>
//	    the policy's arguments (docs/slurm-policy.md).
//	run [every=K] [tables=T]
//	    the table: every K-th job (all for 1); for lifecycle, a summary
//	    per seed and the tables of the first T seeds.
//
// Example:
//
//	synthetic seed=1 nodes=16 jobs=2000 load=0.9
//	----
//
//	run every=50
//	----
//	jobs 2000, started 2000 (...); wait total ... s, ...
func TestSlurmGolden(t *testing.T) {
	rewriteGoldens(t)
	skipped := 0
	datadriven.RunTest(t, "testdata/golden.txt", func(t *testing.T, d *datadriven.TestData) string {
		return goldenDirective(t, d, &skipped)
	})
	if skipped == 0 {
		t.Error("no backfill cycle was skipped: the skip check proves nothing")
	}
}

// TestSlurmScenarioFiles replays the hand-worked scenarios of
// testdata/scenarios.txt, each a cluster, jobs, policy arguments
// and the expected per-job table, the arithmetic in the file's comments.
// The directives are TestSlurmGolden's, policytest's cluster and jobs
// (policytest.ClusterDirective, JobsDirective), and:
//
//	run [sweep=30] [end-at-limit] [ends-after-pass] [main-pass-every=N]
//	    the controller's time-limit sweep and the policy's timing
//	    arguments end_at_limit, ends_after_pass, main_pass_every
//	    (docs/slurm-policy.md).
//
// Example:
//
//	cluster
//	n0 gpus=8
//	----
//
//	jobs
//	A submit=0 limit=100 run=100 gpus=8
//	----
//
//	run
//	----
//	jobs 1, started 1 (COMPLETED 1); ...
func TestSlurmScenarioFiles(t *testing.T) {
	rewriteGoldens(t)
	skipped := 0
	datadriven.RunTest(t, "testdata/scenarios.txt", func(t *testing.T, d *datadriven.TestData) string {
		return goldenDirective(t, d, &skipped)
	})
}

// goldenState is what the directives of one file set up.
var golden struct {
	build    func(seed uint64) sim.Config // one run's config, policy not set
	seeds    int                          // lifecycle: runs 1..seeds; 0: one run
	args     string
	cluster  *hwmodels.Cluster // hand-written scenarios: cluster and jobs
	jobs     []workload.Job
	timing   func(*sim.Config) // the run directive's time-limit sweep
	timeArgs string            // the run directive's timing arguments, YAML lines
}

// handBuild is the config of a hand-written scenario.
func handBuild(uint64) sim.Config {
	return sim.Config{Cluster: golden.cluster, Trace: &workload.Trace{Jobs: slices.Clone(golden.jobs)}, Seed: 1, Check: true}
}

func goldenDirective(t *testing.T, d *datadriven.TestData, skipped *int) string {
	switch d.Cmd {
	case "synthetic":
		var seed uint64
		var nodes, jobs, users int
		var load float64
		d.ScanArgs(t, "seed", &seed)
		d.ScanArgs(t, "nodes", &nodes)
		d.ScanArgs(t, "jobs", &jobs)
		d.ScanArgs(t, "load", &load)
		d.MaybeScanArgs(t, "users", &users)
		tiers, windows := d.HasArg("tiers"), d.HasArg("windows")
		golden.seeds, golden.args = 0, ""
		golden.build = func(uint64) sim.Config {
			c, tr := policytest.Synthetic(seed, nodes, 8, jobs, load)
			cfg := sim.Config{Cluster: c, Trace: tr, Seed: seed}
			if users > 0 {
				withUsers(tr, users)
			}
			if tiers {
				cfg.Cluster = twoTiers(c, tr)
				cfg.JobRequeue = true
			}
			if windows {
				end := tr.Jobs[len(tr.Jobs)-1].Submit
				cfg.Reservations = []sim.AdvanceReservation{
					{Name: "m1", Start: end / 4, End: end/4 + 4*3600, Nodes: []int32{0, 1, 2, 3, 4, 5, 6, 7}},
					{Name: "m2", Start: end / 2, End: end/2 + 7200, Nodes: []int32{10, 20, 30}},
				}
				cfg.Failures = &sim.FailureModel{MTBF: 30 * 86400, MTTR: 3600}
				cfg.JobRequeue = true
			}
			return cfg
		}
		return ""
	case "lifecycle":
		d.ScanArgs(t, "seeds", &golden.seeds)
		tiers := d.HasArg("tiers")
		golden.args = ""
		golden.build = func(seed uint64) sim.Config {
			c, tr := policytest.Workload(seed)
			if tiers {
				c.Partitions[1].PriorityTier = 2
			}
			last := tr.Jobs[len(tr.Jobs)-1].Submit
			cfg := sim.Config{Cluster: c, Trace: tr, Seed: seed,
				Reservations: []sim.AdvanceReservation{{Name: "maint", Start: last / 3, End: last/3 + 3600, Nodes: []int32{0}}},
				Failures:     &sim.FailureModel{MTBF: 6 * 3600, MTTR: 1800},
				JobRequeue:   seed%2 == 0,
			}
			if seed%3 == 0 {
				cfg.TimeLimitSweep = 30
			}
			return cfg
		}
		return ""
	case "policy":
		golden.args = d.Input
		return ""
	case "cluster":
		golden.cluster = policytest.ClusterDirective(t, d)
		golden.seeds, golden.args, golden.jobs = 0, "", nil
		golden.build = handBuild
		return ""
	case "jobs":
		golden.jobs = policytest.JobsDirective(t, d)
		return ""
	case "run":
		every, tables := 1, 0
		d.MaybeScanArgs(t, "every", &every)
		d.MaybeScanArgs(t, "tables", &tables)
		if golden.build == nil {
			d.Fatalf(t, "run before a workload directive")
		}
		golden.timing = func(cfg *sim.Config) {
			d.MaybeScanArgs(t, "sweep", &cfg.TimeLimitSweep)
		}
		golden.timeArgs = ""
		if d.HasArg("end-at-limit") {
			golden.timeArgs += "end_at_limit: true\n"
		}
		if d.HasArg("ends-after-pass") {
			golden.timeArgs += "ends_after_pass: true\n"
		}
		if d.HasArg("main-pass-every") {
			var every int
			d.ScanArgs(t, "main-pass-every", &every)
			golden.timeArgs += fmt.Sprintf("main_pass_every: %d\n", every)
		}
		if golden.seeds == 0 {
			rec := goldenRun(t, d, 0, skipped)
			return policytest.JobTable(rec, every)
		}
		var b strings.Builder
		var recs []*sim.Record
		for seed := 1; seed <= golden.seeds; seed++ {
			rec := goldenRun(t, d, uint64(seed), skipped)
			fmt.Fprintf(&b, "seed %d: %s\n", seed, policytest.Summary(rec))
			recs = append(recs, rec)
		}
		for i, rec := range recs[:min(tables, len(recs))] {
			fmt.Fprintf(&b, "seed %d:\n%s", i+1, policytest.JobTable(rec, every))
		}
		return b.String()
	}
	d.Fatalf(t, "unknown directive %q", d.Cmd)
	return ""
}

// goldenRun replays the current workload (seed for lifecycle runs) with
// and without skipped backfill cycles, requires the same decisions, and
// returns the record.
func goldenRun(t *testing.T, d *datadriven.TestData, seed uint64, skipped *int) *sim.Record {
	t.Helper()
	run := func(noSkip bool) (*sim.Record, *slurm.Policy) {
		cfg := golden.build(seed)
		if golden.timing != nil {
			golden.timing(&cfg)
		}
		args := golden.args
		if golden.timeArgs != "" {
			args = strings.TrimRight(args, "\n") + "\n" + golden.timeArgs
		}
		p, err := catalog.Builtin().New("slurm", strictYAML(args))
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		s := p.(*slurm.Policy)
		s.NoBackfillSkip = noSkip
		cfg.Policy = s
		rec, err := sim.Run(cfg)
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		return rec, s
	}
	rec, s := run(false)
	full, f := run(true)
	if f.BackfillSkipped() != 0 {
		d.Fatalf(t, "NoBackfillSkip: %d cycles skipped", f.BackfillSkipped())
	}
	if msg := policytest.DiffDecisions(rec, full); msg != "" {
		d.Fatalf(t, "seed %d: with skipped backfill cycles and without: %s", seed, msg)
	}
	*skipped += s.BackfillSkipped()
	return rec
}

// strictYAML returns a strict decoder of the policy args text ("": none).
func strictYAML(text string) func(any) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return func(into any) error {
		dec := yaml.NewDecoder(strings.NewReader(text))
		dec.KnownFields(true)
		if err := dec.Decode(into); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
}

// withUsers gives the jobs of a synthetic trace users in accounts, so
// that fair share and per-user limits have something to tell apart.
func withUsers(tr *workload.Trace, users int) {
	for i := range tr.Jobs {
		u := (i*7 + i/13) % users
		tr.Jobs[i].User = fmt.Sprintf("u%d", u)
		tr.Jobs[i].Account = fmt.Sprintf("a%d", u%3)
	}
}

// twoTiers makes a synthetic cluster's nodes members of a second partition
// "hi" of a higher PriorityTier (the first n/2 nodes) and sends every
// fifth job there.
func twoTiers(c *hwmodels.Cluster, tr *workload.Trace) *hwmodels.Cluster {
	nodes := slices.Clone(c.Nodes)
	for i := range nodes[:len(nodes)/2] {
		nodes[i].Partitions |= 2
	}
	out := policytest.Cluster(nodes, "lo", "hi")
	out.Partitions[1].PriorityTier = 2
	for i := range tr.Jobs {
		if i%5 == 0 {
			tr.Jobs[i].Partition = "hi"
		} else {
			tr.Jobs[i].Partition = "lo"
		}
	}
	return out
}
