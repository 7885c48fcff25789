package bundle

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/workload"
)

// testdata/small is a hand-made bundle: three 8-GPU nodes, eight sacct
// rows (epoch 2026-11-30T10:00:00 = the first submit), slurmctld up since
// 09:59:47, and these cases:
//
//	1 alice   runs 0-60 on gn1
//	2 bob     afterok:1: eligible at 60 (its dependency), started 60
//	3 carol   --begin=now+100: eligible 102, started 102
//	4 dave    afterok:999, a job not in the window: eligible 30
//	5 erin    no SubmitLine; runs 31-91 on gn3
//	6 frank   run 1 5-20 REQUEUED (scontrol requeue: not modeled), run 2
//	          held until 20 + 121 = 141, started 141 on gn1
//	7 gina    AllocTRES billing=99 (the replay bills 8 GPUs × 4 = 32);
//	          not in assoc.txt
func openSmall(t *testing.T) *Replay {
	t.Helper()
	b, err := Open("testdata/small")
	if err != nil {
		t.Fatal(err)
	}
	rp, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

func TestBuildReleases(t *testing.T) {
	rp := openSmall(t)
	if rp.Epoch != 1796032800 { // 2026-11-30T10:00:00Z
		t.Fatalf("epoch %d", rp.Epoch)
	}
	got := map[string]workload.Time{}
	for i, j := range rp.Trace.Jobs {
		if rp.Jobs[i].ID != j.ID {
			t.Fatalf("job %d: trace %s, recorded %s", i, j.ID, rp.Jobs[i].ID)
		}
		got[j.ID] = j.Submit
	}
	// Released at Eligible where nothing modeled explains the wait:
	// carol (--begin), dave (the dependency dropped), frank's rerun (the
	// requeue hold after a requeue the model does not make).
	want := map[string]workload.Time{"1": 0, "2": 1, "3": 102, "4": 30, "5": 31, "6#run1": 5, "6": 141, "7": 180}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("releases %v, want %v", got, want)
	}
	byID := map[string]*workload.Job{}
	for i := range rp.Trace.Jobs {
		byID[rp.Trace.Jobs[i].ID] = &rp.Trace.Jobs[i]
	}
	if d := byID["2"].Deps; len(d) != 1 || d[0].JobID != "1" || d[0].Type != workload.DepAfterOK {
		t.Errorf("bob's deps %v", d)
	}
	if len(byID["4"].Deps) != 0 {
		t.Errorf("dave keeps a dependency on a job outside the window: %v", byID["4"].Deps)
	}
	// Requested CPUs (ReqTRES cpu=1) with GPUs billed × DefCpuPerGPU.
	if q := byID["1"].Request; q.CPUs != 1 || q.GPUs != 8 || q.MemMB != 8000 {
		t.Errorf("alice's request %+v", q)
	}
	// frank's first run occupies gn3 for its 15 s as a job of its own.
	if o := byID["6#run1"]; o.Runtime != 15 || o.Requeue || !rp.Jobs[indexOf(rp, "6#run1")].Occupancy {
		t.Errorf("frank's first run %+v", o)
	}
	type lost struct{ job, cause string }
	var gotLost []lost
	for _, u := range rp.Unrecovered {
		gotLost = append(gotLost, lost{u.Job, u.Cause})
	}
	wantLost := []lost{{"7", CauseBilling}, {"7", CauseNoAssoc}, {"4", CauseDepOutside}, {"5", CauseNoSubmitLine}, {"gn9", CauseUnknownNode}, {"6", CauseRequeueUnknown}}
	if !reflect.DeepEqual(gotLost, wantLost) {
		t.Errorf("unrecovered %v, want %v", gotLost, wantLost)
	}
}

func indexOf(rp *Replay, id string) int {
	for i := range rp.Jobs {
		if rp.Jobs[i].ID == id {
			return i
		}
	}
	return -1
}

func TestBuildScenario(t *testing.T) {
	rp := openSmall(t)
	s := string(rp.Scenario)
	// BOOT_TIME 09:59:47 is 13 s before the epoch: the sweep falls at
	// 17 s mod 30, the recalculations (PriorityCalcPeriod 1 min) at 47 s
	// mod 60; KillWait 5 s (from scontrol, slurm.conf lacks it) + 1 s;
	// the will-run grid at (−1796032800) mod 30 = 0.
	for _, want := range []string{
		"time_limit_sweep_phase: 17s", "priority_calc_phase: 47", "kill_wait: 6s", "will_run_phase: 0",
		"placement: cons-tres", "TRESBillingWeights: GRES/gpu=4",
		"- {at: 300, nodes: \"gn3\", state: down}", "- {at: 360, nodes: \"gn3\", state: up}",
		"name: research", "parent: root", "fairshare: 2", "name: gina",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("scenario lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "gn9") {
		t.Errorf("an event for a node slurm.conf lacks reached the scenario")
	}
}

// TestGroupArithmetic checks Group on hand-worked starts: Δ = +10, −2,
// 0, +3, and one never simulated: 3 of 5 within ±5 s, 1 late, 1
// missing; mean Δ (10−2+0+3)/4 = 2.75; |Δ| sorted 0 2 3 10: median 2.5,
// p95 = 3 + 0.85·(10−3) = 8.95 (type 7: h = 3·0.95 = 2.85).
func TestGroupArithmetic(t *testing.T) {
	ss := []Start{{Recorded: 0, Simulated: 10}, {Recorded: 10, Simulated: 8}, {Recorded: 5, Simulated: 5}, {Recorded: 1, Simulated: 4}, {Recorded: 7, Simulated: -1}}
	g := group("x", ss)
	if g.Starts != 5 || g.Within != 3 || g.Late != 1 || g.Early != 0 || g.Missing != 1 || g.Share != 0.6 ||
		g.MeanDelta != 2.75 || g.MedianAbsDelta != 2.5 || g.P95AbsDelta < 8.949 || g.P95AbsDelta > 8.951 {
		t.Errorf("%+v", g)
	}
}

func TestScontrolSetting(t *testing.T) {
	for _, c := range []struct{ key, in, want string }{
		{"KillWait", "30 sec", "30"}, {"OverTimeLimit", "0 min", "0"}, {"PriorityCalcPeriod", "00:05:00", "5"},
		{"PriorityDecayHalfLife", "7-00:00:00", "7-00:00:00"}, {"PreemptMode", "OFF", "OFF"},
	} {
		if got, ok := scontrolSetting(c.key, c.in); !ok || got != c.want {
			t.Errorf("%s = %q: got %q %v, want %q", c.key, c.in, got, ok, c.want)
		}
	}
	for _, c := range []struct{ key, in string }{{"TRESBillingWeights", "(null)"}, {"DefCpuPerGPU", "UNLIMITED"}, {"PriorityFlags", ""}} {
		if got, ok := scontrolSetting(c.key, c.in); ok {
			t.Errorf("%s = %q: got %q, want unset", c.key, c.in, got)
		}
	}
}

// TestBuildHandovers: a run that ended in the second another run started
// on its node runs a second shorter than End − Start, so that, its end
// applied after that second's pass (ends_after_pass), the start it made
// room for is not a second late. In testdata/small, job 1 ends at 60 on
// gn1 and job 2 starts there at 60: 59 s. Job 6's first run ends at 20
// on gn3 where nothing starts at 20: its occupancy job keeps 20 − 5 =
// 15 s. Every other run keeps End − Start (job 5 ends at 91 on gn3, job
// 4 at 90 on gn2, where nothing starts then).
func TestBuildHandovers(t *testing.T) {
	rp := openSmall(t)
	got := map[string]workload.Time{}
	for _, j := range rp.Trace.Jobs {
		got[j.ID] = j.Runtime
	}
	want := map[string]workload.Time{"1": 59, "2": 60, "3": 60, "4": 60, "5": 60, "6#run1": 15, "6": 60, "7": 30}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("runtimes %v, want %v", got, want)
	}
	if !slices.ContainsFunc(rp.Notes, func(n string) bool {
		return strings.Contains(n, "1 of the runs ended in the second another job started on their nodes")
	}) {
		t.Errorf("no note of the shortened run: %q", rp.Notes)
	}
}

// TestKilledRunsWork: a final run that preemption or a node failure
// ended runs its recorded End − Start in the replay (sacct has nothing of
// its work past the kill), and a TIMEOUT one at least to its limit. The
// rows replace testdata/small's sacct.txt; its event.txt downs gn3 at
// 10:05:00.
//
//	1 alice PREEMPTED 10:00:00-10:00:10 on gn1, limit 2 min: 10 s
//	2 bob   NODE_FAIL 10:04:00-10:05:00 on gn3 (the down): 60 s
//	3 carol TIMEOUT   10:00:00-10:01:30 on gn2, limit 2 min: 120 s
//	        (an Elapsed under the limit: the replay's sweep ends it)
func TestKilledRunsWork(t *testing.T) {
	files := map[string][]byte{}
	for _, name := range []string{"assoc.txt", "conf/gres.conf", "conf/slurm.conf", "event.txt", "manifest.txt", "qos.txt", "scontrol-config.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", "small", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	const tres = "|1|32|billing=32,cpu=32,gres/gpu=8,mem=250G,node=1|billing=1,cpu=1,gres/gpu=8,mem=8000M,node=1|"
	files["sacct.txt"] = []byte("JobID|JobIDRaw|JobName|User|Account|Partition|State|ExitCode|Submit|Eligible|Start|End|Elapsed|Timelimit|NNodes|NCPUS|AllocTRES|ReqTRES|NodeList|Priority|Flags|Reason|SubmitLine\n" +
		"1|1|a|alice|research|batch|PREEMPTED|0:0|2026-11-30T10:00:00|2026-11-30T10:00:00|2026-11-30T10:00:00|2026-11-30T10:00:10|00:00:10|00:02:00" + tres + "gn1|1|SchedMain|None|sbatch --gpus-per-node=8 -t 2 job.sh\n" +
		"2|2|b|bob|research|batch|NODE_FAIL|0:0|2026-11-30T10:04:00|2026-11-30T10:04:00|2026-11-30T10:04:00|2026-11-30T10:05:00|00:01:00|00:02:00" + tres + "gn3|1|SchedMain|None|sbatch --gpus-per-node=8 -t 2 job.sh\n" +
		"3|3|c|carol|research|batch|TIMEOUT|0:0|2026-11-30T10:00:00|2026-11-30T10:00:00|2026-11-30T10:00:00|2026-11-30T10:01:30|00:01:30|00:02:00" + tres + "gn2|1|SchedMain|None|sbatch --gpus-per-node=8 -t 2 job.sh\n")
	b, err := FromFiles("killed", files)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]workload.Time{}
	for _, j := range rp.Trace.Jobs {
		got[j.ID] = j.Runtime
	}
	if want := map[string]workload.Time{"1": 10, "2": 60, "3": 120}; !reflect.DeepEqual(got, want) {
		t.Errorf("runtimes %v, want %v", got, want)
	}
}
