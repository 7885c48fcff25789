package schedsim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/traces"
	"github.com/schedsim/schedsim/workload"
)

// heldEnv makes TestHeldBytesPerJobRun, re-executed, measure one run of
// the number of jobs it holds and print the figures.
const heldEnv = "SCHEDSIM_HELD_JOBS"

// heldPackEnv makes the child hold the trace packed (SetPackAbove(1)),
// as a run does whose trace is too long for its memory budget.
const heldPackEnv = "SCHEDSIM_HELD_PACK"

// heldPhases names what a run holds, in order: the trace and the
// policy's per-job state once built, the most the simulation holds (at
// its progress reports), the record once simulated (the policy
// released), and what the analysis keeps for the writers.
var heldPhases = []string{"built", "simulating", "simulated", "analyzed"}

// maxHeldPerJob bounds each phase's growth per job: the figures when
// the bounds were set (2026-12-03, the record's allocations byte-encoded,
// sim/allocs.go) were 384, 611, 476 and 502 bytes a job, and each bound
// is about a tenth above ("built" kept at 420). The first weeks of the year
// trace are where its queue forms, so the pending-reason log and the
// allocations per job there are close to the whole year's (the 1 M-job
// run holds about 720 B/job at the end of its simulation).
var maxHeldPerJob = map[string]float64{"built": 420, "simulating": 670, "simulated": 525, "analyzed": 555}

// maxHeldPerJobPacked bounds the same phases with the trace held packed:
// 132, 349, 231 and 256 bytes a job when set (2026-12-03; 10k and 50k
// jobs; 300k and 100k gave the same within 2). Simulating is bounded by
// the 376 bytes a job that 10 M jobs may hold under --max-memory 4G (7/8
// of 4 GiB), the others about a tenth above.
var maxHeldPerJobPacked = map[string]float64{"built": 150, "simulating": 376, "simulated": 255, "analyzed": 285}

// TestHeldBytesPerJobRun: the run pipeline (Build, Simulate, Analyze with
// the rows streamed, as `schedsim run --out` does) on the year
// benchmark's cluster and policy (bench/year-1024x8.yaml, slurm) holds at
// most maxHeldPerJob bytes of live heap per job at each phase. Each
// figure is the slope between two trace lengths synthesized from the year
// model, (held(big) − held(small)) / (big − small), so fixed costs cancel
// out. The live heap is the process's, so each run is a child process,
// and each figure is read after forced collections, which makes it exact
// where a sample after a background collection would count what the
// program allocated while the collector ran.
func TestHeldBytesPerJobRun(t *testing.T) {
	if n := os.Getenv(heldEnv); n != "" {
		jobs, err := strconv.Atoi(n)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("held", heldRun(t, jobs))
		return
	}
	if testing.Short() {
		t.Skip("two replays of tens of thousands of jobs")
	}
	for _, packed := range []bool{false, true} {
		bounds, name := maxHeldPerJob, "jobs"
		if packed {
			bounds, name = maxHeldPerJobPacked, "packed"
		}
		t.Run(name, func(t *testing.T) { checkHeld(t, packed, bounds) })
	}
}

func checkHeld(t *testing.T, packed bool, bounds map[string]float64) {
	const small, big = 10_000, 50_000
	held := map[int][]uint64{}
	for _, n := range []int{small, big} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHeldBytesPerJobRun$", "-test.count=1")
		cmd.Env = append(os.Environ(), heldEnv+"="+strconv.Itoa(n))
		if packed {
			cmd.Env = append(cmd.Env, heldPackEnv+"=1")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%d jobs: %v\n%s", n, err, out)
		}
		i := bytes.Index(out, []byte("held ["))
		if i < 0 {
			t.Fatalf("%d jobs: no figures in\n%s", n, out)
		}
		v := make([]uint64, len(heldPhases))
		args := make([]any, len(v))
		for k := range v {
			args[k] = &v[k]
		}
		if _, err := fmt.Sscan(string(bytes.Trim(out[i+len("held "):], "[]\n")), args...); err != nil {
			t.Fatalf("%d jobs: %v in\n%s", n, err, out)
		}
		held[n] = v
	}
	for k, phase := range heldPhases {
		per := (float64(held[big][k]) - float64(held[small][k])) / (big - small)
		t.Logf("%s: %.1f MB for %d jobs, %.1f MB for %d: %.0f bytes a job", phase,
			float64(held[small][k])/(1<<20), small, float64(held[big][k])/(1<<20), big, per)
		if per > bounds[phase] {
			t.Errorf("%s: %.0f bytes held per job, want at most %.0f", phase, per, bounds[phase])
		}
	}
}

// heldRun synthesizes n jobs from the year model, runs them as `schedsim
// run --out` would, and returns the live heap at each of heldPhases.
func heldRun(t *testing.T, n int) []uint64 {
	f, err := os.Open("bench/year-model.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := workload.ReadModel(f, "bench/year-model.yaml")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := workload.Synthesize(m, n, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "year.parquet")
	if err := traces.WriteFileAtomic(path, func(w io.Writer) error { return traces.WriteParquet(w, tr) }); err != nil {
		t.Fatal(err)
	}
	tr = nil
	live := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	if os.Getenv(heldPackEnv) != "" {
		SetPackAbove(1)
	}
	s, err := Load("bench/year-1024x8.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range [][2]string{{"trace", path}, {"trace.partition_map", "1=batch,2=debug"}} {
		if err := s.Override(o[0], o[1]); err != nil {
			t.Fatal(err)
		}
	}
	held := make([]uint64, len(heldPhases))
	base := live()
	run, err := s.Build(catalog.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	held[0] = live() - base
	run.StreamJobRows = true
	run.Progress = func(sim.Time, int, int) { held[1] = max(held[1], live()-base) }
	rec, err := run.Simulate()
	if err != nil {
		t.Fatal(err)
	}
	run.ReleasePolicy()
	run.Progress = nil
	held[2] = live() - base
	res, err := run.Analyze(rec)
	if err != nil {
		t.Fatal(err)
	}
	rec = nil
	held[3] = live() - base
	if res.Analysis.JobCount() != n {
		t.Fatalf("%d job rows, want %d", res.Analysis.JobCount(), n)
	}
	runtime.KeepAlive(res)
	runtime.KeepAlive(run)
	return held
}

// TestSimulateOverBudget: a run whose up-front allocation would take the
// heap past the memory budget is refused before it starts, as an input
// error (sim.ErrLimit) carrying the budget's *traces.LimitError; with the
// budget raised the same run simulates. A budget equal to the up-front
// allocation is passed by the allocation alone (the heap may reach 7/8
// of it), whatever the live heap; 1 TiB is past any test's.
func TestSimulateOverBudget(t *testing.T) {
	s, err := Load("testdata/example/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { traces.SetMemoryBudget(0, "") })
	for _, tc := range []struct {
		name   string
		budget int64 // 0: the run's up-front allocation
		refuse bool
	}{{"up-front", 0, true}, {"1TiB", 1 << 40, false}} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := s.Build(catalog.Builtin())
			if err != nil {
				t.Fatal(err)
			}
			budget := tc.budget
			if budget == 0 {
				budget = sim.UpFrontBytes(len(run.Trace.Jobs))
			}
			traces.SetMemoryBudget(budget, "max-memory")
			_, err = run.Simulate()
			traces.SetMemoryBudget(0, "")
			if !tc.refuse {
				if err != nil {
					t.Fatalf("refused under %d bytes: %v", budget, err)
				}
				return
			}
			var le *traces.LimitError
			if !errors.Is(err, sim.ErrLimit) || !errors.As(err, &le) {
				t.Fatalf("got %v, want a sim.ErrLimit carrying a *traces.LimitError", err)
			}
			want := "simulating " + groupDigits(len(run.Trace.Jobs)) + " jobs needs "
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "raise it with --max-memory") {
				t.Errorf("message %q, want it to name %q and the flag", err, want)
			}
		})
	}
}

// TestGroupDigits: commas every three digits from the right.
func TestGroupDigits(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 123456: "123,456", 10_000_000: "10,000,000"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestUpFrontBytes: the record's JobRecord (80 bytes) and the
// controller's per-job arrays (status 1, request index 4, reason 1,
// limit 8, partition 4) make 98 bytes a job.
func TestUpFrontBytes(t *testing.T) {
	if got := sim.UpFrontBytes(1000); got != 98_000 {
		t.Errorf("UpFrontBytes(1000) = %d, want 98000", got)
	}
}
