package reports

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schedsim/schedsim/traces"
)

// A run directory is written whole or not at all (docs/reports.md,
// "Output integrity"). OutDir stages every file in a directory beside the
// target, writes manifest.json last, and then puts the staging directory
// in the target's place with one atomic rename (an exchange where the
// target exists). Where that cannot be atomic (the target is a mount
// point or holds the working directory, or the file system cannot
// exchange directories) the files are moved in one by one after the old
// manifest is removed, and the new manifest is moved in last: a reader
// then sees either a complete run or a directory without a manifest,
// which ReadRunDir refuses. A lock beside the target refuses a second
// writer.

// Names of the files around a run directory DIR, in its parent.
const (
	stageInfix = ".schedsim-stage-" // ".DIR.schedsim-stage-<pid>", or inside DIR without the name
	lockSuffix = ".schedsim.lock"   // ".DIR.schedsim.lock"
)

// maxHiddenBase bounds the part of DIR's name repeated in those names.
const maxHiddenBase = 200

func hiddenBase(base string) string {
	if len(base) > maxHiddenBase {
		return base[:maxHiddenBase]
	}
	return base
}

// Test hooks: how directories are exchanged and whether two paths are on
// one device.
var (
	exchangeDirs = exchange
	onOneDevice  = sameDevice
)

// OutDir writes one run directory: create it with CreateOutDir (which
// takes the directory's lock), write its files with WriteFile (or
// WriteRun), publish them with Commit, and always Close it. Until Commit
// returns, the directory holds what it held before.
type OutDir struct {
	dir     string      // absolute, the last symbolic link resolved
	parent  string      // filepath.Dir(dir)
	lock    *dirLock    // held from CreateOutDir to Close
	stage   string      // the staging directory
	exists  bool        // dir existed at CreateOutDir
	perm    fs.FileMode // its permissions, kept by the new one
	inPlace bool        // stage inside dir and move the files in one by one
	files   []ManifestEntry
	done    bool // committed
	closed  bool
}

// BusyError is CreateOutDir's error when another process holds the
// directory's lock.
type BusyError struct {
	Dir string
	PID int // the holder, 0 when it could not be read
}

func (e *BusyError) Error() string {
	who := "another schedsim"
	if e.PID > 0 {
		who += " (pid " + strconv.Itoa(e.PID) + ")"
	}
	return fmt.Sprintf("%s: %s is writing this directory; wait for it to finish or choose another directory", e.Dir, who)
}

// CreateOutDir prepares to replace the run directory dir (created if
// missing, with its parents). It takes dir's lock (a *BusyError if
// another process holds it), removes what killed writers left (staging
// directories and temporary files whose pid is gone or that are older
// than traces.StaleAfter), and refuses a dir holding anything a run does
// not write, since a run replaces all of dir.
func CreateOutDir(dir string) (*OutDir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Lstat(abs); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		// Replace the directory the link points to, not the link.
		if abs, err = filepath.EvalSymlinks(abs); err != nil {
			return nil, err
		}
	}
	o := &OutDir{dir: abs, parent: filepath.Dir(abs)}
	base := filepath.Base(abs)
	if o.parent == abs || base == "." || base == string(filepath.Separator) {
		return nil, fmt.Errorf("%s: cannot write a run into the root directory", dir)
	}
	if err := os.MkdirAll(o.parent, 0o755); err != nil {
		return nil, err
	}
	if o.lock, err = lockFile(filepath.Join(o.parent, "."+hiddenBase(base)+lockSuffix)); err != nil {
		var busy *BusyError
		if errors.As(err, &busy) {
			busy.Dir = dir
		}
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			o.lock.release()
		}
	}()
	prefix := "." + hiddenBase(base) + stageInfix
	if err := removeStaleStages(o.parent, prefix); err != nil {
		return nil, err
	}
	switch st, err := os.Lstat(abs); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case !st.IsDir():
		return nil, fmt.Errorf("%s exists and is not a directory", dir)
	default:
		o.exists, o.perm = true, st.Mode().Perm()
		if err := checkRunDir(dir, abs); err != nil {
			return nil, err
		}
		if err := removeStaleStages(abs, stageInfix); err != nil {
			return nil, err
		}
		for _, d := range []string{abs, filepath.Join(abs, PlotsDir)} {
			if _, err := traces.RemoveStaleTemps(d); err != nil {
				return nil, err
			}
		}
		o.inPlace = !onOneDevice(abs, o.parent) || holdsWorkingDir(abs)
	}
	pid := strconv.Itoa(os.Getpid())
	if o.inPlace {
		o.stage = filepath.Join(abs, stageInfix+pid)
	} else {
		o.stage = filepath.Join(o.parent, prefix+pid)
	}
	if err := os.RemoveAll(o.stage); err != nil { // an earlier one of ours
		return nil, err
	}
	if err := os.Mkdir(o.stage, 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(o.stage, PlotsDir), 0o755); err != nil {
		os.RemoveAll(o.stage)
		return nil, err
	}
	ok = true
	return o, nil
}

// Dir returns the absolute path of the directory being written.
func (o *OutDir) Dir() string { return o.dir }

// WriteFile writes the run file name ("summary.json", "plots/queue.svg")
// into the staging directory with traces.WriteFileAtomic, recording its
// size and SHA-256 for the manifest. Errors name the file's final path.
func (o *OutDir) WriteFile(name string, write func(io.Writer) error) error {
	if o.done || o.closed {
		return fmt.Errorf("%s: write %s after the directory was committed or closed", o.dir, name)
	}
	if !runFileName(name) {
		return fmt.Errorf("%s: %q is not a run file name", o.dir, name)
	}
	hw := &hashWriter{h: sha256.New()}
	err := traces.WriteFileAtomic(filepath.Join(o.stage, filepath.FromSlash(name)), func(w io.Writer) error {
		hw.w = w
		return write(hw)
	})
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // WriteFileAtomic named the staging path
		}
		return fmt.Errorf("write %s: %w", filepath.Join(o.dir, filepath.FromSlash(name)), err)
	}
	o.files = append(o.files, ManifestEntry{Name: name, Size: hw.n, SHA256: hex.EncodeToString(hw.h.Sum(nil))})
	return nil
}

// carry puts file e of the current directory (verified against its
// manifest, under the lock) into the new one unchanged: a hard link, or
// a copy where the file system has none.
func (o *OutDir) carry(root *os.Root, e ManifestEntry) error {
	dst := filepath.Join(o.stage, filepath.FromSlash(e.Name))
	if err := os.Link(filepath.Join(o.dir, filepath.FromSlash(e.Name)), dst); err == nil {
		o.files = append(o.files, e)
		return nil
	}
	f, err := root.Open(e.Name)
	if err != nil {
		return err
	}
	defer f.Close()
	return o.WriteFile(e.Name, func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	})
}

// RunID is what a manifest records of the run besides its files.
type RunID struct {
	ConfigHash string
	Seed       uint64
	Policy     string
}

// Commit writes manifest.json (the files written, sorted by name, with
// id) and puts the new directory in place of the old one. After an error
// the old directory is intact, except where the rename could not be
// atomic: then it may be left without a manifest, which readers refuse.
func (o *OutDir) Commit(id RunID) error {
	if o.done || o.closed {
		return fmt.Errorf("%s: committed or closed already", o.dir)
	}
	slices.SortFunc(o.files, func(a, b ManifestEntry) int { return cmp.Compare(a.Name, b.Name) })
	for i := 1; i < len(o.files); i++ {
		if o.files[i].Name == o.files[i-1].Name {
			return fmt.Errorf("%s: %s written twice", o.dir, o.files[i].Name)
		}
	}
	m := Manifest{SchemaVersion: ManifestVersion, Kind: manifestKind, ConfigHash: id.ConfigHash, Seed: id.Seed, Policy: id.Policy, Files: o.files}
	data, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		return err
	}
	if err := traces.WriteFileAtomic(filepath.Join(o.stage, ManifestFile), func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	}); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(o.dir, ManifestFile), errors.Unwrap(err))
	}
	if o.inPlace {
		return o.commitInPlace()
	}
	if o.exists {
		if err := os.Chmod(o.stage, o.perm); err != nil {
			return err
		}
	} else {
		err := os.Rename(o.stage, o.dir)
		if err == nil {
			o.done = true
			traces.SyncDir(o.parent)
			return nil
		}
		st, serr := os.Lstat(o.dir)
		if serr != nil || !st.IsDir() {
			return err
		}
		// Something made dir meanwhile (not a schedsim: it would have
		// waited for the lock): replace it if it is a run's.
		if err := checkRunDir(o.dir, o.dir); err != nil {
			return err
		}
	}
	switch err := exchangeDirs(o.stage, o.dir); {
	case err == nil:
		o.done = true
		traces.SyncDir(o.parent)
		// The old run is now under the staging name; a kill before it
		// is gone leaves it for the next writer's clean-up.
		_ = os.RemoveAll(o.stage)
		return nil
	case errors.Is(err, errNoExchange):
		return o.commitInPlace()
	default:
		return fmt.Errorf("%s: replace with the new run: %w", o.dir, err)
	}
}

// commitInPlace moves the staged files into dir one by one: first the old
// manifest goes (so dir reads as incomplete), then the files come in, the
// old run's other files go, and the new manifest comes in last.
func (o *OutDir) commitInPlace() error {
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(o.dir, ManifestFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	traces.SyncDir(o.dir)
	if err := os.MkdirAll(filepath.Join(o.dir, PlotsDir), 0o755); err != nil {
		return err
	}
	keep := map[string]bool{ManifestFile: true}
	for _, e := range o.files {
		keep[e.Name] = true
		from, to := filepath.Join(o.stage, filepath.FromSlash(e.Name)), filepath.Join(o.dir, filepath.FromSlash(e.Name))
		if err := os.Rename(from, to); err != nil {
			return err
		}
	}
	// The earlier run's files that this one did not write.
	for _, sub := range []string{".", PlotsDir} {
		ents, err := os.ReadDir(filepath.Join(o.dir, sub))
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := path.Join(sub, e.Name())
			if keep[name] || name == PlotsDir || isStage(e.Name(), stageInfix) {
				continue
			}
			if ours, _ := runDirEntry(sub, e); ours {
				if err := os.RemoveAll(filepath.Join(o.dir, filepath.FromSlash(name))); err != nil {
					return err
				}
			}
		}
	}
	traces.SyncDir(filepath.Join(o.dir, PlotsDir))
	if err := os.Rename(filepath.Join(o.stage, ManifestFile), filepath.Join(o.dir, ManifestFile)); err != nil {
		return err
	}
	o.done = true
	traces.SyncDir(o.dir)
	_ = os.RemoveAll(o.stage)
	return nil
}

// Abandon removes the staging directory, for a process about to exit
// from another goroutine than the one writing (over its memory budget).
// The lock goes with the process. A write racing it fails or leaves files
// that the next CreateOutDir removes as stale, as after a kill; a
// committed directory is not touched (the stage is gone by then, or, in
// place, holds only what was not yet moved, with no manifest).
func (o *OutDir) Abandon() { os.RemoveAll(o.stage) }

// Close removes the staging directory of an uncommitted write and
// releases the lock. It may be called more than once.
func (o *OutDir) Close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	var err error
	if !o.done {
		err = os.RemoveAll(o.stage)
	}
	o.lock.release()
	return err
}

// hashWriter passes writes on and sums their bytes and SHA-256. It has no
// Close, so a writer that closes its sink cannot reach the file.
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (w *hashWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// runFileNames are the files a run writes at the top of its directory.
var runFileNames = []string{SummaryFile, JobsFile, JobsParquetFile, TimelineParquetFile, OpenMetricsFile, SacctFile, ScenarioFile, ReportFile}

// runFileName reports whether name (slash-separated, relative) is a file
// a run may write: one of runFileNames, or plots/NAME.png|svg.
func runFileName(name string) bool {
	if slices.Contains(runFileNames, name) {
		return true
	}
	dir, file, ok := strings.Cut(name, "/")
	return ok && dir == PlotsDir && plotFileName(file)
}

func plotFileName(file string) bool {
	ext := path.Ext(file)
	return (ext == ".png" || ext == ".svg") && len(file) > len(ext) && !strings.HasPrefix(file, ".") &&
		!strings.ContainsAny(file, `/\`) && file == path.Clean(file)
}

// runDirEntry reports whether entry e of dir/sub (sub "." or "plots") is
// one a run writes or leaves while writing, and so may be replaced: a run
// file, the manifest, the plots directory, a temporary file of one of
// them (of this writer or, named ".NAME.tmp…", of earlier versions), or
// an in-place staging directory. It returns the entry's name otherwise.
func runDirEntry(sub string, e fs.DirEntry) (bool, string) {
	name := e.Name()
	rel := path.Join(sub, name)
	switch {
	case e.IsDir():
		return sub == "." && (name == PlotsDir || isStage(name, stageInfix)), rel + "/"
	case !e.Type().IsRegular():
		return false, rel
	case rel == ManifestFile || runFileName(rel):
		return true, rel
	}
	if t, _, ok := strings.Cut(strings.TrimPrefix(name, "."), ".tmp"); ok && strings.HasPrefix(name, ".") {
		t = path.Join(sub, t)
		return t == ManifestFile || runFileName(t), rel
	}
	return false, rel
}

// checkRunDir refuses a directory holding anything runDirEntry does not
// accept: a run replaces the whole directory. shown names it in errors.
func checkRunDir(shown, dir string) error {
	var foreign []string
	for _, sub := range []string{".", PlotsDir} {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if sub == PlotsDir && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			if ok, name := runDirEntry(sub, e); !ok {
				foreign = append(foreign, name)
			}
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	list := strings.Join(foreign[:min(3, len(foreign))], ", ")
	if len(foreign) > 3 {
		list += fmt.Sprintf(" and %d more", len(foreign)-3)
	}
	return fmt.Errorf("%s holds %s, which schedsim does not write there: a run replaces the whole directory, so give a new or empty one (or remove those)", shown, list)
}

// isStage reports whether name is prefix followed by a pid.
func isStage(name, prefix string) bool {
	_, ok := stagePID(name, prefix)
	return ok
}

func stagePID(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" {
		return 0, false
	}
	pid, err := strconv.Atoi(rest)
	return pid, err == nil && pid > 0
}

// removeStaleStages removes the staging directories prefix<pid> in dir
// whose writer is gone (traces.Stale).
func removeStaleStages(dir, prefix string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, e := range ents {
		pid, ok := stagePID(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if traces.Stale(pid, info.ModTime(), now) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// holdsWorkingDir reports whether dir is the working directory or one of
// its parents: replacing it would leave the process (and a shell the user
// runs it from) in a removed directory.
func holdsWorkingDir(dir string) bool {
	wd, err := os.Getwd()
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, wd)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
