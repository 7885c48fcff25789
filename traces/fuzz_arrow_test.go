package traces

import (
	"bytes"
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

// checkArrowRead fails unless read either errs with a *ParseError or
// returns jobs with ids and runtimes, and preallocated no more than the
// input's size in jobs (a corrupt row count must not claim more).
func checkArrowRead(t *testing.T, data []byte, read func(r ReadAtSeeker, path string) (*workload.Trace, error)) {
	tr, err := read(bytes.NewReader(data), "fuzz")
	if err != nil {
		checkParseError(t, err)
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

// FuzzParquetRead: ReadParquet never panics, whatever the file: arrow-go's
// panics on malformed data come back as *ParseError. One crash remains
// outside our reach: arrow-go trusts the vector lengths of an Arrow schema
// (Parquet's stored ARROW:schema, the Arrow IPC footer), so a fuzzed length
// can make it allocate terabytes in arrow/ipc (schemaFromFB, fieldFromFB,
// metadataFromFB), a fatal out of memory no recover catches. Minimizing
// is slow here; -fuzzminimizetime 1s keeps the run fuzzing.
func FuzzParquetRead(f *testing.F) {
	addArrowSeeds(f, func(w *bytes.Buffer, t *workload.Trace) error { return WriteParquet(w, t) })
	f.Fuzz(func(t *testing.T, data []byte) { checkArrowRead(t, data, ReadParquet) })
}

// FuzzArrowRead: ReadArrow never panics, whatever the file (with the
// limit FuzzParquetRead describes).
func FuzzArrowRead(f *testing.F) {
	addArrowSeeds(f, func(w *bytes.Buffer, t *workload.Trace) error { return WriteArrow(w, t) })
	f.Fuzz(func(t *testing.T, data []byte) { checkArrowRead(t, data, ReadArrow) })
}
