package hwmodels

// Communication model inputs (the model itself is sim/comm.go; formulas in
// docs/hardware.md, "Communication model").
//
// Bandwidths are in units of one node's injection bandwidth (its NICs
// together): a node sends at most 1. The uplink of switch s (its links to
// its parent) carries at most
//
//	U(s) = B(s) / Oversubscription(s),  B(leaf) = nodes below it,
//	B(s) = Σ U(children)  above the leaves,
//
// per direction, so a 2:1 leaf of 32 nodes has an uplink of 16 node
// bandwidths and a non-blocking one 32. A top switch has no uplink.

// UplinkCapacity returns U(s), the capacity of switch s's uplink in node
// bandwidths, or 0 for a top switch (no uplink) and an unknown index.
func (f *Fabric) UplinkCapacity(s int32) float64 {
	if f == nil || s < 0 || int(s) >= len(f.Switches) || f.Switches[s].Parent < 0 {
		return 0
	}
	return f.below(s) / max(f.Switches[s].Oversubscription, 1)
}

// below returns B(s): the bandwidth reaching switch s from below.
func (f *Fabric) below(s int32) float64 {
	sw := &f.Switches[s]
	if len(sw.Children) == 0 {
		return float64(len(sw.Nodes))
	}
	b := float64(len(sw.Nodes))
	for _, c := range sw.Children {
		b += f.below(c) / max(f.Switches[c].Oversubscription, 1)
	}
	return b
}

// NodesBelow returns how many nodes hang below switch s (its subtree).
func (f *Fabric) NodesBelow(s int32) int32 {
	if f == nil || s < 0 || int(s) >= len(f.attached) {
		return 0
	}
	return f.attached[s]
}

// NVLinkGBsPerGPU returns the GPU model's one-direction NVLink bandwidth
// per GPU in GB/s: half the catalog's bidirectional NVLinkGBs (H100 SXM
// 900 → 450), 0 without NVLink.
func (g *GPUSpec) NVLinkGBsPerGPU() float64 { return float64(g.NVLinkGBs) / 2 }

// NICGBsPerGPU returns the one-direction InfiniBand bandwidth per GPU in
// GB/s that a fabric of link_gbps ports gives, one NIC per GPU (the HGX /
// DGX layout: 8 × 400 Gb/s ConnectX-7 for 8 GPUs): LinkGbps / 8, 0 when
// the fabric says no link speed.
//
// A calibrated InterGBs takes precedence.
func (f *Fabric) NICGBsPerGPU() float64 {
	if f == nil {
		return 0
	}
	if f.InterGBs > 0 {
		return f.InterGBs
	}
	for i := range f.Switches {
		if g := f.Switches[i].LinkGbps; g > 0 {
			return float64(g) / 8
		}
	}
	return 0
}
