package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestHostileTarball: a tar.gz of a few hundred bytes whose header states
// an entry of MaxBytes (its data cut short) is refused with the entry's
// name, without allocating what the header claims; one stating more than
// MaxBytes is refused by the bound.
func TestHostileTarball(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int64
		want string
	}{
		{"claims the bound", MaxBytes, "sacct.txt: unexpected EOF"},
		{"claims past the bound", MaxBytes + 1, "more than a bundle may hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			gz := gzip.NewWriter(&buf)
			tw := tar.NewWriter(gz)
			tw.WriteHeader(&tar.Header{Name: "b/sacct.txt", Mode: 0o644, Size: tc.size, Typeflag: tar.TypeReg})
			tw.Write([]byte("JobID|State\n")) // far less than stated
			gz.Close()                        // no tw.Close: the entry is cut short
			p := filepath.Join(t.TempDir(), "b.tar.gz")
			if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Open(p)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line containing %q", err, tc.want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("allocated %d MB for a %d-byte file", grew>>20, buf.Len())
			}
		})
	}
}
