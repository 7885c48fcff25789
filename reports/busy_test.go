package reports

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestNodeBusyWideWindow checks that the busy intervals kept as 64-bit
// times (a window over 2³² s) are those kept as 32-bit offsets; the
// timeline fixture checks the offsets' node-seconds by hand.
func TestNodeBusyWideWindow(t *testing.T) {
	rec := fixtureRecord()
	runs := newRunTable(rec)
	s, _ := baseSummary(rec, runs, fixtureOptions)
	narrow := newNodeBusy(rec, runs, s.FirstSubmit, s.LastEnd, true)
	wide := newNodeBusy(rec, runs, s.FirstSubmit, s.FirstSubmit+math.MaxUint32+10, true)
	if narrow.wide != nil || wide.wide == nil || len(narrow.iv) == 0 {
		t.Fatalf("narrow uses wide: %v; wide uses wide: %v; %d intervals", narrow.wide != nil, wide.wide != nil, len(narrow.iv))
	}
	for n := range rec.Cluster.Nodes {
		if d := gocmp.Diff(narrow.of(nil, n), wide.of(nil, n), gocmp.AllowUnexported(interval{})); d != "" {
			t.Errorf("node %d (-narrow +wide):\n%s", n, d)
		}
	}
	if narrow.seconds() != wide.seconds() || narrow.seconds() != 7805+10800+2300 {
		t.Errorf("busy node-seconds %d narrow, %d wide; want 20905 (the fixture's bins)", narrow.seconds(), wide.seconds())
	}
}

// TestNodeBusyUnion checks newNodeBusy, which merges runs in start order
// as they come, against the plain union: each node's clipped run
// intervals sorted and merged, on EASY runs of random workloads on
// one-CPU and four-CPU nodes (jobs sharing and spanning nodes, requeued
// runs after node failures) and windows that cut runs at both ends; and
// the node-seconds, with and without the intervals kept.
func TestNodeBusyUnion(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rec := randomRun(t, seed)
		runs := newRunTable(rec)
		s, _ := baseSummary(rec, runs, SummaryOptions{})
		for _, w := range []interval{{s.FirstSubmit, s.LastEnd}, {s.FirstSubmit + 500, s.LastEnd - 700}} {
			got := newNodeBusy(rec, runs, w.from, w.to, true)
			var secs int64
			for n := range rec.Cluster.Nodes {
				want := plainUnion(rec, runs, int32(n), w)
				if d := gocmp.Diff(want, got.of(nil, n), gocmp.AllowUnexported(interval{})); d != "" {
					t.Fatalf("seed %d window %v node %d (-plain +got):\n%s", seed, w, n, d)
				}
				for _, iv := range want {
					secs += int64(iv.to - iv.from)
				}
			}
			// Without the intervals, only their total.
			if only := newNodeBusy(rec, runs, w.from, w.to, false); got.seconds() != secs || only.seconds() != secs {
				t.Fatalf("seed %d window %v: busy node-seconds %d, %d without intervals; want %d", seed, w, got.seconds(), only.seconds(), secs)
			}
		}
	}
}

// plainUnion is node n's busy intervals in w: every run on it clipped to
// w, sorted, and merged where they overlap or touch.
func plainUnion(rec *sim.Record, runs *runTable, n int32, w interval) []interval {
	var ivs []interval
	for i := range rec.Jobs {
		for _, r := range runs.appendRuns(nil, i) {
			a, e := max(r.start, w.from), min(r.end, w.to)
			for _, x := range r.alloc.All() {
				if x.Node == n && e > a {
					ivs = append(ivs, interval{a, e})
				}
			}
		}
	}
	slices.SortFunc(ivs, func(x, y interval) int { return cmp.Compare(x.from, y.from) })
	var out []interval
	for _, iv := range ivs {
		if k := len(out) - 1; k >= 0 && iv.from <= out[k].to {
			out[k].to = max(out[k].to, iv.to)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// randomRun is an EASY run of 400 CPU jobs on 24 nodes of 1 or 4 CPUs
// with node failures and requeue.
func randomRun(t *testing.T, seed uint64) *sim.Record {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 4))
	var nodes []hwmodels.Node
	for i := range 24 {
		cpus := int32(1 + 3*rng.IntN(2))
		nodes = append(nodes, hwmodels.Node{Name: fmt.Sprintf("n%02d", i), CPUs: cpus, MemMB: 1024, Partitions: 1})
	}
	c := &hwmodels.Cluster{Name: "union", Nodes: nodes, Partitions: []hwmodels.Partition{{Name: "p", Default: true}}}
	for i := range nodes {
		c.Partitions[0].Nodes = append(c.Partitions[0].Nodes, int32(i))
	}
	tr := &workload.Trace{}
	var at workload.Time
	for i := range 400 {
		at += workload.Time(rng.IntN(90))
		j := workload.NewJob(fmt.Sprint(i))
		j.Submit, j.TimeLimit = at, workload.Time(60*(1+rng.IntN(60)))
		j.Runtime = workload.Time(rng.Int64N(int64(j.TimeLimit)))
		j.Request = workload.Request{CPUs: int32(1 + rng.IntN(12))}
		tr.Jobs = append(tr.Jobs, j)
	}
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: policies.NewEASY(nil), Seed: seed, Check: true,
		Failures: &sim.FailureModel{MTBF: 6 * 3600, MTTR: 600}, JobRequeue: true})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestSortByFrom checks sortByFrom's radix path against slices.SortFunc
// on random starts with many ties, each element kept once.
func TestSortByFrom(t *testing.T) {
	type item struct {
		from sim.Time
		id   int
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 5, radixMin, 3000, 20000} {
		for _, span := range []sim.Time{1, 50, 1 << 20, 1<<31 - 1} {
			lo := sim.Time(rng.Int64N(1 << 40))
			xs := make([]item, n)
			for i := range xs {
				xs[i] = item{lo + sim.Time(rng.Int64N(int64(span))), i}
			}
			want := slices.Clone(xs)
			slices.SortFunc(want, func(x, y item) int { return cmp.Or(cmp.Compare(x.from, y.from), cmp.Compare(x.id, y.id)) })
			sortByFrom(xs, func(x *item) sim.Time { return x.from }, lo, lo+span)
			for i := 1; i < len(xs); i++ {
				if xs[i].from < xs[i-1].from {
					t.Fatalf("n %d span %d: from %d before %d at %d", n, span, xs[i-1].from, xs[i].from, i)
				}
			}
			slices.SortFunc(xs, func(x, y item) int { return cmp.Or(cmp.Compare(x.from, y.from), cmp.Compare(x.id, y.id)) })
			if !slices.Equal(xs, want) {
				t.Fatalf("n %d span %d: the elements changed", n, span)
			}
		}
	}
}
