package policies_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestConservativeScenarios replays hand-worked traces on one node of 8
// GPUs under conservative backfilling.
func TestConservativeScenarios(t *testing.T) {
	g := func(n int32) workload.Request { return workload.Request{GPUs: n} }
	one := policytest.GPUNodes(1, 8)
	tests := []struct {
		name string
		jobs []workload.Job
		want map[string]sim.Time
	}{
		{
			// A 6 GPUs [0,100). B (8) is reserved at 100, [100,200). C
			// (2 GPUs, limit 200) at 2: [2,202) meets B's reservation,
			// so does any start before 200: reserved at 200. D (1 GPU,
			// limit 50) at 3 fits the 2 free GPUs until 53, before B:
			// starts at once. Every job has a reservation, not only B:
			// E (2 GPUs, limit 100) at 4 may not start at 4 either
			// ([4,104) meets B), nor at 53 (D's end), and C holds 2
			// GPUs from 200: E is reserved beside C at 200.
			name: "every job is reserved",
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(6)),
				job("B", 1, 100, 100, g(8)),
				job("C", 2, 200, 200, g(2)),
				job("D", 3, 50, 50, g(1)),
				job("E", 4, 100, 100, g(2)),
			},
			want: map[string]sim.Time{"A": 0, "B": 100, "C": 200, "D": 3, "E": 200},
		},
		{
			// Reservations hold GPUs, not whole nodes (compare slurm's
			// "reservations hold whole nodes"): A 7 GPUs [0,100), B (2
			// GPUs) reserved [100,200), C (1 GPU, limit 150) fits the
			// free GPU now and beside B at 100: starts at 2.
			name: "reservations hold resources, not nodes",
			jobs: []workload.Job{
				job("A", 0, 100, 100, g(7)),
				job("B", 1, 100, 100, g(2)),
				job("C", 2, 150, 150, g(1)),
			},
			want: map[string]sim.Time{"A": 0, "B": 100, "C": 2},
		},
		{
			// An early end moves reservations earlier: A (limit 100)
			// ends at 40; B, reserved at 100, starts at 40.
			name: "early end compresses the schedule",
			jobs: []workload.Job{
				job("A", 0, 100, 40, g(8)),
				job("B", 1, 100, 100, g(8)),
			},
			want: map[string]sim.Time{"A": 0, "B": 40},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := sim.Run(sim.Config{Cluster: one, Trace: &workload.Trace{Jobs: tc.jobs}, Policy: policies.NewConservative(nil), Seed: 1, Check: true})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, starts(rec)); d != "" {
				t.Errorf("starts (-want +got):\n%s", d)
			}
		})
	}
}

// firstRes remembers each job's first reservation.
type firstRes struct {
	*policies.Conservative
	first map[sim.JobRef]sim.Time
}

func (f *firstRes) Schedule(due sim.PassSet, v sim.View, rng *rand.Rand) sim.Plan {
	plan := f.Conservative.Schedule(due, v, rng)
	for _, r := range f.Reservations() {
		if _, ok := f.first[r.Job]; !ok {
			f.first[r.Job] = r.Start
		}
	}
	return plan
}

// TestConservativeNeverDelayed: with runtimes equal to limits, no job
// starts later than the first reservation it was given (the schedule is
// rebuilt in the same order from the same state, so it only keeps or
// improves reservations).
func TestConservativeNeverDelayed(t *testing.T) {
	checked := 0
	for seed := range uint64(80) {
		c, tr := policytest.Workload(seed)
		for i := range tr.Jobs {
			tr.Jobs[i].Runtime = tr.Jobs[i].TimeLimit
		}
		p := &firstRes{Conservative: policies.NewConservative(nil), first: map[sim.JobRef]sim.Time{}}
		rec, err := sim.Run(sim.Config{Cluster: c, Trace: tr, Policy: p, Seed: seed, Check: true})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for ref, at := range p.first {
			checked++
			if s := rec.Jobs[ref].Start; s == workload.Unknown || s > at {
				t.Errorf("seed %d: job %s first reserved at %d, started at %d", seed, tr.Jobs[ref].ID, at, s)
			}
		}
	}
	if checked < 500 {
		t.Errorf("only %d reservations checked", checked)
	}
}

// TestConservativeRequestFields: the kept schedule takes a queued job
// for the one it placed when its request is the same, compared field by
// field (sameJob, conservative.go); a field added to workload.Request
// must be compared there too, and listed here.
func TestConservativeRequestFields(t *testing.T) {
	want := []string{"Nodes", "GPUs", "GPUType", "CPUs", "MIGProfile", "MemMB", "MPSShare", "Switches", "SwitchWait"}
	var got []string
	rt := reflect.TypeOf(workload.Request{})
	for i := range rt.NumField() {
		got = append(got, rt.Field(i).Name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workload.Request's fields changed: compare them in policies' sameJob (-listed +now):\n%s", diff)
	}
}
