package traces

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/schedsim/schedsim/workload"
)

// subGPUTrace has a MIG job, an MPS job and a whole-GPU job.
func subGPUTrace() *workload.Trace {
	tr := &workload.Trace{Epoch: 1_700_000_000, Source: "test"}
	mig := workload.NewJob("1")
	mig.Request.GPUs, mig.Request.CPUs, mig.Request.GPUType = 2, 2, "h100"
	mig.Request.MIGProfile, _ = workload.NewMIGProfile(1, 20, false)
	mig.Runtime = 60
	mps := workload.NewJob("2")
	mps.Request.Nodes, mps.Request.CPUs, mps.Request.MPSShare = 2, 4, 50
	mps.Submit, mps.Runtime = 10, 120
	whole := workload.NewJob("3")
	whole.Request.GPUs, whole.Request.CPUs = 4, 8
	whole.Submit, whole.Runtime = 20, 30
	tr.Jobs = []workload.Job{mig, mps, whole}
	return tr
}

// writeTable writes rec as an Arrow IPC or Parquet file, as WriteArrow and
// WriteParquet do.
func writeTable(t *testing.T, format string, rec arrow.RecordBatch) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch format {
	case FormatArrow:
		fw, err := ipc.NewFileWriter(&buf, ipc.WithSchema(rec.Schema()))
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
	case FormatParquet:
		fw, err := pqarrow.NewFileWriter(rec.Schema(), &buf, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// replaceColumns returns rec without the columns named in drop and with
// those in set replaced (or appended).
func replaceColumns(rec arrow.RecordBatch, drop []string, set map[string]arrow.Array) arrow.RecordBatch {
	var fields []arrow.Field
	var cols []arrow.Array
	for i, f := range rec.Schema().Fields() {
		if a, ok := set[f.Name]; ok {
			fields = append(fields, arrow.Field{Name: f.Name, Type: a.DataType(), Nullable: true})
			cols = append(cols, a)
			continue
		}
		skip := false
		for _, d := range drop {
			skip = skip || f.Name == d
		}
		if !skip {
			fields = append(fields, f)
			cols = append(cols, rec.Column(i))
		}
	}
	md := rec.Schema().Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows())
}

// TestArrowWithoutSubGPUColumns: a schema-version-1 file written before
// mig_profile and mps_share were added reads back with zero values for
// them and every other field intact.
func TestArrowWithoutSubGPUColumns(t *testing.T) {
	tr := subGPUTrace()
	rec, err := arrowRecord(tr, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	old := replaceColumns(rec, []string{"mig_profile", "mps_share"}, nil)
	defer old.Release()
	if old.Schema().HasField("mig_profile") || old.Schema().HasField("mps_share") {
		t.Fatal("columns not dropped")
	}
	want := make([]workload.Job, len(tr.Jobs))
	for i, j := range tr.Jobs {
		j.Request.MIGProfile, j.Request.MPSShare = 0, 0
		want[i] = j
	}
	for _, format := range []string{FormatArrow, FormatParquet} {
		t.Run(format, func(t *testing.T) {
			back, err := Read(bytes.NewReader(writeTable(t, format, old)), "old."+format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if back.Format != format {
				t.Errorf("detected %s, want %s", back.Format, format)
			}
			if back.Trace.Epoch != tr.Epoch {
				t.Errorf("epoch %d, want %d", back.Trace.Epoch, tr.Epoch)
			}
			diffJobs(t, want, back.Trace.Jobs)
		})
	}
}

// TestArrowBadSubGPUValues: a mig_profile that names no profile and a
// negative mps_share are errors naming the row and column.
func TestArrowBadSubGPUValues(t *testing.T) {
	tr := subGPUTrace()
	mem := memory.NewGoAllocator()
	rec, err := arrowRecord(tr, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	sb := array.NewStringBuilder(mem)
	sb.AppendValues([]string{"1g.20gb", "", "8g.80gb"}, []bool{true, false, true})
	badMIG := sb.NewArray()
	defer badMIG.Release()
	ib := array.NewInt32Builder(mem)
	ib.AppendValues([]int32{0, -5, 0}, []bool{false, true, false})
	badMPS := ib.NewArray()
	defer badMPS.Release()
	for _, tc := range []struct {
		col  string
		a    arrow.Array
		line int
		kind error
	}{
		{"mig_profile", badMIG, 3, ErrSyntax},
		{"mps_share", badMPS, 2, ErrRange},
	} {
		r := replaceColumns(rec, nil, map[string]arrow.Array{tc.col: tc.a})
		for _, format := range []string{FormatArrow, FormatParquet} {
			_, err := Read(bytes.NewReader(writeTable(t, format, r)), "bad."+format, Options{})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Field != tc.col || pe.Line != tc.line || !errors.Is(err, tc.kind) {
				t.Errorf("%s %s: err %v, want a %v ParseError at line %d", format, tc.col, err, tc.kind, tc.line)
			} else if !strings.Contains(err.Error(), tc.col) {
				t.Errorf("%s: error %q does not name %s", format, err, tc.col)
			}
		}
		r.Release()
	}
}

// TestArrowTimesOutOfRange: a runtime or submit time beyond ±2⁵³ s (the
// text readers' bound too) is a range error naming the row and column,
// not a time the simulator's clock would overflow on.
func TestArrowTimesOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		col  string
		set  func(j *workload.Job)
		line int
	}{
		{"runtime", func(j *workload.Job) { j.Runtime = 1 << 60 }, 2},
		{"submit", func(j *workload.Job) { j.Submit = 1<<53 + 1000 }, 2},
	} {
		tr := subGPUTrace()
		tc.set(&tr.Jobs[1])
		for _, format := range []string{FormatArrow, FormatParquet} {
			var buf bytes.Buffer
			write := WriteArrow
			if format == FormatParquet {
				write = WriteParquet
			}
			if err := write(&buf, tr); err != nil {
				t.Fatal(err)
			}
			_, err := Read(bytes.NewReader(buf.Bytes()), "big."+format, Options{})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Field != tc.col || pe.Line != tc.line || !errors.Is(err, ErrRange) {
				t.Errorf("%s %s: err %v, want a range ParseError at line %d", format, tc.col, err, tc.line)
			}
		}
	}
}
