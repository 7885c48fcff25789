package reports

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "update golden files")

// TestGolden checks the writers' output for fixtureRecord and
// emptyRunRecord against
// testdata/*.golden; run with -update to rewrite them. Each writer runs
// twice on separately built records and must give the same bytes.
func TestGolden(t *testing.T) {
	tests := []struct {
		file  string
		write func(w io.Writer) error
	}{
		{"summary.json.golden", func(w io.Writer) error {
			return WriteSummaryJSON(w, Summarize(fixtureRecord(), fixtureOptions))
		}},
		{"jobs.sacct.golden", func(w io.Writer) error { return WriteJobsSacct(w, fixtureRecord()) }},
		{"jobs.csv.golden", func(w io.Writer) error { return WriteJobsCSV(w, fixtureRecord()) }},
		{"table.txt.golden", func(w io.Writer) error {
			return WriteTable(w, Summarize(fixtureRecord(), SummaryOptions{}))
		}},
		{"empty_summary.json.golden", func(w io.Writer) error {
			return WriteSummaryJSON(w, Summarize(emptyRunRecord(), SummaryOptions{}))
		}},
		{"empty_table.txt.golden", func(w io.Writer) error {
			return WriteTable(w, Summarize(emptyRunRecord(), SummaryOptions{}))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var first, second bytes.Buffer
			if err := tt.write(&first); err != nil {
				t.Fatal(err)
			}
			if err := tt.write(&second); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Bytes(), second.Bytes()) {
				t.Fatalf("two writes differ:\n%s", cmp.Diff(first.String(), second.String()))
			}
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, first.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), first.String()); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
			}
		})
	}
}
