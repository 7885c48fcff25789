package reports

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/schedsim/schedsim/sim"
)

// Output file names WriteOutputs uses.
const (
	SummaryFile = "summary.json"
	JobsFile    = "jobs.csv"
)

// WriteFileAtomic creates or replaces the file at path with what write
// writes, so that path holds either its old content or the complete new
// content, never a part. write gets a buffered writer on a temporary file
// in path's directory (named ".<base>.tmp<random>"); the file is then
// flushed, fsynced, given mode 0644, closed and renamed onto path, and the
// directory is fsynced (best effort: some file systems refuse). If write or
// any step fails, or write panics, the temporary file is removed, path is
// left as it was, and the error is returned (the panic re-raised).
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
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
	if err := f.Chmod(0o644); err != nil {
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
	syncDir(dir)
	return nil
}

// syncDir fsyncs directory dir so that a rename in it survives a crash.
// Errors are ignored: not every platform or file system supports it.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// WriteOutputs writes JobsFile (WriteJobsCSV of rec) and then SummaryFile
// (WriteSummaryJSON of s) into dir, creating dir and its parents (mode
// 0755) if needed. Each file is written with WriteFileAtomic; the summary
// comes last, so a directory with a new summary.json has the matching
// jobs.csv. s should be Summarize(rec, ...). On error no partial file is
// left behind, though jobs.csv may already have been replaced.
func WriteOutputs(dir string, rec *sim.Record, s Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, JobsFile), func(w io.Writer) error {
		return WriteJobsCSV(w, rec)
	}); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, SummaryFile), func(w io.Writer) error {
		return WriteSummaryJSON(w, s)
	})
}
