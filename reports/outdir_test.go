package reports

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeFixtureRun writes the fixture run as dir with config hash hash and
// seed seed, with or without a scenario.yaml.
func writeFixtureRun(t *testing.T, dir, hash string, seed uint64, scenario bool) {
	t.Helper()
	rec := fixtureRecord()
	rec.Seed = seed
	var text []byte
	if scenario {
		text = []byte("version: 1\nname: " + hash + "\n")
	}
	if err := WriteOutputs(dir, rec, Analyze(rec, SummaryOptions{ConfigHash: hash}), text); err != nil {
		t.Fatal(err)
	}
}

// writeSmallRun writes a run directory of a few small files through
// OutDir (no plots to draw, so it is fast): jobs.csv and plots/q.svg
// naming the run, and scenario.yaml when scenario is set.
func writeSmallRun(t *testing.T, dir, hash string, seed uint64, scenario bool) {
	t.Helper()
	o, err := CreateOutDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	names := []string{JobsFile, PlotsDir + "/q.svg"}
	if scenario {
		names = append(names, ScenarioFile)
	}
	for _, n := range names {
		if err := o.WriteFile(n, func(w io.Writer) error { _, err := io.WriteString(w, n+" of "+hash+"\n"); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Commit(RunID{ConfigHash: hash, Seed: seed, Policy: "fifo"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the files of directory from into a new directory to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	for _, n := range treeNames(t, from) {
		p := filepath.Join(to, filepath.FromSlash(n))
		if strings.HasSuffix(n, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, filepath.FromSlash(n)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeNames lists dir's files and directories, recursively, as slash
// paths (directories with a trailing slash), sorted.
func treeNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// manifestNames lists the files of dir's manifest, plus the manifest and
// plots/, the way treeNames lists them.
func manifestNames(t *testing.T, dir string) []string {
	t.Helper()
	m, _, err := VerifyRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{ManifestFile, PlotsDir + "/"}
	for _, f := range m.Files {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return names
}

// TestOutDirReplace writes run A (with scenario.yaml) and then run B
// (without) over it, in each way the writer can publish a directory, and
// checks that the directory then holds exactly B's files, which read
// back as B, and that nothing else is left beside it.
func TestOutDirReplace(t *testing.T) {
	modes := []struct {
		name     string
		exchange func(a, b string) error
		oneDev   func(a, b string) bool
	}{
		{"exchange", exchange, sameDevice},
		{"no exchange: files moved in", func(a, b string) error { return errNoExchange }, sameDevice},
		{"mount point: staged inside", exchange, func(a, b string) bool { return false }},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			exchangeDirs, onOneDevice = mode.exchange, mode.oneDev
			t.Cleanup(func() { exchangeDirs, onOneDevice = exchange, sameDevice })
			parent := t.TempDir()
			dir := filepath.Join(parent, "run")
			writeSmallRun(t, dir, "sha256:a", 1, true)
			if !slices.Contains(treeNames(t, dir), ScenarioFile) {
				t.Fatalf("run A wrote no %s", ScenarioFile)
			}
			writeSmallRun(t, dir, "sha256:b", 2, false)
			got := treeNames(t, dir)
			if diff := cmp.Diff(manifestNames(t, dir), got); diff != "" {
				t.Errorf("directory is not exactly the manifest's files (-manifest +dir):\n%s", diff)
			}
			if slices.Contains(got, ScenarioFile) {
				t.Errorf("run A's %s survived run B, which wrote none", ScenarioFile)
			}
			m, _, err := VerifyRunDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, JobsFile)); m.ConfigHash != "sha256:b" || m.Seed != 2 || string(b) != "jobs.csv of sha256:b\n" {
				t.Errorf("read back config %s seed %d, jobs.csv %q; want run B's", m.ConfigHash, m.Seed, b)
			}
			if diff := cmp.Diff([]string{"run/"}, treeNames(t, parent)[:1]); diff != "" || len(treeNames(t, parent)) != len(got)+1 {
				t.Errorf("left beside the run: %v", treeNames(t, parent))
			}
		})
	}
}

// TestOutDirLock: a second writer of one directory is refused while the
// first holds it, with an error naming the directory and the holder's
// pid, and may write once the first is closed.
func TestOutDirLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	first, err := CreateOutDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = CreateOutDir(dir)
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("second CreateOutDir error = %v, want a *BusyError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, "pid "+strconv.Itoa(os.Getpid())) || strings.Contains(msg, "\n") {
		t.Errorf("busy error %q: want one line naming %s and pid %d", msg, dir, os.Getpid())
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	writeSmallRun(t, dir, "sha256:a", 1, true)
	// The lock file goes with the last writer.
	if got := treeNames(t, filepath.Dir(dir)); slices.ContainsFunc(got, func(n string) bool { return strings.Contains(n, lockSuffix) }) {
		t.Errorf("lock file left: %v", got)
	}
}

// TestOutDirForeign: a run replaces its whole directory, so a directory
// holding files schedsim does not write is refused and left as it was;
// one holding only a run's files (of an older version, with its leftover
// temporary files) is replaced.
func TestOutDirForeign(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "results")
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"notes.txt", SummaryFile, "plots/old.png"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := CreateOutDir(dir)
	if err == nil || !strings.Contains(err.Error(), "notes.txt") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("WriteOutputs into a directory with notes.txt: error %v, want one line naming notes.txt", err)
	}
	if diff := cmp.Diff([]string{"notes.txt", "plots/", "plots/old.png", SummaryFile}, treeNames(t, dir)); diff != "" {
		t.Errorf("refused directory changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"results/", "results/notes.txt", "results/plots/", "results/plots/old.png", "results/" + SummaryFile}, treeNames(t, parent)); diff != "" {
		t.Errorf("left beside it (-want +got):\n%s", diff)
	}
	// An older version's run: no manifest, a temporary file it left.
	os.Remove(filepath.Join(dir, "notes.txt"))
	if err := os.WriteFile(filepath.Join(dir, ".jobs.csv.tmp123456"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeSmallRun(t, dir, "sha256:a", 1, false)
	if diff := cmp.Diff(manifestNames(t, dir), treeNames(t, dir)); diff != "" {
		t.Errorf("old run not replaced whole (-manifest +dir):\n%s", diff)
	}
	// A file in place of the directory.
	file := filepath.Join(parent, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := CreateOutDir(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("CreateOutDir(a file) error = %v", err)
	}
}

// TestOutDirStale: what killed writers left (staging directories and
// temporary files of dead pids) goes with the next run on the directory;
// a live process's fresh staging directory stays.
func TestOutDirStale(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	writeSmallRun(t, dir, "sha256:a", 1, true)
	// A pid above Linux's pid_max (2^22) is never alive; our parent is.
	dead := filepath.Join(parent, ".run"+stageInfix+"99999999")
	live := filepath.Join(parent, ".run"+stageInfix+strconv.Itoa(os.Getppid()))
	other := filepath.Join(parent, ".other"+stageInfix+"99999999") // another directory's
	for _, d := range []string{dead, live, other} {
		if err := os.MkdirAll(filepath.Join(d, PlotsDir), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, JobsFile), []byte("half"), 0o644)
	}
	for _, f := range []string{".jobs.csv.tmp-99999999-1", "plots/.queue.svg.tmp-99999999-2", stageInfix + "99999999/jobs.csv"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeSmallRun(t, dir, "sha256:b", 2, true)
	if diff := cmp.Diff(manifestNames(t, dir), treeNames(t, dir)); diff != "" {
		t.Errorf("leftovers in the directory (-manifest +dir):\n%s", diff)
	}
	for _, c := range []struct {
		path string
		want bool
	}{{dead, false}, {live, true}, {other, true}} {
		if _, err := os.Stat(c.path); (err == nil) != c.want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(c.path), err == nil, c.want)
		}
	}
}

// TestReadRunDirRefusesMixes damages a run directory in each way a kill,
// a second writer or a hand edit could, and checks that ReadRunDir
// refuses it with one line naming the directory and the file.
func TestReadRunDirRefusesMixes(t *testing.T) {
	base := t.TempDir()
	other, intact := filepath.Join(base, "other"), filepath.Join(base, "intact")
	writeFixtureRun(t, other, "sha256:b", 2, true)
	writeFixtureRun(t, intact, "sha256:a", 1, true)
	copyFrom := func(name string) func(dir string) error {
		return func(dir string) error {
			b, err := os.ReadFile(filepath.Join(other, name))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
	}
	tests := []struct {
		name   string
		damage func(dir string) error
		want   string // in the error
	}{
		{"another run's jobs.parquet", copyFrom(JobsParquetFile), JobsParquetFile},
		{"another run's summary.json", copyFrom(SummaryFile), SummaryFile},
		{"another run's manifest", copyFrom(ManifestFile), "has"},
		{"no manifest", func(dir string) error { return os.Remove(filepath.Join(dir, ManifestFile)) }, "no manifest.json"},
		{"a file missing", func(dir string) error { return os.Remove(filepath.Join(dir, SacctFile)) }, SacctFile + " is missing"},
		{"a file cut short", func(dir string) error { return os.Truncate(filepath.Join(dir, JobsFile), 10) }, JobsFile + " has 10 bytes"},
		{"a plot not listed", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, PlotsDir, "extra.svg"), []byte("<svg/>"), 0o644)
		}, "plots/extra.svg is not in manifest.json"},
		{"manifest not JSON", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, ManifestFile), []byte("{"), 0o644)
		}, "not a run manifest"},
		{"manifest of another kind", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, ManifestFile), []byte(`{"schema_version":1,"kind":"x","files":[]}`), 0o644)
		}, `kind "x"`},
		{"manifest too large", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, ManifestFile), make([]byte, maxManifestBytes+1), 0o644)
		}, "not a run manifest"},
		{"manifest naming a file outside", func(dir string) error {
			m := Manifest{SchemaVersion: 1, Kind: manifestKind, Files: []ManifestEntry{{Name: "../other/jobs.csv", SHA256: strings.Repeat("0", 64)}}}
			b, _ := json.Marshal(m)
			return os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644)
		}, "is not a file a run writes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(base, strings.ReplaceAll(tt.name, " ", "-"))
			copyTree(t, intact, dir)
			if _, err := ReadRunDir(dir); err != nil {
				t.Fatalf("intact run: %v", err)
			}
			if err := tt.damage(dir); err != nil {
				t.Fatal(err)
			}
			_, err := ReadRunDir(dir)
			if err == nil {
				t.Fatal("ReadRunDir accepted the damaged directory")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || !strings.HasPrefix(msg, dir) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line starting with the directory and containing %q", msg, tt.want)
			}
		})
	}
}

// TestRedraw re-draws a run directory (schedsim plot): the same files,
// byte for byte, under the same manifest, and still one run.
func TestRedraw(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	writeFixtureRun(t, dir, "sha256:a", 1, true)
	before := map[string]string{}
	for _, n := range treeNames(t, dir) {
		if !strings.HasSuffix(n, "/") {
			b, _ := os.ReadFile(filepath.Join(dir, n))
			before[n] = string(b)
		}
	}
	// A plot of an older version goes.
	o, err := CreateOutDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Redraw(); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	after := map[string]string{}
	for _, n := range treeNames(t, dir) {
		if !strings.HasSuffix(n, "/") {
			b, _ := os.ReadFile(filepath.Join(dir, n))
			after[n] = string(b)
		}
	}
	if !cmp.Equal(before, after) {
		for n := range before {
			if before[n] != after[n] {
				t.Errorf("%s changed in a re-draw", n)
			}
		}
		for n := range after {
			if _, ok := before[n]; !ok {
				t.Errorf("%s appeared in a re-draw", n)
			}
		}
	}
	// A damaged directory is not re-drawn, and stays as it was.
	os.Truncate(filepath.Join(dir, JobsParquetFile), 100)
	o, err = CreateOutDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Redraw(); err == nil || !strings.Contains(err.Error(), JobsParquetFile) {
		t.Errorf("Redraw of a damaged run: error %v, want one naming %s", err, JobsParquetFile)
	}
}

// FuzzParseManifest: no input panics, and an accepted manifest encodes
// and parses back to itself.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"schema_version":1,"kind":"schedsim run","config_hash":"sha256:a","seed":1,"policy":"easy","files":[{"name":"jobs.csv","size":3,"sha256":"` + strings.Repeat("a", 64) + `"}]}`))
	f.Add([]byte(`{"schema_version":1,"kind":"schedsim run","files":[{"name":"plots/q.png","size":-1,"sha256":""}]}`))
	f.Add([]byte(`{"schema_version":1,"sweep":"/x","tasks":0}`)) // a sweep array's manifest
	f.Add([]byte(`{"schema_version":1,"kind":"schedsim run","files":[{"name":"b","size":0,"sha256":"0"},{"name":"a"}]}{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := ParseManifest(b)
		if err != nil {
			t.Fatalf("re-encoded manifest refused: %v", err)
		}
		if diff := cmp.Diff(m, m2); diff != "" {
			t.Errorf("round trip (-first +second):\n%s", diff)
		}
	})
}
