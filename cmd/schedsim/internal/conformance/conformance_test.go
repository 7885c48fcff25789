package conformance

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/workload"
)

func TestFigure(t *testing.T) {
	// Deltas +0, -2, +3, +6 and one start only the reference made.
	st := []Start{
		{Job: "1", Want: 10, Got: 10},
		{Job: "2", Want: 20, Got: 18},
		{Job: "3", Want: 30, Got: 33},
		{Job: "4", Want: 40, Got: 46},
		{Job: "5", Want: 50, Got: -1},
	}
	f := Figure(st)
	// Within ±2 s: 1, 2; within ±5 s: 1, 2, 3; of 5. Means over the four
	// both made: real (10+20+30+40)/4 = 25, got (10+18+33+46)/4 = 26.75.
	// KS: a = {10,20,30,40,50}, b = {10,18,33,46}; the largest gap is at
	// 46 ≤ x < 50: F_a = 4/5, F_b = 1: 0.2; at 18: F_a 1/5, F_b 2/4 = 0.3.
	want := Figures{N: 5, Within2: 2, Within5: 3, MeanWant: 25, MeanGot: 26.75, MeanErr: 1.75, KS: 0.3}
	if d := cmp.Diff(want, f, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); d != "" {
		t.Errorf("figures (-want +got):\n%s", d)
	}
	if got := Detail(st, 2); got != "3():+3s 4():+6s 5(): started on one side only (50 vs -1)" {
		t.Errorf("detail = %q", got)
	}
}

func TestSplice(t *testing.T) {
	doc := []byte("# T\n\n" + BeginMarker + "\nold\n" + EndMarker + "\ntail\n")
	out, err := Splice(doc, "| a |\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# T\n\n" + BeginMarker + "\n| a |\n" + EndMarker + "\ntail\n"; string(out) != want {
		t.Errorf("spliced:\n%s\nwant:\n%s", out, want)
	}
	if got, _ := Between(out); got != "| a |\n" {
		t.Errorf("between = %q", got)
	}
	if _, err := Splice([]byte("no markers"), "x"); !errors.Is(err, ErrNoMarkers) {
		t.Errorf("no markers: err = %v", err)
	}
	// UpdateFile rewrites in place and leaves no temporary file.
	dir := t.TempDir()
	p := filepath.Join(dir, "C.md")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := UpdateFile(p, "| b |\n", ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), "\n| b |\n") {
		t.Errorf("updated file:\n%s", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d files after the update, want 1", len(ents))
	}
}

// fixture copies a committed record into a temporary directory laid out
// as records/SCENARIO/run1, so a test can change it.
func fixture(t *testing.T, scenario string) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "..", "conformance", "records", scenario, "run1")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("record %s not committed: %v", src, err)
	}
	dst := filepath.Join(t.TempDir(), scenario, "run1")
	for _, f := range []string{"sacct.txt", "submissions.tsv", "run-info.txt", "events.tsv", "config/slurm.conf", "config/gres.conf", "logs/slurmctld.log"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func rewrite(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadRecord reads timeout-deps-array/run1 and checks what the sbatch
// lines and slurmctld's log say.
func TestLoadRecord(t *testing.T) {
	dir := fixture(t, "timeout-deps-array")
	r, err := LoadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	// t0 08:52:24; "Running as primary controller" at 08:52:23.542: the
	// sweep falls at 23 + 30k, i.e. -1 ≡ 29 on the replay clock.
	if r.T0 != 1796028744 || math.Abs(r.CtldPrimary-1796028743.542) > 1e-3 || r.sweepPhase() != 29 {
		t.Errorf("T0 %d, CtldPrimary %.3f, sweep phase %d; want 1796028744, 1796028743.542, 29", r.T0, r.CtldPrimary, r.sweepPhase())
	}
	byID := map[string]Job{}
	for _, j := range r.Jobs {
		byID[j.ID] = j
	}
	c := byID["4"]
	if c.Name != "C" || c.Work != 10 || c.Limit != 60 || c.GPUsPerNode != 8 || c.CPUs != 32 || c.MemMB != 256000 ||
		!cmp.Equal(c.Deps, []workload.Dependency{{Type: workload.DepAfterAny, JobID: "1"}}) {
		t.Errorf("job 4 = %+v", c)
	}
	e := byID["5_3"]
	if e.ArrayJob != "5" || e.ArrayTask != 3 || e.Throttle != 2 || e.CPUs != 8 || len(e.Runs) != 1 {
		t.Errorf("job 5_3 = %+v", e)
	}
	if got := r.Jobs[len(r.Jobs)-1].ID; got != "5_3" {
		t.Errorf("last job %s, want 5_3 (by submit, then id)", got)
	}
	// The replay asks for what sbatch asked (ReqTRES cpu=1, mem=8000M),
	// for Slurm's job size factor, and bills GPUs × DefCpuPerGPU; with
	// AllocCPUs, what Slurm allocated.
	for _, tc := range []struct {
		m         Model
		cpus, mem int64
	}{{Model{}, 1, 8000}, {Model{AllocCPUs: true}, 32, 256000}} {
		for _, j := range r.Trace(tc.m).Jobs {
			if j.ID == "4" && (int64(j.Request.CPUs) != tc.cpus || j.Request.MemMB != tc.mem) {
				t.Errorf("%+v: job 4 asks for %d CPUs, %d MB; want %d, %d", tc.m, j.Request.CPUs, j.Request.MemMB, tc.cpus, tc.mem)
			}
		}
	}
	if text, _ := r.ScenarioYAML(Model{}); !strings.Contains(string(text), `TRESBillingWeights: "GRES/gpu=4"`) {
		t.Errorf("scenario bills no GPUs:\n%s", text)
	}
}

// TestBadRecords: a bad record is an error naming the file, line and
// field.
func TestBadRecords(t *testing.T) {
	for _, tc := range []struct {
		name, file, old, new, want string
	}{
		{"sacct start", "sacct.txt", "2026-11-30T08:53:58|", "2026-11-30 08:53:58|", "sacct.txt:5: Start: \"2026-11-30 08:53:58\""},
		{"sacct fields", "sacct.txt", "|None\n2|", "|None|extra\n2|", "sacct.txt:2: 23 fields, want 22"},
		{"unknown job", "sacct.txt", "\n4|4|C|", "\n9|9|C|", "sacct.txt:5: JobID: 9: no sbatch line for job 9"},
		{"sleep", "submissions.tsv", "--wrap 'sleep 20'", "--wrap 'hostname'", "submissions.tsv:3: command: --wrap \"hostname\": want 'sleep S'"},
		{"flag", "submissions.tsv", "--nodes=1 --gpus-per-node=4 --time=1", "--nodes=1 --gpus-per-node=4 --qos=x --time=1", "submissions.tsv:3: command: sbatch option --qos=x is not modeled"},
		{"dependency", "submissions.tsv", "--dependency=afterok:2", "--dependency=afterwards:2", "submissions.tsv:4: command: --dependency=afterwards:2: \"afterwards\": unknown dependency type"},
		{"epoch", "submissions.tsv", "1796028744.021122976", "soon", "submissions.tsv:3: submit_epoch: \"soon\""},
		{"t0", "run-info.txt", "t0_epoch: 1796028744", "t0_epoch: x", "run-info.txt:6: t0_epoch: \"x\": want Unix seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fixture(t, "timeout-deps-array")
			rewrite(t, filepath.Join(dir, tc.file), tc.old, tc.new)
			_, err := LoadRecord(dir)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a *ParseError containing %q", err, tc.want)
			}
		})
	}
	t.Run("events", func(t *testing.T) {
		dir := fixture(t, "timeout-deps-array")
		ev := "at\tepoch\trc\tcommand\toutput\n20\t1796028764.0\t0\tscontrol update nodename=gn1 state=sleepy\t \n"
		if err := os.WriteFile(filepath.Join(dir, "events.tsv"), []byte(ev), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadRecord(dir)
		if err == nil || !strings.Contains(err.Error(), "events.tsv:2: command: state=sleepy") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestEvents reads node events and a reservation from events.tsv and
// puts them on the replay clock.
func TestEvents(t *testing.T) {
	dir := fixture(t, "timeout-deps-array")
	ev := "at\tepoch\trc\tcommand\toutput\n" +
		"0\t1796028744.010\t0\tscontrol create reservation reservationname=maint starttime=2026-11-30T08:54:24 duration=1 nodes=gn3,gn4 users=root flags=maint,ignore_jobs && scontrol show reservation -o\tReservation created: maint ReservationName=maint StartTime=2026-11-30T08:54:24 EndTime=2026-11-30T08:55:24 Duration=00:01:00 Nodes=gn[3-4] NodeCnt=2 \n" +
		"20\t1796028764.017\t0\tscontrol update nodename=gn[1-2] state=down reason=conformance\t \n" +
		"60\t1796028804.018\t0\tscontrol update nodename=gn[1-2] state=resume\t \n"
	if err := os.WriteFile(filepath.Join(dir, "events.tsv"), []byte(ev), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	text, err := r.ScenarioYAML(Model{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`  - {at: 20, nodes: "gn[1-2]", state: down} # events.tsv:3`,
		`  - {at: 60, nodes: "gn[1-2]", state: up} # events.tsv:4`,
		`  - {name: "maint", start: 120, end: 180, nodes: "gn[3-4]"} # events.tsv:2`,
		"  time_limit_sweep_phase: 29s",
		"  kill_wait: 3s",
		// The main scheduler first ran at 08:52:26.807, 0.27 s into the
		// second after the backfill cycle's phase (slurmctld's start,
		// .542): ends at 2 + 2k ≡ 0 (mod 2) are its.
		"main_pass_every: 2, main_pass_phase: 0",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("scenario lacks %q:\n%s", want, text)
		}
	}
	if _, err := r.Simulate(Model{}); err != nil {
		t.Fatal(err)
	}
}

func TestLoadThresholds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.tsv")
	write := func(s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# c\nscenario\tmin_within5\tmax_ks\na\t0.9\t-\nb\t0.5\t0.2\n")
	th, err := LoadThresholds(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]Threshold{"a": {"a", 0.9, 0, 3}, "b": {"b", 0.5, 0.2, 4}}, th); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	write("scenario\tmin_within5\tmax_ks\na\t1.5\t-\n")
	if _, err := LoadThresholds(p); err == nil || !strings.Contains(err.Error(), "t.tsv:2: min_within5: \"1.5\"") {
		t.Errorf("err = %v", err)
	}
}

// TestCompareReal matches the jobs of two real runs by job id, and by
// name and array index where the ids differ, and compares a requeued
// job's first and final runs.
func TestCompareReal(t *testing.T) {
	a := &Record{Jobs: []Job{
		{ID: "1", Name: "A", ArrayTask: -1, Submit: 100, Runs: []Run{{Start: 100}}},
		{ID: "2", Name: "B", ArrayTask: -1, Submit: 100, Runs: []Run{{Start: 110}, {Start: 240}}},
		{ID: "3_0", Name: "X", ArrayTask: 0, Submit: 101, Runs: []Run{{Start: 101}}},
		{ID: "3_1", Name: "X", ArrayTask: 1, Submit: 101, Runs: []Run{{Start: 120}}},
		{ID: "5", Name: "N", ArrayTask: -1, Submit: 102},
	}}
	// Run B: the array got id 4 (an extra submission took 3), B was not
	// requeued, N started.
	b := &Record{Jobs: []Job{
		{ID: "1", Name: "A", ArrayTask: -1, Submit: 200, Runs: []Run{{Start: 201}}},
		{ID: "2", Name: "B", ArrayTask: -1, Submit: 200, Runs: []Run{{Start: 213}}},
		{ID: "4_1", Name: "X", ArrayTask: 1, Submit: 201, Runs: []Run{{Start: 223}}},
		{ID: "4_0", Name: "X", ArrayTask: 0, Submit: 201, Runs: []Run{{Start: 201}}},
		{ID: "5", Name: "N", ArrayTask: -1, Submit: 202, Runs: []Run{{Start: 203}}},
	}}
	want := []Start{
		{Job: "1", Name: "A", Want: 0, Got: 1},
		{Job: "2", Name: "B", Want: 10, Got: 13},
		{Job: "2 (rerun)", Name: "B", Want: 140, Got: 13, Rerun: true},
		{Job: "3_0", Name: "X", Want: 0, Got: 0},
		{Job: "3_1", Name: "X", Want: 19, Got: 22},
		{Job: "5", Name: "N", Want: -1, Got: 1},
	}
	if d := cmp.Diff(want, CompareReal(a, b)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
