package reports

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestFragmentationDefinition works the fragmentation snapshots of
// docs/reports.md by hand. One partition holds four nodes:
//
//	h0  4 × h100          a0  4 × a100
//	m0  2 × h100, MPS     h1  4 × h100 (down from 150 to 380)
//
// Jobs (bins of 100 s over [0, 800)):
//
//	A  4 h100 GPUs on 1 node    submit 0, runs [0, 400) on h0
//	B  8 h100 GPUs on 2 nodes   submit 50, runs [400, 700) on h0 + h1
//	C  an MPS share of 50 %     submit 250, runs [350, 700) on m0's MPS GPU 0
//	D  2 a100 GPUs on 1 node    submit 300, eligible 600, runs [650, 800) on a0
//
// Snapshots (free GPUs of nodes in service; unusable: those on nodes
// where no eligible queued job's per-node request fits):
//
//	  t  free                    waiting (eligible)  unusable
//	  0  a0 4 m0 2 h1 4 = 10     none                0  (nothing waits)
//	100  10                      B: 4 h100 a node    a0 4 (a100) + m0 2 (2 < 4) = 6; h1 fits B
//	200  a0 4 m0 2 = 6 (h1 down) B                   6
//	300  6                       B, C (D not yet)    a0 4; m0 is C's (an MPS node with a free GPU)
//	400  a0 4 m0 1 = 5           none (D not yet)    0  (C's MPS GPU is not free)
//	500  5                       none                0
//	600  5                       D: 2 a100 a node    m0 1 (h100); a0 fits D
//	700  h0 4 a0 2 m0 2 h1 4=12  none                0
//
// Σ free 59, Σ unusable 17: mean 17/8 unusable GPUs, 17/59 of free GPU
// time. Before fragmentation was defined this way every free GPU counted
// as unusable while nothing waited (10, 5, 5 and 12 more), h1 counted as
// free while down and C's MPS GPU as free while shared.
func TestFragmentationDefinition(t *testing.T) {
	mps := &hwmodels.MPSConfig{MaxClients: 4}
	node := func(name, typ string, gpus int32) hwmodels.Node {
		return hwmodels.Node{Name: name, GPUs: gpus, GPUModel: typ, GPUType: typ, CPUs: 32, Partitions: 1}
	}
	cl := &hwmodels.Cluster{
		Name:       "frag",
		Nodes:      []hwmodels.Node{node("h0", "h100", 4), node("a0", "a100", 4), node("m0", "h100", 2), node("h1", "h100", 4)},
		Partitions: []hwmodels.Partition{{Name: "gpu", Nodes: []int32{0, 1, 2, 3}, Default: true}},
	}
	cl.Nodes[2].MPS = mps
	tr := &workload.Trace{}
	rec := &sim.Record{Cluster: cl, Trace: tr, Policy: "hand", End: 800,
		NodeEvents: []sim.NodeEvent{{At: 150, Node: 3, Down: true}, {At: 380, Node: 3}}}
	for k, j := range []struct {
		id                           string
		req                          workload.Request
		submit, eligible, start, end sim.Time
		alloc                        []sim.NodeAlloc
	}{
		{"A", workload.Request{Nodes: 1, GPUs: 4, CPUs: 8, GPUType: "h100"}, 0, 0, 0, 400,
			[]sim.NodeAlloc{{Node: 0, GPUs: 4, CPUs: 8}}},
		{"B", workload.Request{Nodes: 2, GPUs: 8, CPUs: 8, GPUType: "h100"}, 50, 50, 400, 700,
			[]sim.NodeAlloc{{Node: 0, GPUs: 4, CPUs: 4}, {Node: 3, GPUs: 4, CPUs: 4}}},
		{"C", workload.Request{Nodes: 1, CPUs: 1, MPSShare: 50}, 250, 250, 350, 700,
			[]sim.NodeAlloc{{Node: 2, CPUs: 1, MPS: sim.MPSShare{GPU: 0, Share: 50}}}},
		{"D", workload.Request{Nodes: 1, GPUs: 2, CPUs: 4, GPUType: "a100"}, 300, 600, 650, 800,
			[]sim.NodeAlloc{{Node: 1, GPUs: 2, CPUs: 4}}},
	} {
		wj := workload.NewJob(j.id)
		wj.Partition, wj.Submit, wj.Runtime, wj.TimeLimit, wj.Request = "gpu", j.submit, j.end-j.start, 3600, j.req
		tr.Jobs = append(tr.Jobs, wj)
		rec.Jobs = append(rec.Jobs, sim.JobRecord{Ref: sim.JobRef(k), Submit: j.submit, Eligible: j.eligible,
			Start: j.start, End: j.end, State: sim.Completed, Alloc: sim.AllocsOf(j.alloc)})
	}
	a := Analyze(rec, SummaryOptions{SampleInterval: 100})
	type snap struct {
		At             sim.Time
		Free, Unusable int32
	}
	var got []snap
	for _, s := range a.Timeline.Samples {
		got = append(got, snap{s.Start, s.FreeGPUs, s.UnusableFreeGPUs})
	}
	want := []snap{{0, 10, 0}, {100, 10, 6}, {200, 6, 6}, {300, 6, 4}, {400, 5, 0}, {500, 5, 0}, {600, 5, 1}, {700, 12, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshots (-want +got):\n%s", diff)
	}
	f := a.Summary.Fragmentation
	if f.Samples != 8 || f.MeanFreeGPUs != 59.0/8 || f.MeanUnusableFreeGPUs != 17.0/8 || f.UnusableFraction != 17.0/59 {
		t.Errorf("fragmentation = %+v, want 8 samples, free 59/8, unusable 17/8, fraction 17/59", f)
	}
}
