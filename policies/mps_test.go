package policies_test

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// mpsSpec is one H100 node with gpus GPUs whose GPUs are shared by MPS,
// at most clients jobs per GPU.
func mpsSpec(gpus, clients int) string {
	return "version: 1\nname: mps\nnode_groups:\n  - name: n1\n    gpu: {model: h100-sxm-80gb, count: " +
		itoa(gpus) + "}\n    cpus: 64\n    memory: 512G\n    mps: {max_clients: " + itoa(clients) + "}\n"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

// mpsJob is a one-node job asking for share percent of a GPU by MPS (or
// gpus whole GPUs when share is 0); limit = runtime.
func mpsJob(id string, submit, runtime workload.Time, share, gpus int32) workload.Job {
	j := workload.NewJob(id)
	j.Submit, j.Runtime, j.TimeLimit = submit, runtime, runtime
	j.Request = workload.Request{Nodes: 1, GPUs: gpus, CPUs: 1, MPSShare: share}
	return j
}

// mpsGPU returns the MPS GPU and share job id held (-1, 0 for none).
func mpsGPU(rec *sim.Record, id string) (int, int32) {
	for i := range rec.Jobs {
		if rec.Trace.Jobs[i].ID == id && rec.Jobs[i].Alloc.Len() == 1 {
			a := rec.Jobs[i].Alloc.At(0)
			return int(a.MPS.GPU), int32(a.MPS.Share)
		}
	}
	return -1, 0
}

// runPolicy replays jobs on spec under policy with its default arguments,
// checking the controller's invariants after every event.
func runPolicy(t *testing.T, spec, policy string, jobs []workload.Job) *sim.Record {
	t.Helper()
	p, err := catalog.Builtin().New(policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := sim.Run(sim.Config{Cluster: catalogCluster(t, spec), Trace: &workload.Trace{Jobs: jobs}, Policy: p, Seed: 1, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func wantStarts(t *testing.T, rec *sim.Record, want map[string]workload.Time) {
	t.Helper()
	if got := starts(rec); !reflect.DeepEqual(got, want) {
		t.Errorf("starts = %v, want %v", got, want)
	}
}

func TestRequestSize(t *testing.T) {
	// 40 bytes before MPSShare (no padding was left); the int32 share
	// rounds it up to 48. NodeAlloc: 24 → 32 with the MPS share, 40 with
	// the MIG instances as a plain struct (Profile 4, Count 4, PerGPU 8:
	// 3 × 4 + MPS 4 + MemMB 8 + MIG 16), the most it may be.
	if s := unsafe.Sizeof(workload.Request{}); s != 48 {
		t.Errorf("Request is %d bytes, want 48", s)
	}
	if s := unsafe.Sizeof(sim.NodeAlloc{}); s != 40 {
		t.Errorf("NodeAlloc is %d bytes, want 40", s)
	}
}

// TestMPSShareOneGPU: one GPU, 4 clients, FIFO.
//
//	a 50 %, t=0, 100 s: GPU 0, starts 0
//	b 50 %, t=0, 200 s: GPU 0 (50+50 = 100), starts 0
//	c 60 %, t=1, 50 s: 100 % in use: waits; at 100 a leaves (50 % in
//	  use, 50+60 > 100): still waits; at 200 b leaves: starts 200
func TestMPSShareOneGPU(t *testing.T) {
	for _, pl := range []string{"first-fit", "best-fit"} {
		rec := runMIG(t, mpsSpec(1, 4), "fifo", pl, []workload.Job{
			mpsJob("a", 0, 100, 50, 0), mpsJob("b", 0, 200, 50, 0), mpsJob("c", 1, 50, 60, 0),
		})
		wantStarts(t, rec, map[string]workload.Time{"a": 0, "b": 0, "c": 200})
		for _, id := range []string{"a", "b", "c"} {
			if g, s := mpsGPU(rec, id); g != 0 || s == 0 {
				t.Errorf("%s: job %s on MPS GPU %d share %d, want GPU 0", pl, id, g, s)
			}
		}
		if a := rec.Jobs[0].Alloc.At(0); a.GPUs != 0 {
			t.Errorf("MPS job holds %d whole GPUs", a.GPUs)
		}
	}
}

// TestMPSClientLimit: max_clients 2 on one GPU: a and b (30 % each) fill
// the client slots; c (10 %) waits for a at 100 although 40 % is unused.
func TestMPSClientLimit(t *testing.T) {
	rec := runMIG(t, mpsSpec(1, 2), "fifo", "first-fit", []workload.Job{
		mpsJob("a", 0, 100, 30, 0), mpsJob("b", 0, 200, 30, 0), mpsJob("c", 1, 10, 10, 0),
	})
	wantStarts(t, rec, map[string]workload.Time{"a": 0, "b": 0, "c": 100})
}

// TestMPSWholeGPUExclusive: two GPUs, EASY.
//
//	m  20 %, t=0, 100 s: takes GPU (MPS GPU 0); 1 whole GPU left
//	w  2 whole GPUs, t=1, 10 s: the MPS GPU is not a whole GPU: waits
//	   for m, shadow 100; starts 100
//	w1 1 whole GPU, t=2, 50 s: fits the free GPU, ends 52 < 100: starts 2
//	m2 10 %, t=3, 10 s: joins MPS GPU 0 (30 % in use): starts 3, ends 13
//	m3 90 %, t=4, 10 s: MPS GPU 0 has 30 % in use and the other GPU is
//	   w1's: waits; at 13 m2 leaves (20+90 > 100); at 52 w1 ends and its
//	   GPU becomes MPS GPU 1; m3 ends 62 ≤ 100, before w's shadow: starts 52
func TestMPSWholeGPUExclusive(t *testing.T) {
	rec := runMIG(t, mpsSpec(2, 4), "easy", "first-fit", []workload.Job{
		mpsJob("m", 0, 100, 20, 0), mpsJob("w", 1, 10, 0, 2), mpsJob("w1", 2, 50, 0, 1),
		mpsJob("m2", 3, 10, 10, 0), mpsJob("m3", 4, 10, 90, 0),
	})
	wantStarts(t, rec, map[string]workload.Time{"m": 0, "w": 100, "w1": 2, "m2": 3, "m3": 52})
	if g, _ := mpsGPU(rec, "m2"); g != 0 {
		t.Errorf("m2 on MPS GPU %d, want 0 (with m)", g)
	}
	if g, _ := mpsGPU(rec, "m3"); g != 1 {
		t.Errorf("m3 on MPS GPU %d, want 1", g)
	}
}

// TestMPSEasyShadow: one GPU, 4 clients, EASY.
//
//	a 40 %, t=0, 100 s: starts 0
//	h 70 %, t=1, 100 s: 40+70 > 100: the head, shadow 100 (a's share
//	  released); starts 100, ends 200
//	c 31 %, t=3, 500 s: fits now (71 %) but runs past 100, where h's 70 %
//	  and c's 31 % exceed the GPU: must not delay h; waits until h ends
//	  at 200
//	d 30 %, t=4, 500 s: fits now (70 %) and at the shadow (30+70 = 100):
//	  starts 4
//
// With d on the GPU from 4 to 504 and h from 100 to 200, c (31 %) fits at
// 200 (30+31).
func TestMPSEasyShadow(t *testing.T) {
	rec := runMIG(t, mpsSpec(1, 4), "easy", "first-fit", []workload.Job{
		mpsJob("a", 0, 100, 40, 0), mpsJob("h", 1, 100, 70, 0), mpsJob("c", 3, 500, 31, 0), mpsJob("d", 4, 500, 30, 0),
	})
	wantStarts(t, rec, map[string]workload.Time{"a": 0, "h": 100, "c": 200, "d": 4})
}

// TestMPSBestFitPacks: two GPUs, best-fit packs shares on the fullest MPS
// GPU with room: a 60 % (GPU 0), b 50 % (does not fit GPU 0: GPU 1), c
// 40 %: first fit would take GPU 0 (60+40) too; d 30 % after c: GPU 0 is
// full, GPU 1 has 50: both placers GPU 1. e 10 % after a ends (t=150):
// first fit takes the lowest (GPU 0, c's 40 %), best fit the fullest (GPU
// 1, 80 %).
func TestMPSBestFitPacks(t *testing.T) {
	jobs := []workload.Job{
		mpsJob("a", 0, 100, 60, 0), mpsJob("b", 0, 1000, 50, 0), mpsJob("c", 1, 1000, 40, 0),
		mpsJob("d", 2, 1000, 30, 0), mpsJob("e", 150, 10, 10, 0),
	}
	for pl, want := range map[string]int{"first-fit": 0, "best-fit": 1} {
		rec := runMIG(t, mpsSpec(2, 4), "fifo", pl, jobs)
		wantStarts(t, rec, map[string]workload.Time{"a": 0, "b": 0, "c": 1, "d": 2, "e": 150})
		if g, _ := mpsGPU(rec, "e"); g != want {
			t.Errorf("%s: e on MPS GPU %d, want %d", pl, g, want)
		}
		if g, _ := mpsGPU(rec, "d"); g != 1 {
			t.Errorf("%s: d on MPS GPU %d, want 1", pl, g)
		}
	}
}

// TestMPSRejected: shares over 100 % or mixed with whole GPUs never run;
// MPS jobs on a cluster without MPS never run.
func TestMPSRejected(t *testing.T) {
	rec := runMIG(t, mpsSpec(1, 4), "fifo", "first-fit", []workload.Job{mpsJob("big", 0, 10, 150, 0), mpsJob("mixed", 0, 10, 50, 1)})
	for i := range rec.Jobs {
		if rec.Jobs[i].State != sim.Rejected {
			t.Errorf("job %s: %v, want REJECTED", rec.Trace.Jobs[i].ID, rec.Jobs[i].State)
		}
	}
	plain := "version: 1\nname: p\nnode_groups:\n  - name: n1\n    gpu: {model: h100-sxm-80gb, count: 1}\n    cpus: 64\n    memory: 512G\n"
	rec = runMIG(t, plain, "fifo", "first-fit", []workload.Job{mpsJob("m", 0, 10, 50, 0)})
	if rec.Jobs[0].State != sim.Rejected {
		t.Errorf("MPS job on a cluster without MPS: %v, want REJECTED", rec.Jobs[0].State)
	}
}

// TestMPSDeterministic: the same mixed trace twice gives the same record.
func TestMPSDeterministic(t *testing.T) {
	var jobs []workload.Job
	for i := range 60 {
		share, gpus := int32(10+(i*37)%80), int32(0)
		if i%5 == 0 {
			share, gpus = 0, int32(1+i%2)
		}
		jobs = append(jobs, mpsJob(itoa(i), workload.Time(i*7), workload.Time(50+(i*53)%400), share, gpus))
	}
	for _, pol := range []string{"fifo", "easy", "conservative", "slurm"} {
		for _, pl := range []string{"first-fit", "best-fit"} {
			if (pol == "conservative" || pol == "slurm") && pl != "first-fit" {
				continue
			}
			run := func() *sim.Record {
				if pl == "first-fit" {
					return runPolicy(t, mpsSpec(4, 3), pol, jobs)
				}
				return runMIG(t, mpsSpec(4, 3), pol, pl, jobs)
			}
			r1, r2 := run(), run()
			if !reflect.DeepEqual(r1.Jobs, r2.Jobs) {
				t.Errorf("%s/%s: two runs differ", pol, pl)
			}
			for i := range r1.Jobs {
				if r1.Jobs[i].State != sim.Completed {
					t.Errorf("%s/%s: job %d %v %s", pol, pl, i, r1.Jobs[i].State, r1.Jobs[i].Reason)
				}
			}
		}
	}
}
