package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Why a node is out of service: bits of controller.off.
const (
	offDown  uint8 = 1 << iota // an explicit NodeEvent took it down
	offDrain                   // an explicit NodeEvent drained it
	offFail                    // the failure model failed it

	offFailed = offDown | offFail // its jobs were killed
)

// Kinds of classNode events, in the event's Gen.
const (
	nodeExplicit uint32 = iota // Arg indexes controller.nodeEvs
	nodeFail                   // Arg is a node: the failure model fails it
	nodeRepair                 // Arg is a node: the failure model repairs it
	resvEnd                    // Arg indexes controller.resv: a window ends
	migReady                   // Arg is a node: MIG repartitions complete (mig.go)
)

// DefaultMaxNodeEvents is Config.MaxNodeEvents's default: 4,194,304 node
// availability changes (64 MiB of Record.NodeEvents). A cluster of 10,000
// nodes failing once a week on average logs about a million a year.
const DefaultMaxNodeEvents = 1 << 22

// ErrLimit is the error (errors.Is) a run returns when its inputs would
// make it exceed one of Config's bounds (MaxNodeEvents): the message names
// the setting and the input to change.
var ErrLimit = errors.New("sim: limit exceeded")

// checkFailureModel refuses a failure model expected to change node
// states more than MaxNodeEvents times over the trace's submit span:
// every node fails and is repaired about once every MTBF + MTTR seconds.
func (c *controller) checkFailureModel(f *FailureModel) error {
	if c.maxNodeEvents < 0 || c.js.n == 0 {
		return nil
	}
	span := float64(c.js.submit(JobRef(c.js.n-1)) - c.js.submit(0))
	want := 2 * float64(len(c.nodes)) * span / (float64(f.MTBF) + float64(f.MTTR))
	if want <= float64(c.maxNodeEvents) {
		return nil
	}
	return fmt.Errorf("%w: failure model: mtbf %d s and mttr %d s on %d nodes would change node states about %.3g times over the %d s of the trace's submits, more than Config.MaxNodeEvents (%d): lengthen the mean times (scenario failures.mtbf, failures.mttr) or raise the limit",
		ErrLimit, f.MTBF, f.MTTR, len(c.nodes), want, int64(span), c.maxNodeEvents)
}

// logNode appends ev to Record.NodeEvents, or stops the run when the log
// passes Config.MaxNodeEvents.
func (c *controller) logNode(ev NodeEvent) {
	if c.maxNodeEvents >= 0 && len(c.nodeLog) >= c.maxNodeEvents {
		if c.limitErr == nil {
			c.limitErr = fmt.Errorf("%w: node availability changed more than Config.MaxNodeEvents (%d) times by t=%d; a failure model with shorter mean times than the nodes can bear makes this grow with simulated time: lengthen the mean times (scenario failures.mtbf, failures.mttr) or raise the limit",
				ErrLimit, c.maxNodeEvents, c.now)
		}
		return
	}
	c.nodeLog = append(c.nodeLog, ev)
}

// setupNodes validates and schedules the node events, the failure model
// and the advance reservations.
func (c *controller) setupNodes() error {
	if err := c.setupMIG(); err != nil {
		return err
	}
	nn := int32(len(c.nodes))
	if len(c.cfg.NodeEvents) > 0 {
		c.nodeEvs = slices.Clone(c.cfg.NodeEvents)
		slices.SortStableFunc(c.nodeEvs, func(a, b NodeEvent) int { return cmp.Compare(a.At, b.At) })
		for k, ev := range c.nodeEvs {
			if ev.Node < 0 || ev.Node >= nn {
				return fmt.Errorf("sim: node event at t=%d: node index %d out of range [0, %d)", ev.At, ev.Node, nn)
			}
			if ev.At < c.now {
				return fmt.Errorf("sim: node event for node %s at t=%d is before the run starts (t=%d)", c.cluster.Nodes[ev.Node].Name, ev.At, c.now)
			}
			c.pushNode(ev.At, int32(k), nodeExplicit)
		}
	}
	if f := c.cfg.Failures; f != nil {
		if f.MTBF <= 0 || f.MTTR <= 0 {
			return fmt.Errorf("sim: failure model: MTBF and MTTR must be > 0 seconds, got %d and %d", f.MTBF, f.MTTR)
		}
		if err := c.checkFailureModel(f); err != nil {
			return err
		}
		c.failRng = rand.New(rand.NewPCG(c.cfg.Seed, StreamSeed("failures")))
		for n := range nn {
			c.pushNode(c.now+c.draw(f.MTBF), n, nodeFail)
		}
	}
	if len(c.cfg.Reservations) > 0 {
		c.resv = slices.Clone(c.cfg.Reservations)
		slices.SortStableFunc(c.resv, func(a, b AdvanceReservation) int {
			return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Name, b.Name))
		})
		c.resvOf = make([][]int32, nn)
		for k := range c.resv {
			r := &c.resv[k]
			if r.End <= r.Start {
				return fmt.Errorf("sim: reservation %q: end %d is not after start %d", r.Name, r.End, r.Start)
			}
			for _, n := range r.Nodes {
				if n < 0 || n >= nn {
					return fmt.Errorf("sim: reservation %q: node index %d out of range [0, %d)", r.Name, n, nn)
				}
				if !slices.Contains(c.resvOf[n], int32(k)) {
					c.resvOf[n] = append(c.resvOf[n], int32(k))
				}
			}
			if r.End >= c.now {
				c.pushNode(r.End, int32(k), resvEnd)
			}
		}
		c.resvNext = math.MinInt64 // build the view on first use
	}
	return nil
}

func (c *controller) pushNode(at Time, arg int32, kind uint32) {
	c.nodeQueued++
	c.push(at, classNode, arg, kind)
}

// draw returns an exponentially distributed duration with the given mean,
// in whole seconds, at least one.
func (c *controller) draw(mean Time) Time {
	d := c.failRng.ExpFloat64() * float64(mean)
	if d >= math.MaxInt64/4 {
		return math.MaxInt64 / 4
	}
	return max(Time(math.Round(d)), 1)
}

// idle reports whether nothing but node events is left: no job to submit,
// run or schedule, and no other event queued. Node events are then dropped
// (not applied), so they neither extend the run nor keep a failure model
// cycling forever.
func (c *controller) idle() bool {
	return c.nextSub >= c.js.n && c.runningCount() == 0 && len(c.pending) == 0 && c.q.Len() == c.nodeQueued
}

func (c *controller) nodeEvent(arg int32, kind uint32) {
	switch kind {
	case nodeExplicit:
		ev := c.nodeEvs[arg]
		m := c.offMask(ev.Node) &^ (offDown | offDrain)
		switch {
		case ev.Down && ev.Drain:
			m |= offDrain
		case ev.Down:
			m |= offDown
		}
		c.setOff(ev.Node, m)
	case nodeFail:
		c.setOff(arg, c.offMask(arg)|offFail)
		c.pushNode(c.now+c.draw(c.cfg.Failures.MTTR), arg, nodeRepair)
	case nodeRepair:
		if c.repairMatters() {
			c.changed()
		}
		c.setOff(arg, c.offMask(arg)&^offFail)
		c.pushNode(c.now+c.draw(c.cfg.Failures.MTBF), arg, nodeFail)
	case resvEnd:
		// The window's nodes are usable again.
		c.trigger()
	case migReady:
		c.migReadyAt(arg)
	}
}

func (c *controller) offMask(n int32) uint8 {
	if c.off == nil {
		return 0
	}
	return c.off[n]
}

// setOff changes why node n is out of service. A node going out of service
// shows nothing free (its real free state is kept aside); one that fails
// kills or requeues its running jobs; one coming back shows its free state
// again.
func (c *controller) setOff(n int32, m uint8) {
	old := c.offMask(n)
	if old == m {
		return
	}
	if c.off == nil {
		c.off = make([]uint8, len(c.nodes))
		c.offFree = make([]NodeState, len(c.nodes))
	}
	c.touch(n)
	wasOff, isOff := old != 0, m != 0
	wasFailed, isFailed := old&offFailed != 0, m&offFailed != 0
	if !wasOff && isOff {
		c.offFree[n] = c.nodes[n]
		c.nodes[n] = NodeState{}
	}
	c.off[n] = m
	if isFailed && !wasFailed {
		c.failJobsOn(n)
	}
	if wasOff && !isOff {
		c.nodes[n] = c.offFree[n]
		c.offFree[n] = NodeState{}
	}
	if wasOff != isOff || wasFailed != isFailed {
		c.logNode(NodeEvent{At: c.now, Node: n, Down: isOff, Drain: isOff && !isFailed})
	}
	c.trigger()
}

// failJobsOn ends or requeues every job running on node n: its run ends
// NODE_FAIL and all its nodes are freed at once.
func (c *controller) failJobsOn(n int32) {
	var victims []JobRef
	for i := range c.running {
		for _, a := range c.running[i].Alloc {
			if a.Node == n {
				victims = append(victims, c.running[i].Ref)
				break
			}
		}
	}
	for _, ref := range victims {
		c.interrupt(ref, NodeFail, c.requeueable(ref))
	}
}

// touch notes that node n's free state may have changed (Delta).
func (c *controller) touch(n int32) {
	if !c.isDirty[n] {
		c.isDirty[n] = true
		c.dirty = append(c.dirty, n)
	}
}

// takeDelta makes what changed since the last pass the view's Delta, and
// starts the lists over for the next pass with the slices of the one
// before.
func (c *controller) takeDelta() {
	for _, n := range c.dirty {
		c.isDirty[n] = false
	}
	old := c.delta
	q, ok := c.queuedIndices()
	c.delta = Delta{Nodes: c.dirty, Started: c.startedRun, Ended: c.endedRun, QueueKnown: ok, Queued: q}
	c.dirty, c.startedRun, c.endedRun = old.Nodes[:0], old.Started[:0], old.Ended[:0]
}

// queuedIndices returns the places in pending of the jobs made eligible
// since the last pass, ascending, and starts their list over; ok is false
// when one is not found (it cannot be: jobs leave pending only at a pass,
// by starting, and pending is compact between passes). Submits come in
// order, so the list taken backwards usually meets pending's tail.
func (c *controller) queuedIndices() (q []int32, ok bool) {
	q = c.queuedIdx[:0]
	n := len(c.pending)
	ok = true
	for i := len(c.queued) - 1; i >= 0; i-- {
		j := c.queued[i]
		if k := n - 1; k >= 0 && c.pending[k].Ref == j.ref {
			q = append(q, int32(k))
			n = k
			continue
		}
		k := sort.Search(len(c.pending), func(i int) bool {
			p := &c.pending[i]
			return p.Submit > j.sub || p.Submit == j.sub && p.Ref >= j.ref
		})
		if k == len(c.pending) || c.pending[k].Ref != j.ref {
			ok = false
			continue
		}
		q = append(q, int32(k))
	}
	c.queued = c.queued[:0]
	slices.Sort(q)
	c.queuedIdx = q
	return q, ok
}

// Delta implements View.
func (c *controller) Delta() Delta { return c.delta }

// freeOf returns where node n's free resources are kept: the view's state,
// or the aside state while the node is out of service.
func (c *controller) freeOf(n int32) *NodeState {
	if c.off != nil && c.off[n] != 0 {
		return &c.offFree[n]
	}
	return &c.nodes[n]
}

// Reservations implements View: the reservations that have not ended, by
// Start then Name. The slice is rebuilt only when one ends.
func (c *controller) Reservations() []AdvanceReservation {
	if c.resv == nil {
		return nil
	}
	if c.now >= c.resvNext {
		c.resvView = c.resvView[:0]
		c.resvNext = math.MaxInt64
		for _, r := range c.resv {
			if r.End > c.now {
				c.resvView = append(c.resvView, r)
				c.resvNext = min(c.resvNext, r.End)
			}
		}
	}
	return c.resvView
}

// checkReserved returns an error when a job with time limit limit starting
// now on node n would run into an advance reservation of n: its interval
// [now, now+limit) overlaps the window [Start, End).
func (c *controller) checkReserved(n int32, limit Time) error {
	if c.resvOf == nil {
		return nil
	}
	for _, k := range c.resvOf[n] {
		r := &c.resv[k]
		if c.now < r.End && limit > r.Start-c.now {
			return fmt.Errorf("node %s is reserved by %q for [%d, %d) and the job's limit %d s would reach into it",
				c.cluster.Nodes[n].Name, r.Name, r.Start, r.End, limit)
		}
	}
	return nil
}
