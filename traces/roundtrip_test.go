package traces

import (
	"bytes"
	"cmp"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/workload"
)

// fixtureOptions are the read options each real fixture needs.
var fixtureOptions = map[string]Options{
	"sacct-parsable_habrok-rug.txt":                {Sacct: SacctOptions{Fields: JobinfoFields}},
	"slurm-csv_nrel-eagle_first1000.csv":           {},
	"alibaba-gpu2023_openb_pod_list_default.csv":   {},
	"CTC-SP2-1996-3.1-cln.swf.gz":                  {},
	"LLNL-Thunder-2007-1.1-cln.swf.gz":             {},
	"KTH-SP2-1996-2.1-cln.swf.gz":                  {},
	"HPC2N-2002-2.1-cln.first20000.swf.gz":         {},
	"testdata/habrok_excerpt.sacct":                {Sacct: SacctOptions{Fields: JobinfoFields}},
	"testdata/synthetic_header.psv":                {},
	"testdata/thunder_excerpt.swf":                 {},
	"testdata/ctc_head.swf":                        {},
	"testdata/eagle_excerpt.csv":                   {},
	"testdata/alibaba_pods_excerpt.csv":            {},
	"testdata/helios_schema_excerpt.csv":           {},
	"testdata/philly_schema_excerpt.json":          {},
	"testdata/csv_sentinels.csv":                   {Format: FormatCSV, CSV: sentinelMap},
	"alibaba-gpu2023_openb_node_list_all_node.csv": {Format: "skip"},
}

// sentinelMap reads testdata/csv_sentinels.csv.
var sentinelMap = CSVMap{Name: "test", Fields: map[string]CSVColumn{
	"id": {Column: "JobID"}, "submit": {Column: "Submitted", Unit: "unix"}, "start": {Column: "Started", Unit: "unix"},
	"end": {Column: "Ended", Unit: "unix"}, "limit": {Column: "Limit", Unit: "min"}, "gpus": {Column: "GPUs"},
	"mem": {Column: "Mem", Unit: "gib"}, "state": {Column: "State"}, "user": {Column: "Owner"},
}}

// roundTripFiles lists the fixtures: the shared ones when present, and the
// testdata excerpts always.
func roundTripFiles(t *testing.T) []string {
	var files []string
	for name, o := range fixtureOptions {
		if o.Format == "skip" {
			continue
		}
		if strings.HasPrefix(name, "testdata/") {
			files = append(files, name)
		}
	}
	slices.Sort(files)
	if dir := sharedTracesOrEmpty(t); dir != "" {
		var shared []string
		for name, o := range fixtureOptions {
			if o.Format != "skip" && !strings.HasPrefix(name, "testdata/") {
				shared = append(shared, filepath.Join(dir, name))
			}
		}
		slices.Sort(shared)
		files = append(files, shared...)
	}
	return files
}

// sharedTracesOrEmpty is sharedTraces without the skip.
func sharedTracesOrEmpty(t *testing.T) string {
	var dir string
	t.Run("shared", func(t *testing.T) { dir = sharedTraces(t) })
	return dir
}

func optionsFor(path string) Options {
	if o, ok := fixtureOptions[path]; ok {
		return o
	}
	return fixtureOptions[filepath.Base(path)]
}

// sacctProjection is what a job keeps through sacct: everything but ids
// that are not Slurm job ids, Extra "ReqTRES" (re-derived) and the order
// of Extra. (A SubmitLine the writer made comes back as an Extra of its
// own; the test drops it, see dropMadeSubmitLine.)
func sacctProjection(j workload.Job) workload.Job {
	if _, err := parseJobID([]byte(j.ID)); err != nil || strings.ContainsAny(j.ID, ".|") {
		j.ID = ""
	}
	var ex []workload.Field
	for _, f := range j.Extra {
		if f.Name != "ReqTRES" {
			ex = append(ex, f)
		}
	}
	slices.SortStableFunc(ex, func(a, b workload.Field) int { return cmp.Compare(a.Name, b.Name) })
	j.Extra = ex
	if len(j.Deps) == 0 {
		j.Deps = nil
	}
	return j
}

// swfProjection is what any job keeps through SWF: submit, runtime, limit,
// start, the processor count and the outcome class.
type swfJob struct {
	Submit, Runtime, Limit, Start workload.Time
	Procs                         int32
	Status                        string
}

func swfProjection(j workload.Job) swfJob {
	p := swfJob{Submit: j.Submit, Runtime: j.Runtime, Limit: j.TimeLimit, Start: j.TraceStart, Procs: j.Request.CPUs, Status: swfStatus(j.TraceState)}
	if p.Procs <= 0 {
		p.Procs = j.Request.GPUs
	}
	if p.Limit == 0 {
		p.Limit = workload.Unknown
	}
	if j.CancelledPending() {
		p.Start = workload.Unknown
	}
	return p
}

// TestRoundTrip reads every fixture, writes it in every writable format
// and reads it back: Arrow and Parquet keep every field; sacct every field
// but non-Slurm ids; SWF the fields SWF has (a job without processors
// and run time reads back as never started).
func TestRoundTrip(t *testing.T) {
	for _, path := range roundTripFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			opts := optionsFor(path)
			res, err := Open(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			orig := res.Trace
			if len(orig.Jobs) == 0 {
				t.Fatal("no jobs")
			}
			for _, format := range WriteFormats() {
				t.Run(format, func(t *testing.T) {
					var buf bytes.Buffer
					wo := WriteOptions{SacctUTC: true}
					if err := Write(&buf, format, orig, wo); err != nil {
						t.Fatal(err)
					}
					ro := Options{}
					if format == FormatSacct {
						ro.Format = FormatSacct
					}
					back, err := Read(bytes.NewReader(buf.Bytes()), "written."+format, ro)
					if err != nil {
						t.Fatalf("read back: %v", err)
					}
					if back.Format != format {
						t.Errorf("detected %s, want %s", back.Format, format)
					}
					got := back.Trace
					switch format {
					case FormatArrow, FormatParquet:
						if got.Epoch != orig.Epoch || got.TimeZone != orig.TimeZone {
							t.Errorf("epoch, zone = %d %q, want %d %q", got.Epoch, got.TimeZone, orig.Epoch, orig.TimeZone)
						}
						diffJobs(t, orig.Jobs, got.Jobs)
					case FormatSacct:
						if len(got.Jobs) != len(orig.Jobs) {
							t.Fatalf("%d jobs back, want %d", len(got.Jobs), len(orig.Jobs))
						}
						a, b := mapJobs(orig, sacctProjection), mapJobs(got, sacctProjection)
						for i := range a {
							if a[i].ID == "" {
								b[i].ID = "" // renumbered
							}
							b[i].Extra = dropMadeSubmitLine(a[i].Extra, b[i].Extra)
						}
						diffJobs(t, a, b)
					case FormatSWF:
						// A job without processors and run time reads
						// back as never started: its start is not kept.
						norm := func(p swfJob) swfJob {
							if p.Procs <= 0 && p.Runtime == 0 {
								p.Start = workload.Unknown
							}
							return p
						}
						a, b := mapJobs(orig, swfProjection), mapJobs(got, swfProjection)
						for i := range a {
							a[i] = norm(a[i])
						}
						for i := range b {
							b[i] = norm(b[i])
						}
						diffJobs(t, a, b)
					}
				})
			}
		})
	}
}

// dropMadeSubmitLine returns back without a SubmitLine field when orig has
// none: WriteSacct made it (for --requeue, throttles, --checkpoint,
// --switches) and the reader keeps it.
func dropMadeSubmitLine(orig, back []workload.Field) []workload.Field {
	if slices.ContainsFunc(orig, func(f workload.Field) bool { return f.Name == "SubmitLine" }) {
		return back
	}
	return slices.DeleteFunc(back, func(f workload.Field) bool { return f.Name == "SubmitLine" })
}

func mapJobs[T any](t *workload.Trace, f func(workload.Job) T) []T {
	out := make([]T, len(t.Jobs))
	for i, j := range t.Jobs {
		// Compare absolute times: the readers rebase on the first submit.
		j.Submit += workload.Time(t.Epoch)
		if j.TraceStart != workload.Unknown {
			j.TraceStart += workload.Time(t.Epoch)
		}
		if j.TraceEnd != workload.Unknown {
			j.TraceEnd += workload.Time(t.Epoch)
		}
		out[i] = f(j)
	}
	return out
}

// diffJobs compares cheaply and shows the first differing element.
func diffJobs[T any](t *testing.T, a, b []T) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%d jobs back, want %d", len(b), len(a))
	}
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Errorf("job %d (-orig +back):\n%s", i, gocmp.Diff(a[i], b[i]))
			return
		}
	}
}

// TestRoundTripSubGPU: MIG and MPS requests survive sacct read → write →
// read: a bare MIG profile, a typed one (h100_1g.20gb), one per node on two
// nodes (old ReqGRES), an MPS share on one node and one on two nodes
// (gres/mps is the job's total: 2 × 50 = 100).
func TestRoundTripSubGPU(t *testing.T) {
	in := "JobID|Submit|Start|End|State|NNodes|NCPUS|ReqTRES|ReqGRES|Timelimit\n" +
		"1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|1|2|billing=2,cpu=2,gres/gpu:1g.10gb=2,gres/gpu=2,node=1||01:00:00\n" +
		"2|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|1|3|billing=3,cpu=3,gres/gpu:h100_1g.20gb=3,gres/gpu=3,node=1||01:00:00\n" +
		"3|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|2|2|billing=2,cpu=2,node=2|gpu:3g.40gb:1|01:00:00\n" +
		"4|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|1|1|billing=1,cpu=1,gres/mps=25,node=1||01:00:00\n" +
		"5|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|COMPLETED|2|4|billing=4,cpu=4,gres/mps=100,node=2||01:00:00\n"
	orig, err := Read(strings.NewReader(in), "subgpu.sacct", Options{Format: FormatSacct})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, FormatSacct, orig.Trace, WriteOptions{SacctUTC: true}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"gres/gpu:1g.10gb=2,gres/gpu=2,", "gres/gpu:h100_1g.20gb=3,gres/gpu=3,", "gres/gpu:3g.40gb=2,gres/gpu=2,",
		"gres/gpu=0,gres/mps=25,mem=", "gres/gpu=0,gres/mps=100,mem="} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("written sacct lacks %q:\n%s", s, buf.String())
		}
	}
	back, err := Read(bytes.NewReader(buf.Bytes()), "written.sacct", Options{Format: FormatSacct})
	if err != nil {
		t.Fatal(err)
	}
	a, b := mapJobs(orig.Trace, sacctProjection), mapJobs(back.Trace, sacctProjection)
	diffJobs(t, a, b)
	var mig, mps int
	for _, j := range b {
		if j.Request.MIGProfile != 0 {
			mig++
		}
		if j.Request.MPSShare > 0 {
			mps++
		}
	}
	if mig != 3 || mps != 2 {
		t.Errorf("read back %d MIG and %d MPS requests, want 3 and 2", mig, mps)
	}

	// Arrow and Parquet keep MIGProfile and MPSShare as they are, a
	// media-extension profile included.
	tr := *orig.Trace
	tr.Jobs = slices.Clone(tr.Jobs)
	me := workload.NewJob("6")
	me.Request.GPUs, me.Request.GPUType, me.Request.CPUs = 1, "a100", 1
	me.Request.MIGProfile, _ = workload.NewMIGProfile(1, 10, true)
	tr.Jobs = append(tr.Jobs, me)
	for _, format := range []string{FormatArrow, FormatParquet} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, format, &tr, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			back, err := Read(bytes.NewReader(buf.Bytes()), "written."+format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			diffJobs(t, mapJobs(&tr, func(j workload.Job) workload.Job { return j }), mapJobs(back.Trace, func(j workload.Job) workload.Job { return j }))
			var mig, mps int
			for _, j := range back.Trace.Jobs {
				if j.Request.MIGProfile != 0 {
					mig++
				}
				if j.Request.MPSShare > 0 {
					mps++
				}
			}
			if mig != 4 || mps != 2 {
				t.Errorf("read back %d MIG and %d MPS requests, want 4 and 2", mig, mps)
			}
			if got := back.Trace.Jobs[5].Request.MIGProfile.String(); got != "1g.10gb+me" {
				t.Errorf("job 6 MIG profile %q, want 1g.10gb+me", got)
			}
		})
	}
}
