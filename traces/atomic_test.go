package traces

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestWriteFileAtomicKeepsMode replaces an executable script: the new
// content keeps the old file's permissions (a sweep's retry.sbatch).
func TestWriteFileAtomicKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(path, []byte("old\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o751); err != nil { // past the umask
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o751 {
		t.Errorf("mode = %v, want 0751 (the replaced file's)", m)
	}
}

// TestWriteFileAtomicTempName checks, from inside write, that the
// temporary file sits beside the target, is hidden and carries this
// process's pid, and that a 250-byte name still gets a temporary name
// the file system accepts.
func TestWriteFileAtomicTempName(t *testing.T) {
	for _, base := range []string{"summary.json", strings.Repeat("n", 250)} {
		dir := t.TempDir()
		path := filepath.Join(dir, base)
		var during []string
		err := WriteFileAtomic(path, func(w io.Writer) error {
			during = dirNames(t, dir)
			return nil
		})
		if err != nil {
			t.Fatalf("%.20s...: %v", base, err)
		}
		if len(during) != 1 {
			t.Fatalf("entries while writing %v, want one temporary file", during)
		}
		name := during[0]
		want := "." + base[:min(len(base), maxTempBase)] + ".tmp-" + strconv.Itoa(os.Getpid()) + "-"
		if !strings.HasPrefix(name, want) {
			t.Errorf("temporary name %q, want prefix %q", name, want)
		}
		if StaleTemp(name, time.Now(), time.Now()) {
			t.Errorf("StaleTemp(%q) of this live process = true", name)
		}
	}
}

func TestStaleTemp(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	fresh, old := now.Add(-time.Minute), now.Add(-StaleAfter-time.Second)
	self := strconv.Itoa(os.Getpid())
	parent := strconv.Itoa(os.Getppid()) // alive: it runs this test
	// A pid above Linux's pid_max (2^22) is never a live process.
	const dead = "99999999"
	tests := []struct {
		name string
		mod  time.Time
		want bool
	}{
		{".jobs.csv.tmp-" + dead + "-123456", fresh, true},
		{".jobs.csv.tmp-" + parent + "-123456", fresh, false},
		{".jobs.csv.tmp-" + parent + "-123456", old, true}, // pid reused, or another host
		{".jobs.csv.tmp-" + self + "-123456", old, false},  // ours: never
		{"jobs.csv", old, false},
		{".jobs.csv.tmp123456", old, false}, // not our shape: left alone
		{".jobs.csv.tmp--1-x", old, false},
		{".jobs.csv.tmp-x-1", old, false},
		{".tmp-" + dead + "-1", old, false}, // no target name
	}
	for _, tt := range tests {
		if got := StaleTemp(tt.name, tt.mod, now); got != tt.want {
			t.Errorf("StaleTemp(%q, age %v) = %v, want %v", tt.name, now.Sub(tt.mod), got, tt.want)
		}
	}
}

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	names := map[string]bool{ // name: stale
		".a.tmp-99999999-1":                           true,
		".b.tmp-" + strconv.Itoa(os.Getppid()) + "-2": false,
		"keep.txt": false,
	}
	for n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := RemoveStaleTemps(dir)
	if err != nil || got != 1 {
		t.Fatalf("RemoveStaleTemps = %d, %v; want 1, nil", got, err)
	}
	want := []string{".b.tmp-" + strconv.Itoa(os.Getppid()) + "-2", "keep.txt"}
	if diff := cmp.Diff(want, dirNames(t, dir)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	if n, err := RemoveStaleTemps(filepath.Join(dir, "missing")); n != 0 || err != nil {
		t.Errorf("RemoveStaleTemps(missing) = %d, %v", n, err)
	}
}
