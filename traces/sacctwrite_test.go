package traces

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedsim/schedsim/workload"
)

// TestAppendSacctDuration: sacct's Elapsed and Timelimit form, HH:MM:SS
// below a day and D-HH:MM:SS (days unpadded) from one day on, as in the
// conformance records' sacct output (00:00:10, 00:01:00, 1-00:00:00).
func TestAppendSacctDuration(t *testing.T) {
	for _, tc := range []struct {
		secs int64
		want string
	}{
		{0, "00:00:00"}, {10, "00:00:10"}, {60, "00:01:00"}, {3599, "00:59:59"},
		{86399, "23:59:59"}, {86400, "1-00:00:00"}, {90061, "1-01:01:01"},
		{10 * 86400, "10-00:00:00"}, {-1, "INVALID"},
	} {
		if got := string(AppendSacctDuration(nil, tc.secs)); got != tc.want {
			t.Errorf("%d s: %q, want %q", tc.secs, got, tc.want)
		}
	}
}

// TestSacctMem: convert_num_unit's exact form. The conformance records
// (conformance/records/mixed-load/run1/sacct.txt) show ReqTRES mem=8000M
// (8000 is no multiple of 512), AllocTRES mem=62.50G (64000 MiB) and
// mem=250G (256000 MiB).
func TestSacctMem(t *testing.T) {
	for _, tc := range []struct {
		mb   int64
		want string
	}{
		{1, "1M"}, {1000, "1000M"}, {8000, "8000M"}, {1024, "1G"}, {1536, "1.50G"},
		{64000, "62.50G"}, {256000, "250G"}, {512 << 10, "512G"}, {1 << 20, "1T"},
	} {
		if got := SacctMem(tc.mb); got != tc.want {
			t.Errorf("%d MiB: %q, want %q", tc.mb, got, tc.want)
		}
	}
}

// TestSacctWriter: fields joined by "|" without a trailing one, a "|" in
// text as "¦" and line breaks as spaces (LastText keeps the "|"), times
// in the zone given, TRES sorted, and a row of the wrong width refused.
func TestSacctWriter(t *testing.T) {
	var buf bytes.Buffer
	sw := NewSacctWriter(&buf, []string{"JobID", "User", "Submit", "Elapsed", "ReqTRES", "JobName"})
	sw.Text("7")
	sw.Text("a|b\nc")
	sw.Time(1704067200, 90, time.UTC) // 2024-01-01T00:01:30Z
	sw.Duration(3661)
	sw.TRES([]string{"node=1", "cpu=2", "mem=8000M", "gres/gpu=1"})
	sw.LastText("x|y\rz")
	if err := sw.EndRow(); err != nil {
		t.Fatal(err)
	}
	sw.Text("8")
	sw.Text("u")
	sw.Time(0, workload.Unknown, nil)
	sw.Int(5)
	sw.TRES(nil)
	sw.LastText("")
	if err := sw.EndRow(); err != nil {
		t.Fatal(err)
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "JobID|User|Submit|Elapsed|ReqTRES|JobName\n" +
		"7|a¦b c|2024-01-01T00:01:30|01:01:01|cpu=2,gres/gpu=1,mem=8000M,node=1|x|y z\n" +
		"8|u|Unknown|5||\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	sw = NewSacctWriter(&bytes.Buffer{}, []string{"A", "B"})
	sw.Text("only one")
	if err := sw.EndRow(); err == nil || !strings.Contains(err.Error(), "1 fields, the header 2") {
		t.Errorf("short row: err %v", err)
	}
}

// BenchmarkSacctWrite writes 20,000 jobs of the benchmark sacct dump
// (benchSacct) back as sacct -P text and checks the row count.
func BenchmarkSacctWrite(b *testing.B) {
	const jobs = 20000
	sr, err := NewSacctReader(bytes.NewReader(benchSacct(jobs)), "bench", SacctOptions{Fields: JobinfoFields})
	if err != nil {
		b.Fatal(err)
	}
	var tr workload.Trace
	for {
		j, err := sr.Next()
		if err != nil {
			break
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	if len(tr.Jobs) != jobs {
		b.Fatalf("read %d jobs, want %d", len(tr.Jobs), jobs)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := WriteSacct(&buf, &tr, nil); err != nil {
			b.Fatal(err)
		}
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != jobs+1 {
		b.Fatalf("wrote %d lines, want %d", n, jobs+1)
	}
	b.ReportMetric(float64(jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// TestWriteSacctSubmitLine: fields only a SubmitLine carries (--requeue,
// an array task's throttle, --checkpoint, --switches=N@T) survive sacct
// for jobs read from a format without SubmitLines: the writer makes an
// sbatch line of them, the reader reads it back. A job's own SubmitLine is
// written as it is.
func TestWriteSacctSubmitLine(t *testing.T) {
	tr := &workload.Trace{Epoch: 1_700_000_000}
	a := workload.NewJob("5")
	a.Request.Nodes, a.Request.GPUs, a.Request.CPUs = 2, 8, 16
	a.Requeue, a.CheckpointInterval = true, 3600
	a.Request.Switches, a.Request.SwitchWait = 1, 300
	a.Runtime, a.TimeLimit = 60, 600
	b := workload.NewJob("6_2")
	b.ArrayJobID, b.ArrayTaskID, b.ArrayThrottle = "6", 2, 4
	b.Request.GPUs, b.Request.CPUs = 1, 2
	b.Submit, b.Runtime, b.TimeLimit = 5, 30, 600
	c := workload.NewJob("7")
	c.Request.GPUs, c.Request.CPUs = 1, 2
	c.Request.Switches = 2
	c.Extra = []workload.Field{{Name: "SubmitLine", Value: "sbatch --switches=2 -p gpu x.sh"}}
	c.Submit, c.Runtime, c.TimeLimit = 9, 30, 600
	d := workload.NewJob("8")
	d.Request.GPUs, d.Request.CPUs = 1, 2
	d.Submit, d.Runtime, d.TimeLimit = 10, 30, 600
	tr.Jobs = []workload.Job{a, b, c, d}

	var buf bytes.Buffer
	if err := WriteSacct(&buf, tr, nil); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		f := strings.Split(l, "|")
		lines = append(lines, f[len(f)-2]) // SubmitLine, before JobName
	}
	want := []string{"SubmitLine", "sbatch --requeue --checkpoint=01:00:00 --switches=1@00:05:00",
		"sbatch --array=2%4", "sbatch --switches=2 -p gpu x.sh", ""}
	if !slices.Equal(lines, want) {
		t.Fatalf("SubmitLine column %q, want %q", lines, want)
	}
	back, err := Read(bytes.NewReader(buf.Bytes()), "w.sacct", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := back.Trace.Jobs
	if len(got) != 4 {
		t.Fatalf("%d jobs back", len(got))
	}
	if j := got[0]; !j.Requeue || j.CheckpointInterval != 3600 || j.Request.Switches != 1 || j.Request.SwitchWait != 300 {
		t.Errorf("job 5 back: requeue %v checkpoint %d switches %d@%d; want true 3600 1@300", j.Requeue, j.CheckpointInterval, j.Request.Switches, j.Request.SwitchWait)
	}
	if j := got[1]; j.ArrayThrottle != 4 || j.ArrayJobID != "6" {
		t.Errorf("job 6_2 back: array %q throttle %d; want 6, 4", j.ArrayJobID, j.ArrayThrottle)
	}
	if j := got[2]; j.Request.Switches != 2 {
		t.Errorf("job 7 back: switches %d; want 2", j.Request.Switches)
	}
	if j := got[3]; j.Requeue || j.Request.Switches != 0 || slices.ContainsFunc(j.Extra, func(f workload.Field) bool { return f.Name == "SubmitLine" }) {
		t.Errorf("job 8 back: requeue %v switches %d extra %v; want no SubmitLine", j.Requeue, j.Request.Switches, j.Extra)
	}
}

// TestAppendSacctTimeAsFormat checks AppendSacctTime against
// time.Time.AppendFormat with its layout, across zones with daylight
// saving (their transitions included), fixed zones and UTC, and years
// from before 0 to past 9999.
func TestAppendSacctTimeAsFormat(t *testing.T) {
	var locs []*time.Location
	for _, name := range []string{"Europe/Stockholm", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Skipf("no zone data: %v", err)
		}
		locs = append(locs, loc)
	}
	locs = append(locs, nil, time.UTC, time.FixedZone("x", -(9*3600+30*60)), time.FixedZone("y", 14*3600))
	rng := rand.New(rand.NewPCG(9, 2))
	var us []int64
	for range 20000 {
		us = append(us, rng.Int64N(4_200_000_000)-100_000_000)
	}
	for _, u := range []int64{0, -1, 1, 1711846800 - 1, 1711846800, 1711846800 + 1, 1729990800 - 1, 1729990800, -62135596800 - 1, -62135596800, 253402300799, 253402300800, 1 << 40, -(1 << 40)} {
		us = append(us, u)
	}
	for _, loc := range locs {
		ref := loc
		if ref == nil {
			ref = time.UTC
		}
		for _, u := range us {
			want := time.Unix(u, 0).In(ref).AppendFormat(nil, "2006-01-02T15:04:05")
			if got := AppendSacctTime(nil, u, loc); string(got) != string(want) {
				t.Fatalf("%d in %v: %q, want %q", u, loc, got, want)
			}
		}
	}
}
