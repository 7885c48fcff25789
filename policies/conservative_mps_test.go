package policies_test

import (
	"testing"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// mpsCPUSpec is one H100 node with one GPU shared by MPS (4 clients) and
// cpus CPUs.
func mpsCPUSpec(cpus int) string {
	return "version: 1\nname: mps\nnode_groups:\n  - name: n1\n    gpu: {model: h100-sxm-80gb, count: 1}\n    cpus: " +
		itoa(cpus) + "\n    memory: 512G\n    mps: {max_clients: 4}\n"
}

func runConservative(t *testing.T, spec string, jobs []workload.Job) *sim.Record {
	t.Helper()
	rec, err := sim.Run(sim.Config{Cluster: catalogCluster(t, spec), Trace: &workload.Trace{Jobs: jobs},
		Policy: policies.NewConservative(policies.FirstFit{}), Seed: 1, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestConservativeMPSWindow: conservative's windows take the most MPS
// share in use over their segments (sim.MPSMeet). One GPU, 16 CPUs:
//
//	a 40 %, 4 CPUs, t=0, 100 s: starts 0 on the GPU
//	x no GPU, 10 CPUs, t=0, 50 s: starts 0 (2 CPUs left)
//	r 60 %, 4 CPUs, t=1, 100 s: 2 CPUs free: reserved at 50 when x ends
//	  (40+60 = 100 on the GPU), starts 50, ends 150
//	j 50 %, 1 CPU, t=2, 100 s: fits now (40+50) but [2, 102) covers
//	  [50, 100) where a and r hold 100 %; at 100 a leaves (60+50 > 100):
//	  reserved at 150, when r ends
//
// With only the first segment's MPS state (40 % in use) j would start at
// 2 and r, finding 40+50 in use at 50, would wait until j ends at 102.
func TestConservativeMPSWindow(t *testing.T) {
	jobs := []workload.Job{
		mpsJob("a", 0, 100, 40, 0), mpsJob("x", 0, 50, 0, 0),
		mpsJob("r", 1, 100, 60, 0), mpsJob("j", 2, 100, 50, 0),
	}
	jobs[0].Request.CPUs, jobs[1].Request.CPUs, jobs[2].Request.CPUs = 4, 10, 4
	rec := runConservative(t, mpsCPUSpec(16), jobs)
	wantStarts(t, rec, map[string]workload.Time{"a": 0, "x": 0, "r": 50, "j": 150})
}

// TestConservativeMPSNoFreeGPU: a GPU unused now but in MPS use in a later
// segment can be joined in the window only where a GPU is free to take.
// One GPU:
//
//	w 1 whole GPU, t=0, 100 s: starts 0
//	r 40 %, t=1, 100 s: reserved at 100 (the GPU becomes MPS GPU 0)
//	j 30 %, t=2, 200 s: [2, 202) covers [2, 100) where w holds the GPU
//	  and [100, 200) with r's 40 % on MPS GPU 0: the meet of MPS states
//	  alone has 40 % in use on GPU 0, room for j, but no GPU is free
//	  before 100 (MPSMeetFree makes GPU 0 full); reserved at 100, with r
//
// Were the window to take j at 2, the controller would refuse the start
// (no free GPU for an MPS GPU).
func TestConservativeMPSNoFreeGPU(t *testing.T) {
	rec := runConservative(t, mpsSpec(1, 4), []workload.Job{
		mpsJob("w", 0, 100, 0, 1), mpsJob("r", 1, 100, 40, 0), mpsJob("j", 2, 200, 30, 0),
	})
	wantStarts(t, rec, map[string]workload.Time{"w": 0, "r": 100, "j": 100})
}
