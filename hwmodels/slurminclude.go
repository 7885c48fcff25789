package hwmodels

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ConfFiles gives cluster import access to files beyond the ones it is
// handed: those Include lines name, and gres.conf and topology.conf
// beside slurm.conf. Paths are as the import builds them (joined to the
// including file's directory, cleaned).
type ConfFiles interface {
	// ReadFile returns a file's contents; a missing file's error
	// satisfies errors.Is(err, fs.ErrNotExist).
	ReadFile(path string) ([]byte, error)
	// Glob returns the files matching a filepath.Match pattern, sorted.
	Glob(pattern string) ([]string, error)
}

// OSConfFiles reads the local file system. ReadFile refuses a file larger
// than a config file may be (16 MiB) without reading it whole.
func OSConfFiles() ConfFiles { return osConfFiles{} }

type osConfFiles struct{}

func (osConfFiles) ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfBytes+1))
	if err != nil {
		return nil, err
	}
	return data, nil
}

func (osConfFiles) Glob(pattern string) ([]string, error) {
	m, err := filepath.Glob(pattern)
	slices.Sort(m)
	return m, err
}

// Bounds of Include expansion: how deep includes nest, how many files and
// bytes one import reads in all.
const (
	maxIncludeDepth = 16
	maxIncludeFiles = 256
	maxIncludeBytes = 64 << 20
)

// confReader lexes a config file and the files its Include lines name,
// in place, as slurmctld does (parse_config.c _parse_include_directive).
// A relative Include path is taken from the including file's directory
// (for slurm.conf's own includes that is slurm.conf's directory, where
// Slurm looks); a path with glob characters includes every match in
// lexical order; "%c" is replaced by the ClusterName read so far.
type confReader struct {
	files   ConfFiles
	warn    func(path string, line int, format string, args ...any)
	nfiles  int
	nbytes  int64
	cluster string
}

// read returns the logical lines of data (the file at path) with
// includes expanded.
func (r *confReader) read(data []byte, path string) ([]confLine, error) {
	r.nfiles++
	r.nbytes += int64(len(data))
	return r.expand(data, path, []string{filepath.Clean(path)})
}

func (r *confReader) expand(data []byte, path string, stack []string) ([]confLine, error) {
	lines, err := lexConf(data, path)
	if err != nil {
		return nil, err
	}
	var out []confLine
	for _, l := range lines {
		if l.Include == "" {
			for _, p := range l.Pairs {
				if strings.EqualFold(p.Key, "ClusterName") {
					r.cluster = p.Value
				}
			}
			out = append(out, l)
			continue
		}
		bad := func(kind error, format string, args ...any) error {
			return confError(path, l.Line, "Include", kind, format, args...)
		}
		if r.files == nil {
			return nil, bad(ErrSyntax, "Include %s: this reader has no file access (schedsim cluster import follows includes)", l.Include)
		}
		name := l.Include
		if strings.Contains(name, "%c") {
			if r.cluster == "" {
				return nil, bad(ErrMissing, "Include %s: %%c stands for ClusterName, which no line before it sets", name)
			}
			name = strings.ReplaceAll(name, "%c", r.cluster)
		}
		if !filepath.IsAbs(name) {
			name = filepath.Join(filepath.Dir(path), name)
		}
		name = filepath.Clean(name)
		targets := []string{name}
		if strings.ContainsAny(name, "*?[") {
			m, err := r.files.Glob(name)
			if err != nil {
				return nil, bad(ErrSyntax, "Include %s: %v", l.Include, err)
			}
			if len(m) == 0 {
				r.warn(path, l.Line, "Include %s matches no file; nothing included", l.Include)
			}
			targets = m
		}
		if len(stack) >= maxIncludeDepth {
			return nil, bad(ErrRange, "Include %s: includes nest more than %d deep (%s)", l.Include, maxIncludeDepth, strings.Join(stack, " > "))
		}
		for _, t := range targets {
			t = filepath.Clean(t)
			if i := slices.Index(stack, t); i >= 0 {
				return nil, bad(ErrRange, "Include %s: include loop %s > %s", l.Include, strings.Join(stack[i:], " > "), t)
			}
			if r.nfiles++; r.nfiles > maxIncludeFiles {
				return nil, bad(ErrRange, "Include %s: more than %d files included in all", l.Include, maxIncludeFiles)
			}
			data, err := r.files.ReadFile(t)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil, bad(ErrMissing, "Include %s: %s does not exist", l.Include, t)
				}
				return nil, bad(ErrSyntax, "Include %s: %v", l.Include, err)
			}
			if r.nbytes += int64(len(data)); r.nbytes > maxIncludeBytes {
				return nil, bad(ErrRange, "Include %s: the included files hold more than %d bytes in all", l.Include, maxIncludeBytes)
			}
			sub, err := r.expand(data, t, append(slices.Clip(stack), t))
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
	}
	return out, nil
}
