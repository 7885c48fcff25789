package policies_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// scanFirstFit is FirstFit that does not say it is in order, so a pass
// places with it by scanning every node, never through the free-CPU
// (free-GPU) index: the plain reference for the indexed path.
type scanFirstFit struct{ policies.FirstFit }

func (scanFirstFit) InOrder() bool { return false }

// TestFreeCPUIndexSameDecisions runs fifo and easy on clusters without
// GPUs, where the pass indexes nodes by free CPUs (nodes of 1 to 20 CPUs,
// above the index's 16 levels; two partitions; spread and node-count
// jobs; node failures and a maintenance window), once with FirstFit and
// once scanning every node, and requires identical records.
func TestFreeCPUIndexSameDecisions(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		c, tr := cpuWorkload(seed)
		cfgs := map[string]sim.Config{
			"plain":    {Cluster: c, Trace: tr, Seed: seed},
			"failures": {Cluster: c, Trace: tr, Seed: seed, Failures: &sim.FailureModel{MTBF: 4 * 3600, MTTR: 900}, JobRequeue: true},
			"window": {Cluster: c, Trace: tr, Seed: seed,
				Reservations: []sim.AdvanceReservation{{Name: "m", Start: 2000, End: 9000, Nodes: []int32{0, 3}}}},
		}
		for _, kind := range []string{"plain", "failures", "window"} {
			for _, pol := range []string{"fifo", "easy"} {
				t.Run(fmt.Sprintf("%s/%s/%d", pol, kind, seed), func(t *testing.T) {
					run := func(p policies.Placer) *sim.Record {
						cfg := cfgs[kind]
						cfg.Check = true
						if pol == "fifo" {
							cfg.Policy = policies.NewFIFO(p)
						} else {
							cfg.Policy = policies.NewEASY(p)
						}
						rec, err := sim.Run(cfg)
						if err != nil {
							t.Fatal(err)
						}
						return rec
					}
					got, want := run(policies.FirstFit{}), run(scanFirstFit{})
					if msg := policytest.DiffDecisions(got, want); msg != "" {
						t.Errorf("indexed and scanning first fit differ: %s", msg)
					}
					if started := countStarted(got); started < len(tr.Jobs)/2 {
						t.Errorf("only %d of %d jobs started: the workload tests little", started, len(tr.Jobs))
					}
				})
			}
		}
	}
}

func countStarted(rec *sim.Record) int {
	n := 0
	for i := range rec.Jobs {
		if rec.Jobs[i].Start != workload.Unknown {
			n++
		}
	}
	return n
}

// cpuWorkload is a cluster of 6 to 69 GPU-less nodes and 300 CPU jobs on
// it, most of them small enough to backfill.
func cpuWorkload(seed uint64) (*hwmodels.Cluster, *workload.Trace) {
	rng := rand.New(rand.NewPCG(seed, 18))
	nodes := make([]hwmodels.Node, 6+rng.IntN(64))
	for i := range nodes {
		parts := uint64(1)
		if rng.IntN(3) == 0 {
			parts |= 2
		}
		cpus := []int32{1, 1, 2, 4, 20}[rng.IntN(5)]
		nodes[i] = policytest.Node(fmt.Sprintf("n%d", i), 0, "", cpus, 4096*int64(cpus), parts)
	}
	c := policytest.Cluster(nodes, "p0", "p1")
	tr := &workload.Trace{}
	var at workload.Time
	for i := range 300 {
		at += workload.Time(rng.IntN(120))
		var r workload.Request
		switch rng.IntN(4) {
		case 0, 1: // CPUs spread over any nodes, as an SWF job's processors
			r = workload.Request{CPUs: int32(1 + rng.IntN(24))}
		case 2:
			n := int32(1 + rng.IntN(4))
			r = workload.Request{Nodes: n, CPUs: n * int32(1+rng.IntN(4))}
		default:
			r = workload.Request{CPUs: int32(1 + rng.IntN(8)), MemMB: int64(1024 * (1 + rng.IntN(16)))}
		}
		lim := workload.Time(60 * (1 + rng.IntN(90)))
		j := policytest.Job(fmt.Sprint(i), at, lim, workload.Time(rng.Int64N(int64(lim))), r)
		if rng.IntN(4) == 0 {
			j.Partition = "p1"
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	return c, tr
}
