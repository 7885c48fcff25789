package sim_test

import (
	"fmt"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// A policy writes a node's share of a start as a literal. Here three
// 1g.10gb MIG instances on a node with two dynamic h100 MIG GPUs, left
// for the controller to place (as NodeState.Sub places them on the free
// state a policy keeps), and an MPS share of 25 % on MPS GPU 0 of
// another node.
func ExampleNodeAlloc() {
	geo, _ := hwmodels.LookupMIG("h100-80gb")
	migNode := hwmodels.Node{Name: "m1", GPUs: 2, CPUs: 32, MemMB: 1 << 18,
		MIG: &hwmodels.MIGConfig{GPUs: 2, Geometry: geo, Dynamic: true}}
	mpsNode := hwmodels.Node{Name: "s1", GPUs: 4, CPUs: 32, MemMB: 1 << 18,
		MPS: &hwmodels.MPSConfig{MaxClients: 4}}
	p, _ := workload.ParseMIGProfile("1g.10gb")

	mig := sim.NodeAlloc{Node: 0, CPUs: 3, MIG: sim.MIGInstances{Profile: p, Count: 3}}
	mps := sim.NodeAlloc{Node: 1, CPUs: 1, MPS: sim.MPSShare{GPU: 0, Share: 25}}

	free := sim.Capacity(&migNode)
	free.Sub(&mig)
	fmt.Println("MIG:", mig.MIG.Count, "×", mig.MIG.Profile, "per GPU", mig.MIG.PerGPU)
	fmt.Println("1g.10gb left:", free.MIG.Instances(p))

	free = sim.Capacity(&mpsNode)
	free.Sub(&mps)
	used, clients := free.MPS.GPU(0)
	fmt.Printf("MPS GPU %d: %d%% in use by %d client, %d whole GPUs free\n", mps.MPS.GPU, used, clients, free.FreeGPUs)
	// Output:
	// MIG: 3 × 1g.10gb per GPU [3 0 0 0 0 0 0 0]
	// 1g.10gb left: 11
	// MPS GPU 0: 25% in use by 1 client, 3 whole GPUs free
}
