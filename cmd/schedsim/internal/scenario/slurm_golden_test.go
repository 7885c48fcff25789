package scenario

import (
	"fmt"
	"testing"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
)

// thunderSlurmGolden is the decision hash of the embedded default
// scenario (the Thunder slice on the example cluster) under the slurm
// policy with its defaults. Part of the slurm policy's decision-equality
// harness (policies/slurm_golden_test.go): an optimization of the policy
// must leave it unchanged.
const thunderSlurmGolden = "71b6a1d7d916b2cf"

// TestSlurmGoldenThunder replays the embedded default scenario under the
// slurm policy and compares every job's start, end, state, partition and
// allocation, every earlier run and every pending-reason change with the
// recorded hash.
func TestSlurmGoldenThunder(t *testing.T) {
	s := Default()
	s.Policy.Name = "slurm"
	run, err := s.Build(policies.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sim.Run(run.Config())
	if err != nil {
		t.Fatal(err)
	}
	started := 0
	for i := range rec.Jobs {
		if rec.Jobs[i].Start >= 0 {
			started++
		}
	}
	got := fmt.Sprintf("%016x", policytest.DecisionHash(rec))
	t.Logf("%d jobs, %d started, %d reason changes", len(rec.Jobs), started, rec.Reasons.Len())
	if got != thunderSlurmGolden {
		t.Errorf("decisions hash %s, golden %s", got, thunderSlurmGolden)
	}
}
