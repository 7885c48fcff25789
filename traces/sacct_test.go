package traces

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/schedsim/schedsim/workload"
)

// readSacct reads all jobs of input.
func readSacct(t testing.TB, input, path string, opts SacctOptions) ([]workload.Job, *SacctReader, error) {
	t.Helper()
	sr, err := NewSacctReader(strings.NewReader(input), path, opts)
	if err != nil {
		return nil, nil, err
	}
	jobs, err := readAll(sr.Next)
	return jobs, sr, err
}

func mustRead(t testing.TB, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ignoreExtra compares jobs without their Extra columns.
var ignoreExtra = cmpopts.IgnoreFields(workload.Job{}, "Extra")

// job builds an expected job: NewJob plus the fields set by mod.
func job(id string, mod func(j *workload.Job)) workload.Job {
	j := workload.NewJob(id)
	mod(&j)
	return j
}

func byID(jobs []workload.Job) map[string]workload.Job {
	m := make(map[string]workload.Job, len(jobs))
	for _, j := range jobs {
		m[j.ID] = j
	}
	return m
}

func TestSacctHabrokExcerpt(t *testing.T) {
	jobs, sr, err := readSacct(t, mustRead(t, "testdata/habrok_excerpt.sacct"), "habrok_excerpt.sacct", SacctOptions{Fields: JobinfoFields})
	if err != nil {
		t.Fatal(err)
	}
	// The excerpt holds 14 job rows and 19 step rows (testdata/README.md).
	st := sr.Stats()
	if len(jobs) != 14 || st.Jobs != 14 || st.StepsFolded != 19 || st.OrphanSteps != 0 {
		t.Fatalf("got %d jobs, stats %+v; want 14 jobs, 19 folded steps, no orphans", len(jobs), st)
	}
	if st.CancelledPending != 2 || st.Pending != 1 || st.Running != 1 {
		t.Errorf("stats %+v: want 2 cancelled before start, 1 pending, 1 running", st)
	}
	got := byID(jobs)
	want := []workload.Job{
		job("4034541", func(j *workload.Job) {
			// Cancelled while running: a normal run, not CancelAfter.
			j.Name, j.User, j.Partition, j.TraceState = "EYR378CSFYHIMYW", "user424", "gpumedium", "CANCELLED"
			j.Request = workload.Request{Nodes: 1, CPUs: 1, MemMB: 199 * 1024} // ReqTRES cpu=1, not AllocTRES cpu=8
			j.TimeLimit = 19*3600 + 50*60
			j.Runtime = 3*3600 + 34*60 + 13
			j.Submit = utc(t, "2023-08-31T12:29:47")
			j.TraceStart = utc(t, "2023-09-01T05:51:10")
			j.TraceEnd = utc(t, "2023-09-01T09:25:23")
		}),
		job("4047445", func(j *workload.Job) {
			// Cancelled before it started: Start None.
			j.Name, j.User, j.Partition, j.TraceState = "0JZ9", "user4987", "gpushort", "CANCELLED"
			j.Request = workload.Request{Nodes: 1, CPUs: 8, MemMB: 32000}
			j.TimeLimit = 30 * 60
			j.Submit = utc(t, "2023-09-01T14:54:50")
			j.CancelAfter = 67 // End 14:55:57 - Submit 14:54:50
			j.TraceEnd = utc(t, "2023-09-01T14:55:57")
		}),
		job("5908801_3", func(j *workload.Job) {
			j.Name, j.User, j.Partition, j.TraceState = "UKG094CJRFLQ4S3", "user23", "gpulong", "COMPLETED"
			j.ArrayJobID, j.ArrayTaskID = "5908801", 3
			j.Request = workload.Request{Nodes: 1, CPUs: 8, MemMB: 125000}
			j.TimeLimit = 2 * 86400
			j.Runtime = 86400 + 4*3600 + 37*60 + 26
			j.Submit = utc(t, "2023-11-02T13:47:11")
			j.TraceStart = utc(t, "2023-11-02T21:16:50")
			j.TraceEnd = utc(t, "2023-11-04T01:54:16")
		}),
		job("7965768", func(j *workload.Job) {
			// ReqTRES has only the untyped gres/gpu=1: any GPU type.
			j.Name, j.User, j.Partition, j.TraceState = "A9E0GMQ7UDQT2YW", "user427", "gpulong", "CANCELLED"
			j.Request = workload.Request{Nodes: 1, GPUs: 1, CPUs: 1, MemMB: 10 * 1024}
			j.TimeLimit = 86400 + 23*3600 + 59*60
			j.Runtime = 15*3600 + 28*60 + 22
			j.Submit = utc(t, "2024-04-04T19:29:45")
			j.TraceStart = utc(t, "2024-04-04T21:45:17")
			j.TraceEnd = utc(t, "2024-04-05T13:13:39")
		}),
		job("8150389", func(j *workload.Job) {
			// gres/gpu:a100=2 and gres/gpu=2: two GPUs, not four.
			j.Name, j.User, j.Partition, j.TraceState = "LEZO38ZVU0MO1", "user498", "gpulong", "CANCELLED"
			j.Request = workload.Request{Nodes: 1, GPUs: 2, GPUType: "a100", CPUs: 1, MemMB: 32 * 1024}
			j.TimeLimit = 3 * 86400
			j.Runtime = 2*86400 + 21*3600 + 9*60 + 16
			j.Submit = utc(t, "2024-04-13T18:49:00")
			j.TraceStart = utc(t, "2024-04-13T20:33:32")
			j.TraceEnd = utc(t, "2024-04-16T17:42:48")
		}),
		job("7219441", func(j *workload.Job) {
			j.Name, j.User, j.Partition, j.TraceState = "44K8PGWDLVU", "user4985", "parallelmedium", "PENDING"
			j.Request = workload.Request{Nodes: 3, CPUs: 384, MemMB: 300 * 1024}
			j.TimeLimit = 3 * 86400
			j.Submit = utc(t, "2024-02-15T13:40:43")
		}),
		job("8322514_33", func(j *workload.Job) {
			// Running at the dump: runtime so far, no end.
			j.Name, j.User, j.Partition, j.TraceState = "3GE4RE0CID4L8W", "user20", "gelifesshort", "RUNNING"
			j.ArrayJobID, j.ArrayTaskID = "8322514", 33
			j.Request = workload.Request{Nodes: 1, CPUs: 8, MemMB: 4048}
			j.TimeLimit = 5 * 3600
			j.Runtime = 3*3600 + 31*60 + 51
			j.Submit = utc(t, "2024-04-19T09:39:57")
			j.TraceStart = utc(t, "2024-04-19T09:39:58")
		}),
		job("7336818", func(j *workload.Job) {
			// NODE_FAIL before it started: not a cancellation.
			j.Name, j.User, j.Partition, j.TraceState = "WE0UZ5L5GVLWC", "user49", "regularlong", "NODE_FAIL"
			j.Request = workload.Request{Nodes: 1, CPUs: 20, MemMB: 320 * 1024}
			j.TimeLimit = 10 * 86400
			j.Submit = utc(t, "2024-02-26T19:06:44")
			j.TraceEnd = utc(t, "2024-03-19T22:45:33")
		}),
		job("2355320_24", func(j *workload.Job) {
			// ReqTRES node=1 although 6 nodes were allocated: the request wins.
			j.Name, j.User, j.Partition, j.TraceState = "24KF66QH", "user49", "regularmedium", "COMPLETED"
			j.ArrayJobID, j.ArrayTaskID = "2355320", 24
			j.Request = workload.Request{Nodes: 1, CPUs: 15, MemMB: 240000}
			j.TimeLimit = 3 * 86400
			j.Runtime = 8
			j.Submit = utc(t, "2023-06-02T17:48:56")
			j.TraceStart = utc(t, "2023-06-03T08:24:18")
			j.TraceEnd = utc(t, "2023-06-03T08:24:26")
		}),
	}
	for _, w := range want {
		if diff := cmp.Diff(w, got[w.ID], ignoreExtra); diff != "" {
			t.Errorf("job %s (-want +got):\n%s", w.ID, diff)
		}
	}
	if j := got["7971484"]; j.Request.GPUs != 4 || j.Request.Nodes != 2 || j.Request.GPUType != "" {
		t.Errorf("7971484 request %+v, want 4 GPUs of any type on 2 nodes", j.Request)
	}

	// Extra: the other non-empty columns in order, plus the raw State.
	wantExtra := []workload.Field{
		fld("NodeList", "None assigned"), fld("NNodes", "1"), fld("NCPUS", "0"),
		fld("State", "CANCELLED by 10290820"),
		fld("TotalCPU", "00:00:00"), fld("CPUTime", "00:00:00"), fld("UserCPU", "00:00:00"), fld("SystemCPU", "00:00:00"),
		fld("ReqMem", "32000M"), fld("ReqTRES", "billing=8,cpu=8,mem=32000M,node=1"),
	}
	if diff := cmp.Diff(wantExtra, got["4047445"].Extra); diff != "" {
		t.Errorf("4047445 Extra (-want +got):\n%s", diff)
	}
	// Column names are one string per column, shared by all jobs.
	a, b := got["4047445"].Extra[0].Name, got["7219441"].Extra[0].Name
	if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("Extra names %q and %q do not share storage", a, b)
	}
}

func TestSacctSyntheticHeader(t *testing.T) {
	jobs, sr, err := readSacct(t, mustRead(t, "testdata/synthetic_header.psv"), "synthetic_header.psv", SacctOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	wantIDs := []string{"1001", "1002_5", "1002_6", "1002_7", "1002_8", "1002_9", "1003+0", "1003+1", "1005", "1006_3", "1008"}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Fatalf("job ids (-want +got):\n%s", diff)
	}
	st := sr.Stats()
	wantStats := SacctStats{Lines: 14, Jobs: 11, StepsFolded: 5, OrphanSteps: 1, Pending: 5, Running: 2, CancelledPending: 1, ArrayRecords: 1, ArrayTasks: 5}
	if diff := cmp.Diff(wantStats, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	got := byID(jobs)
	want := []workload.Job{
		job("1001", func(j *workload.Job) {
			j.Name = "train|big" // the delimiter inside the last, free-text column
			j.User, j.Account, j.Partition, j.QOS, j.TraceState = "alice", "proj1", "gpu", "normal", "COMPLETED"
			j.Request = workload.Request{Nodes: 2, GPUs: 8, GPUType: "h100", CPUs: 16, MemMB: 65536}
			j.TimeLimit, j.Runtime = 2*86400, 3600
			j.Submit = utc(t, "2024-01-01T00:00:00")
			j.TraceStart, j.TraceEnd = utc(t, "2024-01-01T00:01:00"), utc(t, "2024-01-01T01:01:00")
		}),
		job("1002_7", func(j *workload.Job) {
			j.Name, j.User, j.Account, j.Partition, j.QOS, j.TraceState = "sweep", "bob", "proj2", "cpu", "normal", "PENDING"
			j.ArrayJobID, j.ArrayTaskID = "1002", 7
			j.ArrayThrottle = 4                                              // 1002_[7-9%4]
			j.Request = workload.Request{Nodes: 1, CPUs: 4, MemMB: 4 * 4000} // 4000Mc x 4 CPUs
			j.Submit = utc(t, "2024-01-01T00:10:00")
		}),
		job("1003+0", func(j *workload.Job) {
			j.Name, j.User, j.Account, j.Partition, j.QOS, j.TraceState = "het0", "carol", "proj1", "gpu", "normal", "RUNNING"
			j.Request = workload.Request{Nodes: 1, GPUs: 1, CPUs: 8, MemMB: 1536}
			j.Runtime = 2395
			j.Submit = utc(t, "2024-01-01T00:20:00")
			j.TraceStart = utc(t, "2024-01-01T00:20:05")
			j.Deps = []workload.Dependency{{Type: workload.DepAfterOK, JobID: "1001"}}
		}),
		job("1003+1", func(j *workload.Job) {
			j.Name, j.User, j.Account, j.Partition, j.QOS, j.TraceState = "het1", "carol", "proj1", "cpu", "normal", "RUNNING"
			j.Request = workload.Request{Nodes: 1, CPUs: 2, MemMB: 2 << 20}
			j.Runtime = 2395 // ElapsedRaw: Elapsed is empty
			j.Submit = utc(t, "2024-01-01T00:20:00")
			j.TraceStart = utc(t, "2024-01-01T00:20:05")
		}),
		job("1005", func(j *workload.Job) {
			// Newer Slurm: Start = End = cancel time, no allocation.
			j.Name, j.User, j.Account, j.Partition, j.QOS, j.TraceState = "quit", "dave", "proj3", "cpu", "normal", "CANCELLED"
			j.Request = workload.Request{Nodes: 1, CPUs: 1, MemMB: 65536} // 64Gn x 1 node
			j.TimeLimit = 3600
			j.Submit = utc(t, "2024-01-01T01:00:00")
			j.CancelAfter = 1800
			j.TraceEnd = utc(t, "2024-01-01T01:30:00")
			j.Deps = []workload.Dependency{
				{Type: workload.DepAfterAny, JobID: "1001"}, {Type: workload.DepAfterAny, JobID: "1002_5"}, {Type: workload.DepSingleton},
			}
		}),
		job("1008", func(j *workload.Job) {
			j.Name, j.User, j.Account, j.Partition, j.QOS, j.TraceState = "oom", "frank", "proj1", "gpu", "normal", "OUT_OF_MEMORY"
			j.Request = workload.Request{Nodes: 1, GPUs: 2, CPUs: 4, MemMB: 8192}
			j.TimeLimit, j.Runtime = 600, 300 // "10:00" and "05:00" are MM:SS
			j.Submit = utc(t, "2024-01-01T03:00:00")
			j.TraceStart, j.TraceEnd = utc(t, "2024-01-01T03:00:00"), utc(t, "2024-01-01T03:05:00")
		}),
	}
	for _, w := range want {
		if diff := cmp.Diff(w, got[w.ID], ignoreExtra); diff != "" {
			t.Errorf("job %s (-want +got):\n%s", w.ID, diff)
		}
	}
	// Array tasks get their own Extra slices.
	a, b := got["1002_5"].Extra, got["1002_6"].Extra
	if len(a) == 0 || &a[0] == &b[0] {
		t.Errorf("array tasks share an Extra backing array")
	}
	wantExtra := []workload.Field{
		fld("JobIDRaw", "1005"), fld("State", "CANCELLED by 1000"), fld("ElapsedRaw", "0"), fld("TimelimitRaw", "60"),
		fld("NNodes", "1"), fld("NCPUS", "0"), fld("ReqMem", "64Gn"), fld("ReqTRES", "billing=1,cpu=1,node=1"),
	}
	if diff := cmp.Diff(wantExtra, got["1005"].Extra); diff != "" {
		t.Errorf("1005 Extra (-want +got):\n%s", diff)
	}
	notes := strings.Join(sr.Notes(), "\n")
	for _, want := range []string{"folded 5 step rows", "skipped 1 step rows with no job row before them (first: synthetic_header.psv:10 (999.batch))", "expanded 1 pending array records into 5 pending jobs"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

func TestSacctOldStyleColumns(t *testing.T) {
	in := strings.Join([]string{
		"55|COMPLETED|2015-01-01T00:00:00|2015-01-01T00:00:10|2015-01-01T00:10:10|2|16|4000Mc|gpu:v100:2|gpu:v100:4|1-00:00:00",
		"56|COMPLETED|2015-01-01T00:00:00|2015-01-01T00:00:10|2015-01-01T00:10:10|2|16|64Gn||gpu:3|01:00:00",
		"56.batch|COMPLETED|2015-01-01T00:00:10|2015-01-01T00:00:10|2015-01-01T00:10:10|1|8|64Gn||gpu:3|",
		"57|FAILED|2015-01-01T00:00:00|2015-01-01T00:00:10|2015-01-01T00:10:10|1|1|0n|||",
	}, "\n")
	opts := SacctOptions{Fields: []string{"jobid,state%20,submit,start,end", "NNodes", "AllocCPUS", "ReqMem", "ReqGRES", "AllocGRES", "Timelimit"}}
	jobs, sr, err := readSacct(t, in, "old.txt", opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []workload.Request
	for _, j := range jobs {
		got = append(got, j.Request)
	}
	want := []workload.Request{
		{Nodes: 2, GPUs: 4, GPUType: "v100", CPUs: 16, MemMB: 64000}, // ReqGRES per node x 2 nodes; 4000Mc x 16
		{Nodes: 2, GPUs: 3, CPUs: 16, MemMB: 2 * 65536},              // AllocGRES is the whole job; 64Gn x 2
		{Nodes: 1, CPUs: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if sr.Stats().StepsFolded != 1 {
		t.Errorf("stats %+v, want 1 folded step", sr.Stats())
	}
	// Runtime from End - Start: there is no Elapsed column.
	if jobs[0].Runtime != 600 {
		t.Errorf("runtime %d, want 600", jobs[0].Runtime)
	}
}

func TestSacctFraming(t *testing.T) {
	const row = "7|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:01|2024-01-01T00:00:31|00:00:30"
	const hdr = "JobID|State|Submit|Start|End|Elapsed"
	tests := []struct {
		name string
		in   string
		opts SacctOptions
	}{
		{name: "parsable2", in: hdr + "\n" + row + "\n"},
		{name: "parsable trailing", in: hdr + "|\n" + row + "|\n"},
		{name: "no final newline", in: hdr + "\n" + row},
		{name: "CRLF and BOM", in: "\ufeff" + hdr + "\r\n" + row + "\r\n"},
		{name: "blank lines", in: "\n" + hdr + "\n\n" + row + "\n\n"},
		{name: "snowman detected", in: strings.ReplaceAll(hdr+"\n"+row+"\n", "|", "☃")},
		{name: "tab detected", in: strings.ReplaceAll(hdr+"\n"+row+"\n", "|", "\t")},
		{name: "given delimiter", in: strings.ReplaceAll(hdr+"\n"+row+"\n", "|", ";;"), opts: SacctOptions{Delimiter: ";;"}},
		{name: "headerless", in: row + "\n", opts: SacctOptions{Fields: []string{"JobID", "State", "Submit", "Start", "End", "Elapsed"}}},
		{name: "header wins over fields", in: hdr + "\n" + row + "\n", opts: SacctOptions{Fields: []string{"Nonsense"}}},
		{name: "columns any order", in: "Elapsed|End|Start|Submit|State|JobID\n00:00:30|2024-01-01T00:00:31|2024-01-01T00:00:01|2024-01-01T00:00:00|COMPLETED|7\n"},
		{name: "lower-case header", in: strings.ToLower(hdr) + "\n" + row + "\n"},
	}
	want := []workload.Job{job("7", func(j *workload.Job) {
		j.TraceState = "COMPLETED"
		j.Submit = utc(t, "2024-01-01T00:00:00")
		j.TraceStart, j.TraceEnd = utc(t, "2024-01-01T00:00:01"), utc(t, "2024-01-01T00:00:31")
		j.Runtime = 30
	})}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, _, err := readSacct(t, tt.in, "f", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, jobs); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSacctEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n", "JobID|Submit\n"} {
		jobs, _, err := readSacct(t, in, "f", SacctOptions{})
		if err != nil || len(jobs) != 0 {
			t.Errorf("%q: %d jobs, %v; want none and no error", in, len(jobs), err)
		}
	}
}

func TestSacctSkipPending(t *testing.T) {
	jobs, sr, err := readSacct(t, mustRead(t, "testdata/synthetic_header.psv"), "s", SacctOptions{SkipPending: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 6 || sr.Stats().SkippedPending != 5 {
		t.Errorf("%d jobs, stats %+v; want 6 jobs and the 5 pending array tasks dropped", len(jobs), sr.Stats())
	}
	if !strings.Contains(strings.Join(sr.Notes(), "\n"), "dropped 5 jobs that had not started") {
		t.Errorf("notes %q lack the dropped count", sr.Notes())
	}
}

func TestSacctErrors(t *testing.T) {
	base := strings.Split(strings.TrimSuffix(mustRead(t, "testdata/synthetic_header.psv"), "\n"), "\n")
	// edit replaces field col (0-based) of line (1-based) of the synthetic file.
	edit := func(line, col int, val string) string {
		lines := append([]string(nil), base...)
		f := strings.Split(lines[line-1], "|")
		f[col] = val
		lines[line-1] = strings.Join(f, "|")
		return strings.Join(lines, "\n")
	}
	tests := []struct {
		name  string
		in    string
		opts  SacctOptions
		line  int
		field string
		value string
		err   error
		msg   string
	}{
		{name: "bad submit", in: edit(5, 7, "2024-13-01T00:00:00"), line: 5, field: "Submit", value: "2024-13-01T00:00:00", err: ErrRange,
			msg: `s.psv:5: Submit: "2024-13-01T00:00:00": no such date or time of day`},
		{name: "unknown submit", in: edit(2, 7, "Unknown"), line: 2, field: "Submit", err: ErrRange, value: "Unknown"},
		{name: "bad start", in: edit(11, 8, "yesterday"), line: 11, field: "Start", value: "yesterday", err: ErrSyntax},
		{name: "bad elapsed", in: edit(14, 10, "1:2:3:4"), line: 14, field: "Elapsed", value: "1:2:3:4", err: ErrSyntax},
		{name: "bad elapsedraw", in: edit(14, 11, "-3"), line: 14, field: "ElapsedRaw", value: "-3", err: ErrSyntax},
		{name: "bad timelimit", in: edit(2, 12, "forever"), line: 2, field: "Timelimit", value: "forever", err: ErrSyntax},
		{name: "bad reqtres", in: edit(2, 17, "cpu=x"), line: 2, field: "ReqTRES", value: "cpu=x", err: ErrSyntax},
		{name: "bad alloctres", in: edit(6, 18, "gres/gpu=99999999999"), line: 6, field: "AllocTRES", value: "gres/gpu=99999999999", err: ErrRange},
		{name: "bad reqmem", in: edit(11, 16, "12X"), line: 11, field: "ReqMem", value: "12X", err: ErrSyntax},
		{name: "bad nnodes", in: edit(2, 14, "two"), line: 2, field: "NNodes", value: "two", err: ErrSyntax},
		{name: "bad state", in: edit(2, 6, "done"), line: 2, field: "State", value: "done", err: ErrSyntax},
		{name: "bad job id", in: edit(13, 0, "10x8"), line: 13, field: "JobID", value: "10x8", err: ErrSyntax},
		{name: "bad array", in: edit(5, 0, "1002_[9-5]"), line: 5, field: "JobID", value: "1002_[9-5]", err: ErrSyntax},
		{name: "bad dependency", in: edit(11, 19, "afterwards:1"), line: 11, field: "Dependency", value: "afterwards:1", err: ErrSyntax},
		{name: "too few fields", in: strings.Join(base[:1], "\n") + "\n1|2|3\n", line: 2, err: ErrFieldCount,
			msg: `s.psv:2: 3 fields, want 21 (delimiter "|")`},
		{name: "no job id column", in: "User|JobIDRaw\n", line: 1, err: ErrMissingColumn},
		{name: "no submit column", in: "JobID|Start\n1|Unknown\n", line: 1, err: ErrMissingColumn},
		{name: "headerless without fields", in: "1|2024-01-01T00:00:00\n", line: 1, err: ErrNoHeader},
		{name: "empty header name", in: "JobID||Submit\n", line: 1, err: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readSacct(t, tt.in, "s.psv", tt.opts)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T), want *ParseError", err, err)
			}
			if pe.Line != tt.line || pe.Field != tt.field || pe.Value != tt.value || !errors.Is(err, tt.err) {
				t.Errorf("got %q (line %d field %q value %q), want line %d field %q value %q, errors.Is %v",
					err, pe.Line, pe.Field, pe.Value, tt.line, tt.field, tt.value, tt.err)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("message %q, want %q", err, tt.msg)
			}
		})
	}
}

func TestSacctStrictErrorIsSticky(t *testing.T) {
	in := "JobID|Submit\n1|bad\n2|2024-01-01T00:00:00\n"
	sr, err := NewSacctReader(strings.NewReader(in), "f", SacctOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err1 := sr.Next()
	_, err2 := sr.Next()
	if err1 == nil || err1 != err2 {
		t.Errorf("errors %v then %v, want the same error twice", err1, err2)
	}
}

func TestSacctLenient(t *testing.T) {
	in := strings.Join([]string{
		"JobID|State|Submit|Elapsed",
		"1|COMPLETED|2024-01-01T00:00:00|00:01:00",
		"2|COMPLETED|not-a-time|00:01:00",
		"2.batch|COMPLETED|2024-01-01T00:00:00|00:01:00",
		"2.0|COMPLETED|2024-01-01T00:00:00|00:01:00",
		"3|COMPLETED|2024-01-01T00:00:00",
		"4|COMPLETED|2024-01-01T00:00:00|00:01:00",
	}, "\n")
	jobs, sr, err := readSacct(t, in, "l.psv", SacctOptions{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != "1" || jobs[1].ID != "4" {
		t.Fatalf("jobs %v, want 1 and 4", jobs)
	}
	st := sr.Stats()
	if st.Bad != 2 || st.BadSteps != 2 || st.OrphanSteps != 0 {
		t.Errorf("stats %+v, want 2 bad lines and their 2 steps skipped", st)
	}
	notes := strings.Join(sr.Notes(), "\n")
	if !strings.Contains(notes, `skipped 2 bad lines (lenient); first: l.psv:3: Submit: "not-a-time"`) || !strings.Contains(notes, "l.psv:6: 3 fields, want 4") {
		t.Errorf("notes do not quote the bad lines:\n%s", notes)
	}
}

// jobStream produces an endless sacct dump: a header, then job rows each
// followed by two step rows, generated on demand.
type jobStream struct {
	n   int
	buf []byte
}

func (s *jobStream) Read(p []byte) (int, error) {
	if len(s.buf) == 0 {
		if s.n == 0 {
			s.buf = []byte("JobID|State|Submit|Start|End|Elapsed|ReqTRES|JobName\n")
		}
		s.n++
		for range 100 {
			s.n++
			s.buf = fmt.Appendf(s.buf, "%d|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:05|2024-01-01T01:00:05|01:00:00|cpu=4,gres/gpu=1,mem=8G,node=1|job%d\n", s.n, s.n)
			s.buf = fmt.Appendf(s.buf, "%d.batch|COMPLETED|2024-01-01T00:00:05|2024-01-01T00:00:05|2024-01-01T01:00:05|01:00:00||batch\n", s.n)
			s.buf = fmt.Appendf(s.buf, "%d.extern|COMPLETED|2024-01-01T00:00:05|2024-01-01T00:00:05|2024-01-01T01:00:05|01:00:00||extern\n", s.n)
		}
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// TestSacctStreams reads jobs from an input that never ends: a reader that
// held all rows before returning any could not pass.
func TestSacctStreams(t *testing.T) {
	sr, err := NewSacctReader(&jobStream{}, "stream", SacctOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20000 {
		j, err := sr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if j.Request.GPUs != 1 || j.Runtime != 3600 {
			t.Fatalf("job %d: %+v", i, j)
		}
	}
	if st := sr.Stats(); st.StepsFolded < 2*20000-2 {
		t.Errorf("stats %+v: steps not folded", st)
	}
}

func TestSacctLongLine(t *testing.T) {
	long := strings.Repeat("x", 200_000) // longer than the 64 KiB read buffer
	in := "JobID|Submit|JobName\n1|2024-01-01T00:00:00|" + long + "\n"
	jobs, _, err := readSacct(t, in, "f", SacctOptions{})
	if err != nil || len(jobs) != 1 || jobs[0].Name != long {
		t.Fatalf("long line: %d jobs, %v", len(jobs), err)
	}
}

func TestSacctBadOptions(t *testing.T) {
	if _, err := NewSacctReader(strings.NewReader("1|x\n"), "f", SacctOptions{Delimiter: "\n"}); err == nil {
		t.Error("a newline delimiter was accepted")
	}
	_, err := NewSacctReader(strings.NewReader("1|x\n"), "f", SacctOptions{Fields: []string{"JobID,,Submit"}})
	var pe *ParseError
	if err == nil || errors.As(err, &pe) {
		t.Errorf("empty field name: error %v, want a plain option error", err)
	}
	_, err = NewSacctReader(strings.NewReader("1|x\n"), "f", SacctOptions{Fields: []string{"JobID", "End"}})
	if !errors.Is(err, ErrMissingColumn) {
		t.Errorf("fields without Submit: error %v, want ErrMissingColumn", err)
	}
}

var _ io.Reader = (*jobStream)(nil)

func fld(name, value string) workload.Field { return workload.Field{Name: name, Value: value} }
