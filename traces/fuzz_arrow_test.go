package traces

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/workload"
)

// addArrowSeeds adds small traces written by write.
func addArrowSeeds(f *testing.F, write func(w *bytes.Buffer, t *workload.Trace) error) {
	for _, tr := range []*workload.Trace{stringsTrace(), subGPUTrace(), {Epoch: 5}} {
		var b bytes.Buffer
		if err := write(&b, tr); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
}

// checkArrowRead fails unless read either errs with a one-line
// *ParseError or returns jobs with ids and runtimes, allocated less than
// 256 MB in all, and preallocated no more than the input's size in jobs
// (a corrupt row count must not claim more).
func checkArrowRead(t *testing.T, data []byte, read func(r ReadAtSeeker, path string) (*workload.Trace, error)) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tr, err := read(bytes.NewReader(data), "fuzz")
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 256<<20 {
		t.Fatalf("allocated %d MB reading %d bytes", d>>20, len(data))
	}
	if err != nil {
		checkParseError(t, err)
		if strings.ContainsAny(err.Error(), "\n\r") {
			t.Fatalf("error on more than one line: %q", err)
		}
		return
	}
	if c := cap(tr.Jobs); c > max(len(data), 2*len(tr.Jobs)+8) {
		t.Fatalf("%d jobs in a slice of %d for %d bytes", len(tr.Jobs), c, len(data))
	}
	for _, j := range tr.Jobs {
		if j.ID == "" || j.Runtime < 0 || j.Request.MPSShare < 0 {
			t.Fatalf("bad job %+v", j)
		}
	}
}

// FuzzParquetRead: ReadParquet never panics and never allocates without
// bound, whatever the file: the metadata is checked (arrowcheck) before
// arrow-go trusts a length of it, arrow-go's allocator has a budget, and
// its panics on malformed data come back as *ParseError. Seeds: files
// written by WriteParquet and the hostile corpus. Minimizing is slow
// here; -fuzzminimizetime 1s keeps the run fuzzing.
func FuzzParquetRead(f *testing.F) {
	addArrowSeeds(f, func(w *bytes.Buffer, t *workload.Trace) error { return WriteParquet(w, t) })
	addFileSeeds(f, "testdata/hostile/*.parquet")
	f.Fuzz(func(t *testing.T, data []byte) { checkArrowRead(t, data, ReadParquet) })
}

// FuzzArrowRead: ReadArrow never panics and never allocates without
// bound, whatever the file, as FuzzParquetRead.
func FuzzArrowRead(f *testing.F) {
	addArrowSeeds(f, func(w *bytes.Buffer, t *workload.Trace) error { return WriteArrow(w, t) })
	addFileSeeds(f, "testdata/hostile/*.arrow")
	f.Fuzz(func(t *testing.T, data []byte) { checkArrowRead(t, data, ReadArrow) })
}
