package traces

import (
	"bytes"
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
