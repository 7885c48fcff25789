package policies_test

import (
	"reflect"
	"testing"

	"github.com/schedsim/schedsim/sim"
)

// TestSlurmBackfillSkip replays every slurm golden case with backfill
// cycles skipped (the default) and with every cycle run
// (Slurm.NoBackfillSkip), and requires the records to be equal: every
// job's record, every earlier run, every pending-reason change and the
// end. The embedded Thunder scenario has the same test in
// cmd/schedsim/internal/scenario.
func TestSlurmBackfillSkip(t *testing.T) {
	defer func() { goldenNoSkip, goldenMade = false, nil }()
	total := 0
	for _, c := range slurmGoldenCases() {
		t.Run(c.name, func(t *testing.T) {
			goldenNoSkip, goldenMade = false, nil
			skip := c.run(t)
			skipped := 0
			for _, p := range goldenMade {
				skipped += p.BackfillSkipped()
			}
			goldenNoSkip, goldenMade = true, nil
			full := c.run(t)
			for _, p := range goldenMade {
				if n := p.BackfillSkipped(); n != 0 {
					t.Fatalf("NoBackfillSkip: %d cycles skipped", n)
				}
			}
			if len(skip) != len(full) {
				t.Fatalf("%d records with skipping, %d without", len(skip), len(full))
			}
			for i := range skip {
				equalRecords(t, skip[i], full[i])
			}
			t.Logf("%d backfill cycles skipped", skipped)
			total += skipped
		})
	}
	if total == 0 {
		t.Error("no backfill cycle was skipped: the test proves nothing")
	}
}

// equalRecords fails t unless a (skipping) and b (not) are the same.
func equalRecords(t *testing.T, a, b *sim.Record) {
	t.Helper()
	if len(a.Jobs) != len(b.Jobs) {
		t.Fatalf("%d jobs with skipping, %d without", len(a.Jobs), len(b.Jobs))
	}
	for i := range a.Jobs {
		if !reflect.DeepEqual(a.Jobs[i], b.Jobs[i]) {
			t.Fatalf("job %d: with skipping %+v, without %+v", i, a.Jobs[i], b.Jobs[i])
		}
	}
	if !reflect.DeepEqual(a.Runs, b.Runs) {
		t.Fatal("earlier runs differ")
	}
	ra, rb := a.Reasons.Changes(), b.Reasons.Changes()
	if len(ra) != len(rb) {
		t.Fatalf("%d reason changes with skipping, %d without", len(ra), len(rb))
	}
	for i := range ra {
		if ra[i] != rb[i] {
			t.Fatalf("reason change %d: with skipping %+v, without %+v", i, ra[i], rb[i])
		}
	}
	if a.End != b.End {
		t.Fatalf("end %d with skipping, %d without", a.End, b.End)
	}
}
