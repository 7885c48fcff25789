package schedsim

import (
	"reflect"
	"testing"

	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
)

// TestSlurmBackfillSkipThunder replays the embedded default scenario under
// the slurm policy with backfill cycles skipped (the default) and with
// every cycle run (slurm.Policy.NoBackfillSkip), and requires equal
// records: jobs, earlier runs, pending-reason changes and the end.
func TestSlurmBackfillSkipThunder(t *testing.T) {
	replay := func(noSkip bool) (*sim.Record, int) {
		s := Default()
		s.Policy.Name = "slurm"
		run, err := s.Build(catalog.Builtin())
		if err != nil {
			t.Fatal(err)
		}
		cfg := run.Config()
		p, ok := cfg.Policy.(*slurm.Policy)
		if !ok {
			t.Fatalf("policy is %T, not *slurm.Policy", cfg.Policy)
		}
		p.NoBackfillSkip = noSkip
		rec, err := sim.Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rec, p.BackfillSkipped()
	}
	skip, n := replay(false)
	full, m := replay(true)
	t.Logf("%d backfill cycles skipped", n)
	if n == 0 || m != 0 {
		t.Fatalf("skipped %d cycles with skipping, %d without", n, m)
	}
	if !reflect.DeepEqual(skip.Jobs, full.Jobs) || !reflect.DeepEqual(skip.Runs, full.Runs) ||
		!reflect.DeepEqual(skip.Reasons.Changes(), full.Reasons.Changes()) || skip.End != full.End {
		t.Fatal("records differ with and without skipping")
	}
}
