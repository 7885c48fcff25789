package traces

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/schedsim/schedsim/traces/arrowcheck"
)

// Limits bound what reading one trace may cost, so that no input, however
// small or crafted, makes the reader allocate without bound. Every size a
// file states (a row count, an array range, a length in Arrow or Parquet
// metadata, a decompressed size) is checked against them, or against a
// bound derived from the file's own size, before anything is allocated
// from it. A zero field takes the process default (SetDefaultLimits),
// whose zero fields take the built-in defaults below. Exceeding a limit
// is a *LimitError, which names the limit by its command-line flag.
type Limits struct {
	// MaxJobs bounds the jobs one read produces (--max-jobs; default
	// 20,000,000, twice the 10 M-job scale target).
	MaxJobs int64
	// MaxArrayTasks bounds the jobs one read expands from pending sacct
	// array records ("123_[0-99999]"), all records together
	// (--max-array-tasks; default 1,000,000). Slurm's MaxArraySize can
	// reach 4,000,001 tasks per array, and a 90-byte line can ask for
	// that many jobs.
	MaxArrayTasks int64
	// MaxDecompressed bounds the bytes a compressed input (gzip, zstd,
	// bzip2, lz4) may decompress to (--max-decompressed). 0: 100 times
	// the compressed size, and at least 256 MiB (a gzip bomb reaches a
	// thousand times its size).
	MaxDecompressed int64
	// MaxRecord bounds one line of a text trace and one JSON job object
	// of a Philly log (--max-record; default 16 MiB).
	MaxRecord int64
	// MaxMetadata bounds one Arrow or Parquet metadata structure (a
	// footer, a message or page header) and what its schema
	// materialises into (--max-metadata; default 16 MiB).
	MaxMetadata int64
	// MaxArrowMemory bounds the memory arrow-go may hold at once while
	// decoding an Arrow or Parquet file (--max-arrow-memory; default
	// 1 GiB): its allocator refuses more.
	MaxArrowMemory int64
	// MaxPage bounds the uncompressed size of one Parquet page
	// (--max-page; default 64 MiB).
	MaxPage int64
}

// Built-in defaults of Limits.
const (
	DefaultMaxJobs        = 20_000_000
	DefaultMaxArrayTasks  = 1_000_000
	DefaultMaxRecord      = 16 << 20
	DefaultMaxMetadata    = arrowcheck.DefaultMaxMetadata
	DefaultMaxArrowMemory = arrowcheck.DefaultMaxMemory
	DefaultMaxPage        = arrowcheck.DefaultMaxPage
	// decompressRatio and minDecompressed make the default
	// MaxDecompressed: ratio times the compressed size, at least the floor.
	decompressRatio = 100
	minDecompressed = 256 << 20
)

var (
	defaultLimitsMu sync.Mutex
	defaultLimits   Limits
)

// SetDefaultLimits sets the limits that reads use where their Options
// leave a field zero (the command line's --max-* flags set them). Zero
// fields of l mean the built-in defaults.
func SetDefaultLimits(l Limits) {
	defaultLimitsMu.Lock()
	defaultLimits = l
	defaultLimitsMu.Unlock()
}

// DefaultLimits returns the process defaults set by SetDefaultLimits.
func DefaultLimits() Limits {
	defaultLimitsMu.Lock()
	defer defaultLimitsMu.Unlock()
	return defaultLimits
}

// resolve fills the zero fields of l from the process and built-in
// defaults. MaxDecompressed stays 0 (relative to the input's size).
func (l Limits) resolve() Limits {
	d := DefaultLimits()
	pick := func(v, proc, builtin int64) int64 {
		switch {
		case v > 0:
			return v
		case proc > 0:
			return proc
		}
		return builtin
	}
	l.MaxJobs = pick(l.MaxJobs, d.MaxJobs, DefaultMaxJobs)
	l.MaxArrayTasks = pick(l.MaxArrayTasks, d.MaxArrayTasks, DefaultMaxArrayTasks)
	l.MaxDecompressed = pick(l.MaxDecompressed, d.MaxDecompressed, 0)
	l.MaxRecord = pick(l.MaxRecord, d.MaxRecord, DefaultMaxRecord)
	l.MaxMetadata = pick(l.MaxMetadata, d.MaxMetadata, DefaultMaxMetadata)
	l.MaxArrowMemory = pick(l.MaxArrowMemory, d.MaxArrowMemory, DefaultMaxArrowMemory)
	l.MaxPage = pick(l.MaxPage, d.MaxPage, DefaultMaxPage)
	return l
}

// decompressedBound is the most bytes an input of compressed bytes may
// decompress to (compressed <= 0: unknown, the floor applies).
func (l Limits) decompressedBound(compressed int64) int64 {
	if l.MaxDecompressed > 0 {
		return l.MaxDecompressed
	}
	return max(minDecompressed, compressed*decompressRatio)
}

func (l Limits) arrow() arrowcheck.Limits {
	return arrowcheck.Limits{MaxMetadata: l.MaxMetadata, MaxMemory: l.MaxArrowMemory, MaxPage: l.MaxPage}
}

// ErrLimit is wrapped by every *LimitError.
var ErrLimit = errors.New("limit exceeded")

// LimitError is an input that exceeds a limit of Limits. Flag names the
// limit as the command line does ("max-jobs"), Limit is its value, and
// Msg says what the input asked for.
type LimitError struct {
	Flag  string
	Limit int64
	Msg   string
	Bytes bool // Limit is a size in bytes
}

func (e *LimitError) Error() string {
	v := fmtCount(int(e.Limit))
	if e.Bytes {
		v = FormatSize(e.Limit)
	}
	return fmt.Sprintf("%s: over the limit of %s (raise it with --%s)", e.Msg, v, e.Flag)
}

func (e *LimitError) Unwrap() error { return ErrLimit }

// limitErr turns an arrowcheck error into a *ParseError at line 1 of
// path, wrapping a *LimitError when a limit was exceeded.
func limitErr(path string, err error, lim Limits) error {
	var ae *arrowcheck.Error
	var be *arrowcheck.BudgetError
	switch {
	case errors.As(err, &ae):
		field, msg := ae.Where, ae.Msg
		var wrapped error
		switch ae.Limit {
		case arrowcheck.LimitMetadata:
			wrapped = &LimitError{Flag: "max-metadata", Limit: lim.MaxMetadata, Msg: msg, Bytes: true}
		case arrowcheck.LimitMemory:
			wrapped = &LimitError{Flag: "max-arrow-memory", Limit: lim.MaxArrowMemory, Msg: msg, Bytes: true}
		case arrowcheck.LimitPage:
			wrapped = &LimitError{Flag: "max-page", Limit: lim.MaxPage, Msg: msg, Bytes: true}
		default:
			wrapped = errKind(ErrSyntax, msg+" (corrupt or not written by an Arrow writer)")
		}
		return &ParseError{Path: path, Line: 1, Field: field, Err: wrapped, noValue: true}
	case errors.As(err, &be):
		return &ParseError{Path: path, Line: 1, Err: &LimitError{Flag: "max-arrow-memory", Limit: lim.MaxArrowMemory, Bytes: true,
			Msg: fmt.Sprintf("decoding needs %s on top of %s", FormatSize(be.Want), FormatSize(be.Used))}}
	}
	return err
}

// FormatSize formats a byte count as ParseSize reads it: the largest
// binary unit that divides it (1G, 512M, 1536K, 1000).
func FormatSize(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return strconv.FormatInt(n/u.v, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseSize reads a byte count: a whole number, optionally followed by K,
// M, G or T (binary multiples, case-insensitive, an optional trailing B or
// iB: "64M", "1GiB", "512k").
func ParseSize(s string) (int64, error) {
	t := s
	mult := int64(1)
	for _, suf := range []string{"iB", "ib", "B", "b"} {
		if len(t) > len(suf) && t[len(t)-len(suf):] == suf {
			t = t[:len(t)-len(suf)]
			break
		}
	}
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("%q: want a size such as 512M, 8G or a number of bytes", s)
	}
	return v * mult, nil
}
