package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

// dynMIG is one node with one H100 in dynamic MIG mode, repartitioned
// with a 60 s delay (and nothing else: 0 whole GPUs).
func dynMIG(t *testing.T) *hwmodels.Cluster {
	t.Helper()
	geo, ok := hwmodels.LookupMIG("h100-80gb")
	if !ok {
		t.Fatal("no h100-80gb MIG geometry")
	}
	return &hwmodels.Cluster{
		Name: "mig",
		Nodes: []hwmodels.Node{{Name: "m1", GPUs: 1, GPUType: "h100", CPUs: 32, MemMB: 262144, Partitions: 1,
			MIG: &hwmodels.MIGConfig{GPUs: 1, Geometry: geo, Dynamic: true, ReconfigureDelay: 60}}},
		Partitions: []hwmodels.Partition{{Name: "p", Nodes: []int32{0}, Default: true}},
	}
}

func migJobOf(t *testing.T, id string, submit, run Time, profile string) workload.Job {
	t.Helper()
	p, err := workload.ParseMIGProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	j := job(id, submit, run, 1000, 1)
	j.Request.MIGProfile = p
	return j
}

// TestMIGRepartitionHoldsGPU: no job starts on a GPU before its
// repartition completes. dynMIG; greedy (starts what fits now, in queue
// order):
//
//	a  1g.10gb t=0   the GPU is unpartitioned: repartitioned into 7 × 1g at
//	                 0, a holds an instance from 0 and begins at 60 [60,160)
//	b  1g.10gb t=10  a free 1g instance exists, but the GPU is being
//	                 repartitioned until 60: b is not offered it and
//	                 starts at 60, when the repartition completes [60,110)
//	c  2g.20gb t=300 the GPU is empty again and partitioned for 1g: it is
//	d  2g.20gb t=300 repartitioned into 3 × 2g for c; d, started by the
//	                 same pass on another 2g instance, begins with c at 360
//	                 (one reconfiguration makes both) [360,380) and
//	                 [360,390)
//
// Before the controller held the GPU back, b started at 10 and d at 300,
// during the repartitions.
func TestMIGRepartitionHoldsGPU(t *testing.T) {
	tr := &workload.Trace{Jobs: []workload.Job{
		migJobOf(t, "a", 0, 100, "1g.10gb"),
		migJobOf(t, "b", 10, 50, "1g.10gb"),
		migJobOf(t, "c", 300, 20, "2g.20gb"),
		migJobOf(t, "d", 300, 30, "2g.20gb"),
	}}
	rec := run(t, Config{Cluster: dynMIG(t), Trace: tr, Policy: &greedy{}})
	want := []life{
		{"a", 0, 60, 160, "COMPLETED", "m1", 0},
		{"b", 10, 60, 110, "COMPLETED", "m1", 0},
		{"c", 300, 360, 380, "COMPLETED", "m1", 0},
		{"d", 300, 360, 390, "COMPLETED", "m1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	wantRep := []MIGRepartition{{At: 0, Job: 0}, {At: 300, Job: 2, Profile: 3}} // 2g.20gb is profile 3 of h100-80gb
	if d := cmp.Diff(wantRep, rec.MIGRepartitions); d != "" {
		t.Errorf("repartitions (-want +got):\n%s", d)
	}
}

// TestMIGRepartitionRefused: a policy that starts a job at 10 on the GPU
// a repartitioned at 0 (ready at 60) is refused with an error naming the
// GPU and when it is ready.
func TestMIGRepartitionRefused(t *testing.T) {
	tr := &workload.Trace{Jobs: []workload.Job{
		migJobOf(t, "a", 0, 100, "1g.10gb"),
		migJobOf(t, "b", 10, 50, "1g.10gb"),
	}}
	p1g := tr.Jobs[0].Request.MIGProfile
	bad := &greedy{bad: func(v View) Plan {
		var plan Plan
		for _, p := range v.Pending() {
			a := NodeAlloc{Node: 0, CPUs: 1, MIG: MIGInstances{Profile: p1g, Count: 1, PerGPU: [MaxMIGGPUs]uint8{1}}}
			if v.Now() == 0 || p.Ref == 1 {
				plan.Starts = append(plan.Starts, Start{Job: p.Ref, Alloc: []NodeAlloc{a}})
			}
		}
		return plan
	}}
	_, err := Run(Config{Cluster: dynMIG(t), Trace: tr, Policy: bad, Check: true})
	if err == nil || !strings.Contains(err.Error(), "job b at t=10") || !strings.Contains(err.Error(), "MIG GPU 0 is being repartitioned until t=60") {
		t.Fatalf("err = %v, want b refused at 10: GPU 0 repartitioned until 60", err)
	}
}
