package policytest

import (
	"fmt"
	"math/rand/v2"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Workload generates a small cluster (1 to 4 nodes of two GPU types, the
// first with 8 GPUs, some others CPU-only, in two overlapping partitions "p0" (default, every node) and
// "p1") and a trace of 20 to 80 jobs on it: spread and multi-node GPU jobs,
// CPU-only jobs, jobs naming a GPU type or partition (some unknown), runs
// past the time limit, jobs cancelled in the queue, bursts of jobs
// submitted at one instant, and a few jobs too big ever to fit. Every job
// has a time limit. The same seed gives the same result.
func Workload(seed uint64) (*hwmodels.Cluster, *workload.Trace) {
	rng := rand.New(rand.NewPCG(seed, sim.StreamSeed("policytest.workload")))
	types := []string{"a100", "h100"}
	nodes := make([]hwmodels.Node, 1+rng.IntN(4))
	for i := range nodes {
		parts := uint64(1)
		if i == 0 || rng.IntN(2) == 0 {
			parts |= 2
		}
		gpus := []int32{0, 4, 8, 8, 8}[rng.IntN(5)]
		if i == 0 {
			gpus = 8
		}
		typ := ""
		if gpus > 0 {
			typ = types[rng.IntN(2)]
		}
		cpus := int32(32 * (1 + rng.IntN(4)))
		nodes[i] = Node(fmt.Sprintf("n%d", i), gpus, typ, cpus, int64(32768*(1+rng.IntN(8))), parts)
	}
	c := Cluster(nodes, "p0", "p1")

	tr := &workload.Trace{Source: fmt.Sprintf("policytest.Workload(%d)", seed)}
	var at workload.Time
	n := 20 + rng.IntN(61)
	for i := range n {
		if rng.IntN(3) > 0 { // a third of the jobs share their predecessor's instant
			at += workload.Time(rng.IntN(600))
		}
		j := workload.NewJob(fmt.Sprint(i + 1))
		j.Submit = at
		j.User = fmt.Sprintf("u%d", rng.IntN(3))
		var r workload.Request
		switch k := rng.IntN(10); {
		case k < 4: // spread GPUs
			r.GPUs = int32(1 + rng.IntN(8))
			r.CPUs = r.GPUs * int32(1+rng.IntN(4))
		case k < 6: // multi-node
			r.Nodes = int32(1 + rng.IntN(3))
			r.GPUs = r.Nodes * int32(rng.IntN(5))
			r.CPUs = r.Nodes * int32(1+rng.IntN(32))
		case k < 9: // CPU only
			r.CPUs = int32(1 + rng.IntN(48))
		default: // too big to ever fit
			r.GPUs = 64
		}
		if rng.IntN(3) == 0 {
			r.MemMB = int64(1024 * (1 + rng.IntN(96)))
		}
		if r.GPUs > 0 && rng.IntN(4) == 0 {
			r.GPUType = types[rng.IntN(2)]
		}
		j.Request = r
		switch rng.IntN(6) {
		case 0:
			j.Partition = "p1"
		case 1:
			j.Partition = "nope"
		}
		j.TimeLimit = workload.Time(60 * (1 + rng.IntN(120)))
		j.Runtime = workload.Time(rng.Int64N(int64(j.TimeLimit) * 3 / 2))
		if rng.IntN(12) == 0 {
			j.CancelAfter = workload.Time(rng.IntN(3600))
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	return c, tr
}

// Synthetic generates a large trace for benchmarks on a one-partition
// cluster of nodes nodes × gpusPerNode GPUs (type "h100", 8 CPUs and 64
// GiB per GPU): jobs of 1, 2, 4 or 8 GPUs or of 2 or 4 whole nodes, time
// limits from 10 minutes to 24 hours, runtimes up to the limit (1 in 10
// past it, so killed at the limit), arriving as a Poisson stream that
// offers about load times the cluster's GPU capacity. The same seed gives
// the same result.
func Synthetic(seed uint64, nodes int, gpusPerNode int32, jobs int, load float64) (*hwmodels.Cluster, *workload.Trace) {
	rng := rand.New(rand.NewPCG(seed, sim.StreamSeed("policytest.synthetic")))
	c := GPUNodes(nodes, gpusPerNode)
	limits := []workload.Time{600, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600}
	type shape struct {
		nodes, gpus int32
		weight      int
	}
	g := gpusPerNode
	shapes := []shape{{0, 1, 40}, {0, 2, 20}, {0, 4, 15}, {0, min(8, g), 15}, {2, 2 * g, 7}, {4, 4 * g, 3}}
	var total int
	for _, s := range shapes {
		total += s.weight
	}
	tr := &workload.Trace{Source: fmt.Sprintf("policytest.Synthetic(%d)", seed), Jobs: make([]workload.Job, 0, jobs)}
	// Mean GPU-seconds offered per job, to size the arrival rate.
	var mean float64
	for _, s := range shapes {
		for _, l := range limits {
			mean += float64(s.weight) / float64(total) / float64(len(limits)) * float64(s.gpus) * float64(l) * 0.55
		}
	}
	gap := mean / (load * float64(int64(nodes)*int64(g)))
	var at float64
	for i := range jobs {
		at += rng.ExpFloat64() * gap
		j := workload.NewJob(fmt.Sprint(i + 1))
		j.Submit = workload.Time(at)
		k := rng.IntN(total)
		var s shape
		for _, s = range shapes {
			if k -= s.weight; k < 0 {
				break
			}
		}
		j.Request = workload.Request{Nodes: s.nodes, GPUs: s.gpus, CPUs: 8 * s.gpus, MemMB: 65536 * int64(s.gpus)}
		j.TimeLimit = limits[rng.IntN(len(limits))]
		if rng.IntN(10) == 0 {
			j.Runtime = j.TimeLimit + 1 + workload.Time(rng.IntN(3600))
		} else {
			j.Runtime = 1 + workload.Time(rng.Int64N(int64(j.TimeLimit)))
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	return c, tr
}
