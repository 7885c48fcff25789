package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/schedsim/schedsim/sim"
)

// TestStreamJobRowsSameBytes: a run directory written from an Analysis
// that streams its job rows (SummaryOptions.StreamJobRows: no Jobs kept)
// holds the same bytes, file by file, as one written from kept rows, on
// records with a power model (energy_kwh), MIG instances (mig), MPS
// shares (mps_share) and neither; and the streamed Analysis keeps no row.
func TestStreamJobRowsSameBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  *sim.Record
		opts SummaryOptions
	}{
		{"fixture", fixtureRecord(), fixtureOptions},
		{"energy", energyRecord(true), SummaryOptions{SampleInterval: 1800}},
		{"mig", migRecord(t), SummaryOptions{SampleInterval: 350}},
		{"mps", shareRecord(t), SummaryOptions{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept := Analyze(tc.rec, tc.opts)
			so := tc.opts
			so.StreamJobRows = true
			streamed := Analyze(tc.rec, so)
			if streamed.Jobs != nil || streamed.JobCount() != len(kept.Jobs) {
				t.Fatalf("streamed: %d rows kept, JobCount %d; want none, %d", len(streamed.Jobs), streamed.JobCount(), len(kept.Jobs))
			}
			dir := t.TempDir()
			for name, a := range map[string]*Analysis{"kept": kept, "streamed": streamed} {
				od, err := CreateOutDir(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if err := od.WriteRun(tc.rec, a, []byte("version: 1\n")); err != nil {
					t.Fatal(err)
				}
				od.Close()
			}
			files := 0
			filepath.WalkDir(filepath.Join(dir, "kept"), func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(filepath.Join(dir, "kept"), p)
				a, _ := os.ReadFile(p)
				b, err := os.ReadFile(filepath.Join(dir, "streamed", rel))
				if err != nil || !bytes.Equal(a, b) {
					t.Errorf("%s differs (%v)", rel, err)
				}
				files++
				return nil
			})
			if files < 10 {
				t.Errorf("compared %d files, want every output", files)
			}
		})
	}
}
