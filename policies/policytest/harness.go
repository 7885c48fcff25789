package policytest

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Factory builds the policy under test from its arguments; a
// policies.Factory converts to it. Run passes a nil decode (no arguments).
type Factory = func(decode func(into any) error) (sim.Policy, error)

// Seeds are the workload seeds Run replays.
var Seeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// Run is the conformance harness: for each of Seeds it generates a small
// cluster and workload (Workload), runs it through sim.Run with capacity
// checking under a policy from factory, and checks that
//
//   - every plan starts only pending jobs, each once, on distinct eligible
//     nodes whose free resources (after the plan's earlier starts) hold the
//     allocation, and the allocation satisfies the request;
//   - no node is ever oversubscribed (sim's Check, and an independent sweep
//     over the record);
//   - no job starts before it is submitted, and started jobs end exactly at
//     their runtime or, past their time limit, at the limit (TIMEOUT);
//   - every job that is not rejected or cancelled in the queue finishes
//     (the policy makes progress);
//   - the record is the same (Hash) when the seed runs again, both with a
//     fresh policy and with the same policy value reused.
func Run(t *testing.T, factory Factory) {
	t.Helper()
	for _, seed := range Seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			c, tr := Workload(seed)
			p, err := factory(nil)
			if err != nil {
				t.Fatalf("factory: %v", err)
			}
			first := run(t, c, tr, p, seed)
			if t.Failed() {
				return
			}
			checkRecord(t, c, tr, first)
			again := run(t, c, tr, p, seed) // same policy value: scratch must not leak
			p2, err := factory(nil)
			if err != nil {
				t.Fatalf("factory: %v", err)
			}
			fresh := run(t, c, tr, p2, seed)
			if h1, h2, h3 := Hash(first), Hash(again), Hash(fresh); h1 != h2 || h1 != h3 {
				t.Errorf("records differ between runs of seed %d: hash %x, reused policy %x, fresh policy %x", seed, h1, h2, h3)
			}
		})
	}
}

func run(t *testing.T, c *hwmodels.Cluster, tr *workload.Trace, p sim.Policy, seed uint64) (rec *sim.Record) {
	t.Helper()
	chk := &checker{t: t, inner: p}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("policy %s, seed %d: run panicked: %v", p.Name(), seed, r)
		}
	}()
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: chk, Seed: seed, Check: true})
	if err != nil {
		t.Fatalf("policy %s, seed %d: %v", p.Name(), seed, err)
	}
	if chk.passes == 0 && len(tr.Jobs) > 0 {
		t.Errorf("policy %s, seed %d: no scheduling pass ran", p.Name(), seed)
	}
	return rec
}

// checker wraps a policy and checks every plan it returns against the view
// it was given, independently of the controller's own checks.
type checker struct {
	t      *testing.T
	inner  sim.Policy
	passes int
	free   []sim.NodeState
	seen   map[sim.JobRef]bool
}

func (c *checker) Name() string { return c.inner.Name() }

// Begin forwards to the inner policy.
func (c *checker) Begin(info sim.RunInfo) (sim.Timing, error) { return c.inner.Begin(info) }

// JobStarted forwards to the inner policy.
func (c *checker) JobStarted(ref sim.JobRef, at sim.Time, alloc []sim.NodeAlloc) {
	c.inner.JobStarted(ref, at, alloc)
}

// JobEnded forwards to the inner policy.
func (c *checker) JobEnded(ref sim.JobRef, at sim.Time, alloc []sim.NodeAlloc, st sim.State) {
	c.inner.JobEnded(ref, at, alloc, st)
}

func (c *checker) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	c.passes++
	if due == 0 {
		c.t.Errorf("policy %s: Schedule called at %d with no pass due", c.inner.Name(), v.Now())
	}
	plan := c.inner.Schedule(due, v, rng)
	pend := map[sim.JobRef]*sim.PendingJob{}
	for i := range v.Pending() {
		pend[v.Pending()[i].Ref] = &v.Pending()[i]
	}
	c.free = append(c.free[:0], v.Nodes()...)
	clear(c.seen)
	if c.seen == nil {
		c.seen = map[sim.JobRef]bool{}
	}
	nodes := v.Cluster().Nodes
	for _, s := range plan.Starts {
		job := pend[s.Job]
		where := fmt.Sprintf("policy %s, t=%d, job %d", c.inner.Name(), v.Now(), s.Job)
		switch {
		case job == nil:
			c.t.Errorf("%s: started but not pending", where)
			continue
		case c.seen[s.Job]:
			c.t.Errorf("%s: started twice in one plan", where)
			continue
		}
		c.seen[s.Job] = true
		if err := Satisfies(nodes, job.Part, &job.Req, s.Alloc); err != nil {
			c.t.Errorf("%s: %v", where, err)
		}
		for _, a := range s.Alloc {
			if a.Node < 0 || int(a.Node) >= len(c.free) {
				continue // reported by Satisfies
			}
			f := &c.free[a.Node]
			f.FreeGPUs -= a.GPUs
			f.FreeCPUs -= a.CPUs
			f.FreeMemMB -= a.MemMB
			if f.FreeGPUs < 0 || f.FreeCPUs < 0 || f.FreeMemMB < 0 {
				c.t.Errorf("%s: node %d oversubscribed by the plan: free after it %+v", where, a.Node, *f)
			}
		}
	}
	return plan
}

// Satisfies reports (as an error saying why not) whether alloc is a valid
// allocation for a job of partition part with request req: distinct,
// eligible nodes; with Nodes > 0 exactly Nodes nodes each holding at least
// the per-node share; with Nodes == 0 totals at least the request's.
func Satisfies(nodes []hwmodels.Node, part int32, req *workload.Request, alloc []sim.NodeAlloc) error {
	if len(alloc) == 0 {
		return fmt.Errorf("empty allocation")
	}
	var gpus, cpus int64
	var mem int64
	seen := map[int32]bool{}
	for _, a := range alloc {
		if a.Node < 0 || int(a.Node) >= len(nodes) {
			return fmt.Errorf("node index %d out of range", a.Node)
		}
		if seen[a.Node] {
			return fmt.Errorf("node %d listed twice", a.Node)
		}
		seen[a.Node] = true
		n := &nodes[a.Node]
		if n.Partitions&(1<<uint(part)) == 0 {
			return fmt.Errorf("node %s not in partition %d", n.Name, part)
		}
		if req.GPUType != "" && n.GPUType != req.GPUType {
			return fmt.Errorf("node %s has GPU type %q, job wants %q", n.Name, n.GPUType, req.GPUType)
		}
		if a.GPUs < 0 || a.CPUs < 0 || a.MemMB < 0 {
			return fmt.Errorf("node %s: negative allocation %+v", n.Name, a)
		}
		if req.Nodes > 0 {
			g, c, m := ceil(int64(req.GPUs), int64(req.Nodes)), ceil(int64(req.CPUs), int64(req.Nodes)), ceil(req.MemMB, int64(req.Nodes))
			if int64(a.GPUs) < g || int64(a.CPUs) < c || a.MemMB < m {
				return fmt.Errorf("node %s: %+v is less than the per-node share gpus=%d cpus=%d mem=%d", n.Name, a, g, c, m)
			}
		}
		gpus += int64(a.GPUs)
		cpus += int64(a.CPUs)
		mem += a.MemMB
	}
	if req.Nodes > 0 && len(alloc) != int(req.Nodes) {
		return fmt.Errorf("%d nodes, job needs exactly %d", len(alloc), req.Nodes)
	}
	if gpus < int64(req.GPUs) || cpus < int64(req.CPUs) || mem < req.MemMB {
		return fmt.Errorf("allocation totals gpus=%d cpus=%d mem=%d fall short of the request %+v", gpus, cpus, mem, *req)
	}
	return nil
}

func ceil(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// checkRecord checks a finished run's record.
func checkRecord(t *testing.T, c *hwmodels.Cluster, tr *workload.Trace, rec *sim.Record) {
	t.Helper()
	if len(rec.Jobs) != len(tr.Jobs) {
		t.Fatalf("record has %d jobs, trace %d", len(rec.Jobs), len(tr.Jobs))
	}
	type delta struct {
		at  sim.Time
		end bool // ends sort before starts at one instant
		ref sim.JobRef
	}
	var deltas []delta
	for i := range rec.Jobs {
		r := &rec.Jobs[i]
		j := &tr.Jobs[i]
		where := fmt.Sprintf("policy %s, job %s (ref %d)", rec.Policy, j.ID, i)
		if r.Start == workload.Unknown {
			switch r.State {
			case sim.Rejected, sim.Cancelled:
			default:
				t.Errorf("%s: never started, state %v", where, r.State)
			}
			continue
		}
		if r.Start < j.Submit || r.Start < r.Eligible {
			t.Errorf("%s: started at %d before submit %d / eligible %d", where, r.Start, j.Submit, r.Eligible)
		}
		ran := r.End - r.Start
		switch {
		case r.State == sim.Cancelled:
			if ran != 0 {
				t.Errorf("%s: cancelled in the trace but ran %d s", where, ran)
			}
		case j.Runtime > j.TimeLimit:
			if r.State != sim.Timeout || ran != j.TimeLimit {
				t.Errorf("%s: runtime %d > limit %d: got state %v after %d s, want TIMEOUT after the limit", where, j.Runtime, j.TimeLimit, r.State, ran)
			}
		default:
			if r.State != sim.Completed || ran != j.Runtime {
				t.Errorf("%s: got state %v after %d s, want COMPLETED after its runtime %d", where, r.State, ran, j.Runtime)
			}
		}
		req := j.Request
		if req.GPUType != "" && !partHasType(c, r.Part, req.GPUType) {
			req.GPUType = "" // the controller ignores a type the partition lacks
		}
		if err := Satisfies(c.Nodes, r.Part, &req, r.Alloc.Append(nil)); err != nil {
			t.Errorf("%s: recorded allocation: %v", where, err)
		}
		deltas = append(deltas, delta{r.Start, false, r.Ref}, delta{r.End, true, r.Ref})
	}
	// Independent sweep: apply starts and ends in time order (ends first
	// at one instant) and check no node ever goes over capacity.
	slices.SortFunc(deltas, func(a, b delta) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		if a.end != b.end {
			if a.end {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.ref, b.ref)
	})
	free := FreeAfter(c, nil)
	for _, d := range deltas {
		sign := int32(-1)
		if d.end {
			sign = 1
		}
		for _, a := range rec.Jobs[d.ref].Alloc.All() {
			f := &free[a.Node]
			f.FreeGPUs += sign * a.GPUs
			f.FreeCPUs += sign * a.CPUs
			f.FreeMemMB += int64(sign) * a.MemMB
			if f.FreeGPUs < 0 || f.FreeCPUs < 0 || f.FreeMemMB < 0 {
				t.Errorf("policy %s: node %s oversubscribed at t=%d when job %d starts", rec.Policy, c.Nodes[a.Node].Name, d.at, d.ref)
			}
		}
	}
}

// Hash returns a hash of every job's start, end, state and allocation.
func Hash(rec *sim.Record) uint64 {
	h := fnv.New64a()
	var b []byte
	for i := range rec.Jobs {
		r := &rec.Jobs[i]
		b = binary.LittleEndian.AppendUint64(b[:0], uint64(r.Start))
		b = binary.LittleEndian.AppendUint64(b, uint64(r.End))
		b = append(b, byte(r.State))
		for _, a := range r.Alloc.All() {
			b = binary.LittleEndian.AppendUint32(b, uint32(a.Node))
			b = binary.LittleEndian.AppendUint32(b, uint32(a.GPUs))
			b = binary.LittleEndian.AppendUint32(b, uint32(a.CPUs))
			b = binary.LittleEndian.AppendUint64(b, uint64(a.MemMB))
		}
		h.Write(b)
	}
	return h.Sum64()
}

func partHasType(c *hwmodels.Cluster, part int32, t string) bool {
	for _, n := range c.Partitions[part].Nodes {
		if c.Nodes[n].GPUType == t {
			return true
		}
	}
	return false
}

// Timed returns p with the Timing its Begin declares changed by f, for
// tests that run a policy under timing it does not declare itself
// (sim.Timing.EndAtLimit, EndsAfterPasses); nil f changes nothing.
func Timed(p sim.Policy, f func(*sim.Timing)) sim.Policy {
	if f == nil {
		return p
	}
	return &timed{Policy: p, f: f}
}

type timed struct {
	sim.Policy
	f func(*sim.Timing)
}

func (p *timed) Begin(info sim.RunInfo) (sim.Timing, error) {
	tm, err := p.Policy.Begin(info)
	p.f(&tm)
	return tm, err
}
