package reports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// ManifestFile is the file a run directory's writer writes last: every
// other file's name, size and SHA-256, and the run's config hash and seed.
const ManifestFile = "manifest.json"

// ManifestVersion is manifest.json's schema_version.
const ManifestVersion = 1

// manifestKind tells a run's manifest from other manifest.json files (a
// sweep array's).
const manifestKind = "schedsim run"

// maxManifestBytes bounds manifest.json before it is read: a run has a
// dozen files, each entry about 150 bytes.
const maxManifestBytes = 1 << 20

// maxManifestFiles bounds its entries.
const maxManifestFiles = 1000

// Manifest is manifest.json.
type Manifest struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"`
	ConfigHash    string `json:"config_hash"`
	Seed          uint64 `json:"seed"`
	Policy        string `json:"policy"`
	// Files lists every file of the run but the manifest, sorted by name
	// (slash-separated, relative to the directory).
	Files []ManifestEntry `json:"files"`
}

// ManifestEntry is one file of a run directory.
type ManifestEntry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ParseManifest decodes and checks manifest.json's bytes: known fields
// only, this schema version and kind, and files sorted by name, each a
// run file name (runFileName) with a size >= 0 and a 64-digit lower-case
// hex SHA-256.
func ParseManifest(data []byte) (*Manifest, error) {
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("%d bytes, more than a run's manifest has (%d at most)", len(data), maxManifestBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a run manifest: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not a run manifest: data after the JSON object")
	}
	if m.Kind != manifestKind {
		return nil, fmt.Errorf("kind %q, want %q (a run directory's manifest)", m.Kind, manifestKind)
	}
	if m.SchemaVersion != ManifestVersion {
		return nil, fmt.Errorf("schema_version %d, want %d", m.SchemaVersion, ManifestVersion)
	}
	if len(m.Files) > maxManifestFiles {
		return nil, fmt.Errorf("%d files, more than %d", len(m.Files), maxManifestFiles)
	}
	for i, f := range m.Files {
		switch {
		case !runFileName(f.Name):
			return nil, fmt.Errorf("files[%d]: name %q is not a file a run writes", i, f.Name)
		case i > 0 && f.Name <= m.Files[i-1].Name:
			return nil, fmt.Errorf("files[%d]: %q is not after %q (want names sorted, each once)", i, f.Name, m.Files[i-1].Name)
		case f.Size < 0:
			return nil, fmt.Errorf("files[%d]: %s: size %d, want >= 0", i, f.Name, f.Size)
		case len(f.SHA256) != 64 || strings.Trim(f.SHA256, "0123456789abcdef") != "":
			return nil, fmt.Errorf("files[%d]: %s: sha256 %q, want 64 lower-case hex digits", i, f.Name, f.SHA256)
		}
	}
	return &m, nil
}

// errNotComplete ends the errors of a directory that fails its manifest.
const errNotComplete = "not one complete run (killed while written, changed since, or written by a schedsim without manifests): write it again with schedsim run --out"

// VerifyRunDir checks dir against its manifest.json (see ParseManifest):
// every file listed is there, a regular file, with its size and SHA-256,
// and no run file (runFileName) is there that the manifest does not list.
// keep names files whose bytes are returned, read in the same pass. The
// error is one line naming the directory and the first file that fails.
func VerifyRunDir(dir string, keep ...string) (*Manifest, map[string][]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	return verifyRoot(dir, root, keep, false)
}

// derivedFile reports whether name is drawn from the other files
// (plots, report.html), so that schedsim plot can draw it again.
func derivedFile(name string) bool {
	return name == ReportFile || strings.HasPrefix(name, PlotsDir+"/")
}

// verifyRoot is VerifyRunDir on an open directory. With derivedOptional,
// derived files (derivedFile) may be missing; those there must match.
func verifyRoot(dir string, root *os.Root, keep []string, derivedOptional bool) (*Manifest, map[string][]byte, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%s: %s: %s", dir, fmt.Sprintf(format, a...), errNotComplete)
	}
	st, err := root.Lstat(ManifestFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fail("no %s", ManifestFile)
	}
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxManifestBytes {
		return nil, nil, fail("%s is not a run manifest (%d bytes, not a regular file or more than %d)", ManifestFile, st.Size(), maxManifestBytes)
	}
	data, err := root.ReadFile(ManifestFile)
	if err != nil {
		return nil, nil, err
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", dir, ManifestFile, err)
	}
	listed := map[string]bool{}
	kept := map[string][]byte{}
	for _, f := range m.Files {
		listed[f.Name] = true
		st, err := root.Lstat(f.Name)
		if errors.Is(err, fs.ErrNotExist) && derivedOptional && derivedFile(f.Name) {
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fail("%s is missing", f.Name)
		}
		if err != nil {
			return nil, nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, nil, fail("%s is not a regular file", f.Name)
		}
		if st.Size() != f.Size {
			return nil, nil, fail("%s has %d bytes, the manifest says %d", f.Name, st.Size(), f.Size)
		}
		h := sha256.New()
		file, err := root.Open(f.Name)
		if err != nil {
			return nil, nil, err
		}
		var w io.Writer = h
		var buf *bytes.Buffer
		for _, k := range keep {
			if k == f.Name {
				buf = bytes.NewBuffer(make([]byte, 0, f.Size))
				w = io.MultiWriter(h, buf)
			}
		}
		n, err := io.Copy(w, io.LimitReader(file, f.Size+1))
		file.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", dir, f.Name, err)
		}
		if n != f.Size {
			return nil, nil, fail("%s changed while it was read", f.Name)
		}
		if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
			return nil, nil, fail("%s has SHA-256 %.12s…, the manifest says %.12s…", f.Name, sum, f.SHA256)
		}
		if buf != nil {
			kept[f.Name] = buf.Bytes()
		}
	}
	for _, sub := range []string{".", PlotsDir} {
		d, err := root.Open(sub)
		if sub == PlotsDir && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		ents, err := d.ReadDir(-1)
		d.Close()
		if err != nil {
			return nil, nil, err
		}
		for _, e := range ents {
			name := path.Join(sub, e.Name())
			if e.Type().IsRegular() && runFileName(name) && !listed[name] {
				return nil, nil, fail("%s is not in %s (it is another run's)", name, ManifestFile)
			}
		}
	}
	return m, kept, nil
}
