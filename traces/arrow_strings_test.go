package traces

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/schedsim/schedsim/workload"
)

// stringsTrace has repeated users, names and extra column names, and a
// dependency.
func stringsTrace() *workload.Trace {
	tr := &workload.Trace{Epoch: 1_700_000_000, Source: "test"}
	for i := range 5 {
		j := workload.NewJob(fmt.Sprint(100 + i))
		j.Name = fmt.Sprintf("job%d", i%2)
		j.User = []string{"alice", "bob"}[i%2]
		j.Partition, j.TraceState = "gpu", "COMPLETED"
		j.Submit, j.Runtime = workload.Time(i), 60
		j.Extra = []workload.Field{{Name: "Cluster", Value: fmt.Sprint("c", i)}}
		if i == 3 {
			j.Deps = []workload.Dependency{{Type: workload.DepAfterOK, JobID: "100"}}
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

// checkShared fails unless equal users and equal extra column names are
// one string each (interned), so no job's string keeps a batch alive.
func checkShared(t *testing.T, jobs []workload.Job) {
	t.Helper()
	seen := map[string]*byte{}
	for _, j := range jobs {
		for _, s := range []string{j.User, j.Partition, j.TraceState, j.Extra[0].Name} {
			if p, ok := seen[s]; ok && p != unsafe.StringData(s) {
				t.Errorf("job %s: %q is not shared", j.ID, s)
			}
			seen[s] = unsafe.StringData(s)
		}
	}
}

// TestArrowStringColumns: string columns read the same whether a file
// stores them as utf8, large_utf8, binary or dictionaries, in one batch or
// several, and repeated values come back as one string.
func TestArrowStringColumns(t *testing.T) {
	tr := stringsTrace()
	mem := memory.NewGoAllocator()
	rec, err := arrowRecord(tr, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	ids := array.NewLargeStringBuilder(mem)
	names := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	users := array.NewStringBuilder(mem)
	for _, j := range tr.Jobs {
		ids.Append(j.ID)
		names.Append([]byte(j.Name))
		users.Append(j.User)
	}
	foreign := replaceColumns(rec, nil, map[string]arrow.Array{"id": ids.NewArray(), "name": names.NewArray(), "user": users.NewArray()})
	defer foreign.Release()

	for _, tc := range []struct {
		name string
		rec  arrow.RecordBatch
	}{{"schema", rec}, {"foreign", foreign}} {
		t.Run(tc.name, func(t *testing.T) {
			// Two batches, the second a slice at a non-zero offset.
			var buf bytes.Buffer
			fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(tc.rec.Schema()))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []arrow.RecordBatch{tc.rec.NewSlice(0, 2), tc.rec.NewSlice(2, 5)} {
				if err := fw.Write(r); err != nil {
					t.Fatal(err)
				}
				r.Release()
			}
			if err := fw.Close(); err != nil {
				t.Fatal(err)
			}
			for format, data := range map[string][]byte{FormatArrow: buf.Bytes(), FormatParquet: writeTable(t, FormatParquet, tc.rec)} {
				read := ReadArrow
				if format == FormatParquet {
					read = ReadParquet
				}
				back, err := read(bytes.NewReader(data), "strings."+format)
				if err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				diffJobs(t, tr.Jobs, back.Jobs)
				checkShared(t, back.Jobs)
			}
			// A slice straight from memory, offsets not rebased.
			back := &workload.Trace{Epoch: tr.Epoch}
			sl := tc.rec.NewSlice(1, 4)
			defer sl.Release()
			row := 0
			if err := appendJobs(back, sl, "slice", &row, map[string]string{}); err != nil {
				t.Fatal(err)
			}
			diffJobs(t, tr.Jobs[1:4], back.Jobs)
		})
	}
}

// TestArrowBadStringColumns: a string or list column of another type is
// an error at its first non-null cell, naming the row and column.
func TestArrowBadStringColumns(t *testing.T) {
	tr := stringsTrace()
	mem := memory.NewGoAllocator()
	rec, err := arrowRecord(tr, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{0, 0, 7, 0, 0}, []bool{false, false, true, false, false})
	ints := ib.NewArray()
	defer ints.Release()
	for _, col := range []string{"user", "name", "extra"} {
		r := replaceColumns(rec, nil, map[string]arrow.Array{col: ints})
		for _, format := range []string{FormatArrow, FormatParquet} {
			_, err := Read(bytes.NewReader(writeTable(t, format, r)), "bad."+format, Options{})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Field != col || pe.Line != 3 || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "column type int32") {
				t.Errorf("%s %s: err %v, want a syntax ParseError at line 3 naming the type", format, col, err)
			}
		}
		r.Release()
	}
}

// TestReadArrowSources: Read gives the same jobs for an Arrow or Parquet
// input read in place from where a seekable reader stands, read from a
// plain stream, and gzipped.
func TestReadArrowSources(t *testing.T) {
	tr := stringsTrace()
	rec, err := arrowRecord(tr, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	for _, format := range []string{FormatArrow, FormatParquet} {
		data := writeTable(t, format, rec)
		after := bytes.NewReader(append([]byte("prefix"), data...))
		if _, err := after.Seek(6, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		var first []workload.Job
		for _, src := range []struct {
			name string
			r    io.Reader
		}{
			{"stream", struct{ io.Reader }{bytes.NewReader(data)}},
			{"seekable", after},
			{"gzip", bytes.NewReader(gz(t, data))},
		} {
			res, err := Read(src.r, "t."+format, Options{})
			if err != nil {
				t.Fatalf("%s %s: %v", format, src.name, err)
			}
			if res.Format != format || len(res.Trace.Jobs) != len(tr.Jobs) {
				t.Errorf("%s %s: format %s, %d jobs", format, src.name, res.Format, len(res.Trace.Jobs))
			}
			if first == nil {
				first = res.Trace.Jobs
			}
			diffJobs(t, first, res.Trace.Jobs)
		}
	}
}

// TestPreallocJobs: a row count from a file's metadata is used as it is
// up to one row per 8 bytes of the file, and a negative one is ignored.
func TestPreallocJobs(t *testing.T) {
	for _, tc := range []struct {
		rows, size int64
		want       int
	}{{50, 1000, 50}, {1 << 40, 1000, 125}, {-5, 1000, 0}, {100, 0, 0}, {1 << 62, 1 << 62, math.MaxInt32}} {
		if got := prealloc(tc.rows, tc.size); got != tc.want {
			t.Errorf("prealloc(%d, %d) = %d, want %d", tc.rows, tc.size, got, tc.want)
		}
	}
}
