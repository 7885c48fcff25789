package policies_test

import (
	"cmp"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// The worked example of docs/policy.md, which TestPolicyDoc requires to
// be the block between the markers, byte for byte.

// policy.md begin

// ShortestFirst starts queued jobs shortest time limit first (ties in
// queue order), each on the lowest-numbered nodes that hold it, and skips
// a job that does not fit now: no reservations, so a wide job may wait
// for ever behind short ones.
type ShortestFirst struct {
	// Base gives Begin (nothing kept between runs; one pass, "main",
	// after every submit, job end or node back), JobStarted and JobEnded.
	policies.Base

	order []int           // indices into Pending, in start order
	free  []sim.NodeState // free state after this pass's starts
	plan  sim.Plan
}

// Name returns "shortest-first".
func (*ShortestFirst) Name() string { return "shortest-first" }

// Schedule implements sim.Policy. Its one pass is the only one due.
func (p *ShortestFirst) Schedule(_ sim.PassSet, v sim.View, _ *rand.Rand) sim.Plan {
	pend := v.Pending()
	p.order = p.order[:0]
	for i := range pend {
		p.order = append(p.order, i)
	}
	// Shortest limit first; the queue index ends the comparison, so the
	// order is total and the pass deterministic.
	slices.SortFunc(p.order, func(a, b int) int {
		return cmp.Or(cmp.Compare(pend[a].Limit, pend[b].Limit), cmp.Compare(a, b))
	})
	p.free = append(p.free[:0], v.Nodes()...) // a copy: the view is read only
	p.plan.Starts = p.plan.Starts[:0]
	for _, i := range p.order {
		job := &pend[i]
		alloc, ok := policies.FirstFit{}.Place(v.Cluster().Nodes, p.free, job, nil)
		if !ok || reserved(v, alloc, job.Limit) {
			continue
		}
		for k := range alloc {
			p.free[alloc[k].Node].Sub(&alloc[k])
		}
		p.plan.Starts = append(p.plan.Starts, sim.Start{Job: job.Ref, Alloc: alloc})
	}
	return p.plan
}

// reserved reports whether a job with time limit limit starting now on
// alloc's nodes would run into an advance reservation of one of them.
func reserved(v sim.View, alloc []sim.NodeAlloc, limit sim.Time) bool {
	for _, r := range v.Reservations() {
		if v.Now()+limit <= r.Start {
			continue // starts after the job would have ended
		}
		for _, a := range alloc {
			if _, held := slices.BinarySearch(r.Nodes, a.Node); held {
				return true
			}
		}
	}
	return false
}

// policy.md end

// TestPolicyDoc keeps docs/policy.md's example the code above, and runs
// that policy through the conformance harness.
func TestPolicyDoc(t *testing.T) {
	src, err := os.ReadFile("policydoc_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(src), "// policy.md begin\n\n")
	block, _, _ = strings.Cut(block, "\n// policy.md end")
	doc, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```go\n"+block+"```\n") {
		t.Errorf("docs/policy.md does not hold the example policy of policydoc_test.go as a go block")
	}
	_, begin, _ := strings.Cut(string(src), "\nfunc (*Batched) Begin(")
	begin, _, _ = strings.Cut(begin, "\n}\n")
	if !strings.Contains(string(doc), "```go\nfunc (*Batched) Begin("+begin+"\n}\n```\n") {
		t.Errorf("docs/policy.md does not hold Batched's Begin of policydoc_test.go as a go block")
	}
	policytest.Run(t, func(func(any) error) (sim.Policy, error) { return &ShortestFirst{}, nil })
}

// Example_shortestFirst replays four jobs on one 8-GPU node under the
// policy of docs/policy.md (limits are runtime + 10 s). At 0 the order is
// C (limit 20 s, 2 GPUs), B (50 s, 4 GPUs), A (100 s, 6 GPUs): C and B
// start, and A does not fit in the 2 GPUs left. C's end at 10 leaves 4
// free; D (15 s, 2 GPUs), submitted at 30, fits; B's end at 40 leaves 6
// free, and A starts.
func Example_shortestFirst() {
	gpus := func(id string, submit, runtime sim.Time, n int32) workload.Job {
		j := workload.NewJob(id)
		j.Submit, j.Runtime, j.TimeLimit = submit, runtime, runtime+10
		j.Request = workload.Request{Nodes: 1, GPUs: n, CPUs: n}
		return j
	}
	tr := &workload.Trace{Jobs: []workload.Job{gpus("A", 0, 90, 6), gpus("B", 0, 40, 4), gpus("C", 0, 10, 2), gpus("D", 30, 5, 2)}}
	rec, err := sim.Run(sim.Config{Cluster: policytest.GPUNodes(1, 8), Trace: tr, Policy: &ShortestFirst{}})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rec.Jobs {
		fmt.Printf("%s start %d end %d\n", tr.Jobs[r.Ref].ID, r.Start, r.End)
	}
	// Output:
	// A start 40 end 130
	// B start 0 end 40
	// C start 0 end 10
	// D start 30 end 35
}

// Batched is ShortestFirst run as a batch scheduler: one pass every
// 60 s, none after events. Its Begin is the whole change.
type Batched struct{ ShortestFirst }

// Begin declares the one periodic pass.
func (*Batched) Begin(sim.RunInfo) (sim.Timing, error) {
	return sim.Timing{Passes: []sim.Pass{{Name: "batch", Period: 60}}}, nil
}

// Example_batched replays Example_shortestFirst's jobs under Batched.
// The queue fills at 0 and the first pass is the grid's next instant, 60:
// in limit order D (2 GPUs), C (2) and B (4) fill the node, and A (6)
// waits for the pass at 120, B having ended at 100.
func Example_batched() {
	gpus := func(id string, submit, runtime sim.Time, n int32) workload.Job {
		j := workload.NewJob(id)
		j.Submit, j.Runtime, j.TimeLimit = submit, runtime, runtime+10
		j.Request = workload.Request{Nodes: 1, GPUs: n, CPUs: n}
		return j
	}
	tr := &workload.Trace{Jobs: []workload.Job{gpus("A", 0, 90, 6), gpus("B", 0, 40, 4), gpus("C", 0, 10, 2), gpus("D", 30, 5, 2)}}
	rec, err := sim.Run(sim.Config{Cluster: policytest.GPUNodes(1, 8), Trace: tr, Policy: &Batched{}})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rec.Jobs {
		fmt.Printf("%s start %d end %d\n", tr.Jobs[r.Ref].ID, r.Start, r.End)
	}
	// Output:
	// A start 120 end 210
	// B start 60 end 100
	// C start 60 end 70
	// D start 60 end 65
}
