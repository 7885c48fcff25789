package policies

import (
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// PlacementMIGPacking names the MIG-packing placer.
const PlacementMIGPacking = "mig-packing"

// MIGPacking places MIG jobs so as to keep MIG GPUs whole for large
// profiles: of the nodes a job's instances fit on, it takes the one whose
// placement repartitions the fewest dynamic MIG GPUs, then takes the
// fewest empty GPUs (an empty GPU can still be repartitioned for the
// largest profile, 7g: hwmodels.MIGGeometry.Fragmentation of an empty GPU
// places 7 of 7 compute slices, of a partly used one fewer), then leaves
// the fewest takeable instances of the job's profile (best fit), then the
// lowest-numbered. On the chosen node the instances go where
// sim.MIGFree.Pack puts them: the fullest GPU partitioned for the profile
// first, empty GPUs partitioned for it next, repartitioning an empty GPU
// last. Jobs without MIG are placed as BestFit places them.
//
// On a fixed layout no instance is ever repartitioned, so MIGPacking is
// BestFit by free instances of the profile. A MIGPacking keeps scratch
// buffers; use one per policy.
type MIGPacking struct {
	bf BestFit
}

var _ Placer = (*MIGPacking)(nil)

// InOrder implements Placer: it picks GPUs by how well they pack.
func (*MIGPacking) InOrder() bool { return false }

// NewMIGPacking returns a MIG-packing placer.
func NewMIGPacking() *MIGPacking { return &MIGPacking{bf: BestFit{migPack: true}} }

// Place implements Placer.
func (m *MIGPacking) Place(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	m.bf.migPack = true
	return m.bf.Place(nodes, free, job, out)
}

// migCost returns how many empty dynamic MIG GPUs placing n instances of
// p on f with sim.MIGFree.Pack would repartition, and how many empty GPUs
// already partitioned for p it would take; zeros on a fixed layout.
func migCost(f sim.MIGFree, p workload.MIGProfile, n int32) (rep, empty int32) {
	if !f.Dynamic() {
		return 0, 0
	}
	a, ok := f.Pack(p, n)
	if !ok {
		return 0, 0
	}
	pi := f.ProfileIndex(p)
	for g, k := range a.PerGPU {
		if k == 0 {
			continue
		}
		_, prof, used := f.GPU(g)
		switch {
		case prof != pi:
			rep++
		case used == 0:
			empty++
		}
	}
	return rep, empty
}
