package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/sim"
)

// dirNames lists the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestWriteOutputs writes the fixture's outputs into two directories it
// must create and checks that every file is byte-identical between them
// (plots included), that the text outputs match their goldens, and that
// nothing else is left behind.
func TestWriteOutputs(t *testing.T) {
	base := t.TempDir()
	dirs := []string{filepath.Join(base, "out", "run1"), filepath.Join(base, "out", "run2")}
	scenario := []byte("version: 1\nname: fixture\n")
	for _, dir := range dirs {
		rec := fixtureRecord()
		if err := WriteOutputs(dir, rec, Analyze(rec, fixtureOptions), scenario); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{JobsFile, JobsParquetFile, ManifestFile, SacctFile, PlotsDir, ReportFile, ScenarioFile, SummaryFile, TimelineParquetFile, OpenMetricsFile}
	slices.Sort(want)
	if diff := cmp.Diff(want, dirNames(t, dirs[0])); diff != "" {
		t.Errorf("directory entries mismatch (-want +got):\n%s", diff)
	}
	var plots []string
	for _, f := range Figures(nil, &Timeline{}, "") {
		plots = append(plots, f.Name+".png", f.Name+".svg")
	}
	slices.Sort(plots)
	if diff := cmp.Diff(plots, dirNames(t, filepath.Join(dirs[0], PlotsDir))); diff != "" {
		t.Errorf("plots mismatch (-want +got):\n%s", diff)
	}
	for _, name := range append(want, prefixAll(PlotsDir+"/", plots)...) {
		if name == PlotsDir {
			continue
		}
		a, err := os.ReadFile(filepath.Join(dirs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dirs[1], name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two writes of the same record", name)
		}
		if len(a) == 0 {
			t.Errorf("%s is empty", name)
		}
	}
	for file, golden := range map[string]string{JobsFile: "jobs.csv.golden", SummaryFile: "summary.json.golden", SacctFile: "jobs.sacct.golden"} {
		got, err := os.ReadFile(filepath.Join(dirs[0], file))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", golden))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", file, diff)
		}
	}

	// An invalid record fails before jobs.csv is replaced, and leaves the
	// earlier outputs as they were.
	rec := fixtureRecord()
	a := Analyze(rec, fixtureOptions)
	editAlloc(&rec.Jobs[0], 0, func(a *sim.NodeAlloc) { a.Node = 99 })
	if err := WriteOutputs(dirs[0], rec, a, nil); err == nil || !strings.Contains(err.Error(), "node index 99") {
		t.Errorf("WriteOutputs error = %v, want a node index error", err)
	}
	if diff := cmp.Diff(want, dirNames(t, dirs[0])); diff != "" {
		t.Errorf("directory entries after failure mismatch (-want +got):\n%s", diff)
	}
	if _, err := ReadRunDir(dirs[0]); err != nil {
		t.Errorf("the earlier run does not read back after a failed write: %v", err)
	}
	// Nothing of the failed write is left beside the directories.
	if diff := cmp.Diff([]string{"run1", "run2"}, dirNames(t, filepath.Join(base, "out"))); diff != "" {
		t.Errorf("left in the parent (-want +got):\n%s", diff)
	}
}

func prefixAll(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
