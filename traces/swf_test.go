package traces

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/workload"
)

func readSWF(t testing.TB, input, path string, opts SWFOptions) ([]workload.Job, *SWFReader, error) {
	t.Helper()
	sr, err := NewSWFReader(strings.NewReader(input), path, opts)
	if err != nil {
		return nil, nil, err
	}
	jobs, err := readAll(sr.Next)
	return jobs, sr, err
}

func TestSWFHeaderCTC(t *testing.T) {
	_, sr, err := readSWF(t, mustRead(t, "testdata/ctc_head.swf"), "ctc_head.swf", SWFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := sr.Header()
	got := h
	got.Fields = nil
	want := SWFHeader{
		Version:        "2.2",
		Computer:       "IBM SP2",
		Installation:   "Cornell Theory Center (CTC)",
		MaxJobs:        79302,
		MaxRecords:     79302,
		UnixStartTime:  835823160,
		TimeZone:       -18000,
		TimeZoneString: "US/Eastern",
		MaxNodes:       338, // "338 (batch partition; 512 total)"
		MaxProcs:       338,
		Queues:         []SWFUnit{{1, "DSI"}, {2, "astro"}, {3, "piofs"}, {4, "informix"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if len(h.Fields) != 29 {
		t.Errorf("%d header lines kept, want 29", len(h.Fields))
	}
	wantFields := []SWFHeaderField{
		{Key: "Information", Value: "http://www.tc.cornell.edu/"},
		{Value: "              http://www.cs.huji.ac.il/labs/parallel/workload/"}, // continuation, not key "http"
	}
	if diff := cmp.Diff(wantFields, h.Fields[4:6]); diff != "" {
		t.Errorf("fields 5-6 (-want +got):\n%s", diff)
	}
	if v, ok := h.Get("maxnodes"); !ok || v != "338 (batch partition; 512 total)" {
		t.Errorf("Get(maxnodes) = %q, %v", v, ok)
	}
}

func TestSWFJobsCTC(t *testing.T) {
	jobs, sr, err := readSWF(t, mustRead(t, "testdata/ctc_head.swf"), "ctc_head.swf", SWFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 11 || sr.Skipped() != 0 {
		t.Fatalf("%d jobs, %d skipped; want 11, 0", len(jobs), sr.Skipped())
	}
	// "    1        0 588530    937  306 142.00    -1   -1  35100    -1  1  97  -1 307  3 -1 -1 -1"
	want := job("1", func(j *workload.Job) {
		j.User = "u97"
		j.Partition = "3"                       // queue 3 (piofs): partition is -1
		j.Request = workload.Request{CPUs: 306} // requested procs -1: allocated
		j.TimeLimit = 35100
		j.Runtime = 937
		j.Submit = 835823160
		j.TraceState = "COMPLETED"
		j.TraceStart = 835823160 + 588530
		j.TraceEnd = 835823160 + 588530 + 937
		j.Extra = []workload.Field{
			fld("allocated_processors", "306"), fld("average_cpu_time", "142.00"),
			fld("executable_number", "307"), fld("queue_number", "3"),
		}
	})
	if diff := cmp.Diff(want, jobs[0]); diff != "" {
		t.Errorf("job 1 (-want +got):\n%s", diff)
	}
	if jobs[2].TraceState != "FAILED" {
		t.Errorf("job 3 state %q, want FAILED (status 0)", jobs[2].TraceState)
	}
}

func TestSWFThunderExcerpt(t *testing.T) {
	jobs, sr, err := readSWF(t, mustRead(t, "testdata/thunder_excerpt.swf"), "thunder_excerpt.swf", SWFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 14 records: the phantoms 299 and 306 (all -1) are skipped; 3457
	// (a submit time, run time 0, no processors, status 0) failed
	// before it started and is a job.
	st := sr.Stats()
	wantStats := SWFStats{Lines: 40, Records: 14, Jobs: 12, Skipped: 2, NoSubmit: 2, NoProcs: 1, NeverStarted: 1}
	if diff := cmp.Diff(wantStats, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	got := byID(jobs)
	for _, id := range []string{"299", "306"} {
		if _, ok := got[id]; ok {
			t.Errorf("phantom %s returned as a job", id)
		}
	}
	const ust = 1170175078
	want := []workload.Job{
		job("1", func(j *workload.Job) {
			// requested 156, allocated 472: the request is field 8.
			j.User, j.Partition, j.TraceState = "u16", "1", "FAILED"
			j.Request = workload.Request{CPUs: 156}
			j.Runtime, j.Submit = 34616, ust
			j.Extra = []workload.Field{
				fld("allocated_processors", "472"), fld("requested_processors", "156"),
				fld("executable_number", "64"), fld("partition_number", "1"),
			}
		}),
		job("60", func(j *workload.Job) {
			// Cancelled after running 48 s: a normal run.
			j.User, j.Partition, j.TraceState = "u13", "2", "CANCELLED"
			j.Request = workload.Request{CPUs: 8}
			j.TimeLimit, j.Runtime, j.Submit = 1800, 48, ust+260953
			j.Extra = []workload.Field{
				fld("allocated_processors", "8"), fld("requested_processors", "8"),
				fld("executable_number", "22"), fld("partition_number", "2"),
			}
		}),
		job("3457", func(j *workload.Job) {
			// "3457 699978 -1 0 -1 -1 -1 -1 -1 -1 0 44 -1 617 -1 2 -1 -1":
			// failed before it started: no request, leaves at its submit.
			j.User, j.Partition, j.TraceState = "u44", "2", "FAILED"
			j.Submit = ust + 699978
			j.CancelAfter = 0
			j.Extra = []workload.Field{fld("executable_number", "617"), fld("partition_number", "2")}
		}),
		job("5579", func(j *workload.Job) {
			// Cancelled with run time 0 and no wait time: before it started.
			j.User, j.Partition, j.TraceState = "u33", "1", "CANCELLED"
			j.Request = workload.Request{CPUs: 4}
			j.Submit = ust + 986396
			j.CancelAfter = 0
			j.Extra = []workload.Field{
				fld("allocated_processors", "4"), fld("requested_processors", "4"),
				fld("executable_number", "1045"), fld("partition_number", "1"),
			}
		}),
	}
	for _, w := range want {
		if diff := cmp.Diff(w, got[w.ID]); diff != "" {
			t.Errorf("job %s (-want +got):\n%s", w.ID, diff)
		}
	}
	notes := strings.Join(sr.Notes(), "\n")
	if !strings.Contains(notes, "skipped 2 SWF records without a submit time (phantoms, not jobs)") ||
		!strings.Contains(notes, "1 jobs have no processors and no run time: failed or cancelled before they started") {
		t.Errorf("notes:\n%s", notes)
	}
	if h := sr.Header(); h.MaxNodes != 1002 || h.MaxProcs != 4008 || len(h.Partitions) != 2 || h.Partitions[0].Name != "pbatch" {
		t.Errorf("header %+v", h)
	}
}

func TestSWFHPC2NAndKTH(t *testing.T) {
	jobs, sr, err := readSWF(t, mustRead(t, "testdata/hpc2n_head.swf"), "hpc2n_head.swf", SWFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 13 {
		t.Fatalf("%d jobs, want 13", len(jobs))
	}
	h := sr.Header()
	if diff := cmp.Diff([]SWFUnit{{1, "[fque:1]"}}, h.Queues); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]SWFUnit{{1, "DEFAULT"}, {2, "ALL"}}, h.Partitions); diff != "" {
		t.Errorf("partitions (-want +got):\n%s", diff)
	}
	got := byID(jobs)
	if j := got["18"]; j.TraceState != "" || j.Runtime != 240135 {
		t.Errorf("job 18 (status -1): state %q runtime %d", j.TraceState, j.Runtime)
	}
	if v, _ := extraValue(ptr(got["36"]), "average_cpu_time"); v != "182.97" {
		t.Errorf("job 36 average_cpu_time %q, want the raw 182.97", v)
	}
	if j := got["36"]; j.TraceStart-j.Submit != 165 || j.User != "u4" || j.Partition != "1" {
		t.Errorf("job 36: %+v", j)
	}

	jobs, _, err = readSWF(t, mustRead(t, "testdata/kth_head.swf"), "kth_head.swf", SWFOptions{})
	if err != nil || len(jobs) != 6 || jobs[0].ID != "15" || jobs[0].Submit != 843480031+599850 {
		t.Fatalf("kth: %d jobs, %v", len(jobs), err)
	}
}

func ptr(j workload.Job) *workload.Job { return &j }

func TestSWFOptions(t *testing.T) {
	in := mustRead(t, "testdata/ctc_head.swf")
	tests := []struct {
		name string
		opts SWFOptions
		want workload.Request
	}{
		{name: "procs", opts: SWFOptions{}, want: workload.Request{CPUs: 306}},
		{name: "per node", opts: SWFOptions{ProcsPerNode: 4}, want: workload.Request{Nodes: 77, CPUs: 306}},      // ceil(306/4)
		{name: "per gpu", opts: SWFOptions{ProcsPerGPU: 8}, want: workload.Request{GPUs: 39}},                    // ceil(306/8)
		{name: "gpu wins", opts: SWFOptions{ProcsPerNode: 4, ProcsPerGPU: 1}, want: workload.Request{GPUs: 306}}, // one GPU per proc
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, _, err := readSWF(t, in, "ctc", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, jobs[0].Request); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := NewSWFReader(strings.NewReader(""), "x", SWFOptions{ProcsPerGPU: -1}); err == nil {
		t.Error("negative ProcsPerGPU accepted")
	}
}

func TestSWFNoHeader(t *testing.T) {
	in := "1 10 5 100 4 -1 -1 4 200 -1 1 3 -1 -1 -1 -1 -1 -1\n\t2\t20\t-1\t0\t2\t-1\t-1\t-1\t-1\t-1\t5\t3\t-1\t-1\t-1\t-1\t-1\t-1\n"
	jobs, _, err := readSWF(t, in, "bare.swf", SWFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []workload.Job{
		job("1", func(j *workload.Job) {
			j.User, j.TraceState = "u3", "COMPLETED"
			j.Request = workload.Request{CPUs: 4}
			j.TimeLimit, j.Runtime, j.Submit = 200, 100, 10 // no UnixStartTime: 0
			j.TraceStart, j.TraceEnd = 15, 115
			j.Extra = []workload.Field{fld("allocated_processors", "4"), fld("requested_processors", "4")}
		}),
		job("2", func(j *workload.Job) {
			j.User, j.TraceState = "u3", "CANCELLED"
			j.Request = workload.Request{CPUs: 2}
			j.Submit, j.CancelAfter = 20, 0
			j.Extra = []workload.Field{fld("allocated_processors", "2")}
		}),
	}
	if diff := cmp.Diff(want, jobs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSWFErrors(t *testing.T) {
	const good = "    1        0 588530    937  306 142.00    -1   -1  35100    -1  1  97  -1 307  3 -1 -1 -1"
	hdr := "; Version: 2.2\n; UnixStartTime: 835823160\n"
	rec := func(field int, val string) string {
		f := strings.Fields(good)
		f[field-1] = val
		return strings.Join(f, " ")
	}
	tests := []struct {
		name  string
		in    string
		line  int
		field string
		value string
		err   error
		msg   string
	}{
		{name: "negative run time", in: hdr + good + "\n" + rec(4, "-5") + "\n", line: 4, field: "run_time", value: "-5", err: ErrRange,
			msg: `jobs.swf:4: run_time: "-5": must be >= 0 or -1 (unknown)`},
		{name: "letters", in: hdr + rec(12, "bob") + "\n", line: 3, field: "user_id", value: "bob", err: ErrSyntax},
		{name: "exponent", in: hdr + rec(2, "1e5") + "\n", line: 3, field: "submit_time", value: "1e5", err: ErrSyntax},
		{name: "huge procs", in: hdr + rec(5, "99999999999") + "\n", line: 3, field: "allocated_processors", value: "99999999999", err: ErrRange},
		{name: "huge number", in: hdr + rec(9, "999999999999999999999") + "\n", line: 3, field: "requested_time", value: "999999999999999999999", err: ErrRange},
		{name: "17 fields", in: hdr + "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", line: 3, err: ErrFieldCount,
			msg: `jobs.swf:3: 17 fields, want 18`},
		{name: "19 fields", in: hdr + good + " 19\n", line: 3, err: ErrFieldCount},
		{name: "bad header number", in: "; MaxNodes: lots\n", line: 1, field: "MaxNodes", value: "lots", err: ErrSyntax},
		{name: "empty header number", in: "; Version: 2\n; MaxProcs:\n", line: 2, field: "MaxProcs", value: "", err: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readSWF(t, tt.in, "jobs.swf", SWFOptions{})
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

func TestSWFLenient(t *testing.T) {
	in := mustRead(t, "testdata/kth_head.swf") + "21 1 2 3\n22 x 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n; a late comment\n"
	jobs, sr, err := readSWF(t, in, "k.swf", SWFOptions{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 6 || sr.Stats().Bad != 2 || sr.Stats().Comments != 1 {
		t.Errorf("%d jobs, stats %+v; want 6 jobs, 2 bad lines, 1 late comment", len(jobs), sr.Stats())
	}
	notes := strings.Join(sr.Notes(), "\n")
	if !strings.Contains(notes, "skipped 2 bad lines (lenient); first: k.swf:31: 4 fields, want 18; k.swf:32: submit_time: \"x\"") {
		t.Errorf("notes:\n%s", notes)
	}
}

// TestSWFRoundTrip writes each fixture excerpt back and reads it again.
func TestSWFRoundTrip(t *testing.T) {
	for _, f := range []string{"ctc_head.swf", "thunder_excerpt.swf", "hpc2n_head.swf", "kth_head.swf"} {
		t.Run(f, func(t *testing.T) {
			jobs, sr, err := readSWF(t, mustRead(t, "testdata/"+f), f, SWFOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WriteSWF(&buf, sr.Header(), &workload.Trace{Jobs: jobs}); err != nil {
				t.Fatal(err)
			}
			jobs2, sr2, err := readSWF(t, buf.String(), f+" (written)", SWFOptions{})
			if err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			if diff := cmp.Diff(jobs, jobs2); diff != "" {
				t.Errorf("jobs (-read +reread):\n%s", diff)
			}
			if diff := cmp.Diff(sr.Header(), sr2.Header()); diff != "" {
				t.Errorf("header (-read +reread):\n%s", diff)
			}
		})
	}
}

// TestWriteSWFFromSacct writes sacct jobs, which have no SWF Extra fields,
// with a synthesized header.
func TestWriteSWFFromSacct(t *testing.T) {
	jobs, _, err := readSacct(t, mustRead(t, "testdata/synthetic_header.psv"), "s", SacctOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := &workload.Trace{Jobs: jobs}
	tr.Rebase(0)
	var buf bytes.Buffer
	h := SWFHeader{UnixStartTime: tr.Epoch, MaxNodes: 4}
	if err := WriteSWF(&buf, h, tr); err != nil {
		t.Fatal(err)
	}
	back, sr, err := readSWF(t, buf.String(), "w.swf", SWFOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if len(back) != len(jobs) || sr.Header().MaxNodes != 4 || sr.Header().UnixStartTime != tr.Epoch {
		t.Fatalf("%d jobs back of %d; header %+v", len(back), len(jobs), sr.Header())
	}
	for i, j := range tr.Jobs {
		b := back[i]
		if int64(b.Submit) != tr.Epoch+int64(j.Submit) || b.Runtime != j.Runtime || b.TimeLimit != j.TimeLimit ||
			b.Request.CPUs != max(j.Request.CPUs, j.Request.GPUs*boolInt(j.Request.CPUs == 0)) || b.CancelAfter != j.CancelAfter {
			t.Errorf("job %s written as line %d: %+v", j.ID, i+1, b)
		}
	}
	// Non-numeric partitions are numbered and named in the header.
	if !strings.Contains(buf.String(), "; Partition: 1 gpu\n; Partition: 2 cpu\n") {
		t.Errorf("partition lines missing:\n%s", buf.String())
	}
	// A submit before the header's start time cannot be written.
	h.UnixStartTime = tr.Epoch + 1
	if err := WriteSWF(&bytes.Buffer{}, h, tr); err == nil {
		t.Error("negative submit time written")
	}
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// TestSWFFieldScan checks the values the line scan reads itself (up to 15
// digits, -1) and those it leaves to parseSWFNum, against parseSWFNum on
// the same field: a 15- and a 16-digit run time, leading zeros, a sign, a
// decimal, and errors in two fields (the first in field order is named).
func TestSWFFieldScan(t *testing.T) {
	const good = "1 0 10 20 4 -1 -1 4 100 -1 1 7 -1 -1 1 -1 -1 -1"
	hdr := "; UnixStartTime: 0\n"
	rec := func(vals map[int]string) string {
		f := strings.Fields(good)
		for k, v := range vals {
			f[k-1] = v
		}
		return strings.Join(f, "\t") + "\n"
	}
	for _, in := range []string{"20", "0020", "123456789012345", "1234567890123456", "+20", "20.5", "19.49", "-1"} {
		want, werr := parseSWFNum([]byte(in))
		jobs, _, err := readSWF(t, hdr+rec(map[int]string{4: in}), "scan.swf", SWFOptions{})
		if (err != nil) != (werr != nil) {
			t.Fatalf("run time %q: error %v, parseSWFNum's %v", in, err, werr)
		}
		if err != nil {
			continue
		}
		if want < 0 {
			want = 0 // no run time is kept as 0
		}
		if len(jobs) != 1 || int64(jobs[0].Runtime) != want {
			t.Errorf("run time %q: got %v, want %d", in, jobs, want)
		}
	}
	_, _, err := readSWF(t, hdr+rec(map[int]string{5: "x", 3: "1e3", 9: "-7"}), "scan.swf", SWFOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Field != "wait_time" || pe.Value != "1e3" {
		t.Errorf("error %v, want wait_time \"1e3\" (field 3, the first bad one)", err)
	}
}
