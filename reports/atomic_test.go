package reports

import (
	"errors"
	"io"
	"os"
	"path/filepath"
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

// TestWriteOutputs writes the fixture's outputs twice into a directory it
// must create and checks them against the goldens, byte for byte, with
// nothing else left behind.
func TestWriteOutputs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out", "run1")
	for range 2 {
		rec := fixtureRecord()
		if err := WriteOutputs(dir, rec, Summarize(rec, SummaryOptions{})); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{JobsFile, SummaryFile}, dirNames(t, dir)); diff != "" {
			t.Errorf("directory entries mismatch (-want +got):\n%s", diff)
		}
		for file, golden := range map[string]string{JobsFile: "jobs.csv.golden", SummaryFile: "summary.json.golden"} {
			got, err := os.ReadFile(filepath.Join(dir, file))
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
	}

	// An invalid record fails before jobs.csv is replaced, and leaves the
	// earlier outputs as they were.
	rec := fixtureRecord()
	s := Summarize(rec, SummaryOptions{})
	rec.Jobs[0].Alloc[0].Node = 99
	if err := WriteOutputs(dir, rec, s); err == nil || !strings.Contains(err.Error(), "node index 99") {
		t.Errorf("WriteOutputs error = %v, want a node index error", err)
	}
	if diff := cmp.Diff([]string{JobsFile, SummaryFile}, dirNames(t, dir)); diff != "" {
		t.Errorf("directory entries after failure mismatch (-want +got):\n%s", diff)
	}
}
