package traces

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/workload"
)

// maxFuzzJobs bounds the jobs read per input: one pending array record
// may stand for millions of tasks.
const maxFuzzJobs = 5000

// checkParseError fails unless err is a *ParseError with Line > 0.
func checkParseError(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line <= 0 {
		t.Fatalf("error %v (%T) is not a *ParseError with Line > 0", err, err)
	}
	_ = pe.Error()
}

// checkJob fails on values a reader must never produce.
func checkJob(t *testing.T, j workload.Job) {
	t.Helper()
	r := j.Request
	if j.ID == "" || j.Runtime < 0 || j.CancelAfter < workload.Unknown || j.TimeLimit < workload.Unknown ||
		r.Nodes < 0 || r.GPUs < 0 || r.CPUs < 0 || r.MemMB < 0 || (j.CancelAfter >= 0 && j.Runtime != 0) {
		t.Fatalf("bad job %+v", j)
	}
}

func addFileSeeds(f *testing.F, glob string) {
	files, _ := filepath.Glob(glob)
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzSacctRead: the sacct reader never panics, and its errors are
// *ParseError with a line number, with a header row or a field list,
// strict or lenient.
func FuzzSacctRead(f *testing.F) {
	addFileSeeds(f, "testdata/*.sacct")
	addFileSeeds(f, "testdata/hostile/*.sacct")
	addFileSeeds(f, "testdata/*.psv")
	for _, s := range []string{
		"JobID|Submit\n1|2024-01-01T00:00:00\n1.batch|x\n",
		"JobID|Submit|State\n1_[1-3%2]|2024-01-01T00:00:00|PENDING\n",
		"JobID|Submit|State\n1_[1-3,...]|2024-01-01T00:00:00|CANCELLED by 0\n",
		"JobID|Submit|Elapsed|Timelimit|ReqTRES|ReqMem\n1+0|2024-01-01T00:00:00|1-00:00:00|UNLIMITED|gres/gpu:h100=8,gres/gpu=8|4000Mc\n",
		"JobID|Submit|ReqGRES|AllocGRES|NNodes\n1|1700000000|gpu:v100:2(IDX:0,1)|gpu:4|2\n",
		"JobID|Submit|Dependency\n1|2024-01-01T00:00:00|afterok:1:2?singleton\n",
		"JobID☃Submit☃\n1☃2024-01-01T00:00:00☃\n",
		"JobID|Submit|JobName\n1|2024-01-01T00:00:00|a|b|c\n",
		"JobID|Submit\n1|2024-02-30T00:00:00\n",
		"JobID|Submit\n|\n",
		"4047445☃0JZ9☃user4987☃gpushort☃None assigned☃1☃0☃☃CANCELLED by 10290820☃2023-09-01T14:54:50☃None☃2023-09-01T14:55:57☃00:30:00☃00:00:00☃",
		"JobID|Submit|Timelimit|SubmitLine\n1_2|2024-01-01T00:00:00||sbatch --requeue -t 5 --array=1-3%2 -d afterok:1 --begin=now+1h 'x y' \"z\"\n",
		twoDumps,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The whole read: the first pass that drops repeated records,
		// SubmitLine, and the limits.
		res, err := Read(bytes.NewReader(data), "fuzz", Options{Format: FormatSacct, Lenient: len(data)%2 == 0,
			Limits: Limits{MaxJobs: maxFuzzJobs, MaxArrayTasks: maxFuzzJobs}})
		if err != nil {
			checkParseError(t, err)
		} else {
			for _, j := range res.Trace.Jobs {
				checkJob(t, j)
			}
		}
		for _, opts := range []SacctOptions{
			{},
			{Lenient: true},
			{Fields: JobinfoFields},
			{Fields: []string{"JobID", "Submit", "Start", "End", "State", "Elapsed", "ReqTRES", "AllocTRES", "ReqMem", "NNodes", "NCPUS"}, Delimiter: "|", Lenient: true},
		} {
			sr, err := NewSacctReader(bytes.NewReader(data), "fuzz", opts)
			if err != nil {
				checkParseError(t, err)
				continue
			}
			for range maxFuzzJobs {
				j, err := sr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					checkParseError(t, err)
					break
				}
				checkJob(t, j)
			}
			_ = sr.Notes()
		}
	})
}

// FuzzSWFRead: the SWF reader never panics, and its errors are
// *ParseError with a line number.
func FuzzSWFRead(f *testing.F) {
	addFileSeeds(f, "testdata/*.swf")
	for _, s := range []string{
		"; MaxNodes: 338 (batch partition; 512 total)\n1 0 1 2 3 -1 -1 -1 4 -1 1 2 -1 -1 -1 -1 -1 -1\n",
		"  299       -1     -1     -1   -1     -1    -1   -1     -1    -1  1  36  -1  66 -1  2 -1 -1\n",
		"1 0 1 -5 3 -1 -1 -1 4 -1 1 2 -1 -1 -1 -1 -1 -1\n",
		"1 0 1 2 3\n",
		"1 0 1 2 3 1e5 -1 -1 4 -1 1 2 -1 -1 -1 -1 -1 -1\n",
		"; UnixStartTime: x\n",
		"1 0.5 1.5 2.5 3.5 -1.0 -1 -1 4 -1 5 2 -1 -1 -1 -1 -1 -1 19\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []SWFOptions{{}, {Lenient: true, ProcsPerNode: 4}, {ProcsPerGPU: 3}} {
			sr, err := NewSWFReader(bytes.NewReader(data), "fuzz.swf", opts)
			if err != nil {
				checkParseError(t, err)
				continue
			}
			for {
				j, err := sr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					checkParseError(t, err)
					break
				}
				checkJob(t, j)
			}
			_ = sr.Notes()
		}
	})
}

// FuzzSWFRoundTrip: whatever the SWF reader accepts, WriteSWF writes so
// that reading it again gives the same header and jobs.
func FuzzSWFRoundTrip(f *testing.F) {
	addFileSeeds(f, "testdata/*.swf")
	f.Add([]byte("1 0.5 1.5 2.5 3.5 -1.0 -1 -1 4 -1 5 2 -1 -1 -1 -1 -1 -1\n2 3 -1 0 2 -1 -1 -1 -1 -1 5 -1 -1 -1 -1 -1 -1 -1\n"))
	f.Add([]byte(";  continuation\n;\n; Note: x\n3 0 1 2 3 -1 -1 7 4 -1 3 2 9 -1 1 2 1 60\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sr, err := NewSWFReader(bytes.NewReader(data), "a", SWFOptions{})
		if err != nil {
			return
		}
		jobs, err := readAll(sr.Next)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteSWF(&buf, sr.Header(), &workload.Trace{Jobs: jobs}); err != nil {
			t.Fatalf("write: %v", err)
		}
		sr2, err := NewSWFReader(bytes.NewReader(buf.Bytes()), "b", SWFOptions{})
		if err != nil {
			t.Fatalf("reading written header: %v\n%s", err, buf.Bytes())
		}
		jobs2, err := readAll(sr2.Next)
		if err != nil {
			t.Fatalf("reading written jobs: %v\n%s", err, buf.Bytes())
		}
		// A file without header comments gets a synthesized header; else the
		// header is written verbatim.
		h1, h2 := sr.Header(), sr2.Header()
		if len(h1.Fields) == 0 {
			h2 = SWFHeader{UnixStartTime: h2.UnixStartTime}
		}
		if diff := cmp.Diff(h1, h2); diff != "" {
			t.Fatalf("header (-first +second):\n%s", diff)
		}
		if diff := cmp.Diff(jobs, jobs2); diff != "" {
			t.Fatalf("jobs (-first +second):\n%s\nwritten:\n%s", diff, buf.Bytes())
		}
	})
}
