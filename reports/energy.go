package reports

import (
	"sort"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Energy is a run's energy use by the cluster's energy model
// (hwmodels.PowerModel and Cluster.NodePower; formulas in
// hwmodels/energy.go and docs/hardware.md), charged over the utilization
// window [FirstSubmit, LastEnd) from the record's allocations:
//
//   - every node is up for the whole window and draws its base power plus
//     GPUIdleW per idle GPU and GPUBusyW per GPU a job holds;
//   - with power saving (PowerModel.SuspendTime > 0), nodes draw
//     SuspendedW while powered down. A record of a run whose controller
//     modeled it (sim.Record.PowerSaving) gives the intervals
//     (Record.Suspends: a node with no job for longer than SuspendTime is
//     down until a job's start wakes it; the job began ResumeTimeout
//     later, time the node spends booting at idle power). For other
//     records it is estimated after the run: a node with no job for longer
//     than SuspendTime is taken as powered down from then on, until
//     ResumeTimeout before its next job starts; a node idle until the
//     window's end stays down;
//   - a job is charged hwmodels.JobKWh per node of each run: its GPUs'
//     busy power and its share of the node's base power;
//   - IT energy × PUE is facility energy, × PricePerKWh the cost.
//
// Node outages (node events, failures) are charged as idle time.
type Energy struct {
	// Modeled is true when the cluster has power figures (some node has a
	// base power or GPUs with idle or busy power); every other field is
	// zero otherwise.
	Modeled bool
	// ITKWh is the nodes' energy over the window; FacilityKWh is ITKWh ×
	// PUE; Cost is FacilityKWh × PricePerKWh, in Currency.
	ITKWh, FacilityKWh, Cost float64
	Currency                 string
	PUE, PricePerKWh         float64
	// JobsKWh is the IT energy charged to jobs (the sum of JobRow.
	// EnergyKWh); IdleKWh the IT energy of nodes while no job ran on them
	// (suspended and resuming time included). The rest of ITKWh is the
	// idle GPUs and unclaimed base power of nodes jobs partly used.
	JobsKWh, IdleKWh float64
	// SuspendedNodeSeconds is the node-seconds spent powered down, and
	// Suspends the number of power-downs (the controller's, or estimated
	// after the run; see above).
	SuspendedNodeSeconds int64
	Suspends             int
	// MeanPowerKW is ITKWh over the window, in kW; PeakPowerKW the
	// cluster's IT power with every GPU busy.
	MeanPowerKW, PeakPowerKW float64
}

// energyOf computes the run's Energy, tells setKWh (when not nil) each
// job's EnergyKWh and, when samples is not empty, fills each sample's
// EnergyKWh.
func energyOf(rec *sim.Record, runs *runTable, busy *nodeBusy, from, to sim.Time, setKWh func(i int, kwh float64), samples []Sample) Energy {
	cl := rec.Cluster
	pm := cl.Power
	e := Energy{Currency: pm.Currency, PUE: max(pm.PUE, 1), PricePerKWh: pm.PricePerKWh, PeakPowerKW: cl.PeakPowerW() / 1000}
	if cl.PeakPowerW() <= 0 {
		return Energy{}
	}
	e.Modeled = true
	np := make([]hwmodels.NodePower, len(cl.Nodes))
	for i := range np {
		np[i] = cl.NodePower(i)
	}

	window := int64(to - from)
	inWindow := to > from && from != workload.Unknown
	bins := binAdder{samples: samples}
	// Per job: JobKWh over each run's nodes; and the GPUs' power above
	// idle while runs hold them, per node, in job order.
	extraJ := make([]float64, len(cl.Nodes))
	var buf []runSpan
	for i := range rec.Jobs {
		var kwh float64
		buf = runs.appendRuns(buf[:0], i)
		for _, r := range buf {
			d := int64(r.end - r.start)
			if d <= 0 {
				continue
			}
			for _, a := range r.alloc.All() {
				n := &cl.Nodes[a.Node]
				share := 0.0
				if n.CPUs > 0 {
					share = float64(a.CPUs) / float64(n.CPUs)
				}
				// MIG instances and MPS shares draw their fraction of a
				// busy GPU (gpuParts); the shares of one GPU sum to at most
				// one GPU, so a shared GPU is busy once.
				gpus := float64(gpuParts(cl, &a)) / float64(gpuUnit)
				kwh += hwmodels.JobKWhGPUs(np[a.Node], gpus, share, d)
				if !inWindow {
					continue
				}
				if s, e := max(r.start, from), min(r.end, to); e > s {
					extra := (np[a.Node].GPUBusyW - np[a.Node].GPUIdleW) * gpus
					extraJ[a.Node] += extra * float64(e-s)
					bins.add(s, e, extra)
				}
			}
		}
		if setKWh != nil {
			setKWh(i, kwh)
		}
		e.JobsKWh += kwh
	}
	if !inWindow {
		return e
	}
	var joules, allIdleW float64
	var ivs []interval
	for n := range cl.Nodes {
		allIdleW += np[n].Watts(0)
	}
	bins.add(from, to, allIdleW)
	for n := range cl.Nodes {
		p := np[n]
		idleW := p.Watts(0)
		joules += idleW*float64(window) + extraJ[n]
		// Gaps: the window minus the union of the node's runs.
		cursor := from
		gap := func(gs, ge sim.Time, last bool) {
			if ge <= gs {
				return
			}
			e.IdleKWh += hwmodels.KWh(idleW, int64(ge-gs))
			if pm.SuspendTime <= 0 || rec.PowerSaving {
				return
			}
			ds, de := gs+sim.Time(pm.SuspendTime), ge
			if !last {
				de = ge - sim.Time(pm.ResumeTimeout)
			}
			if de <= ds {
				return
			}
			e.Suspends++
			e.SuspendedNodeSeconds += int64(de - ds)
			delta := pm.SuspendedW - idleW
			joules += delta * float64(de-ds)
			e.IdleKWh += hwmodels.KWh(delta, int64(de-ds))
			bins.add(ds, de, delta)
		}
		ivs = busy.of(ivs[:0], n)
		for _, iv := range ivs {
			gap(cursor, iv.from, false)
			cursor = iv.to
		}
		gap(cursor, to, true)
	}
	if rec.PowerSaving {
		// The controller's own suspensions (sim.Record.Suspends); the
		// resume time after each is idle time, outside any run.
		for _, su := range rec.Suspends {
			if int(su.Node) >= len(np) {
				continue
			}
			ds, de := max(su.From, from), min(su.To, to)
			if de <= ds {
				continue
			}
			e.Suspends++
			e.SuspendedNodeSeconds += int64(de - ds)
			delta := pm.SuspendedW - np[su.Node].Watts(0)
			joules += delta * float64(de-ds)
			e.IdleKWh += hwmodels.KWh(delta, int64(de-ds))
			bins.add(ds, de, delta)
		}
	}
	e.ITKWh = joules / hwmodels.JoulesPerKWh
	e.FacilityKWh = pm.Facility(e.ITKWh)
	e.Cost = pm.Cost(e.ITKWh)
	e.MeanPowerKW = e.ITKWh / (float64(window) / 3600)
	return e
}

// binAdder spreads constant power over the timeline's bins.
type binAdder struct{ samples []Sample }

// add charges watts over [from, to) to the bins it overlaps, in kWh.
func (b binAdder) add(from, to sim.Time, watts float64) {
	s := b.samples
	if len(s) == 0 || watts == 0 {
		return
	}
	k := sort.Search(len(s), func(i int) bool { return s[i].End > from })
	for ; k < len(s) && s[k].Start < to; k++ {
		a, e := max(from, s[k].Start), min(to, s[k].End)
		if e > a {
			s[k].EnergyKWh += hwmodels.KWh(watts, int64(e-a))
		}
	}
}
