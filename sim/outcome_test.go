package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/workload"
)

// TestRecordedOutcomes: a started job ends in its recorded state at its
// recorded runtime unless the simulation ends it first, and dependencies
// follow that state (Slurm's _test_job_dependency_common: afterok needs
// COMPLETED, afternotok any other finished state). twoNodes (n1, n2: 4
// GPUs each); lgreedy; every job takes a whole node (4 GPUs):
//
//	fail   FAILED,        t=0, runs 100, limit 200: n1 [0,100) FAILED
//	ok     afterok fail:  never satisfied once fail is FAILED: UNFINISHED
//	notok  afternotok fail: eligible at 100, n1 [100,110) COMPLETED
//	oom    OUT_OF_MEMORY, t=0, runs 30: n2 [0,30) OUT_OF_MEMORY
//	canc   CANCELLED with a start (cancelled while running), t=0, runs
//	       20: queued behind fail and oom, n2 [30,50) CANCELLED
//	tmo    TIMEOUT, t=0, runs 40 but limit 60: the simulation lets it run
//	       to its limit: n2 [50,110) TIMEOUT
//	nf     NODE_FAIL as recorded, t=0, runs 10: n1 [110,120) NODE_FAIL
//	long   FAILED but runs 90 with limit 50: the limit kills it first:
//	       n2 [110,160) TIMEOUT
//	after  afterany long: eligible at 160, n1 [160,165) COMPLETED
//
// The start order is submit order (all but the dependents at 0), each on
// the first node free: n1 frees at 100 (fail; notok starts), n2 at 30, 50
// and 110, n1 again at 110 (notok). Without the recorded states every
// started job ends COMPLETED: ok runs and notok never does.
func TestRecordedOutcomes(t *testing.T) {
	st := func(j workload.Job, s string) workload.Job { j.TraceState = s; return j }
	ok := job("ok", 0, 10, 20, 4)
	ok.Deps = dep(workload.DepAfterOK, "fail")
	notok := job("notok", 0, 10, 20, 4)
	notok.Deps = dep(workload.DepAfterNotOK, "fail")
	after := job("after", 0, 5, 20, 4)
	after.Deps = dep(workload.DepAfterAny, "long")
	tr := &workload.Trace{Jobs: []workload.Job{
		st(job("fail", 0, 100, 200, 4), "FAILED"),
		ok, notok,
		st(job("oom", 0, 30, 200, 4), "OUT_OF_MEMORY"),
		st(job("canc", 0, 20, 200, 4), "CANCELLED"),
		st(job("tmo", 0, 40, 60, 4), "TIMEOUT"),
		st(job("nf", 0, 10, 200, 4), "NODE_FAIL"),
		st(job("long", 0, 90, 50, 4), "FAILED"),
		after,
	}}
	rec := run(t, Config{Trace: tr})
	want := []life{
		{"fail", 0, 0, 100, "FAILED", "n1", 0},
		{"ok", U, U, U, "UNFINISHED", "", 0},
		{"notok", 100, 100, 110, "COMPLETED", "n1", 0},
		{"oom", 0, 0, 30, "OUT_OF_MEMORY", "n2", 0},
		{"canc", 0, 30, 50, "CANCELLED", "n2", 0},
		{"tmo", 0, 50, 110, "TIMEOUT", "n2", 0},
		{"nf", 0, 110, 120, "NODE_FAIL", "n1", 0},
		{"long", 0, 110, 160, "TIMEOUT", "n2", 0},
		{"after", 160, 160, 165, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	if r := rec.Jobs[1].Reason; r != "DependencyNeverSatisfied" {
		t.Errorf("ok: reason %q, want DependencyNeverSatisfied", r)
	}
	var recorded []bool
	for _, r := range rec.Jobs {
		recorded = append(recorded, r.Recorded)
	}
	// The trace's own states (FAILED, OOM, CANCELLED, NODE_FAIL) are
	// recorded outcomes; TIMEOUTs are the simulation's; notok and after
	// have no recorded state and end COMPLETED.
	wantRecorded := []bool{true, false, false, true, true, false, true, false, false}
	if d := cmp.Diff(wantRecorded, recorded); d != "" {
		t.Errorf("Recorded (-want +got):\n%s", d)
	}
}

// TestRecordedOutcomeOverridden: a preemption and a node failure override
// the recorded state. twoNodes; lgreedy. v (FAILED in the trace, runs
// 100, not requeueable) on n1 is preempted (CANCEL) at 40, when urgent
// (runs 10) arrives: PREEMPTED at 40, not FAILED, and not a recorded
// outcome; urgent runs on n1 [40,50). w (FAILED, runs 100) on n2 loses its
// node at 60: NODE_FAIL at 60.
func TestRecordedOutcomeOverridden(t *testing.T) {
	v := job("v", 0, 100, 200, 4)
	v.TraceState = "FAILED"
	w := job("w", 0, 100, 200, 4)
	w.TraceState = "FAILED"
	rec := run(t, Config{Trace: &workload.Trace{Jobs: []workload.Job{v, w, job("urgent", 40, 10, 20, 4)}},
		Policy:     &lgreedy{preempt: preemptAt(40, 0, PreemptCancel)},
		NodeEvents: []NodeEvent{{At: 60, Node: 1, Down: true}, {At: 70, Node: 1}}})
	want := []life{
		{"v", 0, 0, 40, "PREEMPTED", "n1", 0},
		{"w", 0, 0, 60, "NODE_FAIL", "n2", 0},
		{"urgent", 40, 40, 50, "COMPLETED", "n1", 0},
	}
	if d := cmp.Diff(want, lives(rec)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	if rec.Jobs[0].Recorded || rec.Jobs[1].Recorded {
		t.Errorf("Recorded = %v, %v: the simulation decided both", rec.Jobs[0].Recorded, rec.Jobs[1].Recorded)
	}
}
