package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/traces"
)

// traceRun runs schedsim in-process and returns its stdout.
func traceRun(t *testing.T, args ...string) string {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("schedsim %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// traceShared returns ../shared/traces or "" (the caller skips).
func traceShared() string {
	p := filepath.Join("..", "..", "..", "shared", "traces")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// expected holds figures counted from a file with plain code, not with
// the trace readers.
type expected struct {
	jobs, users, partitions int
	gpuHours                float64
	runtimes                []float64 // for the median
	withLimit, hitLimit     int
	skipped                 map[string]int
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		t.Fatalf("test's own parse of %q: %v", s, err)
	}
	return x
}

// countSWF: a job is a record with submit, run time and processors known.
func countSWF(t *testing.T, path string) expected {
	e := expected{skipped: map[string]int{}}
	users := map[string]bool{}
	parts := map[string]bool{}
	for _, l := range lines(t, path) {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], ";") {
			continue
		}
		// Only a record without a submit time is not a job: LLNL Thunder
		// has 121,039 records, 1,190 of them phantoms, so 119,849 jobs.
		if num(t, f[1]) < 0 {
			e.skipped["phantom record (no submit time)"]++
			continue
		}
		e.jobs++
		if f[11] != "-1" {
			users[f[11]] = true
		}
		switch {
		case f[15] != "-1":
			parts[f[15]] = true
		case f[14] != "-1":
			parts[f[14]] = true
		}
		run := max(math.Round(num(t, f[3])), 0) // -1: runtime 0
		e.runtimes = append(e.runtimes, run)
		if lim := num(t, f[8]); lim > 0 {
			e.withLimit++
			if run >= lim {
				e.hitLimit++
			}
		}
	}
	e.users, e.partitions = len(users), len(parts)
	return e
}

// countEagle: distinct rows are jobs; exact repeats are duplicates.
func countEagle(t *testing.T, path string) expected {
	e := expected{skipped: map[string]int{}}
	seen := map[string]bool{}
	users, parts := map[string]bool{}, map[string]bool{}
	for i, l := range lines(t, path) {
		if i == 0 {
			continue
		}
		if seen[l] {
			e.skipped["duplicate row"]++
			continue
		}
		seen[l] = true
		f := strings.Split(l, ",")
		e.jobs++
		users[f[1]] = true
		parts[f[3]] = true
		run := num(t, f[13])
		e.gpuHours += num(t, f[8]) * run / 3600
		e.runtimes = append(e.runtimes, run)
		if lim := num(t, f[5]); lim > 0 {
			e.withLimit++
			if run >= lim {
				e.hitLimit++
			}
		}
	}
	e.users, e.partitions = len(users), len(parts)
	return e
}

// countAlibaba: every pod is a job; GPU-hours are GPUs (a shared GPU
// counts whole) × (deletion - scheduled) for scheduled pods.
func countAlibaba(t *testing.T, path string) expected {
	e := expected{skipped: map[string]int{}}
	for i, l := range lines(t, path) {
		if i == 0 {
			continue
		}
		f := strings.Split(l, ",")
		e.jobs++
		run := 0.0
		if f[10] != "" {
			run = max(num(t, f[9])-num(t, f[10]), 0)
		}
		gpus := num(t, f[3])
		if gpus == 0 && num(t, f[4]) > 0 {
			gpus = 1
		}
		e.gpuHours += gpus * run / 3600
		e.runtimes = append(e.runtimes, run)
	}
	return e
}

// countHabrok: job rows are rows whose JobID has no '.'.
func countHabrok(t *testing.T, path string) expected {
	e := expected{skipped: map[string]int{}}
	users, parts := map[string]bool{}, map[string]bool{}
	for _, l := range lines(t, path) {
		f := strings.Split(l, "☃")
		if strings.Contains(f[0], ".") {
			e.skipped["step folded into its job"]++
			continue
		}
		e.jobs++
		users[f[2]] = true
		parts[f[3]] = true
		gpus := tresGPUs(f[21])
		if gpus < 0 {
			gpus = tresGPUs(f[22])
		}
		e.gpuHours += max(gpus, 0) * slurmSeconds(t, f[13]) / 3600
	}
	e.users, e.partitions = len(users), len(parts)
	return e
}

// tresGPUs returns the untyped gres/gpu count of a TRES list, else the
// sum of the typed ones, else -1.
func tresGPUs(s string) float64 {
	typed, seen := 0.0, false
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		if k == "gres/gpu" {
			return n
		}
		if strings.HasPrefix(k, "gres/gpu:") {
			typed += n
			seen = true
		}
	}
	if seen {
		return typed
	}
	return -1
}

// slurmSeconds parses [D-]HH:MM:SS or MM:SS.
func slurmSeconds(t *testing.T, s string) float64 {
	days := 0.0
	if d, rest, ok := strings.Cut(s, "-"); ok {
		days, s = num(t, d), rest
	}
	parts := strings.Split(s, ":")
	secs := 0.0
	for _, p := range parts {
		secs = secs*60 + math.Floor(num(t, p))
	}
	return days*86400 + secs
}

// median is the type 7 median: the middle value, or the mean of the two
// middle ones.
func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// TestTraceInspect checks `trace inspect --json` on every real fixture
// (and the testdata excerpts) against figures the test counts itself.
func TestTraceInspect(t *testing.T) {
	type fixture struct {
		path  string
		args  []string
		count func(*testing.T, string) expected
	}
	td := filepath.Join("..", "..", "traces", "testdata")
	fixtures := []fixture{
		{filepath.Join(td, "eagle_excerpt.csv"), nil, countEagle},
		{filepath.Join(td, "alibaba_pods_excerpt.csv"), nil, countAlibaba},
		{filepath.Join(td, "thunder_excerpt.swf"), nil, countSWF},
		{filepath.Join(td, "habrok_excerpt.sacct"), []string{"--fields", strings.Join(habrokFields, ",")}, countHabrok},
	}
	if dir := traceShared(); dir != "" {
		for _, name := range []string{"CTC-SP2-1996-3.1-cln.swf.gz", "LLNL-Thunder-2007-1.1-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz", "HPC2N-2002-2.1-cln.first20000.swf.gz"} {
			fixtures = append(fixtures, fixture{filepath.Join(dir, name), nil, countSWF})
		}
		fixtures = append(fixtures,
			fixture{filepath.Join(dir, "slurm-csv_nrel-eagle_first1000.csv"), nil, countEagle},
			fixture{filepath.Join(dir, "alibaba-gpu2023_openb_pod_list_default.csv"), nil, countAlibaba},
			fixture{filepath.Join(dir, "sacct-parsable_habrok-rug.txt"), []string{"--fields", strings.Join(habrokFields, ",")}, countHabrok},
		)
	} else {
		t.Log("../shared/traces absent: only the testdata excerpts are checked")
	}
	for _, fx := range fixtures {
		t.Run(filepath.Base(fx.path), func(t *testing.T) {
			want := fx.count(t, fx.path)
			out := traceRun(t, append([]string{"trace", "inspect", "--json", fx.path}, fx.args...)...)
			var got struct {
				Jobs         int            `json:"jobs"`
				Skipped      map[string]int `json:"skipped"`
				Users        int            `json:"users"`
				Partitions   int            `json:"partitions"`
				GPUHours     float64        `json:"gpu_hours"`
				Runtime      []float64      `json:"runtime_quantiles_s"`
				Levels       []float64      `json:"quantile_levels"`
				ByHour       []int          `json:"arrivals_by_hour"`
				ByDay        []int          `json:"arrivals_by_weekday"`
				WithLimit    int            `json:"jobs_with_limit"`
				HitLimit     int            `json:"jobs_hitting_limit"`
				FracHitLimit float64        `json:"frac_hitting_limit"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got.Jobs != want.jobs {
				t.Errorf("jobs = %d, want %d", got.Jobs, want.jobs)
			}
			for k, n := range want.skipped {
				if got.Skipped[k] != n {
					t.Errorf("skipped[%q] = %d, want %d (all: %v)", k, got.Skipped[k], n, got.Skipped)
				}
			}
			if want.users > 0 && got.Users != want.users {
				t.Errorf("users = %d, want %d", got.Users, want.users)
			}
			if want.partitions > 0 && got.Partitions != want.partitions {
				t.Errorf("partitions = %d, want %d", got.Partitions, want.partitions)
			}
			if math.Abs(got.GPUHours-want.gpuHours) > 1e-6*max(1, want.gpuHours) {
				t.Errorf("gpu_hours = %v, want %v", got.GPUHours, want.gpuHours)
			}
			if len(want.runtimes) > 0 {
				i := slices.Index(got.Levels, 0.5)
				if m := median(want.runtimes); i < 0 || got.Runtime[i] != m {
					t.Errorf("runtime median = %v, want %v", got.Runtime, m)
				}
			}
			if want.withLimit > 0 && (got.WithLimit != want.withLimit || got.HitLimit != want.hitLimit ||
				math.Abs(got.FracHitLimit-float64(want.hitLimit)/float64(want.withLimit)) > 1e-12) {
				t.Errorf("limits: %d with, %d hit, frac %v; want %d, %d", got.WithLimit, got.HitLimit, got.FracHitLimit, want.withLimit, want.hitLimit)
			}
			sum := func(v []int) (s int) {
				for _, x := range v {
					s += x
				}
				return s
			}
			if sum(got.ByHour) != want.jobs || sum(got.ByDay) != want.jobs {
				t.Errorf("arrivals sum to %d by hour and %d by day, want %d", sum(got.ByHour), sum(got.ByDay), want.jobs)
			}
		})
	}
}

var habrokFields = []string{"JobID", "JobName", "User", "Partition", "NodeList", "NNodes", "NCPUS", "NTasks", "State", "Submit", "Start",
	"End", "Timelimit", "Elapsed", "TotalCPU", "CPUTime", "UserCPU", "SystemCPU", "ReqMem", "MaxRSS", "MaxVMSize",
	"ReqTRES", "AllocTRES", "TRESUsageInMax", "TRESUsageInTot", "TRESUsageOutTot", "MaxDiskRead",
	"MaxDiskWrite", "MaxRSSNode", "MaxRSSTask", "MaxVMSizeNode", "MaxVMSizeTask", "MaxDiskReadNode",
	"MaxDiskReadTask", "MaxDiskWriteNode", "MaxDiskWriteTask", "Comment"}

// TestTraceCommands runs convert, window, filter, scale-load, remap-gpu,
// fit and synth end to end on a small excerpt.
func TestTraceCommands(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join("..", "..", "traces", "testdata", "alibaba_pods_excerpt.csv")
	pq := filepath.Join(dir, "pods.parquet")
	traceRun(t, "trace", "convert", in, pq)
	traceRun(t, "trace", "convert", pq, filepath.Join(dir, "pods.sacct"))
	traceRun(t, "trace", "filter", "--state", "FAILED", pq, filepath.Join(dir, "failed.arrow"))
	var rep struct {
		Jobs int `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(traceRun(t, "trace", "inspect", "--json", filepath.Join(dir, "failed.arrow"))), &rep); err != nil || rep.Jobs != 4 {
		t.Errorf("filter kept %d jobs (%v), want the 4 Failed pods", rep.Jobs, err)
	}
	traceRun(t, "trace", "remap-gpu", "*=h100", "--speedup", "2", pq, filepath.Join(dir, "h100.parquet"))
	traceRun(t, "trace", "scale-load", "2", pq, filepath.Join(dir, "double.swf"))
	traceRun(t, "trace", "window", "--from", "9437497", "--to", "10000000", pq, filepath.Join(dir, "win.sacct"))
	model := filepath.Join(dir, "model.yaml")
	traceRun(t, "trace", "fit", filepath.Join("..", "..", "traces", "testdata", "eagle_excerpt.csv"), "--out", model)
	a, b := filepath.Join(dir, "a.sacct"), filepath.Join(dir, "b.sacct")
	traceRun(t, "trace", "synth", model, "--jobs", "50", "--seed", "3", "--out", a)
	traceRun(t, "trace", "synth", model, "--jobs", "50", "--seed", "3", "--out", b)
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if len(da) == 0 || !bytes.Equal(da, db) {
		t.Errorf("synth with the same seed gave different output")
	}
}

// TestTraceLimits: every hostile input of traces/testdata/hostile that the
// readers refuse exits 2 with one line naming the file and its line; a
// limit names its flag, and raising the flag reads the input. The limit
// flags parse sizes and refuse nonsense.
func TestTraceLimits(t *testing.T) {
	dir := filepath.Join("..", "..", "traces", "testdata", "hostile")
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	refused := 0
	for _, p := range files {
		if strings.HasSuffix(p, ".md") {
			continue
		}
		_, err, code := runHW(t, "trace", "inspect", p)
		if err == nil {
			continue // a compressed format that is read
		}
		refused++
		msg := "schedsim: " + err.Error()
		if code != exitBadInput || strings.Contains(msg, "\n") || !strings.HasPrefix(err.Error(), p+":") {
			t.Errorf("%s: exit %d, %q", p, code, msg)
		}
	}
	if refused < 10 {
		t.Errorf("only %d hostile inputs refused", refused)
	}
	bomb := filepath.Join(dir, "sacct_array_bomb.sacct")
	if _, err, code := runHW(t, "trace", "inspect", bomb); code != exitBadInput || !strings.Contains(err.Error(), "raise it with --max-array-tasks") {
		t.Errorf("bomb: exit %d, %v", code, err)
	}
	out, err, code := runHW(t, "trace", "inspect", "--json", "--max-array-tasks", "5M", bomb)
	if code == 0 || !strings.Contains(fmt.Sprint(err), `"--max-array-tasks" flag: "5M": want a whole number`) {
		t.Errorf("--max-array-tasks 5M: exit %d, %v", code, err)
	}
	out, err, code = runHW(t, "trace", "inspect", "--json", "--max-array-tasks", "5000000", bomb)
	if code != 0 || !strings.Contains(out, `"jobs": 4000001`) {
		t.Errorf("raised limit: exit %d, %v", code, err)
	}
	if _, err, code := runHW(t, "trace", "inspect", "--max-decompressed", "0", bomb); code != exitBadInput || !strings.Contains(err.Error(), "want a limit above 0") {
		t.Errorf("--max-decompressed 0: exit %d, %v", code, err)
	}
	// A size flag: a trace of 1.5 KiB of text is over --max-decompressed 1K.
	gz := filepath.Join(dir, "thunder.swf.zst")
	if _, err, code := runHW(t, "trace", "inspect", "--max-decompressed", "1K", gz); code != exitBadInput || !strings.Contains(err.Error(), "zstd input decompresses to more than 1K") {
		t.Errorf("--max-decompressed 1K: exit %d, %v", code, err)
	}
}

// TestTraceConvertStreams: convert of an sacct dump whose rows are out of
// submit order writes them in submit order, as inspect and a whole read
// see them, through the sort of traces.Convert.
func TestTraceConvertStreams(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "rev.sacct")
	os.WriteFile(in, []byte("JobID|Submit|Start|End|Elapsed|State\n"+
		"3|2024-01-01T00:02:00|2024-01-01T00:02:00|2024-01-01T00:03:00|00:01:00|COMPLETED\n"+
		"2|2024-01-01T00:01:00|2024-01-01T00:01:00|2024-01-01T00:02:00|00:01:00|COMPLETED\n"+
		"1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|00:01:00|COMPLETED\n"), 0o644)
	out := filepath.Join(dir, "out.swf.gz")
	if got := traceRun(t, "trace", "convert", in, out); !strings.Contains(got, "wrote "+out+" (3 jobs)") {
		t.Errorf("convert said %q", got)
	}
	res, err := traces.Open(out, traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range res.Trace.Jobs {
		ids = append(ids, j.ID)
	}
	if strings.Join(ids, " ") != "1 2 3" {
		t.Errorf("ids %v", ids)
	}
	data, _ := os.ReadFile(out)
	if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Error("out.swf.gz is not gzip")
	}
}

// TestTraceScaleLoadBadFactor: a FACTOR outside (0, 1000] exits 2 with
// one line saying so before the trace is read, a negative one too
// (pflag would take "-1" for a shorthand flag), and an unknown shorthand
// that is not a number is still pflag's error.
func TestTraceScaleLoadBadFactor(t *testing.T) {
	in, out := "../../examples/jobs.sacct", filepath.Join(t.TempDir(), "x.sacct")
	const want = ": must be in (0, 1000] (0.5 halves the arrivals, 2 doubles them)\n"
	for _, tc := range []struct{ factor, want string }{
		{"-1", "schedsim: trace scale-load: FACTOR -1" + want},
		{"-0.5", "schedsim: trace scale-load: FACTOR -0.5" + want},
		{"-2e3", "schedsim: trace scale-load: FACTOR -2e3" + want},
		{"0", "schedsim: trace scale-load: FACTOR 0" + want},
		{"1001", "schedsim: trace scale-load: FACTOR 1001" + want},
		{"abc", "schedsim: trace scale-load: FACTOR \"abc\": want a number in (0, 1000]\n"},
		{"-z", "schedsim: schedsim trace scale-load: unknown shorthand flag: 'z' in -z (see 'schedsim trace scale-load --help')\n"},
	} {
		code, stderr := exitCode(t, "trace", "scale-load", tc.factor, in, out)
		if code != 2 || stderr != tc.want {
			t.Errorf("trace scale-load %s: exit %d, stderr %q; want exit 2, %q", tc.factor, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a bad FACTOR wrote %s", out)
	}
}
