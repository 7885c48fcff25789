package sim

import (
	"fmt"

	"github.com/schedsim/schedsim/hwmodels"
)

// MPS sharing (CUDA MPS with Slurm gres/mps; see
// ../shared/reference/slurm-gpu-facts.md §5.3, §6.3).
//
// A node group with mps: {max_clients: K} lets each of its GPUs be shared
// by up to K MPS jobs whose shares (workload.Request.MPSShare, percent of
// one GPU, Slurm's --gres=mps:N with 100 per GPU) sum to at most 100. As
// in Slurm, a job's share on a node lies on one GPU (a share over 100
// never fits), and a GPU is allocated either as gpu or as mps, never both:
// the first MPS client takes a GPU out of NodeState.FreeGPUs and the last
// one to leave gives it back, so whole-GPU jobs never use a GPU with MPS
// clients and MPS jobs never use a GPU a whole-GPU job holds. An MPS job
// holds no whole GPUs (NodeAlloc.GPUs is 0).
//
// Whole-GPU jobs hold counts, not numbered GPUs, so the GPUs in MPS use
// are numbered by the controller: MPS GPU g (0 to MaxMPSGPUs−1) of a node
// is one physical GPU, distinct from the node's other MPS GPUs and from
// the GPUs held whole, for as long as it has clients. A share goes to the
// lowest-numbered MPS GPU in use that has room (share and a client slot),
// else to the lowest-numbered unused number, taking a free GPU (first
// fit); placers may name the GPU themselves (NodeState.MPSPlace with best
// fit: the fullest GPU that has room).

// MaxMPSGPUs is the most GPUs of one node that may be in MPS use at once.
const MaxMPSGPUs = 8

// MPSFree is a node's MPS state (NodeState.MPS): the share in use and the
// clients of each of its MPS GPUs, and the node's client limit. It is zero
// for a node without MPS or out of service. Use its methods; the layout
// is not part of the contract. It is two words rather than a struct of
// per-GPU arrays because the view is read-only and hands every pass a
// copy of it per node (in NodeState), which policies copy and update;
// what a policy writes, an allocation's share, is the plain MPSShare.
//
// Word 0 holds 7 bits per MPS GPU (share in use) and, in bits 56-61, the
// client limit; word 1 holds 6 bits per MPS GPU (clients).
type MPSFree [2]uint64

const (
	mpsUsedBits   = 7
	mpsClientBits = 6
	mpsMaxShift   = 56
)

// MPSCapacity returns the MPS state of node with nothing allocated, zero
// for a node without MPS or without GPUs.
func MPSCapacity(node *hwmodels.Node) MPSFree {
	if node.MPS == nil || node.MPS.MaxClients <= 0 || node.GPUs <= 0 {
		return MPSFree{}
	}
	k := min(node.MPS.MaxClients, hwmodels.MaxMPSClients)
	return MPSFree{uint64(k) << mpsMaxShift, 0}
}

// Enabled reports whether the node shares GPUs by MPS.
func (f MPSFree) Enabled() bool { return f[0] != 0 }

// MaxClients returns how many MPS jobs one GPU may hold (0 without MPS).
func (f MPSFree) MaxClients() int32 { return int32(f[0]>>mpsMaxShift) & (1<<mpsClientBits - 1) }

// GPU returns MPS GPU g's share in use (percent) and its clients; both are
// zero for a number not in use.
func (f MPSFree) GPU(g int) (used, clients int32) {
	return int32(f[0]>>(uint(g)*mpsUsedBits)) & (1<<mpsUsedBits - 1),
		int32(f[1]>>(uint(g)*mpsClientBits)) & (1<<mpsClientBits - 1)
}

// InUse returns how many GPUs have MPS clients.
func (f MPSFree) InUse() int32 {
	var n int32
	for g := range MaxMPSGPUs {
		if _, k := f.GPU(g); k > 0 {
			n++
		}
	}
	return n
}

func (f MPSFree) setGPU(g int, used, clients int32) MPSFree {
	su, sc := uint(g)*mpsUsedBits, uint(g)*mpsClientBits
	f[0] = f[0]&^((1<<mpsUsedBits-1)<<su) | uint64(used)<<su
	f[1] = f[1]&^((1<<mpsClientBits-1)<<sc) | uint64(clients)<<sc
	return f
}

// MPSShare is an MPS job's share of one GPU on one node (NodeAlloc.MPS);
// the zero value is none. A policy writes it as a literal, placed
// (MPSShare{GPU: 2, Share: 25}) or left to the controller
// (MPSShare{GPU: MPSAnyGPU, Share: 25}, placed first fit); the record
// holds it placed.
type MPSShare struct {
	// GPU is the MPS GPU that holds the share, 0 to MaxMPSGPUs−1 (see
	// above: a number the controller gives a physical GPU while it has
	// clients), or MPSAnyGPU.
	GPU int16
	// Share is the percent of the GPU, 1 to 100 (the job's
	// workload.Request.MPSShare); other values never fit.
	Share int16
}

// MPSAnyGPU is MPSShare.GPU for a share the controller places: on the
// lowest-numbered MPS GPU with room, else on a free GPU.
const MPSAnyGPU = -1

// mpsAny returns share (a request's) for the controller to place: none
// for 0 or less, and a share over 100 kept over it (it never fits).
func mpsAny(share int32) MPSShare {
	if share <= 0 {
		return MPSShare{}
	}
	return MPSShare{GPU: MPSAnyGPU, Share: int16(min(share, 127))}
}

// MPSPlace returns where s can take share: the placed allocation and true,
// or false when no GPU has room and no free GPU is left. First fit (best
// false): the lowest-numbered MPS GPU with room, else a new one; best
// fit: the MPS GPU with the most share in use that still has room (ties
// by number), else a new one.
func (s *NodeState) MPSPlace(share int32, best bool) (MPSShare, bool) {
	f := s.MPS
	k := f.MaxClients()
	if k == 0 || share <= 0 || share > 100 {
		return MPSShare{}, false
	}
	pick, pickUsed, spare := -1, int32(-1), -1
	for g := range MaxMPSGPUs {
		used, cl := f.GPU(g)
		if cl == 0 {
			if spare < 0 {
				spare = g
			}
			continue
		}
		if cl < k && used+share <= 100 && used > pickUsed {
			pick, pickUsed = g, used
			if !best {
				break
			}
		}
	}
	switch {
	case pick >= 0:
		return MPSShare{GPU: int16(pick), Share: int16(share)}, true
	case spare >= 0 && s.FreeGPUs >= 1:
		return MPSShare{GPU: int16(spare), Share: int16(share)}, true
	}
	return MPSShare{}, false
}

// MPSFits reports whether s can take share now.
func (s *NodeState) MPSFits(share int32) bool {
	_, ok := s.MPSPlace(share, false)
	return ok
}

// takeMPS takes a from s (placing it first fit when unplaced) and returns
// it placed; false, with s unchanged, when it does not fit.
func (s *NodeState) takeMPS(a MPSShare) (MPSShare, bool) {
	if a.GPU < 0 {
		p, ok := s.MPSPlace(int32(a.Share), false)
		if !ok {
			return a, false
		}
		a = p
	}
	g, share := int(a.GPU), int32(a.Share)
	k := s.MPS.MaxClients()
	if g >= MaxMPSGPUs || k == 0 || share <= 0 || share > 100 {
		return a, false
	}
	used, cl := s.MPS.GPU(g)
	if cl >= k || used+share > 100 || cl == 0 && s.FreeGPUs < 1 {
		return a, false
	}
	if cl == 0 {
		s.FreeGPUs--
	}
	s.MPS = s.MPS.setGPU(g, used+share, cl+1)
	return a, true
}

// giveMPS gives a placed share back to s; the GPU's last client leaving
// makes it a free whole GPU again. An unplaced or unknown share gives
// nothing back.
func (s *NodeState) giveMPS(a MPSShare) {
	g := int(a.GPU)
	if g < 0 || g >= MaxMPSGPUs {
		return
	}
	used, cl := s.MPS.GPU(g)
	if cl == 0 {
		return
	}
	cl--
	used = max(used-int32(a.Share), 0)
	if cl == 0 {
		used = 0
		s.FreeGPUs++
	}
	s.MPS = s.MPS.setGPU(g, used, cl)
}

// checkMPSShare verifies an MPS job's share a on a node whose free state
// is free: the job's share, no whole GPUs or MIG instances, on an MPS node
// with room.
func (c *controller) checkMPSShare(share int32, a *NodeAlloc, free NodeState) error {
	node := &c.cluster.Nodes[a.Node]
	if share == 0 {
		return fmt.Errorf("node %s: a job without an MPS request cannot hold an MPS share (%d%%)", node.Name, a.MPS.Share)
	}
	if a.GPUs != 0 || a.MIG != (MIGInstances{}) || int32(a.MPS.Share) != share {
		return fmt.Errorf("node %s: an MPS job takes its share mps:%d on one GPU, not gpus=%d, MIG or mps:%d", node.Name, share, a.GPUs, a.MPS.Share)
	}
	if !free.MPS.Enabled() {
		return fmt.Errorf("node %s: no MPS sharing on this node", node.Name)
	}
	if _, ok := free.takeMPS(a.MPS); !ok {
		g := int(a.MPS.GPU)
		used, cl := free.MPS.GPU(max(g, 0))
		return fmt.Errorf("node %s: MPS share %d%% on GPU %d does not fit (GPU %d: %d%% in use, %d of %d clients; %d free GPUs)",
			node.Name, share, g, max(g, 0), used, cl, free.MPS.MaxClients(), free.FreeGPUs)
	}
	return nil
}

// checkMPS verifies, for Config.Check, that each node's MPS state is what
// the running jobs' shares make: per MPS GPU the sum of their shares (at
// most 100) and their count (at most the client limit).
func (c *controller) checkMPS() {
	type gk struct{ node, gpu int32 }
	var used, cl map[gk]int32
	for _, rj := range c.running {
		for _, a := range rj.Alloc {
			if a.MPS == (MPSShare{}) {
				continue
			}
			if used == nil {
				used, cl = map[gk]int32{}, map[gk]int32{}
			}
			k := gk{a.Node, int32(a.MPS.GPU)}
			used[k] += int32(a.MPS.Share)
			cl[k]++
		}
	}
	for i := range c.nodes {
		have := *c.freeOf(int32(i))
		want := MPSCapacity(&c.cluster.Nodes[i])
		if !want.Enabled() {
			if have.MPS != (MPSFree{}) {
				panic(fmt.Sprintf("sim: node %s has no MPS but shows MPS state at t=%d", c.cluster.Nodes[i].Name, c.now))
			}
			continue
		}
		for g := range MaxMPSGPUs {
			u, k := used[gk{int32(i), int32(g)}], cl[gk{int32(i), int32(g)}]
			if u > 100 || k > want.MaxClients() {
				panic(fmt.Sprintf("sim: node %s MPS GPU %d oversubscribed at t=%d: %d%% by %d clients (limit %d)", c.cluster.Nodes[i].Name, g, c.now, u, k, want.MaxClients()))
			}
			want = want.setGPU(g, u, k)
		}
		if have.MPS != want {
			panic(fmt.Sprintf("sim: node %s MPS state drift at t=%d: have %+v, want %+v", c.cluster.Nodes[i].Name, c.now, have.MPS, want))
		}
	}
}

// MPSMeet returns the MPS state in use in both a and b, for a policy that
// needs the capacity free throughout an interval (as MIGMeet for MIG):
// per MPS GPU the more share in use and the more clients; a GPU unused in
// one and in use in the other takes the in-use values. The client limit is
// a's; the meet is zero (no MPS) when either is.
//
// A share joining a GPU of the meet that is unused on one side takes a
// free GPU there: MPSMeet alone is enough when each side has a free GPU
// (the meet's free GPUs being the fewer of the two); MPSMeetFree also
// covers a side without one.
func MPSMeet(a, b MPSFree) MPSFree {
	if !a.Enabled() || !b.Enabled() {
		return MPSFree{}
	}
	out := a
	for g := range MaxMPSGPUs {
		u1, c1 := a.GPU(g)
		u2, c2 := b.GPU(g)
		if c1 == 0 && c2 == 0 {
			continue
		}
		out = out.setGPU(g, max(u1, u2), max(c1, c2))
	}
	return out
}

// MPSMeetFree is MPSMeet for two node states with aFree and bFree free
// GPUs: an MPS GPU in use on one side and unused on a side without a free
// GPU is full in the meet (no share fits it), since a share could join it
// on the one side but not take a GPU on the other. With the meet's free
// GPUs min(aFree, bFree), a share that fits the meet fits both sides; the
// meet of several states may be taken pairwise, in any order.
func MPSMeetFree(a MPSFree, aFree int32, b MPSFree, bFree int32) MPSFree {
	out := MPSMeet(a, b)
	if !out.Enabled() || aFree > 0 && bFree > 0 {
		return out
	}
	for g := range MaxMPSGPUs {
		_, c1 := a.GPU(g)
		_, c2 := b.GPU(g)
		if c1 == 0 && c2 > 0 && aFree <= 0 || c2 == 0 && c1 > 0 && bFree <= 0 {
			out = out.setGPU(g, 100, max(c1, c2))
		}
	}
	return out
}
