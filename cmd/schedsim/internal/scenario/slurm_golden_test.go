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
// must leave it unchanged. It changed from 423f54f08f11ff46 when the SWF
// reader kept the slice's two jobs that never started (91832 and 94218,
// no processors, run time 0): they leave the queue at their submit, and
// the 5,301 other jobs' starts, ends and states are the same (jobs.csv of
// `run --policy slurm` before and after differs by those two lines).
const thunderSlurmGolden = "5faad748d3a1c6e0"

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
