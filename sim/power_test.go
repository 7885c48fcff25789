package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/workload"
)

// TestPowerSaving: twoNodes with SuspendTime 600 s and ResumeTimeout 60 s
// under the greedy first-fit policy (nodes are idle from the first
// submit, 0):
//
//	j1  4 GPUs, t=0, 100 s: n1 is up (idle 0 s): starts 0, ends 100
//	j2  4 GPUs, t=1000: n1 idle since 100, down since 700: woken at
//	    1000, starts 1060, ends 1160
//	j3  2 GPUs, t=1010: n1 is full; n2 idle since 0, down since 600:
//	    woken at 1010, starts 1070, ends 1170
//	j4  2 GPUs, t=1030: n2 is still resuming for j3: starts when it is
//	    up, 1070, ends 1170
//
// The run ends at 1170 with both nodes idle for less than 600 s, so the
// suspensions are n1 [700, 1000) and n2 [600, 1010), both woken.
func TestPowerSaving(t *testing.T) {
	cl := twoNodes()
	cl.Power.SuspendTime, cl.Power.ResumeTimeout, cl.Power.SuspendedW = 600, 60, 10
	tr := &workload.Trace{Jobs: []workload.Job{
		job("j1", 0, 100, 1000, 4),
		job("j2", 1000, 100, 1000, 4),
		job("j3", 1010, 100, 1000, 2),
		job("j4", 1030, 100, 1000, 2),
	}}
	rec, err := Run(Config{Cluster: cl, Trace: tr, Policy: &greedy{}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []outcome{
		{"j1", 0, 100, "COMPLETED", "n1", "4", ""},
		{"j2", 1060, 1160, "COMPLETED", "n1", "4", ""},
		{"j3", 1070, 1170, "COMPLETED", "n2", "2", ""},
		{"j4", 1070, 1170, "COMPLETED", "n2", "2", ""},
	}
	if diff := cmp.Diff(want, outcomes(rec)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	wantSus := []NodeSuspend{{Node: 0, From: 700, To: 1000, Woken: true}, {Node: 1, From: 600, To: 1010, Woken: true}}
	if !rec.PowerSaving {
		t.Error("PowerSaving is false")
	}
	if diff := cmp.Diff(wantSus, rec.Suspends); diff != "" {
		t.Errorf("suspends (-want +got):\n%s", diff)
	}

	// Without a SuspendTime nothing changes: j2 starts at 1000.
	cl.Power.SuspendTime = 0
	rec, err = Run(Config{Cluster: cl, Trace: tr, Policy: &greedy{}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if rec.PowerSaving || rec.Suspends != nil || rec.Jobs[1].Start != 1000 || rec.Jobs[2].Start != 1010 {
		t.Errorf("without SuspendTime: PowerSaving %v, suspends %v, j2 starts %d, j3 %d; want false, none, 1000, 1010",
			rec.PowerSaving, rec.Suspends, rec.Jobs[1].Start, rec.Jobs[2].Start)
	}
}

// TestPowerSavingStaysDown: a node idle until the run's end is down from
// SuspendTime after its last job to the end. twoNodes, SuspendTime 600:
// j1 (4 GPUs, t=0, 2000 s) on n1; n2 never runs a job and is down
// [600, 2000), not woken.
func TestPowerSavingStaysDown(t *testing.T) {
	cl := twoNodes()
	cl.Power.SuspendTime, cl.Power.ResumeTimeout = 600, 60
	cl.Partitions[0].MaxTime = 0 // j1's limit is 3000 s
	tr := &workload.Trace{Jobs: []workload.Job{job("j1", 0, 2000, 3000, 4)}}
	rec, err := Run(Config{Cluster: cl, Trace: tr, Policy: &greedy{}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []NodeSuspend{{Node: 1, From: 600, To: 2000}}
	if diff := cmp.Diff(want, rec.Suspends); diff != "" {
		t.Errorf("suspends (-want +got):\n%s", diff)
	}
}

// TestPowerSavingSuspendTimeoutAndExempt: twoNodes with SuspendTime 600,
// SuspendTimeout 300 and ResumeTimeout 60; n2 is exempt (SuspendExcNodes).
// Greedy first-fit:
//
//	j1  4 GPUs, t=0, 100 s: n1 starts 0, ends 100; n1 idle since 100
//	j2  4 GPUs, t=800: n1 began powering down at 700 and is down at
//	    700+300 = 1000; woken then, up at 1060: starts 1060, ends 1160
//	j3  2 GPUs, t=810: n1 is held; n2, idle since 0 (810 s) but
//	    exempt, is up: starts 810, ends 910
//	j4  2 GPUs, t=2000: n1 idle since 1160, powering down from 1760,
//	    down at 2060 (after the submit): starts 2060+60 = 2120, ends 2220
//
// Suspensions: n1 [700, 800) and [1760, 2000), both woken; n2, idle from
// 910 to the end at 2220 (1310 s > 600), never.
func TestPowerSavingSuspendTimeoutAndExempt(t *testing.T) {
	cl := twoNodes()
	cl.Power.SuspendTime, cl.Power.ResumeTimeout, cl.Power.SuspendTimeout = 600, 60, 300
	cl.Power.SuspendExempt = []int32{1}
	tr := &workload.Trace{Jobs: []workload.Job{
		job("j1", 0, 100, 1000, 4),
		job("j2", 800, 100, 1000, 4),
		job("j3", 810, 100, 1000, 2),
		job("j4", 2000, 100, 1000, 2),
	}}
	rec, err := Run(Config{Cluster: cl, Trace: tr, Policy: &greedy{}, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []outcome{
		{"j1", 0, 100, "COMPLETED", "n1", "4", ""},
		{"j2", 1060, 1160, "COMPLETED", "n1", "4", ""},
		{"j3", 810, 910, "COMPLETED", "n2", "2", ""},
		{"j4", 2120, 2220, "COMPLETED", "n1", "2", ""},
	}
	if diff := cmp.Diff(want, outcomes(rec)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	wantSus := []NodeSuspend{{Node: 0, From: 700, To: 800, Woken: true}, {Node: 0, From: 1760, To: 2000, Woken: true}}
	if diff := cmp.Diff(wantSus, rec.Suspends); diff != "" {
		t.Errorf("suspends (-want +got):\n%s", diff)
	}
}
