package policies_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// migJob is policytest.MIGJob.
var migJob = policytest.MIGJob

// runMIG replays jobs on spec under policy with placement, checking the
// controller's invariants (MIG instances included) after every event.
func runMIG(t *testing.T, spec, policy, placement string, jobs []workload.Job) *sim.Record {
	t.Helper()
	c := catalogCluster(t, spec)
	p, err := catalog.Builtin().New(policy, strictDecode("placement: "+placement+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestMIGFixedLayoutMixed: one H100 node with 4 GPUs, 2 of them in MIG
// mode with the layout [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb] (placed by
// geometry as 2g@0, 1g@2, 1g@3, 3g@4: 3g cannot start at 0 with 2g and two
// 1g after it, since 1g has no start 7), so the node has 2 whole GPUs and
// 2 × 3g, 2 × 2g, 4 × 1g instances.
//
//	w2  2 whole GPUs, t=0, 100 s: starts 0 on the whole GPUs
//	m4  4 × 1g, t=0, 50 s: starts 0 (every 1g instance)
//	m1  1 × 1g, t=1, 10 s: waits for m4 (3g and 2g instances are free, and
//	    by slice count a 1g would fit, but no 1g instance is free): 50
//	w1  1 whole GPU, t=2: the MIG GPUs are not whole GPUs: waits for w2, 100
//	m3  2 × 3g, t=3, 10 s: both 3g instances are free: starts 3 (EASY
//	    backfill: it ends at 13, before the head's shadow time 50)
func TestMIGFixedLayoutMixed(t *testing.T) {
	spec := `version: 1
name: mig
node_groups:
  - name: n1
    gpu: {model: h100-sxm-80gb, count: 4}
    cpus: 64
    memory: 512G
    mig: {layout: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb], gpus: 2}
`
	jobs := []workload.Job{
		migJob(t, "w2", 0, 100, "", 2),
		migJob(t, "m4", 0, 50, "1g.10gb", 4),
		migJob(t, "m1", 1, 10, "1g.10gb", 1),
		migJob(t, "w1", 2, 10, "", 1),
		migJob(t, "m3", 3, 10, "3g.40gb", 2),
	}
	for _, pl := range []string{"first-fit", "best-fit", "mig-packing"} {
		rec := runMIG(t, spec, "easy", pl, jobs)
		want := map[string]workload.Time{"w2": 0, "m4": 0, "m1": 50, "w1": 100, "m3": 3}
		if got := starts(rec); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: starts %v, want %v", pl, got, want)
		}
		// m4 holds the two 1g instances (starts 2 and 3) of both MIG GPUs.
		var held []sim.MIGHold
		for _, h := range rec.MIG {
			if h.Job == 1 {
				held = append(held, h)
			}
		}
		wantHeld := []sim.MIGHold{
			{Job: 1, Node: 0, GPU: 0, Profile: 0, Start: 2}, {Job: 1, Node: 0, GPU: 0, Profile: 0, Start: 3},
			{Job: 1, Node: 0, GPU: 1, Profile: 0, Start: 2}, {Job: 1, Node: 0, GPU: 1, Profile: 0, Start: 3},
		}
		if !reflect.DeepEqual(held, wantHeld) {
			t.Errorf("%s: m4 held %+v, want %+v", pl, held, wantHeld)
		}
		if rec.Jobs[1].GPUs() != 0 || rec.Jobs[1].Alloc.At(0).MIG.Count != 4 {
			t.Errorf("%s: m4 allocation %+v, want 4 MIG instances and no whole GPU", pl, rec.Jobs[1].Alloc)
		}
	}
}

// TestMIGNotInLayoutRejected: a profile the fixed layout never holds can
// never run, although the layout's free slices would hold it by count
// (7 × 1g.10gb leave nothing; [2g.20gb, 2g.20gb, 2g.20gb] leaves memory
// slices 6-7 and one compute slice, but no 1g.10gb instance exists).
func TestMIGNotInLayoutRejected(t *testing.T) {
	spec := `version: 1
name: mig
node_groups:
  - name: n1
    gpu: {model: h100-sxm-80gb, count: 1}
    cpus: 8
    memory: 64G
    mig: {layout: [2g.20gb, 2g.20gb, 2g.20gb]}
`
	rec := runMIG(t, spec, "fifo", "first-fit", []workload.Job{migJob(t, "a", 0, 10, "1g.10gb", 1), migJob(t, "b", 0, 10, "2g.20gb", 3)})
	if rec.Jobs[0].State != sim.Rejected || rec.Jobs[1].State != sim.Completed || rec.Jobs[1].Start != 0 {
		t.Errorf("states %v %v (start %d), want REJECTED and COMPLETED at 0", rec.Jobs[0].State, rec.Jobs[1].State, rec.Jobs[1].Start)
	}
}

const dynSpec = `version: 1
name: dyn
node_groups:
  - name: n1
    gpu: {model: h100-sxm-80gb, count: %d}
    cpus: 64
    memory: 512G
    mig: {mode: dynamic, reconfigure_delay: 60s}
`

// TestMIGDynamicRepartition: one H100 in dynamic MIG mode, repartitioned
// with a 60 s delay.
//
//	a  1g.10gb, t=0, 100 s: the GPU is not partitioned: it is partitioned
//	   into 7 × 1g (a takes slice 0) and a begins at 60, ends 160
//	b  1g.10gb, t=10, 100 s: a free 1g instance (slice 1), but the GPU is
//	   being repartitioned until 60: it is not offered before, and b starts
//	   at 60, when the repartition completes, ends 160 (it started at 10,
//	   on the GPU still being repartitioned, before the controller held
//	   such GPUs back)
//	c  4g.40gb, t=20, 100 s: 1g instances at slices 0 and 1 are in use; by
//	   count 6 memory and 5 compute slices are free, enough for a 4g, but
//	   4g starts only at slice 0 (geometry), and a GPU in use is never
//	   repartitioned: c waits until the GPU is empty (160), then the
//	   repartition takes 60 s: starts 220, ends 320
func TestMIGDynamicRepartition(t *testing.T) {
	geo, _ := hwmodels.LookupMIG("h100-80gb")
	if got := geo.Fragmentation([]hwmodels.MIGInstance{{Profile: 0, Start: 0}, {Profile: 0, Start: 1}}); got.ByCount != 4 || got.Placeable != 3 {
		t.Fatalf("geometry: by count %d placeable %d, want 4 and 3", got.ByCount, got.Placeable)
	}
	jobs := []workload.Job{
		migJob(t, "a", 0, 100, "1g.10gb", 1),
		migJob(t, "b", 10, 100, "1g.10gb", 1),
		migJob(t, "c", 20, 100, "4g.40gb", 1),
	}
	for _, pl := range []string{"first-fit", "best-fit", "mig-packing"} {
		for _, pol := range []string{"fifo", "easy"} {
			rec := runMIG(t, fmt.Sprintf(dynSpec, 1), pol, pl, jobs)
			want := map[string]workload.Time{"a": 60, "b": 60, "c": 220}
			if got := starts(rec); !reflect.DeepEqual(got, want) {
				t.Errorf("%s/%s: starts %v, want %v", pol, pl, got, want)
			}
			if rec.Jobs[2].End != 320 {
				t.Errorf("%s/%s: c ends %d, want 320", pol, pl, rec.Jobs[2].End)
			}
			wantRep := []sim.MIGRepartition{{At: 0, Job: 0, Node: 0, GPU: 0, Profile: 0}, {At: 160, Job: 2, Node: 0, GPU: 0, Profile: 5}}
			if !reflect.DeepEqual(rec.MIGRepartitions, wantRep) {
				t.Errorf("%s/%s: repartitions %+v, want %+v", pol, pl, rec.MIGRepartitions, wantRep)
			}
		}
	}
}

// TestMIGPackingBeatsFirstFit: two dynamic H100 MIG GPUs, 60 s delay.
//
//	A  3g.40gb, t=0, 1000 s: both GPUs unpartitioned: GPU 0 → 2 × 3g; 60–1060
//	B  1g.10gb, t=0, 10000 s: GPU 0 is in use for 3g: GPU 1 → 7 × 1g; 60–10060
//	C  1g.10gb, t=2000, 10000 s: GPU 0 is empty (A ended), GPU 1 has 6 free
//	   1g. first-fit takes the lowest GPU that can hold it, repartitioning
//	   GPU 0: 2060; mig-packing takes a free 1g on GPU 1: 2000
//	D  7g.80gb, t=3000, 100 s: first-fit: both GPUs in use until B ends at
//	   10060, then GPU 1 is repartitioned: 10120; mig-packing: GPU 0 is
//	   empty: 3060
func TestMIGPackingBeatsFirstFit(t *testing.T) {
	jobs := []workload.Job{
		migJob(t, "A", 0, 1000, "3g.40gb", 1),
		migJob(t, "B", 0, 10000, "1g.10gb", 1),
		migJob(t, "C", 2000, 10000, "1g.10gb", 1),
		migJob(t, "D", 3000, 100, "7g.80gb", 1),
	}
	for _, tc := range []struct {
		placement string
		want      map[string]workload.Time
	}{
		{"first-fit", map[string]workload.Time{"A": 60, "B": 60, "C": 2060, "D": 10120}},
		{"mig-packing", map[string]workload.Time{"A": 60, "B": 60, "C": 2000, "D": 3060}},
	} {
		rec := runMIG(t, fmt.Sprintf(dynSpec, 2), "easy", tc.placement, jobs)
		if got := starts(rec); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: starts %v, want %v", tc.placement, got, tc.want)
		}
	}
}

// TestMIGRandomConservation replays a random mix of whole-GPU and MIG jobs
// on a cluster with whole, fixed-layout and dynamic MIG nodes under every
// built-in policy and placement, with Check on (free state, instance
// holders and layouts by geometry after every event), and twice with the
// same seed: the records are identical.
func TestMIGRandomConservation(t *testing.T) {
	spec := migMixedSpec // mirror_test.go
	profiles := []string{"", "", "1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "1g.20gb"}
	rng := rand.New(rand.NewPCG(3, 4))
	var jobs []workload.Job
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
		j.TimeLimit += workload.Time(rng.IntN(600))
		jobs = append(jobs, j)
	}
	for _, pol := range catalog.Builtin().Names() {
		for _, pl := range []string{"first-fit", "best-fit", "mig-packing"} {
			if pol != "fifo" && pol != "easy" && pl != "first-fit" {
				continue // only fifo and easy take a placement argument
			}
			run := func() *sim.Record {
				c := catalogCluster(t, spec)
				var args func(any) error
				if pol == "fifo" || pol == "easy" {
					args = strictDecode("placement: " + pl + "\n")
				}
				p, err := catalog.Builtin().New(pol, args)
				if err != nil {
					t.Fatal(err)
				}
				rec, err := sim.Run(sim.Config{Cluster: c, Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true})
				if err != nil {
					t.Fatalf("%s/%s: %v", pol, pl, err)
				}
				return rec
			}
			a, b := run(), run()
			var done, migs int
			for i := range a.Jobs {
				if a.Jobs[i].State == sim.Completed || a.Jobs[i].State == sim.Timeout {
					done++
				}
			}
			migs = len(a.MIG)
			if done < 250 || migs == 0 || len(a.MIGRepartitions) == 0 {
				t.Errorf("%s/%s: %d jobs finished, %d MIG instances held, %d repartitions; want most jobs to run and both MIG modes used", pol, pl, done, migs, len(a.MIGRepartitions))
			}
			if !reflect.DeepEqual(a.Jobs, b.Jobs) || !reflect.DeepEqual(a.MIG, b.MIG) || !reflect.DeepEqual(a.MIGRepartitions, b.MIGRepartitions) {
				t.Errorf("%s/%s: two runs with the same seed differ", pol, pl)
			}
		}
	}
}
