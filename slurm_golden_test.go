package schedsim

import (
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata from the current code")

// thunderGolden is the slurm policy's decisions on the embedded default
// scenario (the Thunder slice on the example cluster), as a per-job table
// (policytest.JobTable): the summary of every job's figures and every
// 100th job's start, end, state, nodes and reason.
const thunderGolden = "testdata/slurm_thunder.golden"

// TestSlurmGoldenThunder replays the embedded default scenario under the
// slurm policy with its defaults and compares the table with
// testdata/slurm_thunder.golden. Rewrite it (only for an intended change
// of behaviour) with go test . -run
// SlurmGoldenThunder -update.
func TestSlurmGoldenThunder(t *testing.T) {
	s := Default()
	s.Policy.Name = "slurm"
	run, err := s.Build(catalog.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sim.Run(run.Config())
	if err != nil {
		t.Fatal(err)
	}
	got := policytest.JobTable(rec, 100)
	if *update {
		if err := os.WriteFile(thunderGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(thunderGolden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", thunderGolden, d)
	}
}
