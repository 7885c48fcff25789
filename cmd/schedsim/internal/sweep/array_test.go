package sweep

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nasty values: spaces, both quotes, command substitutions, a newline, a
// glob and a variable; none may run anything when the script runs.
var nasty = []string{
	`plain`,
	`with space`,
	`it's`,
	`"double" and 'single'`,
	`$(touch pwned-subst)`,
	"`touch pwned-backtick`",
	"two\nlines; touch pwned-newline",
	`$HOME * ? [a] \ ; & | < > ! ~ #`,
	`'; touch pwned-quote; echo '`,
}

func TestShellQuote(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash:", err)
	}
	for _, s := range nasty {
		q, err := ShellQuote(s)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("bash", "-c", "printf '%s' "+q).Output()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if string(out) != s {
			t.Errorf("quoted %q came back as %q", s, out)
		}
	}
	if _, err := ShellQuote("a\x00b"); err == nil {
		t.Error("a NUL byte was quoted")
	}
}

// TestScriptQuoting writes the sbatch script with a hostile sweep name,
// binary path and directory, checks it with bash -n and the #SBATCH
// lines, then runs it with a stand-in binary that records its arguments:
// every value must arrive unchanged and nothing may have been executed.
func TestScriptQuoting(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash:", err)
	}
	work := t.TempDir()
	for _, name := range nasty {
		t.Run("", func(t *testing.T) {
			root := filepath.Join(work, safeName(name))
			dir := filepath.Join(root, "array "+strings.ReplaceAll(name, "/", "_"))
			if strings.ContainsRune(name, '\n') {
				dir = filepath.Join(root, "array dir")
			}
			binDir := filepath.Join(root, "bin $(touch pwned-bin) 'x'")
			if err := os.MkdirAll(binDir, 0o755); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(binDir, "schedsim")
			stub := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$ARGS_OUT\"\n"
			if err := os.WriteFile(bin, []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
			m := &Manifest{SchemaVersion: ManifestVersion, Sweep: "/x/" + name + ".yaml", Name: name, Binary: bin,
				PerTask: 1, Tasks: 3, MaxRunning: 2, Estimate: Estimate{TimeS: 3661, MemMB: 1536},
				Points: make([]ManifestPoint, 3)}
			var b bytes.Buffer
			if err := Script(&b, m, dir, []int{0, 1, 2}); err != nil {
				t.Fatal(err)
			}
			script := b.String()
			if out, err := exec.Command("bash", "-n", "-c", script).CombinedOutput(); err != nil {
				t.Fatalf("bash -n: %v\n%s\n%s", err, out, script)
			}
			for _, l := range strings.Split(script, "\n") {
				if v, ok := strings.CutPrefix(l, "#SBATCH "); ok {
					if strings.ContainsAny(v, " '\"$`;&|\\") {
						t.Errorf("unsafe #SBATCH line %q", l)
					}
				}
			}
			for _, want := range []string{"#SBATCH --array=0-2%2", "#SBATCH --time=0-01:01:01", "#SBATCH --mem=1536M"} {
				if !strings.Contains(script, want+"\n") {
					t.Errorf("script lacks %q:\n%s", want, script)
				}
			}
			path := filepath.Join(root, "sweep.sbatch")
			if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			argsOut := filepath.Join(root, "args")
			cmd := exec.Command("bash", path)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=1", "ARGS_OUT="+argsOut)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("running the script: %v\n%s", err, stderr.String())
			}
			got, err := os.ReadFile(argsOut)
			if err != nil {
				t.Fatal(err)
			}
			args := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
			if d := cmp.Diff([]string{"sweep", "run-shard", dir}, args); d != "" {
				t.Errorf("arguments (-want +got):\n%s", d)
			}
			if want := "schedsim sweep " + name + ": task 1 of 3\n"; stderr.String() != want {
				t.Errorf("the script said %q, want %q", stderr.String(), want)
			}
			for _, d := range []string{root, work, "."} {
				matches, _ := filepath.Glob(filepath.Join(d, "pwned*"))
				if len(matches) > 0 {
					t.Fatalf("a value ran a command: %v", matches)
				}
			}
		})
	}
}

func TestArraySpec(t *testing.T) {
	for _, tc := range []struct {
		tasks []int
		k     int
		want  string
	}{
		{[]int{0, 1, 2, 3}, 2, "0-3%2"},
		{[]int{0}, 8, "0%1"},
		{[]int{2, 4, 5, 6, 9}, 64, "2,4-6,9%5"},
	} {
		if got := ArraySpec(tc.tasks, tc.k); got != tc.want {
			t.Errorf("ArraySpec(%v, %d) = %q, want %q", tc.tasks, tc.k, got, tc.want)
		}
	}
}

// TestEstimateTask checks the stated formula on round figures.
func TestEstimateTask(t *testing.T) {
	for _, tc := range []struct {
		wall         float64
		peak         int64
		per          int
		timeS, memMB int64
	}{
		{1, 50 << 20, 1, 300, 1024},      // floors: 5 min, 1 GiB
		{100, 1 << 30, 4, 1260, 1792},    // 60 + 3×100×4 = 1260 s; 1.5 GiB + 256 MiB
		{40.2, 600 << 20, 2, 360, 1280},  // 60 + 241.2 → 302 s → 6 min; 900 + 256 → 1280 MiB
		{1000, 3 << 30, 10, 30060, 4864}, // 60 + 30,000 s; 1.5 × 3,072 + 256 MiB
		// Past Slurm's largest finite limit (0xfffffffd minutes) the
		// request is that limit, not an overflowed int64.
		{1e300, 0, 9223372036854775807, 0xfffffffd * 60, 1024},
		{math.NaN(), 0, 1, 0xfffffffd * 60, 1024},
	} {
		ts, mb := EstimateTask(tc.wall, tc.peak, tc.per)
		if ts != tc.timeS || mb != tc.memMB {
			t.Errorf("EstimateTask(%v, %d, %d) = %d s, %d MiB; want %d s, %d MiB", tc.wall, tc.peak, tc.per, ts, mb, tc.timeS, tc.memMB)
		}
	}
}

func TestTaskCount(t *testing.T) {
	const maxInt = int(^uint(0) >> 1)
	for _, tc := range []struct {
		points, per, want int
		err               bool
	}{
		{8, 3, 3, false},      // 3 + 3 + 2
		{8, 1, 8, false},      // one a task
		{8, 8, 1, false},      // all in one
		{8, maxInt, 1, false}, // (8 + maxInt − 1) / maxInt overflowed to 0 tasks
		{maxInt, maxInt, 1, false},
		{maxInt, 2, maxInt/2 + 1, false},
		{0, 5, 0, false},
		{8, 0, 0, true},
		{8, -1, 0, true},
	} {
		got, err := TaskCount(tc.points, tc.per)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("TaskCount(%d, %d) = %d, %v; want %d, error %v", tc.points, tc.per, got, err, tc.want, tc.err)
		}
	}
}

// TestNewManifestPerTask: a per-task beyond the number of scenarios is one
// task of them all (the script's --array=0%1, a manifest of 1 task), not
// the 0 tasks the overflowing division gave.
func TestNewManifestPerTask(t *testing.T) {
	sw := &Sweep{Path: "s.yaml", Points: make([]Point, 8)}
	for i := range sw.Points {
		sw.Points[i].Index = i
	}
	for _, tc := range []struct {
		per, maxRunning, tasks, perTask int
		array                           string
	}{
		{3, 0, 3, 3, "0-2%3"},
		{3, 99, 3, 3, "0-2%3"},
		{9223372036854775807, 0, 1, 8, "0%1"},
		{1, 2, 8, 1, "0-7%2"},
	} {
		m, err := NewManifest(sw, "/bin/schedsim", tc.per, tc.maxRunning, Estimate{TimeS: 300, MemMB: 1024})
		if err != nil {
			t.Fatal(err)
		}
		if m.Tasks != tc.tasks || m.PerTask != tc.perTask {
			t.Errorf("per-task %d: %d tasks of %d, want %d of %d", tc.per, m.Tasks, m.PerTask, tc.tasks, tc.perTask)
		}
		var b bytes.Buffer
		all := make([]int, m.Tasks)
		for i := range all {
			all[i] = i
		}
		if err := Script(&b, m, "/d", all); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "#SBATCH --array="+tc.array+"\n") {
			t.Errorf("per-task %d: script lacks --array=%s:\n%s", tc.per, tc.array, b.String())
		}
	}
	for _, per := range []int{0, -1} {
		if _, err := NewManifest(sw, "/bin/schedsim", per, 0, Estimate{}); err == nil {
			t.Errorf("per-task %d accepted", per)
		}
	}
	if _, err := NewManifest(&Sweep{Path: "s.yaml"}, "/bin/schedsim", 1, 0, Estimate{}); err == nil {
		t.Error("a sweep of no scenarios was split")
	}
}

// TestMergeRefusesBadManifest: merge refuses a manifest whose task count
// does not match its scenarios (the 0-task manifest the overflow wrote
// "merged" successfully into an empty sweep.parquet), and shards of tasks
// the manifest does not have.
func TestMergeRefusesBadManifest(t *testing.T) {
	points := make([]ManifestPoint, 8)
	for i := range points {
		points[i] = ManifestPoint{Index: i, Name: "p", Dir: "p", Hash: "sha256:x"}
	}
	write := func(t *testing.T, m Manifest) string {
		t.Helper()
		dir := t.TempDir()
		m.SchemaVersion = ManifestVersion
		m.Points = points
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, tc := range []struct {
		name string
		m    Manifest
		want string
	}{
		{"overflowed per-task", Manifest{PerTask: 9223372036854775807, Tasks: 0, MaxRunning: 1}, "tasks 0, per_task 9223372036854775807 and 8 points do not add up"},
		{"tasks short", Manifest{PerTask: 3, Tasks: 2, MaxRunning: 1}, "tasks 2, per_task 3"},
		{"tasks over", Manifest{PerTask: 3, Tasks: 4, MaxRunning: 1}, "tasks 4, per_task 3"},
		{"per-task 0", Manifest{PerTask: 0, Tasks: 8, MaxRunning: 1}, "per_task 0"},
		{"max-running 0", Manifest{PerTask: 3, Tasks: 3, MaxRunning: 0}, "max_running 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := write(t, tc.m)
			_, err := Merge(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Merge error = %v, want one containing %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, ParquetFile)); !os.IsNotExist(err) {
				t.Errorf("%s written", ParquetFile)
			}
		})
	}
	// A shard beyond the manifest's tasks.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ShardsDir), 0o755)
	os.WriteFile(filepath.Join(dir, ShardsDir, ShardFile(5)), nil, 0o644)
	if err := checkShardNames(dir, 3); err == nil || !strings.Contains(err.Error(), "task-00005.parquet is not one of the manifest's 3 tasks") {
		t.Errorf("checkShardNames error = %v", err)
	}
	if err := checkShardNames(dir, 6); err != nil {
		t.Errorf("checkShardNames with 6 tasks: %v", err)
	}
}
