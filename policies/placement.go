package policies

import (
	"fmt"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// Placement strategy names, as a policy's args give them
// (policy: {name: easy, args: {placement: best-fit}}).
const (
	PlacementFirstFit     = "first-fit"
	PlacementBestFit      = "best-fit"
	PlacementTopologyTree = "topology-tree"
	// PlacementTopologyBlock is TopologyBlock (Slurm's topology/block).
	PlacementTopologyBlock = "topology-block"
)

// PlacementNames lists the placement strategies NewPlacer knows.
func PlacementNames() []string {
	return []string{PlacementFirstFit, PlacementBestFit, PlacementConsTres, PlacementTopologyTree, PlacementTopologyBlock, PlacementMIGPacking}
}

// NewPlacer returns a new placer of the strategy called name: first-fit
// (FirstFit, also for ""), best-fit (BestFit), cons-tres (ConsTres),
// topology-tree (TopologyTree), topology-block (TopologyBlock) or
// mig-packing (MIGPacking). Each call returns a new value, so policies
// never share scratch state.
func NewPlacer(name string) (Placer, error) {
	switch name {
	case "", PlacementFirstFit:
		return FirstFit{}, nil
	case PlacementBestFit:
		return &BestFit{}, nil
	case PlacementConsTres:
		return &ConsTres{}, nil
	case PlacementTopologyTree:
		return &TopologyTree{}, nil
	case PlacementTopologyBlock:
		return &TopologyBlock{}, nil
	case PlacementMIGPacking:
		return NewMIGPacking(), nil
	}
	return nil, fmt.Errorf("unknown placement %q (want %s)", name, strings.Join(PlacementNames(), ", "))
}

// placementArgs are the arguments of fifo and easy.
type placementArgs struct {
	// Placement names the placement strategy; default first-fit.
	Placement string `yaml:"placement"`
}

// placementArg strictly decodes the args {placement: NAME} (none: FirstFit)
// and returns the placer.
func placementArg(decode func(into any) error) (Placer, error) {
	var a placementArgs
	if decode != nil {
		if err := decode(&a); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
	}
	p, err := NewPlacer(a.Placement)
	if err != nil {
		return nil, fmt.Errorf("args: placement: %w", err)
	}
	return p, nil
}

// FragStats says how much of the free GPU capacity pending jobs could use.
type FragStats struct {
	// FreeGPUs is the free GPUs over all nodes; UsableGPUs those pending
	// GPU jobs could take (on each node, the most GPUs that shares of one
	// pending job's shape could take there, capped at the free GPUs);
	// StrandedGPUs = FreeGPUs − UsableGPUs when at least one pending job
	// wants GPUs, else 0 (nothing waits, so nothing is denied).
	FreeGPUs, UsableGPUs, StrandedGPUs int64
}

// Ratio is StrandedGPUs / FreeGPUs, 0 when nothing is free.
func (f FragStats) Ratio() float64 {
	if f.FreeGPUs == 0 {
		return 0
	}
	return float64(f.StrandedGPUs) / float64(f.FreeGPUs)
}

// Fragmentation measures free GPUs that no pending job could use: a free
// GPU is usable when shares of some pending job's shape could hold it
// (eligible partition and GPU type; as many of its per-node shares, or of
// its per-GPU units, as fit the node's free GPUs, CPUs and memory). It is a pure
// function of the view's nodes, free state and queue; distinct request
// shapes are evaluated once. Sample it per scheduling pass for a per-run
// series (the reports' timeline does this once wired).
func Fragmentation(nodes []hwmodels.Node, free []sim.NodeState, pending []sim.PendingJob) FragStats {
	var s FragStats
	var shapes []Demand
	for k := range pending {
		d := NewDemand(&pending[k])
		if d.GPUs <= 0 {
			continue
		}
		for _, part := range partitionBits(&pending[k]) {
			d.part = part
			dup := false
			for _, e := range shapes {
				if e == d {
					dup = true
					break
				}
			}
			if !dup {
				shapes = append(shapes, d)
			}
		}
	}
	for i := range nodes {
		f := free[i].FreeGPUs
		if f <= 0 {
			continue
		}
		s.FreeGPUs += int64(f)
		var use int32
		for k := range shapes {
			d := &shapes[k]
			if !d.Eligible(&nodes[i]) {
				continue
			}
			// As many of the job's shares (node-count jobs) or units
			// (spread jobs) as fit: jobs of the same shape queue too.
			shape := *d
			shape.spread = true
			use = max(use, min(shape.Fit(free[i])*d.GPUs, f))
		}
		s.UsableGPUs += int64(use)
	}
	if len(shapes) > 0 {
		s.StrandedGPUs = s.FreeGPUs - s.UsableGPUs
	}
	return s
}
