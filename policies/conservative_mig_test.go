package policies_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestConservativeMIGReservation: conservative's future free states give
// back the MIG instances of running jobs. One H100 node with 2 GPUs, GPU 0
// in MIG mode as 7 × 1g.10gb, GPU 1 whole, 8 CPUs:
//
//	a  7 × 1g, 1 CPU, t=0, 100 s: starts 0 (every instance)
//	b  7 × 1g, 8 CPUs, t=1, 100 s: no instance free until a ends: its
//	   reservation is [100, 200), with all 8 CPUs
//	c  1 whole GPU, 4 CPUs, t=2, 1000 s: fits now (7 CPUs free until 100)
//	   but would run into b's reservation, whose CPUs it needs: it is
//	   reserved at 200, when b ends
//
// Were a's instances not given back in the profile, b would get no
// reservation, c would start at 2 and hold 4 CPUs until 1002, and b would
// start at 1002 instead of 100.
func TestConservativeMIGReservation(t *testing.T) {
	spec := `version: 1
name: mig
node_groups:
  - name: n1
    gpu: {model: h100-sxm-80gb, count: 2}
    cpus: 8
    memory: 512G
    mig: {layout: [1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb], gpus: 1}
`
	jobs := []workload.Job{
		migJob(t, "a", 0, 100, "1g.10gb", 7),
		migJob(t, "b", 1, 100, "1g.10gb", 7),
		migJob(t, "c", 2, 1000, "", 1),
	}
	jobs[1].Request.CPUs = 8
	jobs[2].Request.CPUs = 4
	rec, err := sim.Run(sim.Config{Cluster: catalogCluster(t, spec), Trace: &workload.Trace{Jobs: jobs},
		Policy: policies.NewConservative(policies.FirstFit{}), Seed: 1, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]workload.Time{"a": 0, "b": 100, "c": 200}
	if diff := cmp.Diff(want, starts(rec)); diff != "" {
		t.Errorf("starts (-want +got):\n%s", diff)
	}
}
