package reports

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// TestAppendCSVFieldMatchesEncodingCSV checks the jobs.csv field quoting
// against encoding/csv's Writer on the fields that need quotes and some
// that do not.
func TestAppendCSVFieldMatchesEncodingCSV(t *testing.T) {
	fields := []string{"", "a", "a,b", `say "hi"`, "x\ny", "x\r\ny", " lead", "\tlead", "\u00a0nbsp", `\.`, `\.x`, "n[1-3,7]", "trail ", "ü"}
	var row []string
	var got []byte
	var gotB []byte
	for k, f := range fields {
		row = append(row, f)
		got = appendCSVField(got, k, f)
		gotB = appendCSVBytes(gotB, k, []byte(f))
	}
	var want bytes.Buffer
	cw := csv.NewWriter(&want)
	if err := cw.Write(row); err != nil {
		t.Fatal(err)
	}
	cw.Flush()
	w := want.String()
	if string(got)+"\n" != w {
		t.Errorf("appendCSVField:\n got %q\nwant %q", got, w)
	}
	if string(gotB)+"\n" != w {
		t.Errorf("appendCSVBytes:\n got %q\nwant %q", gotB, w)
	}
}
