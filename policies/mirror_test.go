package policies_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// plainView hides what changed since the last pass from a policy: its
// Delta lists every node and no queue changes, so a policy that keeps its
// own copy of the free state or of the queue rebuilds it every pass.
type plainView struct{ sim.View }

func (v plainView) Delta() sim.Delta {
	d := v.View.Delta()
	d.Nodes = make([]int32, len(v.Cluster().Nodes))
	for n := range d.Nodes {
		d.Nodes[n] = int32(n)
	}
	d.QueueKnown, d.Queued = false, nil
	return d
}

type plainPolicy struct{ sim.Policy }

func (p plainPolicy) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	return p.Policy.Schedule(due, plainView{v}, rng)
}

// TestMirrorSameDecisions runs the policies that keep their own copy of
// the free state between passes (from the view's Delta) and a free-GPU
// index, and slurm's copy of the queue, with and without the lists of
// changed nodes and queued jobs, on workloads that
// change nodes in every way the controller does (starts, ends, node
// failures with requeue, drains, maintenance windows, MIG and MPS, nodes
// of 0 to 20 GPUs), and requires identical records.
func TestMirrorSameDecisions(t *testing.T) {
	type tc struct {
		name string
		cfg  sim.Config
	}
	var cases []tc
	for seed := uint64(1); seed <= 40; seed++ {
		c, tr := policytest.Workload(seed)
		cases = append(cases,
			tc{fmt.Sprintf("workload/%d", seed), sim.Config{Cluster: c, Trace: tr, Seed: seed}},
			tc{fmt.Sprintf("failures/%d", seed), sim.Config{Cluster: c, Trace: tr, Seed: seed,
				Failures: &sim.FailureModel{MTBF: 3 * 3600, MTTR: 900}, JobRequeue: true}},
			tc{fmt.Sprintf("windows/%d", seed), sim.Config{Cluster: c, Trace: tr, Seed: seed,
				Reservations: []sim.AdvanceReservation{{Name: "m", Start: 1000, End: 5000, Nodes: []int32{0}}},
				NodeEvents: []sim.NodeEvent{
					{At: 2000, Node: int32(len(c.Nodes) - 1), Down: true, Drain: true},
					{At: 2500, Node: 0, Down: true},
					{At: 4000, Node: int32(len(c.Nodes) - 1)},
					{At: 6000, Node: 0},
				}}},
		)
	}
	c, tr := policytest.Synthetic(2, 48, 8, 3000, 1.2)
	cases = append(cases, tc{"synthetic", sim.Config{Cluster: c, Trace: tr, Seed: 1}})
	c, tr = mixedGPUs()
	cases = append(cases, tc{"mixed-gpus", sim.Config{Cluster: c, Trace: tr, Seed: 1,
		Failures: &sim.FailureModel{MTBF: 6 * 3600, MTTR: 1800}, JobRequeue: true}})
	cases = append(cases, tc{"mig", sim.Config{Cluster: catalogCluster(t, migMixedSpec), Trace: migMixedTrace(t), Seed: 1}})
	cases = append(cases, tc{"mps", sim.Config{Cluster: catalogCluster(t, mpsSpec(2, 4)), Trace: mpsMixedTrace(), Seed: 1}})

	for _, name := range []string{"fifo", "easy", "slurm"} {
		for _, k := range cases {
			t.Run(name+"/"+k.name, func(t *testing.T) {
				run := func(plain bool) *sim.Record {
					p, err := catalog.Builtin().New(name, nil)
					if err != nil {
						t.Fatal(err)
					}
					cfg := k.cfg
					cfg.Check = true
					cfg.Policy = p
					if plain {
						cfg.Policy = plainPolicy{p}
					}
					rec, err := sim.Run(cfg)
					if err != nil {
						t.Fatal(err)
					}
					return rec
				}
				got, want := run(false), run(true)
				if msg := policytest.DiffDecisions(got, want); msg != "" {
					t.Errorf("records differ with and without the changed nodes of Delta: %s", msg)
				}
			})
		}
	}
}

// mixedGPUs is a cluster of nodes with 0 to 20 GPUs (above the free-GPU
// index's 16 levels) and jobs of up to 20 GPUs per node.
func mixedGPUs() (*hwmodels.Cluster, *workload.Trace) {
	var nodes []hwmodels.Node
	for i, g := range []int32{4, 8, 20, 0, 16, 2, 8, 20} {
		nodes = append(nodes, policytest.Node(fmt.Sprintf("n%d", i), g, "h100", 64, 1<<20, 1))
	}
	c := policytest.Cluster(nodes, "p0")
	rng := rand.New(rand.NewPCG(5, 6))
	tr := &workload.Trace{}
	var at workload.Time
	for i := range 600 {
		at += workload.Time(rng.IntN(200))
		var r workload.Request
		switch rng.IntN(3) {
		case 0:
			r = workload.Request{Nodes: 1 + int32(rng.IntN(2)), GPUs: 0, CPUs: 4}
			r.GPUs = r.Nodes * int32(1+rng.IntN(20))
		case 1:
			r = workload.Request{GPUs: int32(1 + rng.IntN(40))}
		default:
			r = workload.Request{CPUs: int32(1 + rng.IntN(64))}
		}
		lim := workload.Time(60 * (1 + rng.IntN(60)))
		tr.Jobs = append(tr.Jobs, job(fmt.Sprint(i), at, lim, workload.Time(rng.Int64N(int64(lim)*5/4)), r))
	}
	return c, tr
}

const migMixedSpec = `version: 1
name: mixed
node_groups:
  - {name: "w[1-2]", gpu: {model: h100-sxm-80gb, count: 8}, cpus: 64, memory: 512G}
  - name: "f[1-2]"
    gpu: {model: h100-sxm-80gb, count: 8}
    cpus: 64
    memory: 512G
    mig: {layout: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb], gpus: 4}
  - name: "d[1-2]"
    gpu: {model: h100-sxm-80gb, count: 4}
    cpus: 64
    memory: 512G
    mig: {mode: dynamic, reconfigure_delay: 2m}
`

// migMixedTrace is whole-GPU and MIG jobs on migMixedSpec.
func migMixedTrace(t *testing.T) *workload.Trace {
	profiles := []string{"", "", "1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"}
	rng := rand.New(rand.NewPCG(7, 8))
	tr := &workload.Trace{}
	var at workload.Time
	for i := range 300 {
		at += workload.Time(rng.IntN(300))
		p := profiles[rng.IntN(len(profiles))]
		n := int32(1 + rng.IntN(3))
		if p == "" {
			n = int32(1 + rng.IntN(8))
		}
		j := migJob(t, fmt.Sprint(i), at, workload.Time(60+rng.IntN(3600)), p, n)
		if rng.IntN(4) == 0 {
			j.Request.Nodes = 0 // spread
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

// mpsMixedTrace is MPS shares and whole-GPU jobs on mpsSpec(2, 4).
func mpsMixedTrace() *workload.Trace {
	rng := rand.New(rand.NewPCG(9, 10))
	tr := &workload.Trace{}
	var at workload.Time
	for i := range 200 {
		at += workload.Time(rng.IntN(60))
		if rng.IntN(3) == 0 {
			tr.Jobs = append(tr.Jobs, mpsJob(fmt.Sprint(i), at, workload.Time(30+rng.IntN(300)), 0, int32(1+rng.IntN(2))))
			continue
		}
		tr.Jobs = append(tr.Jobs, mpsJob(fmt.Sprint(i), at, workload.Time(30+rng.IntN(300)), int32(10*(1+rng.IntN(6))), 0))
	}
	return tr
}

// TestPolicyReusedOnAnotherCluster runs one fifo and one easy value on
// 4 nodes of 4 GPUs, then on 4 nodes of 8 GPUs with a job of 20 GPUs
// spread over any nodes: the kept free-GPU index must be rebuilt for the
// second cluster (its bounds come from the nodes' GPU counts), so the job
// starts at once, as it does with a fresh value.
func TestPolicyReusedOnAnotherCluster(t *testing.T) {
	small := hwmodels.UniformCluster("small", 4, 32, 4, 1<<20)
	big := hwmodels.UniformCluster("big", 4, 32, 8, 1<<20)
	first := workload.NewJob("first")
	first.Runtime, first.TimeLimit = 100, 100
	first.Request = workload.Request{GPUs: 4, CPUs: 4}
	wide := workload.NewJob("wide")
	wide.Runtime, wide.TimeLimit = 100, 100
	wide.Request = workload.Request{GPUs: 20, CPUs: 20}
	for _, name := range []string{"fifo", "easy"} {
		p, err := catalog.Builtin().New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sim.Run(sim.Config{Cluster: small, Trace: &workload.Trace{Jobs: []workload.Job{first}}, Policy: p, Check: true}); err != nil {
			t.Fatal(err)
		}
		rec, err := sim.Run(sim.Config{Cluster: big, Trace: &workload.Trace{Jobs: []workload.Job{wide}}, Policy: p, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		if j := rec.Jobs[0]; j.State != sim.Completed || j.Start != 0 {
			t.Errorf("%s reused: the 20-GPU job ended %s, started at %d; want COMPLETED at 0", name, j.State, j.Start)
		}
	}
}
