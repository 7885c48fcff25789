package reports

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

func TestWriteFileAtomic(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name string
		old  string // existing content; "" means no file
		// write writes some bytes, then fails or panics (or succeeds).
		write     func(w io.Writer) error
		wantErr   error
		wantPanic bool
		want      string // content of the file afterwards; "" means absent
	}{
		{
			name:  "new file",
			write: func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err },
			want:  "new\n",
		},
		{
			name:  "replace",
			old:   "old\n",
			write: func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err },
			want:  "new\n",
		},
		{
			name: "writer fails, no file",
			write: func(w io.Writer) error {
				io.WriteString(w, strings.Repeat("x", 1<<20)) // more than the buffer: reaches the temp file
				return errBoom
			},
			wantErr: errBoom,
		},
		{
			name: "writer fails, old file kept",
			old:  "old\n",
			write: func(w io.Writer) error {
				io.WriteString(w, "half")
				return errBoom
			},
			wantErr: errBoom,
			want:    "old\n",
		},
		{
			name: "writer panics",
			old:  "old\n",
			write: func(w io.Writer) error {
				io.WriteString(w, "half")
				panic("writer bug")
			},
			wantPanic: true,
			want:      "old\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.json")
			if tt.old != "" {
				if err := os.WriteFile(path, []byte(tt.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			func() {
				defer func() {
					if r := recover(); (r != nil) != tt.wantPanic {
						t.Errorf("panic = %v, want panic %v", r, tt.wantPanic)
					}
				}()
				err = WriteFileAtomic(path, tt.write)
			}()
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("WriteFileAtomic error = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
			// Nothing but the target (if any) is left in the directory.
			var wantNames []string
			if tt.want != "" {
				wantNames = []string{"out.json"}
			}
			if diff := cmp.Diff(wantNames, dirNames(t, dir)); diff != "" {
				t.Errorf("directory entries mismatch (-want +got):\n%s", diff)
			}
			if tt.want == "" {
				return
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("content mismatch (-want +got):\n%s", diff)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if tt.old == "" || tt.want != tt.old {
				if m := fi.Mode().Perm(); m != 0o644 {
					t.Errorf("mode = %v, want 0644", m)
				}
			}
		})
	}
}

func TestWriteFileAtomicNoDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "out.json")
	called := false
	err := WriteFileAtomic(path, func(io.Writer) error { called = true; return nil })
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("WriteFileAtomic error = %v, want one naming %s", err, path)
	}
	if called {
		t.Errorf("write was called without a temp file")
	}
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
	want := []string{JobsFile, JobsParquetFile, SacctFile, PlotsDir, ReportFile, ScenarioFile, SummaryFile, TimelineParquetFile}
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
	rec.Jobs[0].Alloc[0].Node = 99
	if err := WriteOutputs(dirs[0], rec, a, nil); err == nil || !strings.Contains(err.Error(), "node index 99") {
		t.Errorf("WriteOutputs error = %v, want a node index error", err)
	}
	if diff := cmp.Diff(want, dirNames(t, dirs[0])); diff != "" {
		t.Errorf("directory entries after failure mismatch (-want +got):\n%s", diff)
	}
}

func prefixAll(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}
