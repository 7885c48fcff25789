package slurm_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// validProbe records the bound on skipping backfill cycles after every
// pass.
type validProbe struct {
	*slurm.Policy
	valid []sim.Time
}

func (p *validProbe) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	plan := p.Policy.Schedule(due, v, rng)
	p.valid = append(p.valid, p.Policy.BackfillValid())
	return plan
}

// runValid runs c with edit applied, recording the skip bound per pass.
func runValid(t *testing.T, c backfillCase, edit func(*slurm.Policy)) (*sim.Record, []sim.Time) {
	t.Helper()
	s, err := slurm.New(c.args, nil)
	if err != nil {
		t.Fatalf("seed %d: %v", c.seed, err)
	}
	edit(s)
	probe := &validProbe{Policy: s}
	cfg := c.cfg
	cfg.Policy = probe
	cfg.Trace = &workload.Trace{Jobs: slices.Clone(c.cfg.Trace.Jobs)}
	rec, err := sim.Run(cfg)
	if err != nil {
		t.Fatalf("seed %d (%s): %v", c.seed, c, err)
	}
	return rec, probe.valid
}

// TestSlurmReserveFacts checks the retries that reserve rules out by the
// facts of earlier searches (bfFact) on the random workloads of
// TestSlurmBackfillReference: every reservation boundary of a ruled-out
// span must have a plain bound short of the need, and the run with facts
// must make the same decisions and set the same bounds on skipping
// cycles, pass by pass, as the run without them.
func TestSlurmReserveFacts(t *testing.T) {
	slurm.CheckFacts(true)
	defer slurm.CheckFacts(false)
	slurm.FactChecks()
	n := 0
	for seed := uint64(1); seed <= uint64(*referenceRuns); seed++ {
		c := randomBackfillCase(seed)
		rec, valid := runValid(t, c, func(s *slurm.Policy) {})
		k, err := slurm.FactChecks()
		if err != nil {
			t.Fatalf("seed %d (%s): %v", seed, c, err)
		}
		n += k
		plain, pvalid := runValid(t, c, slurm.NoFacts)
		if msg := policytest.DiffDecisions(rec, plain); msg != "" {
			t.Fatalf("seed %d (%s): with and without facts: %s", seed, c, msg)
		}
		if !slices.Equal(valid, pvalid) {
			t.Fatalf("seed %d (%s): skip bounds with facts %v, without %v", seed, c, valid, pvalid)
		}
	}
	if n == 0 {
		t.Fatal("no retry was ruled out by facts: the workloads test nothing")
	}
	t.Logf("%d ruled-out retry points compared", n)
}
