package sim

import (
	"fmt"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

// RuntimeScaling applies the hardware runtime model (hwmodels.RuntimeModel,
// formulas in hwmodels/runtime.go and docs/hardware.md) when a job starts:
// the run's actual length follows the hardware the job got. Policies still
// plan with time limits only; the time limit is not scaled (a job made
// slower can run into it and end TIMEOUT, as it would on real hardware).
//
// A run that starts with W seconds of work left, as recorded (the trace's
// runtime, or what a requeue left of it), lasts
//
//	T = StretchRuntime(ScaleRuntime(W, s), x)
//	  = ceil(ceil(W / s) × x)
//
// where s is the speed ratio (1 without Speed) and x the communication
// stretch (1 without CommStretch). Both roundings go up, in float64 with
// hwmodels' documented rule, so the same inputs give the same seconds on
// every platform. A run whose length changes is listed in
// Record.RuntimeChanges.
type RuntimeScaling struct {
	// Model gives job classes and speed ratios; nil takes Cluster.Runtime.
	Model *hwmodels.RuntimeModel
	// Speed scales by the speed ratio of the job's class between the GPU
	// model the job was recorded on and the GPU model of the nodes it got
	// (the slowest, if they differ). The recorded model is the model of
	// the job's requested GPU type (workload.Request.GPUType: the model of
	// the cluster's nodes of that type, else hwmodels.GuessGPUModel), else
	// RecordedGPU. Jobs without GPUs, jobs with neither, and jobs on GPUs
	// without a figure for the class's basis, are not scaled. Leave it
	// off when the trace replays on the hardware it was recorded on.
	Speed bool
	// RecordedGPU is the GPU model (catalog or the cluster's gpu_models)
	// the trace was recorded on, for jobs whose request names no GPU type.
	RecordedGPU string
	// CommStretch stretches a multi-node run whose nodes span leaf
	// switches by hwmodels.CommStretch(f, o): f the class's CommFraction,
	// o Cluster.Fabric.PathOversubscription of its nodes (1 within one
	// leaf or without a fabric, so such runs do not change).
	CommStretch bool
	// Comm, CommRing or CommTree, turns on the communication model
	// (comm.go): multi-node runs share the fabric's uplinks and stretch
	// while they get less bandwidth than recorded; it replaces CommStretch.
	// "" leaves it off. Without a fabric, or with every job inside one
	// leaf, no run changes.
	Comm string
	// Class returns a job's class name (hwmodels.JobClass); nil, or "",
	// gives the model's DefaultClass. It must be a pure function of the
	// job.
	Class func(j *workload.Job) string
}

// RuntimeChange is a run whose length the runtime model changed.
type RuntimeChange struct {
	Job   JobRef
	Start Time
	// Work is the recorded seconds of work the run started with; Actual
	// the seconds it takes on its hardware (before any time-limit kill).
	Work, Actual Time
	// Speedup is the speed ratio applied (1: none); Stretch the
	// communication stretch (1: none).
	Speedup, Stretch float64
	// From and To are the GPU models of the speed ratio ("" without one).
	From, To string
}

// runtimeState is the controller's runtime-model state; nil when
// Config.Runtime is nil.
type runtimeState struct {
	cfg     RuntimeScaling
	model   *hwmodels.RuntimeModel
	typeOf  map[string]string // GRES type → GPU model of the cluster's nodes
	specs   map[string]*hwmodels.GPUSpec
	speedup map[speedKey]float64 // cache; NaN: no ratio
	actual  []Time               // per job: the current run's length
	changes []RuntimeChange
	nodes   []int32    // scratch
	comm    *commState // communication model (comm.go); nil without
}

type speedKey struct{ from, to, class string }

func newRuntimeState(cfg *RuntimeScaling, cl *hwmodels.Cluster, jobs int) (*runtimeState, error) {
	rs := &runtimeState{cfg: *cfg, model: cfg.Model, typeOf: map[string]string{},
		specs: map[string]*hwmodels.GPUSpec{}, speedup: map[speedKey]float64{}, actual: make([]Time, jobs)}
	if rs.model == nil {
		rs.model = &cl.Runtime
	}
	if _, ok := rs.model.Class(""); !ok {
		return nil, fmt.Errorf("sim: runtime model: default class %q is not defined", rs.model.DefaultClass)
	}
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		if n.GPUType != "" && n.GPUModel != "" {
			if _, ok := rs.typeOf[n.GPUType]; !ok {
				rs.typeOf[n.GPUType] = n.GPUModel
			}
		}
	}
	if m := cfg.RecordedGPU; m != "" {
		if _, ok := cl.GPU(m); !ok {
			return nil, fmt.Errorf("sim: runtime model: recorded GPU model %q is neither in the catalog nor in the cluster's gpu_models", m)
		}
	}
	if cfg.Comm != "" {
		cs, err := newCommState(cfg.Comm, cl, jobs)
		if err != nil {
			return nil, err
		}
		rs.comm = cs
	}
	return rs, nil
}

// spec returns the GPU model called name, nil when unknown.
func (rs *runtimeState) spec(cl *hwmodels.Cluster, name string) *hwmodels.GPUSpec {
	if s, ok := rs.specs[name]; ok {
		return s
	}
	var out *hwmodels.GPUSpec
	if g, ok := cl.GPU(name); ok {
		out = &g
	}
	rs.specs[name] = out
	return out
}

// recordedModel returns the GPU model job j was recorded on, "" if none.
func (rs *runtimeState) recordedModel(j *workload.Job) string {
	if t := j.Request.GPUType; t != "" {
		if m, ok := rs.typeOf[t]; ok {
			return m
		}
		if m, ok := hwmodels.GuessGPUModel(t); ok {
			return m
		}
	}
	return rs.cfg.RecordedGPU
}

// ratio returns the cached speed ratio from → to for class, 0 if none.
func (rs *runtimeState) ratio(cl *hwmodels.Cluster, from, to, class string) float64 {
	k := speedKey{from, to, class}
	if v, ok := rs.speedup[k]; ok {
		return v
	}
	var v float64
	a, b := rs.spec(cl, from), rs.spec(cl, to)
	if a != nil && b != nil {
		if s, err := rs.model.Speedup(a, b, class); err == nil && s > 0 {
			v = s
		}
	}
	rs.speedup[k] = v
	return v
}

// scale sets and returns the length of job ref's run starting now on
// alloc with work seconds of recorded work.
func (c *controller) scaleRun(ref JobRef, alloc []NodeAlloc, work Time) Time {
	rs := c.rt
	j := c.js.at(ref)
	class := ""
	if rs.cfg.Class != nil {
		class = rs.cfg.Class(j)
	}
	jc, ok := rs.model.Class(class)
	if !ok {
		jc, _ = rs.model.Class("")
	}
	ch := RuntimeChange{Job: ref, Start: c.now, Work: work, Speedup: 1, Stretch: 1}
	run := work
	if rs.cfg.Speed && c.req.get(ref).GPUs > 0 {
		if from := rs.recordedModel(j); from != "" {
			// The slowest GPU model of the allocation sets the pace.
			slowest := 0.0
			for _, a := range alloc {
				to := c.cluster.Nodes[a.Node].GPUModel
				if a.GPUs == 0 || to == "" {
					continue
				}
				s := rs.ratio(c.cluster, from, to, jc.Name)
				if s > 0 && (slowest == 0 || s < slowest) {
					slowest, ch.To = s, to
				}
			}
			if slowest > 0 && slowest != 1 {
				ch.Speedup, ch.From = slowest, from
				run = Time(hwmodels.ScaleRuntime(int64(run), slowest))
			}
		}
	}
	isComm := false
	if rs.comm != nil && len(alloc) > 1 && c.cluster.Fabric != nil {
		base := run
		run = c.commStart(ref, alloc, c.rec[ref].Start, run, jc.CommFraction)
		if _, isComm = rs.comm.find(ref); isComm && base > 0 {
			ch.Stretch = float64(run) / float64(base)
		}
	} else if rs.cfg.CommStretch && len(alloc) > 1 && c.cluster.Fabric != nil && jc.CommFraction > 0 {
		rs.nodes = rs.nodes[:0]
		for _, a := range alloc {
			rs.nodes = append(rs.nodes, a.Node)
		}
		if x := hwmodels.CommStretch(jc.CommFraction, c.cluster.Fabric.PathOversubscription(rs.nodes)); x > 1 {
			ch.Stretch = x
			run = Time(hwmodels.StretchRuntime(int64(run), x))
		}
	}
	rs.actual[ref] = run
	if j.TimeLimit <= 0 && c.cluster.Partitions[c.part[ref]].MaxTime <= 0 {
		// The limit was the recorded runtime, a stand-in for a limit the
		// trace does not know: it follows the run, so the model's change
		// does not turn into a time-limit kill.
		c.limit[ref] = max(run, 1)
	}
	if isComm {
		i, _ := rs.comm.find(ref)
		rs.comm.jobs[i].ch = ch
	}
	if run != work {
		ch.Actual = run
		rs.changes = append(rs.changes, ch)
		if isComm {
			rs.comm.chIdx[ref] = int32(len(rs.changes))
		}
	}
	return run
}

// workOf returns the recorded seconds of work job ref has left before its
// next run: its trace runtime, or what a requeue left of it.
func (c *controller) workOf(ref JobRef) Time {
	if c.remain != nil {
		return c.remain[ref]
	}
	return c.js.at(ref).Runtime
}

// runLength returns how long job ref's current run lasts if nothing cuts
// it short.
func (c *controller) runLength(ref JobRef) Time {
	if c.rt != nil {
		return c.rt.actual[ref]
	}
	return c.workOf(ref)
}

// savedWork converts saved seconds of job ref's current run into recorded
// seconds of work: the run's work × saved / its length, rounded down, so a
// checkpoint never saves more than was done.
func (c *controller) savedWork(ref JobRef, saved Time) Time {
	if c.rt == nil || saved <= 0 {
		return saved
	}
	run := c.rt.actual[ref]
	work := c.remain[ref]
	if run <= 0 || run == work {
		return saved
	}
	if saved >= run {
		return work
	}
	// saved < run, so the result is below work; float64 truncation is
	// the documented float→int rule (the same on every platform).
	return Time(float64(work) * float64(saved) / float64(run))
}
