// Package bundle reads a records bundle — what a production Slurm keeps,
// as scripts/collect-slurm-records.sh gathers it (docs/collect.md): sacct
// -D with SubmitLine and Eligible, scontrol show config, slurm.conf and
// the files it includes, sacctmgr's associations, QOS, node events and
// reservations — and turns it into a replay: a scenario (the cluster
// imported from slurm.conf, the slurm policy's settings, the fair-share
// tree and QOS, controller settings modelling slurmctld, node events and
// reservations) and its trace, with every job whose inputs could not be
// recovered counted by cause. It also owns the validate breakdown of a
// replay's error (per partition, user, size class and cause).
//
// It imports hwmodels for the slurm.conf import, traces for the sacct
// and sacctmgr readers, and sim for the simulated record it compares;
// the schedsim command parses the scenario text it makes and wires it
// into validate and run --bundle.
package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/schedsim/schedsim/traces"
)

// MaxBytes bounds what one bundle may hold: the sum of its files'
// sizes, checked from each file's stated size before it is read (1 GiB:
// the sacct of a month of a busy cluster is a few hundred MB).
const MaxBytes = 1 << 30

// Bundle is a records bundle read into memory.
type Bundle struct {
	// Path is the directory or tarball as given.
	Path string
	// Manifest holds manifest.txt's top-level "key: value" lines.
	Manifest map[string]string
	// files maps the bundle's paths ("sacct.txt", "conf/slurm.conf")
	// to their contents.
	files map[string][]byte
}

// The files of a bundle (docs/collect.md).
const (
	FileManifest    = "manifest.txt"
	FileSacct       = "sacct.txt"
	FileConfig      = "scontrol-config.txt"
	FileSlurmConf   = "conf/slurm.conf"
	FileGresConf    = "conf/gres.conf"
	FileTopology    = "conf/topology.conf"
	FileAssoc       = "assoc.txt"
	FileQOS         = "qos.txt"
	FileEvent       = "event.txt"
	FileReservation = "reservation.txt"
)

// Open reads a bundle: a directory, or a tarball of one (.tar, .tar.gz,
// .tgz; gzip is recognised by its magic bytes). A tarball's entries may
// sit under one top directory, as the collection script writes them.
// sacct.txt and conf/slurm.conf are required.
func Open(p string) (*Bundle, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Path: p, files: map[string][]byte{}}
	if st.IsDir() {
		err = b.readDir(p)
	} else {
		err = b.readTar(p)
	}
	if err != nil {
		return nil, err
	}
	return b, b.check()
}

// FromFiles makes a bundle of files given in memory (paths as in a
// bundle directory); name stands for its path in messages.
func FromFiles(name string, files map[string][]byte) (*Bundle, error) {
	b := &Bundle{Path: name, files: map[string][]byte{}}
	var total int64
	for k, v := range files {
		total += int64(len(v))
		b.files[path.Clean(k)] = v
	}
	if total > MaxBytes {
		return nil, fmt.Errorf("%s: holds %d bytes, more than a bundle may (%d)", name, total, int64(MaxBytes))
	}
	return b, b.check()
}

func (b *Bundle) check() error {
	for _, f := range []string{FileSacct, FileSlurmConf} {
		if _, ok := b.files[f]; !ok {
			return fmt.Errorf("%s: no %s (want a records bundle: scripts/collect-slurm-records.sh, docs/collect.md)", b.Path, f)
		}
	}
	b.Manifest = map[string]string{}
	for l := range strings.SplitSeq(string(b.files[FileManifest]), "\n") {
		if l == "" || l[0] == ' ' || l[0] == '\t' {
			continue
		}
		if k, v, ok := strings.Cut(l, ":"); ok {
			b.Manifest[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return nil
}

// Has reports whether the bundle holds file name.
func (b *Bundle) Has(name string) bool { _, ok := b.files[name]; return ok }

// File returns a file's contents (nil when absent).
func (b *Bundle) File(name string) []byte { return b.files[name] }

// Where names a file of the bundle in messages.
func (b *Bundle) Where(name string) string { return filepath.Join(b.Path, filepath.FromSlash(name)) }

// Files lists the bundle's paths, sorted.
func (b *Bundle) Files() []string {
	out := make([]string, 0, len(b.files))
	for k := range b.files {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (b *Bundle) readDir(root string) error {
	var total int64
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > MaxBytes {
			return fmt.Errorf("%s: more than %d bytes in all: not a records bundle", root, int64(MaxBytes))
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b.files[filepath.ToSlash(rel)] = data
		return nil
	})
}

func (b *Bundle) readTar(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	var magic [2]byte
	if n, _ := io.ReadFull(f, magic[:]); n == 2 && magic == [2]byte{0x1f, 0x8b} {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
		defer gz.Close()
		r = gz
	} else if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %v (want a directory, or a tar or tar.gz of one)", p, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Size < 0 || h.Size > MaxBytes-total {
			return fmt.Errorf("%s: %s: %d bytes, more than a bundle may hold (%d in all)", p, h.Name, h.Size, int64(MaxBytes))
		}
		total += h.Size
		// Read what is there, not what the header claims: a few bytes
		// of tar.gz can state a size of gigabytes.
		data, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err == nil && int64(len(data)) != h.Size {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %v", p, h.Name, err)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if strings.HasPrefix(name, "../") || path.IsAbs(name) {
			return fmt.Errorf("%s: entry %q leaves the bundle", p, h.Name)
		}
		b.files[name] = data
	}
	// The script's tarball holds one top directory: strip it.
	top := ""
	for k := range b.files {
		d, _, ok := strings.Cut(k, "/")
		if !ok || (top != "" && d != top) {
			top = ""
			break
		}
		top = d
	}
	if top != "" {
		stripped := make(map[string][]byte, len(b.files))
		for k, v := range b.files {
			stripped[strings.TrimPrefix(k, top+"/")] = v
		}
		b.files = stripped
	}
	return nil
}

// table reads a sacctmgr table of the bundle; ok is false when the file
// is absent or empty.
func (b *Bundle) table(name string, req []string) (*traces.SacctmgrTable, bool, error) {
	data, ok := b.files[name]
	if !ok {
		return nil, false, nil
	}
	t, err := traces.ReadSacctmgr(bytes.NewReader(data), b.Where(name), req)
	if err != nil {
		return nil, false, err
	}
	return t, len(t.Columns) > 0, nil
}

// confFiles serves slurm.conf's Include lines from the bundle's conf/:
// a path under slurm.conf's original directory (the manifest's
// slurm_conf) or relative to it maps to conf/ at the same place, any
// other to conf/outside/ by its base name, as the script copies them.
type confFiles struct {
	b       *Bundle
	dir     string // the bundle's conf directory, as the import sees it
	origDir string // slurm.conf's directory on the cluster
}

func (c confFiles) key(p string) string {
	p = filepath.ToSlash(p)
	for _, d := range []string{filepath.ToSlash(c.dir), c.origDir} {
		if d != "" && strings.HasPrefix(p, d+"/") {
			return "conf/" + strings.TrimPrefix(p, d+"/")
		}
	}
	if !path.IsAbs(p) {
		return "conf/" + path.Clean(p)
	}
	return "conf/outside/" + path.Base(p)
}

func (c confFiles) ReadFile(p string) ([]byte, error) {
	if data, ok := c.b.files[c.key(p)]; ok {
		return data, nil
	}
	return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
}

func (c confFiles) Glob(pattern string) ([]string, error) {
	k := c.key(pattern)
	if _, err := path.Match(k, ""); err != nil {
		return nil, err
	}
	var out []string
	for name := range c.b.files {
		if ok, _ := path.Match(k, name); ok {
			out = append(out, filepath.Join(c.dir, filepath.FromSlash(strings.TrimPrefix(name, "conf/"))))
		}
	}
	slices.Sort(out)
	return out, nil
}
