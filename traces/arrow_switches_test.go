package traces

import (
	"bytes"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/schedsim/schedsim/workload"
)

// switchesTrace has a job with --switches=2@300, one with --switches=1
// (the wait left to max_switch_wait) and one without.
func switchesTrace() *workload.Trace {
	tr := &workload.Trace{Epoch: 1_700_000_000, Source: "test"}
	for i, sw := range [][2]int{{2, 300}, {1, 0}, {0, 0}} {
		j := workload.NewJob(string(rune('1' + i)))
		j.Request.Nodes, j.Request.GPUs, j.Request.CPUs = 2, 8, 16
		j.Request.Switches, j.Request.SwitchWait = uint8(sw[0]), uint16(sw[1])
		j.Submit, j.Runtime = workload.Time(10*i), 60
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

// TestArrowSwitches: --switches=N@T survives Arrow and Parquet (it was
// lost, so a sacct trace converted to Parquet ran without its switch
// constraint); a file written before the columns were added reads back
// without it; an out-of-range value is a range error naming row and
// column (rows count from 1, the first job).
func TestArrowSwitches(t *testing.T) {
	tr := switchesTrace()
	mem := memory.NewGoAllocator()
	rec, err := arrowRecord(tr, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	old := replaceColumns(rec, []string{"switches", "switch_wait"}, nil)
	defer old.Release()
	noSwitches := make([]workload.Job, len(tr.Jobs))
	for i, j := range tr.Jobs {
		j.Request.Switches, j.Request.SwitchWait = 0, 0
		noSwitches[i] = j
	}
	for _, format := range []string{FormatArrow, FormatParquet} {
		t.Run(format, func(t *testing.T) {
			back, err := Read(bytes.NewReader(writeTable(t, format, rec)), "sw."+format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			diffJobs(t, tr.Jobs, back.Trace.Jobs)
			back, err = Read(bytes.NewReader(writeTable(t, format, old)), "old."+format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			diffJobs(t, noSwitches, back.Trace.Jobs)
		})
	}

	bad := func(vals ...int32) arrow.Array {
		b := array.NewInt32Builder(mem)
		defer b.Release()
		b.AppendValues(vals, nil)
		return b.NewArray()
	}
	for _, tc := range []struct {
		col  string
		a    arrow.Array
		line int
	}{
		{"switches", bad(1, 256, 0), 2},
		{"switches", bad(-1, 1, 0), 1},
		{"switch_wait", bad(0, 0, 65536), 3},
	} {
		r := replaceColumns(rec, nil, map[string]arrow.Array{tc.col: tc.a})
		for _, format := range []string{FormatArrow, FormatParquet} {
			_, err := Read(bytes.NewReader(writeTable(t, format, r)), "bad."+format, Options{})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Field != tc.col || pe.Line != tc.line || !errors.Is(err, ErrRange) {
				t.Errorf("%s %s: err %v, want a range ParseError at line %d", format, tc.col, err, tc.line)
			}
		}
		r.Release()
		tc.a.Release()
	}
}
