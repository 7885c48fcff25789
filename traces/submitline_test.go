package traces

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/workload"
)

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{in: "sbatch -t 60 job.sh", want: []string{"sbatch", "-t", "60", "job.sh"}},
		{in: `sbatch --job-name='my job' --wrap="echo \"hi\" \$X" x`, want: []string{"sbatch", "--job-name=my job", `--wrap=echo "hi" $X`, "x"}},
		{in: `a\ b 'c'"d"e`, want: []string{"a b", "cde"}},
		{in: "sbatch x.sh; rm -rf /", want: []string{"sbatch", "x.sh"}},
		{in: "sbatch x.sh && echo", want: []string{"sbatch", "x.sh"}},
		{in: `"" ''`, want: []string{"", ""}},
		{in: "sbatch 'unclosed", err: true},
		{in: `sbatch "unclosed`, err: true},
	} {
		got, err := shellWords(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q: error %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); !tc.err && diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestParseSubmitLine(t *testing.T) {
	u := workload.Unknown
	for _, tc := range []struct {
		in   string
		want submitLine
		err  string
	}{
		{in: "sbatch --requeue -t 1-02:03 --array=0-99%5 -d afterok:12:13 job.sh --no-requeue",
			// The --no-requeue after the script is the script's.
			want: submitLine{requeue: 1, throttle: 5, timeLimit: 93780, hasTime: true, hasDeps: true,
				deps: []workload.Dependency{{Type: workload.DepAfterOK, JobID: "12"}, {Type: workload.DepAfterOK, JobID: "13"}}}},
		{in: "/usr/bin/sbatch --no-requeue -t90 -a 1-3%2 x", want: submitLine{requeue: -1, throttle: 2, timeLimit: 5400, hasTime: true}},
		// -H takes no value: -t after it is read; --time=0 is no limit.
		{in: "sbatch -Ht 30 --time=0 x", want: submitLine{timeLimit: u, hasTime: true, hold: true}},
		{in: "sbatch --checkpoint=30 --begin=now+1hour x", want: submitLine{timeLimit: u, checkpoint: 1800, begin: "now+1hour"}},
		// srun's -W takes seconds; sbatch's --wait nothing.
		{in: "srun -W 5 -t 10 ./a.out", want: submitLine{timeLimit: 600, hasTime: true}},
		{in: "sbatch --wait -t 10 x", want: submitLine{timeLimit: 600, hasTime: true}},
		// --switches=N@T: T in time_str2secs' formats, minutes when bare.
		{in: "sbatch --switches=1@5 x", want: submitLine{timeLimit: u, switches: 1, switchWait: 300}},
		{in: "sbatch --switches 2@1:30 x", want: submitLine{timeLimit: u, switches: 2, switchWait: 90}},
		{in: "sbatch --switches=1 x", want: submitLine{timeLimit: u, switches: 1}},                            // no @T: max_switch_wait
		{in: "sbatch --switches=1@INFINITE x", want: submitLine{timeLimit: u, switches: 1}},                   // the same
		{in: "sbatch --switches=1@0 x", want: submitLine{timeLimit: u}},                                       // waits not at all
		{in: "sbatch --switches=300@2-0 x", want: submitLine{timeLimit: u, switches: 255, switchWait: 65535}}, // capped
		{in: "sbatch --switches=0 x", err: "positive switch count"},
		{in: "sbatch --switches=1@x x", err: "--switches=1@x: @x"},
		{in: "sbatch -t x", err: "--time=x"},
		{in: "sbatch --array=1-3%z x", err: "throttle"},
		{in: "sbatch --dependency=after x", err: "--dependency"},
		{in: "python submit.py", err: "not sbatch"},
		{in: "sbatch -t", err: "needs a value"},
	} {
		got, err := parseSubmitLine(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(submitLine{})); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestParseSlurmTime: sbatch --time's formats (time_str2secs).
func TestParseSlurmTime(t *testing.T) {
	for in, want := range map[string]workload.Time{
		"60": 3600, "5:30": 330, "1:02:03": 3723, "2-0": 172800, "2-1:30": 178200, "2-1:30:15": 178215,
		"UNLIMITED": workload.Unknown, "infinite": workload.Unknown, "-1": workload.Unknown, "0": workload.Unknown,
	} {
		if got, err := parseSlurmTime(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a", "1:2:3:4", "1-", "-5", "1--2"} {
		if _, err := parseSlurmTime(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// TestSacctSubmitLine: what a SubmitLine column gives the jobs, counted;
// a SubmitLine that cannot be read is noted, never fatal.
func TestSacctSubmitLine(t *testing.T) {
	in := `JobID|Submit|Timelimit|Dependency|State|SubmitLine
5_1|2024-01-01T00:00:00||(null)|COMPLETED|sbatch --requeue --array=1-4%2 -t 30 -d afterany:3 --begin=2024-01-01T06:00:00 run.sh
5_2|2024-01-01T00:00:00|00:10:00|afterok:4|COMPLETED|sbatch --requeue --array=1-4%2 -t 30 -d afterany:3 --begin=2024-01-01T06:00:00 run.sh
6|2024-01-01T00:00:01||(null)|COMPLETED|sbatch --checkpoint=1:00:00 'unbalanced
7|2024-01-01T00:00:02||(null)|COMPLETED|srun --no-requeue --begin=noon ./a.out
`
	res, err := Read(strings.NewReader(in), "sl.sacct", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := byID(res.Trace.Jobs)
	a, b := got["5_1"], got["5_2"]
	if !a.Requeue || a.ArrayThrottle != 2 || a.TimeLimit != 1800 || len(a.Deps) != 1 || a.Deps[0].JobID != "3" {
		t.Errorf("5_1: %+v", a)
	}
	// 5_2's own Timelimit and Dependency columns win.
	if !b.Requeue || b.TimeLimit != 600 || len(b.Deps) != 1 || b.Deps[0].JobID != "4" {
		t.Errorf("5_2: %+v", b)
	}
	if v, _ := extraValue(&a, "Begin"); v != "2024-01-01T06:00:00" {
		t.Errorf("5_1 Begin %q", v)
	}
	if j := got["6"]; j.CheckpointInterval != 0 || j.Requeue {
		t.Errorf("6 (bad SubmitLine): %+v", j)
	}
	if v, _ := extraValue(jobPtr(got["7"]), "Begin"); v != "noon" || got["7"].Requeue {
		t.Errorf("7: Begin %q, requeue %v", v, got["7"].Requeue)
	}
	notes := strings.Join(res.Trace.Notes, "\n")
	for _, w := range []string{"read the SubmitLine of 3 jobs: 2 --requeue, 1 --no-requeue, 2 array throttles, 1 dependencies, 1 time limits, 3 --begin times",
		"1 SubmitLines could not be read and were ignored (first: sl.sacct:4: bad SubmitLine: unclosed single quote)"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
}

func jobPtr(j workload.Job) *workload.Job { return &j }

// TestSacctSubmitLineSwitches: --switches=N@T reaches the request.
func TestSacctSubmitLineSwitches(t *testing.T) {
	in := `JobID|Submit|NNodes|State|SubmitLine
8|2024-01-01T00:00:00|2|COMPLETED|sbatch -N 2 --switches=1@5 run.sh
9|2024-01-01T00:00:00|2|COMPLETED|sbatch -N 2 run.sh
`
	res, err := Read(strings.NewReader(in), "sw.sacct", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := byID(res.Trace.Jobs)
	if r := got["8"].Request; r.Switches != 1 || r.SwitchWait != 300 {
		t.Errorf("8: switches %d, wait %d; want 1, 300", r.Switches, r.SwitchWait)
	}
	if r := got["9"].Request; r.Switches != 0 || r.SwitchWait != 0 {
		t.Errorf("9: switches %d, wait %d; want none", r.Switches, r.SwitchWait)
	}
}
