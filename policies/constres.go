package policies

import (
	"cmp"
	"slices"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// PlacementConsTres is ConsTres (select/cons_tres's default node choice).
const PlacementConsTres = "cons-tres"

// ConsTres places a node-count job as Slurm 22.05's select/cons_tres does
// without topology, LLN or busy-node preference (cons_tres/job_test.c
// _eval_nodes): the nodes the job fits on, in cluster order, form sets
// of consecutive nodes; it takes the set that holds the job with the
// fewest available CPUs (the tightest fit; the first of equals), or, when
// none holds it, the one with the most (a later set that cannot hold it
// but has more CPUs than the best so far replaces even one that can, as
// the source's test reads), and repeats with the next set for what
// remains. Every node has the same weight here (_eval_nodes also
// splits sets where Slurm's node Weight changes and prefers the lowest). In a set it takes, a one-node job goes to the node with
// the fewest available CPUs that hold its CPUs; otherwise nodes are
// taken from the set's first on. A node's available CPUs are all its free
// CPUs, as _select_cores counts them, and the job's CPUs are its total
// (details->min_cpus), so a node counts against them with every free CPU
// it has.
//
// Where the nodes sit matters: with n1 partly used, n2 idle, n3 full and
// n4 idle, a one-node job goes to n4 (the set {n4} is tighter than
// {n1, n2}), where best fit takes n1. Spread (GPU-count), MIG and MPS
// jobs, which cons_tres places with per-job GRES counting, are placed
// as BestFit places them.
//
// A ConsTres keeps scratch buffers between calls; use one per policy.
type ConsTres struct {
	avail []int32 // available CPUs of each node the job fits on, 0 elsewhere
	sets  []consSet
	taken []bool
	bf    BestFit
}

var _ Placer = (*ConsTres)(nil)

// consSet is a set of consecutive nodes the job fits on (_eval_nodes'
// consec_* arrays).
type consSet struct {
	first, last int32 // node indices, inclusive
	nodes, cpus int32 // usable nodes and their available CPUs, zeroed once used
}

// InOrder implements Placer: the choice depends on how nodes fit.
func (*ConsTres) InOrder() bool { return false }

// Place implements Placer.
func (c *ConsTres) Place(nodes []hwmodels.Node, free []sim.NodeState, job *sim.PendingJob, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	d := NewDemand(job)
	if d.spread || d.MIG != 0 || d.MPS != 0 {
		return c.bf.Place(nodes, free, job, out)
	}
	for _, part := range partitionBits(job) {
		d.part = part
		var ok bool
		if out, ok = c.place(nodes, free, &d, out); ok {
			return out, true
		}
	}
	return out, false
}

// place chooses d's nodes as _eval_nodes does.
func (c *ConsTres) place(nodes []hwmodels.Node, free []sim.NodeState, d *Demand, out []sim.NodeAlloc) ([]sim.NodeAlloc, bool) {
	n := len(nodes)
	c.avail = slices.Grow(c.avail[:0], n)[:n] // scratch kept between calls: placement runs per job per pass
	c.taken = slices.Grow(c.taken[:0], n)[:n]
	clear(c.avail)
	clear(c.taken)
	c.sets = c.sets[:0]
	open := false // the last set is still growing
	for i := range nodes {
		if !d.Eligible(&nodes[i]) || d.Fit(free[i]) == 0 {
			open = false
			continue
		}
		c.avail[i] = free[i].FreeCPUs
		if !open {
			c.sets = append(c.sets, consSet{first: int32(i)})
			open = true
		}
		s := &c.sets[len(c.sets)-1]
		s.last = int32(i)
		s.nodes++
		s.cpus += c.avail[i]
	}
	remNodes := d.Count
	remCPUs := int64(d.Count) * int64(d.CPUs)
	maxNodes := d.Count
	base := len(out)
	for maxNodes > 0 {
		best := -1
		bestSufficient := false
		for k := range c.sets {
			s := &c.sets[k]
			if s.nodes == 0 {
				continue
			}
			sufficient := int64(s.cpus) >= remCPUs && s.nodes >= remNodes
			if best < 0 {
				best, bestSufficient = k, sufficient
				continue
			}
			b := &c.sets[best]
			// _eval_nodes' test as written: a set that cannot hold the job
			// but has more CPUs replaces even one that can.
			if sufficient && !bestSufficient || sufficient && s.cpus < b.cpus || !sufficient && s.cpus > b.cpus {
				best, bestSufficient = k, sufficient
			}
		}
		if best < 0 {
			break
		}
		s := &c.sets[best]
		if remNodes <= 1 {
			// The best fit single node of the set, and only it.
			one := int32(-1)
			for i := s.first; i <= s.last; i++ {
				if c.taken[i] || c.avail[i] == 0 || int64(c.avail[i]) < remCPUs {
					continue
				}
				if one < 0 || c.avail[i] < c.avail[one] {
					one = i
					if int64(c.avail[i]) == remCPUs {
						break
					}
				}
			}
			if one >= 0 {
				for i := s.first; i <= s.last; i++ {
					if i != one {
						c.avail[i] = 0
					}
				}
			}
		}
		for i := s.first; i <= s.last && maxNodes > 0 && (remNodes > 0 || remCPUs > 0); i++ {
			if c.taken[i] || c.avail[i] <= 0 {
				continue
			}
			if maxNodes == 1 && int64(c.avail[i]) < remCPUs {
				continue // the job's last node cannot hold what remains
			}
			c.taken[i] = true
			remCPUs -= int64(c.avail[i])
			remNodes--
			maxNodes--
			out = append(out, d.allocOn(i, 1, free[i], true))
		}
		if remNodes <= 0 && remCPUs <= 0 {
			// Allocations in node order, as the other placers give them.
			slices.SortFunc(out[base:], func(x, y sim.NodeAlloc) int { return cmp.Compare(x.Node, y.Node) })
			return out, true
		}
		s.nodes, s.cpus = 0, 0
	}
	return out[:base], false
}
