package sim

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim/event"
	"github.com/schedsim/schedsim/workload"
)

// Event classes: at one instant, job ends (completions and time-limit
// kills) are applied first, then node changes, then submissions, then
// cancellations of pending jobs, and the scheduling pass last, so a pass
// sees every resource freed and every job queued at its instant.
const (
	classEnd event.Class = iota
	classNode
	classSubmit
	classCancel
	classPass
)

// Config is everything one run needs.
type Config struct {
	Cluster *hwmodels.Cluster
	Trace   *workload.Trace
	Policy  Policy
	// Seed is the root of every random stream of the run.
	Seed uint64
	// Check verifies after every event that no node has more allocated
	// than it holds (for tests; it costs O(nodes + running) per event).
	Check bool
	// Reservations are advance reservations (maintenance windows).
	Reservations []AdvanceReservation
	// NodeEvents take nodes down and up at given times.
	NodeEvents []NodeEvent
}

// jobStatus is a job's lifecycle state inside the controller.
type jobStatus uint8

const (
	stFuture jobStatus = iota
	stHeld             // queued, never eligible: cancelled before start in the trace
	stPending
	stRunning
	stDone
)

type controller struct {
	cfg     Config
	cluster *hwmodels.Cluster
	jobs    []workload.Job
	policy  Policy
	trig    Triggers
	rng     *rand.Rand

	now     Time
	q       event.Queue
	nextSub int // next job to submit (jobs are sorted by submit time)

	status  []jobStatus
	req     []workload.Request // resolved requests
	reason  []PendingReason    // last recorded pending reason
	reasons []ReasonChange
	limit   []Time
	part    []int32

	pending   []PendingJob
	running   []RunningJob
	nodes     []NodeState
	rec       []JobRecord
	allocPool []NodeAlloc

	passAt      Time // instant of the pending event-triggered pass, or -1
	periodicAt  Time // instant of the pending periodic pass, or -1
	removed     int // jobs that left the pending list since the last compact
	events      int64
	fitCache    map[fitKey]bool
	partRemap   map[string]int
	typeDropped map[string]int
	depsIgnored int
}

type fitKey struct {
	part int32
	req  workload.Request
}

// Run replays cfg.Trace on cfg.Cluster under cfg.Policy and returns the
// record. It returns an error when the policy makes an invalid decision
// (naming the policy, job and node) or the inputs are unusable.
func Run(cfg Config) (*Record, error) {
	if cfg.Cluster == nil || len(cfg.Cluster.Nodes) == 0 {
		return nil, errors.New("sim: cluster has no nodes")
	}
	if len(cfg.Cluster.Partitions) == 0 {
		return nil, errors.New("sim: cluster has no partitions")
	}
	if cfg.Trace == nil {
		return nil, errors.New("sim: no trace")
	}
	if cfg.Policy == nil {
		return nil, errors.New("sim: no policy")
	}
	if len(cfg.Reservations) > 0 || len(cfg.NodeEvents) > 0 {
		return nil, errors.New("sim: advance reservations and node events are not supported by this controller yet")
	}
	c := newController(cfg)
	if err := c.loop(); err != nil {
		return nil, err
	}
	return c.finish(), nil
}

// StreamSeed derives the seed of a named random stream from the root seed,
// so adding a stream shifts no other.
func StreamSeed(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

func newController(cfg Config) *controller {
	n := len(cfg.Trace.Jobs)
	c := &controller{
		cfg:         cfg,
		cluster:     cfg.Cluster,
		jobs:        cfg.Trace.Jobs,
		policy:      cfg.Policy,
		trig:        cfg.Policy.Triggers(),
		rng:         rand.New(rand.NewPCG(cfg.Seed, StreamSeed("policy"))),
		status:      make([]jobStatus, n),
		req:         make([]workload.Request, n),
		reason:      make([]PendingReason, n),
		limit:       make([]Time, n),
		part:        make([]int32, n),
		nodes:       make([]NodeState, len(cfg.Cluster.Nodes)),
		rec:         make([]JobRecord, n),
		passAt:      -1,
		periodicAt:  -1,
		fitCache:    map[fitKey]bool{},
		partRemap:   map[string]int{},
		typeDropped: map[string]int{},
	}
	for i := range c.nodes {
		c.nodes[i] = Capacity(&cfg.Cluster.Nodes[i])
	}
	for i := range c.rec {
		j := &c.jobs[i]
		c.rec[i] = JobRecord{Ref: JobRef(i), Submit: j.Submit, Eligible: workload.Unknown,
			Start: workload.Unknown, End: workload.Unknown, Part: -1}
	}
	if len(c.jobs) > 0 {
		c.now = min(0, c.jobs[0].Submit)
	}
	return c
}

func (c *controller) loop() error {
	for {
		top, ok := c.q.Peek()
		if c.nextSub < len(c.jobs) {
			at := c.jobs[c.nextSub].Submit
			if !ok || event.Before(int64(at), classSubmit, &top) {
				if at < c.now {
					return fmt.Errorf("sim: trace is not sorted by submit time: job %q at %d after %d",
						c.jobs[c.nextSub].ID, at, c.now)
				}
				c.now = at
				c.submit(c.nextSub)
				c.nextSub++
				c.events++
				c.check()
				continue
			}
		}
		if !ok {
			return nil
		}
		e := c.q.Pop()
		if Time(e.At) < c.now {
			panic(fmt.Sprintf("sim: event in the past: t=%d now=%d seq=%d class=%d arg=%d", e.At, c.now, e.Seq(), e.Class, e.Arg))
		}
		c.now = Time(e.At)
		c.events++
		switch e.Class {
		case classEnd:
			c.end(JobRef(e.Arg))
		case classCancel:
			c.cancel(JobRef(e.Arg))
		case classPass:
			if err := c.pass(e.Arg); err != nil {
				return err
			}
		}
		c.check()
	}
}

// trigger asks for an event-driven pass at the current instant.
func (c *controller) trigger() {
	if c.trig.OnEvent && c.passAt != c.now {
		c.passAt = c.now
		c.q.Push(int64(c.now), classPass, 0, 0)
	}
	c.armPeriodic()
}

// armPeriodic keeps one periodic pass scheduled while there is work. Passes
// with an empty queue cannot start anything, so none is scheduled then; the
// next submit arms it again at the next multiple of the interval.
func (c *controller) armPeriodic() {
	if c.trig.Interval <= 0 || c.periodicAt >= c.now || len(c.pending) == 0 {
		return
	}
	iv := c.trig.Interval
	next := (c.now/iv + 1) * iv
	c.periodicAt = next
	c.q.Push(int64(next), classPass, 1, 0)
}

func (c *controller) submit(i int) {
	ref := JobRef(i)
	j := &c.jobs[i]
	r := &c.rec[i]
	part, reason := c.resolvePartition(j)
	if part < 0 {
		c.reject(ref, reason)
		return
	}
	req := j.Request
	if req.Nodes < 0 || req.GPUs < 0 || req.CPUs < 0 || req.MemMB < 0 {
		c.reject(ref, fmt.Sprintf("negative request (nodes=%d gpus=%d cpus=%d mem=%dM)", req.Nodes, req.GPUs, req.CPUs, req.MemMB))
		return
	}
	if req.Nodes == 0 && req.GPUs == 0 && req.CPUs == 0 {
		req.Nodes = 1
	}
	if req.GPUType != "" && !c.partitionHasType(part, req.GPUType) {
		c.typeDropped[req.GPUType]++
		req.GPUType = ""
	}
	c.part[i] = part
	c.req[i] = req
	r.Part = part
	r.Reason = reason
	if !c.fitsEmpty(part, &req) {
		c.reject(ref, fmt.Sprintf("request (nodes=%d gpus=%d cpus=%d mem=%dM) exceeds every node set of partition %s",
			req.Nodes, req.GPUs, req.CPUs, req.MemMB, c.cluster.Partitions[part].Name))
		return
	}
	c.limit[i] = c.planLimit(j, part)
	if j.CancelledPending() {
		// The trace shows the user cancelling it before it ever ran, and
		// nothing about how long it would have run: it waits held (queued
		// but never eligible, as Slurm shows a held job) until its cancel
		// time, so it invents no usage and blocks no one.
		c.status[i] = stHeld
		c.q.Push(int64(j.Submit+max(j.CancelAfter, 0)), classCancel, int32(i), 0)
		return
	}
	if len(j.Deps) > 0 {
		c.depsIgnored++
	}
	r.Eligible = c.now
	c.status[i] = stPending
	c.pending = append(c.pending, PendingJob{Ref: ref, Submit: j.Submit, Eligible: c.now,
		Limit: c.limit[i], Part: part, Parts: 1 << uint(part), Req: req})
	c.trigger()
}

// planLimit is the time limit the scheduler plans with: the job's own, else
// the partition's MaxTime, else the job's runtime (at least one second).
func (c *controller) planLimit(j *workload.Job, part int32) Time {
	if j.TimeLimit > 0 {
		return j.TimeLimit
	}
	if mt := c.cluster.Partitions[part].MaxTime; mt > 0 {
		return Time(mt)
	}
	return max(j.Runtime, 1)
}

func (c *controller) resolvePartition(j *workload.Job) (int32, string) {
	if j.Partition == "" {
		return int32(c.cluster.DefaultPartition), ""
	}
	for name := range strings.SplitSeq(j.Partition, ",") {
		if p := c.cluster.PartitionIndex(strings.TrimSpace(name)); p >= 0 {
			return int32(p), ""
		}
	}
	c.partRemap[j.Partition]++
	d := c.cluster.DefaultPartition
	return int32(d), "partition " + j.Partition + " not in cluster; ran in " + c.cluster.Partitions[d].Name
}

func (c *controller) partitionHasType(part int32, t string) bool {
	for _, n := range c.cluster.Partitions[part].Nodes {
		if c.cluster.Nodes[n].GPUType == t {
			return true
		}
	}
	return false
}

// fitsEmpty reports whether the request fits the partition with every node
// empty; a job that does not can never run.
func (c *controller) fitsEmpty(part int32, req *workload.Request) bool {
	k := fitKey{part, *req}
	if v, ok := c.fitCache[k]; ok {
		return v
	}
	need := Needed(req)
	var got int32
	for _, n := range c.cluster.Partitions[part].Nodes {
		node := &c.cluster.Nodes[n]
		if !Eligible(node, part, req.GPUType) {
			continue
		}
		got += UnitsOn(req, Capacity(node))
		if got >= need {
			break
		}
	}
	c.fitCache[k] = got >= need
	return got >= need
}

func (c *controller) reject(ref JobRef, reason string) {
	c.status[ref] = stDone
	r := &c.rec[ref]
	r.State = Rejected
	r.Reason = reason
}

func (c *controller) cancel(ref JobRef) {
	if c.status[ref] != stHeld {
		return
	}
	c.status[ref] = stDone
	r := &c.rec[ref]
	r.State = Cancelled
	r.End = c.now
}

func (c *controller) end(ref JobRef) {
	if c.status[ref] != stRunning {
		panic(fmt.Sprintf("sim: end of job %q that is not running: t=%d", c.jobs[ref].ID, c.now))
	}
	c.status[ref] = stDone
	r := &c.rec[ref]
	r.End = c.now
	for _, a := range r.Alloc {
		n := &c.nodes[a.Node]
		n.FreeGPUs += a.GPUs
		n.FreeCPUs += a.CPUs
		n.FreeMemMB += a.MemMB
	}
	i, found := slices.BinarySearchFunc(c.running, ref, func(rj RunningJob, ref JobRef) int { return cmp.Compare(rj.Ref, ref) })
	if !found {
		panic(fmt.Sprintf("sim: running job %q missing from the running list: t=%d", c.jobs[ref].ID, c.now))
	}
	c.running = slices.Delete(c.running, i, i+1)
	c.trigger()
}

func (c *controller) pass(kind int32) error {
	if kind == 1 {
		c.periodicAt = -1
	} else {
		// A job that this pass starts with no runtime ends at this same
		// instant, and the resources it frees need another pass.
		c.passAt = -1
	}
	if len(c.pending) > 0 {
		plan := c.policy.Schedule(c, c.rng)
		if len(plan.Preempts) > 0 {
			return fmt.Errorf("policy %s: preemption is not supported by this controller yet", c.policy.Name())
		}
		for _, r := range plan.Reasons {
			c.setReason(r.Job, r.Reason)
		}
		for k := range plan.Starts {
			if err := c.start(&plan.Starts[k]); err != nil {
				return err
			}
		}
		c.compact()
	}
	if kind == 1 {
		c.armPeriodic()
	}
	return nil
}

// setReason records a pending job's reason when it changes.
func (c *controller) setReason(ref JobRef, r PendingReason) {
	if ref < 0 || int(ref) >= len(c.jobs) || c.status[ref] != stPending || c.reason[ref] == r {
		return
	}
	c.reason[ref] = r
	c.reasons = append(c.reasons, ReasonChange{At: c.now, Job: ref, Reason: r})
}

func (c *controller) start(s *Start) error {
	ref := s.Job
	if ref < 0 || int(ref) >= len(c.jobs) {
		return fmt.Errorf("policy %s: start of unknown job ref %d at t=%d", c.policy.Name(), ref, c.now)
	}
	j := &c.jobs[ref]
	if c.status[ref] != stPending {
		return fmt.Errorf("policy %s: job %s: started at t=%d but it is not pending", c.policy.Name(), j.ID, c.now)
	}
	if err := c.checkAlloc(ref, s.Alloc); err != nil {
		return fmt.Errorf("policy %s: job %s at t=%d: %w", c.policy.Name(), j.ID, c.now, err)
	}
	for _, a := range s.Alloc {
		n := &c.nodes[a.Node]
		n.FreeGPUs -= a.GPUs
		n.FreeCPUs -= a.CPUs
		n.FreeMemMB -= a.MemMB
	}
	alloc := c.keepAlloc(s.Alloc)
	c.status[ref] = stRunning
	c.removed++
	r := &c.rec[ref]
	r.Start = c.now
	r.Alloc = alloc
	run := j.Runtime
	switch {
	case run > c.limit[ref]:
		run = c.limit[ref]
		r.State = Timeout
	default:
		r.State = Completed
	}
	rj := RunningJob{Ref: ref, Start: c.now, End: c.now + c.limit[ref], Part: c.part[ref], Alloc: alloc}
	i, _ := slices.BinarySearchFunc(c.running, ref, func(rj RunningJob, ref JobRef) int { return cmp.Compare(rj.Ref, ref) })
	c.running = slices.Insert(c.running, i, rj)
	c.q.Push(int64(c.now+max(run, 0)), classEnd, int32(ref), 0)
	return nil
}

// allocChunk is how many NodeAllocs one block of the record's allocation
// store holds. Records keep slices into these blocks, so blocks are filled
// and never grown: growing by copying would leave every earlier copy alive.
const allocChunk = 4096

// keepAlloc copies a into the record's allocation store.
func (c *controller) keepAlloc(a []NodeAlloc) []NodeAlloc {
	if len(a) > allocChunk {
		return append([]NodeAlloc(nil), a...)
	}
	if cap(c.allocPool)-len(c.allocPool) < len(a) {
		c.allocPool = make([]NodeAlloc, 0, allocChunk)
	}
	off := len(c.allocPool)
	c.allocPool = append(c.allocPool, a...)
	return c.allocPool[off:len(c.allocPool):len(c.allocPool)]
}

// checkAlloc verifies that alloc is a valid placement of job ref now.
func (c *controller) checkAlloc(ref JobRef, alloc []NodeAlloc) error {
	req := &c.req[ref]
	part := c.part[ref]
	if len(alloc) == 0 {
		return errors.New("empty allocation")
	}
	if req.Nodes > 0 && int32(len(alloc)) != req.Nodes {
		return fmt.Errorf("allocation has %d nodes, job needs %d", len(alloc), req.Nodes)
	}
	var units int32
	for k, a := range alloc {
		if a.Node < 0 || int(a.Node) >= len(c.nodes) {
			return fmt.Errorf("node index %d out of range", a.Node)
		}
		node := &c.cluster.Nodes[a.Node]
		for _, b := range alloc[:k] {
			if b.Node == a.Node {
				return fmt.Errorf("node %s listed twice", node.Name)
			}
		}
		if !Eligible(node, part, req.GPUType) {
			return fmt.Errorf("node %s is not eligible (partition %s, gpu type %q)", node.Name, c.cluster.Partitions[part].Name, req.GPUType)
		}
		free := c.nodes[a.Node]
		if a.GPUs < 0 || a.CPUs < 0 || a.MemMB < 0 || a.GPUs > free.FreeGPUs || a.CPUs > free.FreeCPUs || a.MemMB > free.FreeMemMB {
			return fmt.Errorf("node %s: allocation gpus=%d cpus=%d mem=%dM exceeds free gpus=%d cpus=%d mem=%dM",
				node.Name, a.GPUs, a.CPUs, a.MemMB, free.FreeGPUs, free.FreeCPUs, free.FreeMemMB)
		}
		if req.Nodes > 0 {
			if want := Take(req, a.Node, 0); a != want {
				return fmt.Errorf("node %s: allocation gpus=%d cpus=%d mem=%dM, job needs gpus=%d cpus=%d mem=%dM per node",
					node.Name, a.GPUs, a.CPUs, a.MemMB, want.GPUs, want.CPUs, want.MemMB)
			}
			continue
		}
		_, g, cp, m := Units(req)
		var u int32
		switch {
		case g > 0:
			u = a.GPUs / g
		default:
			u = a.CPUs / cp
		}
		if u <= 0 || Take(req, a.Node, u) != a {
			return fmt.Errorf("node %s: allocation gpus=%d cpus=%d mem=%dM is not a whole number of units (gpus=%d cpus=%d mem=%dM each)",
				node.Name, a.GPUs, a.CPUs, a.MemMB, g, cp, m)
		}
		units += u
	}
	if req.Nodes == 0 && units != Needed(req) {
		return fmt.Errorf("allocation holds %d units, job needs %d", units, Needed(req))
	}
	return nil
}

// compact drops jobs that left the queue from the pending list, keeping
// its order. Jobs usually leave from the front (the head starts), so a
// removed prefix is sliced off without moving the rest; only removals
// further in shift what follows them.
func (c *controller) compact() {
	if c.removed == 0 {
		return
	}
	k := 0
	for k < len(c.pending) && k < c.removed && c.status[c.pending[k].Ref] != stPending {
		k++
	}
	if rest := len(c.pending) - k; rest <= k {
		// Moving the few that stay is cheap and keeps the backing array's
		// front in use, so appends do not keep reallocating.
		copy(c.pending, c.pending[k:])
		c.pending = c.pending[:rest]
	} else {
		c.pending = c.pending[k:]
	}
	if c.removed > k {
		c.pending = slices.DeleteFunc(c.pending, func(p PendingJob) bool { return c.status[p.Ref] != stPending })
	}
	c.removed = 0
}

func (c *controller) check() {
	if !c.cfg.Check {
		return
	}
	used := make([]NodeState, len(c.nodes))
	for _, rj := range c.running {
		for _, a := range rj.Alloc {
			u := &used[a.Node]
			u.FreeGPUs += a.GPUs
			u.FreeCPUs += a.CPUs
			u.FreeMemMB += a.MemMB
		}
	}
	for i := range c.nodes {
		node := &c.cluster.Nodes[i]
		u := used[i]
		if u.FreeGPUs > node.GPUs || u.FreeCPUs > node.CPUs || u.FreeMemMB > node.MemMB {
			panic(fmt.Sprintf("sim: node %s oversubscribed at t=%d: gpus %d/%d cpus %d/%d mem %d/%d",
				node.Name, c.now, u.FreeGPUs, node.GPUs, u.FreeCPUs, node.CPUs, u.FreeMemMB, node.MemMB))
		}
		want := NodeState{node.GPUs - u.FreeGPUs, node.CPUs - u.FreeCPUs, node.MemMB - u.FreeMemMB}
		if c.nodes[i] != want {
			panic(fmt.Sprintf("sim: node %s free-state drift at t=%d: have %+v, want %+v", node.Name, c.now, c.nodes[i], want))
		}
	}
}

func (c *controller) finish() *Record {
	for i := range c.rec {
		switch c.status[i] {
		case stPending, stFuture, stHeld:
			c.rec[i].State = Unfinished
		case stRunning:
			c.rec[i].State = Unfinished
		}
	}
	rec := &Record{
		Cluster: c.cluster,
		Trace:   c.cfg.Trace,
		Policy:  c.policy.Name(),
		Seed:    c.cfg.Seed,
		Jobs:    c.rec,
		End:     c.now,
		Events:  c.events,
		Reasons: c.reasons,
	}
	rec.Notes = append(rec.Notes, countNotes(c.partRemap, "jobs of partition %q, which the cluster lacks, ran in the default partition "+c.cluster.Partitions[c.cluster.DefaultPartition].Name)...)
	rec.Notes = append(rec.Notes, countNotes(c.typeDropped, "jobs asked for GPU type %q, which their partition lacks; the type was ignored")...)
	if c.depsIgnored > 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("%d jobs have dependencies; this policy ignores them", c.depsIgnored))
	}
	var unfinished int
	for i := range c.rec {
		if c.rec[i].State == Unfinished {
			unfinished++
		}
	}
	if unfinished > 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("%d jobs never finished: the policy left them pending with nothing left to happen", unfinished))
	}
	return rec
}

// countNotes renders "N <format>" lines for a count map, in sorted key order.
func countNotes(m map[string]int, format string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%d "+format, m[k], k))
	}
	return out
}

// View implementation: the controller is its own read-only view.

func (c *controller) Now() Time                          { return c.now }
func (c *controller) Pending() []PendingJob              { return c.pending }
func (c *controller) Running() []RunningJob              { return c.running }
func (c *controller) Nodes() []NodeState                 { return c.nodes }
func (c *controller) Cluster() *hwmodels.Cluster         { return c.cluster }
func (c *controller) Job(ref JobRef) *workload.Job       { return &c.jobs[ref] }
func (c *controller) Reservations() []AdvanceReservation { return c.cfg.Reservations }
