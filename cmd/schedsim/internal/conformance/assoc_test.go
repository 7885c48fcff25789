package conformance

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/traces"
)

// synthJob is one job of a hand-made record: submitted at At (seconds
// after time 0) as User in Account, asking for Nodes × GPN GPUs for
// Limit minutes and running `sleep Sleep` (`; exit 1` when Fails).
type synthJob struct {
	Name, User, Account string
	At                  int64
	Nodes, GPN          int
	Limit               int
	Sleep               int
	Fails               bool
	Opts                string // more sbatch options, e.g. "--dependency=afterok:1"
}

// synthT0 is the hand-made records' time 0: fairshare-flood/run1's,
// whose slurm.conf they use (PriorityWeightFairshare=10000, every other
// weight 0, PriorityCalcPeriod=1, slurmctld primary at T0 − 0.65 s: the
// priority recalculations fall at 59 + 60k on the replay clock).
const synthT0 = 1796030098

// synthRecord writes a record of jobs that never ran on the real side
// (sacct Start Unknown), with fairshare-flood/run1's configuration, and
// the given assoc.txt when it is not empty. Job ids are 1, 2, ... in
// order; the jobs are charged to their Account.
func synthRecord(t *testing.T, assoc string, jobs []synthJob) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "..", "conformance", "records", "fairshare-flood", "run1", "config")
	dir := filepath.Join(t.TempDir(), "synth", "run1")
	if err := os.MkdirAll(filepath.Join(dir, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"slurm.conf", "gres.conf"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Skipf("record fairshare-flood/run1 not committed: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"run-info.txt": fmt.Sprintf("ctld_primary_epoch: %d.350000000\nt0_epoch: %d\n", synthT0-1, synthT0),
	}
	var sub, sa strings.Builder
	sub.WriteString("name\tjobid\tat\tsubmit_epoch\tcommand\n")
	sa.WriteString("JobID|JobName|User|Account|Partition|State|Submit|Start|End|Timelimit|NNodes|AllocTRES|ReqTRES\n")
	for i, j := range jobs {
		id := i + 1
		wrap := fmt.Sprintf("sleep %d", j.Sleep)
		if j.Fails {
			wrap += "; exit 1"
		}
		opts := ""
		if j.Opts != "" {
			opts = " " + j.Opts
		}
		fmt.Fprintf(&sub, "%s\t%d\t%d\t%d.010000000\tsbatch --parsable --job-name=%s --partition=batch --nodes=%d --gpus-per-node=%d --time=%d --account=%s%s --wrap '%s'\n",
			j.Name, id, j.At, synthT0+j.At, j.Name, j.Nodes, j.GPN, j.Limit, j.Account, opts, wrap)
		fmt.Fprintf(&sa, "%d|%s|%s|%s|batch|PENDING|2026-11-30T09:15:%02d|Unknown|Unknown|00:%02d:00|%d||billing=%d,cpu=%d,gres/gpu=%d,mem=%dM,node=%d\n",
			id, j.Name, j.User, j.Account, j.At, j.Limit, j.Nodes, j.Nodes, j.Nodes, j.Nodes*j.GPN, 8000*j.Nodes, j.Nodes)
	}
	files["submissions.tsv"] = sub.String()
	files["sacct.txt"] = sa.String()
	if assoc != "" {
		files["assoc.txt"] = assoc
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// simStarts replays a record and returns each job's simulated start (-1:
// never), by job name.
func simStarts(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	r, err := LoadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Simulate(Model{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for i := range rec.Jobs {
		_, final := simWaits(rec, i, nil, r.Jobs[i].Submit-r.T0)
		if final >= 0 {
			final += r.Jobs[i].Submit - r.T0
		}
		out[r.Jobs[i].Name] = final
	}
	return out
}

const assocHeader = "Cluster|Account|User|Partition|ParentName|Share|QOS\n"

// twoAccounts is a tree as sacctmgr prints it: root, its user root,
// accounts phys and chem under root with the given shares, alice in phys
// and bob in chem.
func twoAccounts(phys, chem int) string {
	return assocHeader + "conformance|root||||1|normal\nconformance|root|root|||1|normal\n" +
		fmt.Sprintf("conformance|phys|||root|%d|normal\nconformance|phys|alice|||1|normal\n", phys) +
		fmt.Sprintf("conformance|chem|||root|%d|normal\nconformance|chem|bob|||1|normal\n", chem)
}

// TestAssocTree: the replay's Fair Tree uses the recorded shares.
//
// alice (phys) and bob (chem) each run a 2-node job from 0 to 70 s (16
// GPUs, billed 64 CPUs each), so at the recalculation at 59 s both
// accounts have used the same. Each then has a 4-node job waiting (P2 at
// 5 s, Q2 at 6 s). The first ends free the cluster at 70 s; the next
// job starts at the next cycle, 71 s, runs 10 s, and the other starts at
// 82 s (its end at 81 s frees the nodes after 81 s's pass, and the main
// scheduler's 2 s grid, phase 1 on this clock, is on 81, not 82: the next
// backfill cycle is 82).
//
// Fair Tree's level fair share is S/U (shares over the siblings' shares,
// usage over the parent's). Root's children: user root (1 share, no
// usage: ∞), phys and chem (U = 1/2 each).
//   - shares 1 and 1 (what the replay derives from the jobs without
//     assoc.txt): phys = chem = (1/3)/(1/2): tied, so alice and bob get
//     the same factor and the older job, P2, goes first;
//   - shares phys 1, chem 3: phys = (1/5)/(1/2) = 0.4, chem = (3/5)/(1/2)
//     = 1.2: bob ranks above alice and Q2 goes first.
func TestAssocTree(t *testing.T) {
	jobs := []synthJob{
		{Name: "P1", User: "alice", Account: "phys", At: 0, Nodes: 2, GPN: 8, Limit: 2, Sleep: 70},
		{Name: "Q1", User: "bob", Account: "chem", At: 0, Nodes: 2, GPN: 8, Limit: 2, Sleep: 70},
		{Name: "P2", User: "alice", Account: "phys", At: 5, Nodes: 4, GPN: 8, Limit: 1, Sleep: 10},
		{Name: "Q2", User: "bob", Account: "chem", At: 6, Nodes: 4, GPN: 8, Limit: 1, Sleep: 10},
	}
	first := map[string]int64{"P1": 0, "Q1": 0, "P2": 71, "Q2": 82}
	bobFirst := map[string]int64{"P1": 0, "Q1": 0, "P2": 82, "Q2": 71}
	for _, tc := range []struct {
		name, assoc string
		want        map[string]int64
	}{
		{"derived", "", first},
		{"shares 1:1", twoAccounts(1, 1), first},
		{"shares 1:3", twoAccounts(1, 3), bobFirst},
		{"shares 3:1", twoAccounts(3, 1), first},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, simStarts(t, synthRecord(t, tc.assoc, jobs))); d != "" {
				t.Errorf("starts (-want +got):\n%s", d)
			}
		})
	}
}

// TestReadAssoc reads a hand-made assoc.txt and writes the policy's
// accounts and users as sacctmgr had them, in its order.
func TestReadAssoc(t *testing.T) {
	tree := assocHeader + "conformance|root||||1|normal\nconformance|root|root|||1|normal\n" +
		"conformance|phys|||root|2|normal\nconformance|theory|||phys|5|normal\nconformance|theory|alice|||3|normal\n" +
		"conformance|chem|||root|4|normal\nconformance|chem|bob|||0|normal\n"
	jobs := []synthJob{
		{Name: "A", User: "alice", Account: "theory", Nodes: 1, GPN: 1, Limit: 1, Sleep: 5},
		{Name: "B", User: "bob", Account: "chem", Nodes: 1, GPN: 1, Limit: 1, Sleep: 5},
	}
	r, err := LoadRecord(synthRecord(t, tree, jobs))
	if err != nil {
		t.Fatal(err)
	}
	// As traces.ParseAssoc reads them (no Priority or MaxJobs column: -1).
	a := func(account, user, parent string, shares float64, line int) traces.Assoc {
		return traces.Assoc{Cluster: "conformance", Account: account, User: user, Parent: parent, Shares: shares,
			Priority: -1, MaxJobs: -1, QOS: []string{"normal"}, Line: line}
	}
	want := []traces.Assoc{
		a("root", "", "", 1, 2), a("root", "root", "", 1, 3),
		a("phys", "", "root", 2, 4), a("theory", "", "phys", 5, 5),
		a("theory", "alice", "", 3, 6),
		a("chem", "", "root", 4, 7), a("chem", "bob", "", 0, 8),
	}
	if d := cmp.Diff(want, r.Assocs); d != "" {
		t.Errorf("assocs (-want +got):\n%s", d)
	}
	wantArgs := []string{
		`accounts: [{name: "phys", parent: "root", fairshare: 2}, {name: "theory", parent: "phys", fairshare: 5}, {name: "chem", parent: "root", fairshare: 4}]`,
		`users: [{name: "root", account: "root", fairshare: 1}, {name: "alice", account: "theory", fairshare: 3}, {name: "bob", account: "chem", fairshare: 0}]`,
	}
	if d := cmp.Diff(wantArgs, r.assocArgs()); d != "" {
		t.Errorf("policy args (-want +got):\n%s", d)
	}
	// The scenario the replay runs carries them, and the policy accepts
	// the tree.
	text, err := r.ScenarioYAML(Model{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wantArgs {
		if !strings.Contains(string(text), w) {
			t.Errorf("scenario lacks %s:\n%s", w, text)
		}
	}
	if _, err := r.Simulate(Model{}); err != nil {
		t.Fatal(err)
	}
}

// TestBadAssoc: a bad assoc.txt or qos.txt, or a job outside the tree, is
// an error naming the file, line and field.
func TestBadAssoc(t *testing.T) {
	good := twoAccounts(1, 1)
	for _, tc := range []struct {
		name, file, text, want string
	}{
		{"header", "assoc.txt", "Cluster|Account|User\n", "assoc.txt:1: Partition: the header lacks it (want sacctmgr -P with Cluster,Account,User,Partition,ParentName,Share,QOS)"},
		{"fields", "assoc.txt", strings.Replace(good, "|phys|alice|||1|normal", "|phys|alice|||1", 1), "assoc.txt:5: 6 fields, the header has 7"},
		{"parent share", "assoc.txt", strings.Replace(good, "|phys|alice|||1|", "|phys|alice|||parent|", 1), `assoc.txt:5: Share: "parent": want a raw share`},
		{"negative share", "assoc.txt", strings.Replace(good, "|chem|||root|1|", "|chem|||root|-2|", 1), `assoc.txt:6: Share: "-2": want shares >= 0 or "parent"`},
		{"unknown parent", "assoc.txt", strings.Replace(good, "|chem|||root|", "|chem|||bio|", 1), `assoc.txt:6: ParentName: "bio" for account chem: want a parent account defined on an earlier line`},
		{"user first", "assoc.txt", assocHeader + "conformance|root||||1|normal\nconformance|phys|alice|||1|normal\n", `assoc.txt:3: Account: user alice in account "phys", which no earlier line defines`},
		{"partition", "assoc.txt", strings.Replace(good, "|phys|alice||", "|phys|alice|batch|", 1), `assoc.txt:5: Partition: "batch": per-partition associations are not modeled`},
		{"duplicate", "assoc.txt", good + "conformance|chem|bob|||1|normal\n", "assoc.txt:8: User: bob in account chem listed twice"},
		{"job outside", "assoc.txt", strings.Replace(good, "|chem|bob|", "|chem|carol|", 1), `sacct.txt:3: Account: job 2: user bob has no association in account "chem" in assoc.txt`},
		{"qos header", "qos.txt", "Name|Priority\nnormal|0\n", "qos.txt:1: Preempt: the header lacks it"},
		{"qos priority", "qos.txt", "Name|Priority|Preempt|PreemptMode|MaxJobsPU|MaxTRESPU|GrpTRES\nnormal|high||cluster|||\n", `qos.txt:2: Priority: "high": want a whole number >= 0`},
		{"qos mode", "qos.txt", "Name|Priority|Preempt|PreemptMode|MaxJobsPU|MaxTRESPU|GrpTRES\nnormal|0||suspend|||\n", `qos.txt:2: PreemptMode: "suspend"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := []synthJob{
				{Name: "A", User: "alice", Account: "phys", Nodes: 1, GPN: 1, Limit: 1, Sleep: 5},
				{Name: "B", User: "bob", Account: "chem", Nodes: 1, GPN: 1, Limit: 1, Sleep: 5},
			}
			assoc := good
			if tc.file == "assoc.txt" {
				assoc = tc.text
			}
			dir := synthRecord(t, assoc, jobs)
			if tc.file == "qos.txt" {
				if err := os.WriteFile(filepath.Join(dir, "qos.txt"), []byte(tc.text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadRecord(dir)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a *ParseError containing %q", err, tc.want)
			}
		})
	}
	t.Run("sbatch account", func(t *testing.T) {
		// The sbatch line's --account must be the account sacct shows.
		dir := synthRecord(t, "", []synthJob{{Name: "A", User: "alice", Account: "phys", Nodes: 1, GPN: 1, Limit: 1, Sleep: 5}})
		rewrite(t, filepath.Join(dir, "submissions.tsv"), "--account=phys", "--account=chem")
		if _, err := LoadRecord(dir); err == nil || !strings.Contains(err.Error(), `sacct.txt:2: Account: "phys", but the sbatch line says --account=chem`) {
			t.Errorf("err = %v", err)
		}
	})
}

// TestReadQOS passes the recorded QOS to the policy: sacctmgr's
// "cluster" preempt mode is the cluster's (none given), empty limits are
// none.
func TestReadQOS(t *testing.T) {
	dir := synthRecord(t, twoAccounts(1, 1), []synthJob{{Name: "A", User: "alice", Account: "phys", Nodes: 1, GPN: 1, Limit: 1, Sleep: 5}})
	qos := "Name|Priority|Preempt|PreemptMode|MaxJobsPU|MaxTRESPU|GrpTRES\nnormal|0||cluster|||\nhigh|10|normal|requeue|2|gres/gpu=8|\n"
	if err := os.WriteFile(filepath.Join(dir, "qos.txt"), []byte(qos), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := `qos: [{name: "normal", priority: 0}, {name: "high", priority: 10, MaxJobsPerUser: 2, MaxTRESPerUser: "gres/gpu=8", Preempt: "normal", PreemptMode: "REQUEUE"}]`
	if args := r.assocArgs(); len(args) != 3 || args[2] != want {
		t.Errorf("args = %q, want the third %q", args, want)
	}
	if _, err := r.Simulate(Model{}); err != nil {
		t.Fatal(err)
	}
}

// TestFailedJobs: a `sleep S; exit 1` job ends FAILED in the replay, as
// in Slurm: its afterok child never runs, its afternotok child does, and
// afterany does either way.
//
// F runs 0–10 s on one node; each child asks for one GPU and becomes
// eligible when F ends at 10 s, starting at the next cycle, 11 s.
func TestFailedJobs(t *testing.T) {
	jobs := []synthJob{
		{Name: "F", User: "alice", Account: "phys", At: 0, Nodes: 1, GPN: 8, Limit: 1, Sleep: 10, Fails: true},
		{Name: "OK", User: "alice", Account: "phys", At: 1, Nodes: 1, GPN: 1, Limit: 1, Sleep: 5, Opts: "--dependency=afterok:1"},
		{Name: "NOTOK", User: "alice", Account: "phys", At: 1, Nodes: 1, GPN: 1, Limit: 1, Sleep: 5, Opts: "--dependency=afternotok:1"},
		{Name: "ANY", User: "alice", Account: "phys", At: 1, Nodes: 1, GPN: 1, Limit: 1, Sleep: 5, Opts: "--dependency=afterany:1"},
	}
	want := map[string]int64{"F": 0, "OK": -1, "NOTOK": 11, "ANY": 11}
	if d := cmp.Diff(want, simStarts(t, synthRecord(t, "", jobs))); d != "" {
		t.Errorf("starts (-want +got):\n%s", d)
	}
	// The same without the exit status: COMPLETED.
	jobs[0].Fails = false
	want = map[string]int64{"F": 0, "OK": 11, "NOTOK": -1, "ANY": 11}
	if d := cmp.Diff(want, simStarts(t, synthRecord(t, "", jobs))); d != "" {
		t.Errorf("completed parent: starts (-want +got):\n%s", d)
	}
}

// TestSubSecondMainPass: with sched_min_interval under a second (or
// unset: Slurm's default is 2 µs, job_scheduler.c) the main scheduler
// runs after every end, so the replay's main pass is every second, phase
// 0. Over a second its phase comes from the controller log, which the
// synthetic record lacks: no main pass then.
func TestSubSecondMainPass(t *testing.T) {
	const every1 = "main_pass_every: 1, main_pass_phase: 0"
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{",sched_min_interval=2000000", "", true},
		{"sched_min_interval=2000000", "sched_min_interval=500000", true},
		{"sched_min_interval=2000000", "sched_min_interval=4000000", false},
	} {
		dir := synthRecord(t, "", []synthJob{{Name: "A", User: "alice", Account: "phys", Nodes: 1, GPN: 1, Limit: 1, Sleep: 5}})
		rewrite(t, filepath.Join(dir, "config", "slurm.conf"), tc.from, tc.to)
		r, err := LoadRecord(dir)
		if err != nil {
			t.Fatal(err)
		}
		text, err := r.ScenarioYAML(Model{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(text), "main_pass_every"); got != tc.want || tc.want && !strings.Contains(string(text), every1) {
			t.Errorf("SchedulerParameters ...%s: want main_pass_every 1s %v, scenario:\n%s", tc.to, tc.want, text)
		}
	}
}

// TestMainAfterEndsFromLog: whether the main scheduler starts a job in
// the second a job ends comes from the log's main-scheduler starts after
// ends, not from the phase of its first run.
//
// A (4 nodes) runs 0-5 s: submitted at 0, started by the cycle of 0; B
// (4 nodes, at 1) waits for it. slurmctld started at T0 − 1 + 0.35 and
// its main scheduler first ran at T0 − 1 + 0.5, 0.15 s after: by that
// phase it follows the backfill cycle, on the odd seconds of a 2 s grid
// (sched_min_interval=2000000), so A's end at 5 starts B at 5. The log
// says otherwise: its A started at 0.9, registered its end at 6.2 (0.9 +
// 5 + a 0.3 s latency) and the main scheduler started B at 6.9, in the
// second after the replay's end (0 + 5): B starts at 6, at the next
// cycle. With the end registered at 5.3 and B's start at 5.8, the same
// second: 5.
func TestMainAfterEndsFromLog(t *testing.T) {
	stamp := func(dt float64) string {
		ms := int64(math.Round((float64(synthT0) + dt) * 1000))
		return "[" + time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000") + "]"
	}
	jobs := []synthJob{
		{Name: "A", User: "alice", Account: "phys", At: 0, Nodes: 4, GPN: 8, Limit: 1, Sleep: 5},
		{Name: "B", User: "alice", Account: "phys", At: 1, Nodes: 4, GPN: 8, Limit: 1, Sleep: 5},
	}
	for _, tc := range []struct {
		end, alloc float64
		phaseOnly  bool
		want       int64
	}{
		{6.2, 6.9, false, 6},
		{5.3, 5.8, false, 5},
		{6.2, 6.9, true, 5}, // the phase of the first run alone
	} {
		dir := synthRecord(t, "", jobs)
		log := stamp(-0.5) + " SchedulerParameters=default_queue_depth=100,sched_min_interval=2000000\n" +
			stamp(0.9) + " sched/backfill: _start_job: Started JobId=1 in batch on gn[1-4]\n" +
			stamp(tc.end) + " _job_complete: JobId=1 WEXITSTATUS 0\n" +
			stamp(tc.alloc) + " sched: Allocate JobId=2 NodeList=gn[1-4] #CPUs=128 Partition=batch\n"
		if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "logs", "slurmctld.log"), []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := LoadRecord(dir)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Simulate(Model{MainPhaseOnly: tc.phaseOnly})
		if err != nil {
			t.Fatal(err)
		}
		_, got := simWaits(rec, 1, nil, r.Jobs[1].Submit-r.T0)
		if got += r.Jobs[1].Submit - r.T0; got != tc.want {
			t.Errorf("end at %.1f, main start at %.1f, phase only %v: B starts at %d, want %d", tc.end, tc.alloc, tc.phaseOnly, got, tc.want)
		}
	}
}

// writeLog writes a synthetic record's logs/slurmctld.log: each line's
// time is given in seconds after time 0.
func writeLog(t *testing.T, dir string, lines map[float64]string) {
	t.Helper()
	var at []float64
	for k := range lines {
		at = append(at, k)
	}
	slices.Sort(at)
	var b strings.Builder
	for _, dt := range at {
		ms := int64(math.Round((float64(synthT0) + dt) * 1000))
		fmt.Fprintf(&b, "[%s] %s\n", time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000"), lines[dt])
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "logs", "slurmctld.log"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestArrival: a job slurmctld registered after the second's backfill
// cycle is first seen by the next second's.
//
// The synthetic record's slurmctld started at T0 − 1 + 0.35, so its
// cycles (bf_interval=1) run at .35 in every second, and no main
// scheduler pass is known (no "SchedulerParameters=" line). A (1 GPU,
// sbatch at 1) registered at 1.20 is seen by the cycle of 1.35: it starts
// at 1, wait 0. Registered at 1.50 it is first seen by the cycle of 2.35:
// start 2, wait 1 (from its sbatch second). With a backfill start logged
// at 0.60 the cycles' phase is .60 by then (they drift as they take
// time): registered at 1.50 it is seen at 1.60, start 1. SubmitAtSecond
// submits it at 1 whatever the log says.
func TestArrival(t *testing.T) {
	for _, tc := range []struct {
		log            map[float64]string
		submitAtSecond bool
		want           int64
	}{
		{map[float64]string{1.2: "_slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=500"}, false, 0},
		{map[float64]string{1.5: "_slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=500"}, false, 1},
		{map[float64]string{1.5: "_slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=500"}, true, 0},
		{map[float64]string{0.6: "sched/backfill: _start_job: Started JobId=9 in batch on gn4",
			1.5: "_slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=500"}, false, 0},
	} {
		dir := synthRecord(t, "", []synthJob{{Name: "A", User: "alice", Account: "phys", At: 1, Nodes: 1, GPN: 1, Limit: 1, Sleep: 5}})
		writeLog(t, dir, tc.log)
		r, err := LoadRecord(dir)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Simulate(Model{SubmitAtSecond: tc.submitAtSecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, got := simWaits(rec, 0, nil, r.Jobs[0].Submit-r.T0); got != tc.want {
			t.Errorf("log %v, SubmitAtSecond %v: A waits %d s, want %d", tc.log, tc.submitAtSecond, got, tc.want)
		}
	}
}

// TestEndCarry: a job whose recorded end fell in the second after its
// start plus its sleep ends early in that second, not after the passes
// of the second before.
//
// A (4 nodes, sleep 5) runs 0-5 s in the replay; B (4 nodes, sbatch at
// 1) waits for it. The log puts the main scheduler's first run at
// T0 − 0.5, 0.15 s after slurmctld's start (.35), so it follows the ends
// of the odd seconds (main_pass_every 2, phase 1): A's end at 5 starts B
// at 5. sacct recorded A's run as 0-6 (started late in its second, its
// end registered early in the next): A ends at 6 before that second's
// passes, and the cycle of 6 starts B at 6. NoEndCarry: 5.
func TestEndCarry(t *testing.T) {
	for _, tc := range []struct {
		noCarry bool
		want    int64
	}{{false, 6}, {true, 5}} {
		dir := synthRecord(t, "", []synthJob{
			{Name: "A", User: "alice", Account: "phys", At: 0, Nodes: 4, GPN: 8, Limit: 1, Sleep: 5},
			{Name: "B", User: "alice", Account: "phys", At: 1, Nodes: 4, GPN: 8, Limit: 1, Sleep: 5},
		})
		rewrite(t, filepath.Join(dir, "sacct.txt"), "1|A|alice|phys|batch|PENDING|2026-11-30T09:15:00|Unknown|Unknown|",
			"1|A|alice|phys|batch|COMPLETED|2026-11-30T09:14:58|2026-11-30T09:14:58|2026-11-30T09:15:04|")
		writeLog(t, dir, map[float64]string{-0.5: "SchedulerParameters=default_queue_depth=100,sched_min_interval=2000000"})
		r, err := LoadRecord(dir)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Simulate(Model{NoEndCarry: tc.noCarry})
		if err != nil {
			t.Fatal(err)
		}
		_, got := simWaits(rec, 1, nil, r.Jobs[1].Submit-r.T0)
		if got += r.Jobs[1].Submit - r.T0; got != tc.want {
			t.Errorf("NoEndCarry %v: B starts at %d, want %d", tc.noCarry, got, tc.want)
		}
	}
}

// TestPreemptKills: how long a kill by preemption took, from the slurmd
// logs. Job 1's batch script ignored SIGTERM until KillWait's SIGKILL:
// cancelled at 10.100, done at 13.102: 3 s. Job 2's ended on SIGTERM:
// 20.300 to 20.306, 0 s (its second kill, at 40, is not read). Job 9 is
// array task 7_1 (the controller's "JobId=7_1(9)"): 30.000 to 31.050,
// 1 s. Job 3 was never cancelled by preemption: absent.
func TestPreemptKills(t *testing.T) {
	dir := synthRecord(t, "", []synthJob{{Name: "A", User: "alice", Account: "phys", Nodes: 1, GPN: 1, Limit: 1, Sleep: 5}})
	writeLog(t, dir, map[float64]string{29.9: "sched/backfill: _start_job: Started JobId=7_1(9) in batch on gn2"})
	stamp := func(dt float64) string {
		ms := int64(math.Round((float64(synthT0) + dt) * 1000))
		return "[" + time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000") + "]"
	}
	cancel := func(id string, dt float64) string {
		return fmt.Sprintf("%s [%s.batch] error: *** JOB %s ON gn1 CANCELLED AT 2026-11-30T09:15:00 DUE TO PREEMPTION ***\n", stamp(dt), id, id)
	}
	done := func(id string, dt float64) string { return fmt.Sprintf("%s [%s.batch] done with job\n", stamp(dt), id) }
	gn1 := cancel("1", 10.1) + done("1", 13.102) + cancel("2", 20.3) + done("2", 20.306) +
		stamp(25) + " [3.batch] done with job\n" + cancel("2", 40) + done("2", 43)
	gn2 := cancel("9", 30) + done("9", 31.05)
	for name, text := range map[string]string{"slurmd.gn1.log": gn1, "slurmd.gn2.log": gn2} {
		if err := os.WriteFile(filepath.Join(dir, "logs", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := LoadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]int64{"1": 3, "2": 0, "7_1": 1}, r.KillWait); d != "" {
		t.Errorf("kill waits (-want +got):\n%s", d)
	}
	// The replay's job 1 (A) gets it, one more than its seconds.
	if got := r.Trace(Model{}).Jobs[0].KillWait; got != 4 {
		t.Errorf("A's KillWait = %d, want 4 (3 s)", got)
	}
	if got := r.Trace(Model{NoPreemptKills: true}).Jobs[0].KillWait; got != 0 {
		t.Errorf("NoPreemptKills: A's KillWait = %d, want 0 (the run's)", got)
	}
}

// TestResumeAt: resumed nodes come back when slurmd answers, and a
// second later when that is after the second's backfill cycle.
//
// gn[1-2] go down at 20 and are resumed at 60.02. The log's last
// backfill start before it, at 59.60, puts the cycles at .60. gn1
// answering at 60.30 and gn2 at 60.50, both before the cycle of 60.60:
// back at 60. gn2 answering at 60.70, after it: back at 61, the next
// cycle's second. ResumeAtCommand: 60, whatever the log says.
func TestResumeAt(t *testing.T) {
	for _, tc := range []struct {
		gn2       float64
		atCommand bool
		want      string
	}{
		{60.5, false, "at: 60,"},
		{60.7, false, "at: 61,"},
		{60.7, true, "at: 60,"},
	} {
		dir := synthRecord(t, "", []synthJob{{Name: "A", User: "alice", Account: "phys", Nodes: 1, GPN: 1, Limit: 1, Sleep: 5}})
		ev := "at\tepoch\trc\tcommand\toutput\n" +
			fmt.Sprintf("20\t%d.010\t0\tscontrol update nodename=gn[1-2] state=down reason=conformance\t \n", synthT0+20) +
			fmt.Sprintf("60\t%d.020\t0\tscontrol update nodename=gn[1-2] state=resume\t \n", synthT0+60)
		if err := os.WriteFile(filepath.Join(dir, "events.tsv"), []byte(ev), 0o644); err != nil {
			t.Fatal(err)
		}
		writeLog(t, dir, map[float64]string{
			59.6:   "sched/backfill: _start_job: Started JobId=9 in batch on gn4",
			60.3:   "Node gn1 now responding",
			tc.gn2: "Node gn2 now responding",
		})
		r, err := LoadRecord(dir)
		if err != nil {
			t.Fatal(err)
		}
		text, err := r.ScenarioYAML(Model{ResumeAtCommand: tc.atCommand})
		if err != nil {
			t.Fatal(err)
		}
		want := "  - {" + tc.want + ` nodes: "gn[1-2]", state: up} # events.tsv:3`
		if !strings.Contains(string(text), want) {
			t.Errorf("gn2 answering at %.1f, ResumeAtCommand %v: scenario lacks %q:\n%s", tc.gn2, tc.atCommand, want, text)
		}
	}
}
