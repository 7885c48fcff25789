package slurm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestSlurmMIGReservation: the slurm backfill's will-run test gives back the
// MIG instances of running jobs. The cluster is conservative's MIG case: one
// H100 node with 2 GPUs, GPU 0 in MIG mode as 7 × 1g.10gb, GPU 1 whole, 8
// CPUs; Slurm 22.05 defaults (bf_interval 30 s on a grid from 0).
//
//	a  7 × 1g, 1 CPU, t=0, 100 s: the main pass starts it at 0
//	b  7 × 1g, 8 CPUs, t=1, 100 s: no instance free; it blocks the
//	   partition in the main pass. The backfill cycle at 30 reserves the
//	   node for it from a's end, [100, 200)
//	c  1 whole GPU, 4 CPUs, t=2, 1000 s: fits now, but [30, 1030) would
//	   overlap b's whole-node reservation, so it does not start; the main
//	   pass starts b at 100 and c at 200, when b ends
//
// Were a's instances not given back in the will-run test, b would get no
// reservation, the cycle at 30 would backfill c until 1030, and b would
// start at 1030 instead of 100.
func TestSlurmMIGReservation(t *testing.T) {
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
	p, err := slurm.New(slurm.DefaultArgs(), policies.FirstFit{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sim.Run(sim.Config{Cluster: catalogCluster(t, spec), Trace: &workload.Trace{Jobs: jobs},
		Policy: p, Seed: 1, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]workload.Time{"a": 0, "b": 100, "c": 200}
	if diff := cmp.Diff(want, starts(rec)); diff != "" {
		t.Errorf("starts (-want +got):\n%s", diff)
	}
}
