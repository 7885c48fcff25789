package traces

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// WriteFileAtomic creates or replaces the file at path with what write
// writes, so that path holds either its old content or the complete new
// content, never a part, even across a crash. It is the project's one
// atomic writer: every command and package that writes a file uses it.
//
// write gets a buffered writer (no Close method, so a writer that closes
// a sink it is given cannot close the file) on a temporary file in path's
// directory, named TempName(path) so that the next run can tell a stale
// one from a live one (StaleTemp). The buffer is then flushed, the file
// fsynced, given the permissions of the file it replaces (0644 for a new
// file), closed and renamed onto path, and the directory is fsynced so
// that the rename survives a power loss (best effort: some file systems
// refuse to fsync a directory). If write or any step fails, or write
// panics, the temporary file is removed, path is left as it was, and the
// error, which names path, is returned (the panic re-raised).
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	perm := fs.FileMode(0o644)
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		perm = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	fail := func(err error) error { return fmt.Errorf("write %s: %w", path, err) }
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	done = true
	SyncDir(dir)
	return nil
}

// SyncDir fsyncs directory dir so that the renames and removals in it
// survive a crash. Errors are ignored: not every platform or file system
// supports it, and the data itself was synced before.
func SyncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// tempMarker separates a target's name from the writer's pid in a
// temporary file's name.
const tempMarker = ".tmp-"

// maxTempBase bounds the part of the target's name a temporary name
// repeats, so that it stays under the usual 255-byte name limit.
const maxTempBase = 200

// tempPattern is the os.CreateTemp pattern of TempName(path).
func tempPattern(path string) string {
	base := filepath.Base(path)
	if len(base) > maxTempBase {
		base = base[:maxTempBase]
	}
	return "." + base + tempMarker + strconv.Itoa(os.Getpid()) + "-*"
}

// TempName returns the shape of the temporary file names WriteFileAtomic
// uses for path: ".<name>.tmp-<pid>-<random>" in path's directory, with
// the pid of the writing process.
func TempName(path string) string {
	return filepath.Join(filepath.Dir(path), strings.TrimSuffix(tempPattern(path), "*")+"<random>")
}

// StaleAfter is the age after which a temporary file or staging directory
// is stale even if a process with the pid in its name is alive (the pid
// may have been reused, or live on another host sharing the file system).
const StaleAfter = time.Hour

// StaleTemp reports whether name (a directory entry) is a temporary file
// of WriteFileAtomic whose writer is gone: its pid is not a live process,
// or modTime is older than StaleAfter. Names of other shapes are not
// stale temporaries.
func StaleTemp(name string, modTime, now time.Time) bool {
	i := strings.LastIndex(name, tempMarker)
	if !strings.HasPrefix(name, ".") || i < 1 {
		return false
	}
	pidText, _, ok := strings.Cut(name[i+len(tempMarker):], "-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	return Stale(pid, modTime, now)
}

// Stale reports whether something a process pid left, last modified at
// modTime, may be removed: the process is not alive, or modTime is older
// than StaleAfter. The calling process is never stale.
func Stale(pid int, modTime, now time.Time) bool {
	if pid == os.Getpid() {
		return false
	}
	return !processAlive(pid) || now.Sub(modTime) > StaleAfter
}

// RemoveStaleTemps removes the stale temporary files (StaleTemp) in dir
// and returns how many it removed. A directory that does not exist holds
// none.
func RemoveStaleTemps(dir string) (int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	now := time.Now()
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if StaleTemp(e.Name(), info.ModTime(), now) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
