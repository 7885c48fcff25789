package traces

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// hostileAlloc bounds what reading one input of the hostile corpus may
// allocate in all (runtime.MemStats.TotalAlloc): the files are a few
// kilobytes, the generated bombs a few hundred.
const hostileAlloc = 64 << 20

// readHostile reads data and returns the error, failing the test on a
// panic (which would end the test binary), an error that is not a
// one-line *ParseError, or an allocation past hostileAlloc.
func readHostile(t *testing.T, data []byte, name string, opts Options) (*Result, error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Read(bytes.NewReader(data), name, opts)
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > hostileAlloc {
		t.Errorf("%s: allocated %d MB reading %d bytes", name, d>>20, len(data))
	}
	if err == nil {
		return res, nil
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line <= 0 {
		t.Errorf("%s: %v (%T) is not a *ParseError with a line", name, err, err)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Errorf("%s: error on more than one line: %q", name, err)
	}
	return nil, err
}

// TestHostileCorpus reads every file of testdata/hostile (README.md there
// says what each is and what the reader did before) and checks the
// outcome: a clean error naming the place and, for a limit, the flag; or
// the jobs, for the compressed formats that are read.
func TestHostileCorpus(t *testing.T) {
	want := map[string]struct {
		jobs int    // > 0: read, this many jobs
		msg  string // else the error says this
		flag string // and, for a limit, names this flag
	}{
		"arrow_schema_fields.arrow":             {msg: ":1: footer: schema.fields: vector of 2147483647 elements"},
		"arrow_field_children.arrow":            {msg: ":1: footer: schema.fields[26].children: vector of 2147483647 elements"},
		"arrow_schema_metadata.arrow":           {msg: ":1: footer: schema.custom_metadata: vector of 2147483647 elements"},
		"parquet_arrow_schema_children.parquet": {msg: ":1: footer: ARROW:schema: header.fields[19].children: vector of 2147483647"},
		"parquet_arrow_schema_nested.parquet":   {msg: ":1: footer: ARROW:schema: header.fields[20].children[0].children[0].children"},
		"philly_deep.json":                      {msg: ":1: JSON: invalid character '[' exceeded max depth"},
		"sacct_array_bomb.sacct":                {msg: `:2: JobID: "1_[0-4000000]": pending array record expands to 4,000,001 jobs`, flag: "max-array-tasks"},
		"sacct_delimiters.sacct":                {msg: ":2: 65537 fields, want 3"},
		"sacct_repeated_column.sacct":           {msg: ":1: jobid: column named twice, at positions 1 and 4"},
		"thunder.swf.gz.gz":                     {msg: ":1: the decompressed input is itself gzip-compressed"},
		"thunder_truncated.swf.gz":              {msg: ":7: gzip: truncated input"},
		"thunder.swf.xz":                        {msg: ":1: xz-compressed input: not supported, decompress it first (xz -d)"},
		"thunder.swf.zst":                       {jobs: 12},
		"thunder.swf.bz2":                       {jobs: 12},
		"thunder.swf.lz4":                       {jobs: 12},
	}
	files, err := filepath.Glob(filepath.Join("testdata", "hostile", "*"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range files {
		name := filepath.Base(p)
		if name == "README.md" {
			continue
		}
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: no expectation (add it here and to README.md)", name)
			continue
		}
		seen++
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			res, err := readHostile(t, data, name, Options{})
			if w.jobs > 0 {
				if err != nil || len(res.Trace.Jobs) != w.jobs {
					t.Fatalf("want %d jobs, got %v", w.jobs, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), name+w.msg) {
				t.Fatalf("got %v\nwant %q", err, name+w.msg)
			}
			var le *LimitError
			if (w.flag != "") != errors.As(err, &le) || w.flag != "" && (le.Flag != w.flag || !strings.Contains(err.Error(), "--"+w.flag)) {
				t.Errorf("limit: %v, want flag %q", err, w.flag)
			}
		})
	}
	if seen != len(want) {
		t.Errorf("%d of the %d expected files found", seen, len(want))
	}
}

// gzipped returns data gzip-compressed.
func gzipped(t *testing.T, parts ...[]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	for _, p := range parts {
		zw.Write(p)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestHostileGenerated: the inputs too large to keep, made here: the
// decompression bombs of each compressed format, a Philly record and a
// line past MaxRecord, and a trace past MaxJobs. Each is refused by the
// limit it exceeds, naming its flag, in bounded memory.
func TestHostileGenerated(t *testing.T) {
	newlines := bytes.Repeat([]byte{'\n'}, 16<<20)
	zeros := make([]byte, 16<<20)
	var zst bytes.Buffer
	zw, _ := zstd.NewWriter(&zst, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	zw.Write([]byte("; Version: 2.2\n"))
	zw.Write(newlines)
	zw.Close()
	var swf strings.Builder
	swf.WriteString("; Version: 2.2\n")
	for i := 1; i <= 100; i++ {
		swf.WriteString(strings.Repeat("1 ", 17) + "1\n")
	}
	long := append([]byte("JobID|Submit\n1|"), bytes.Repeat([]byte{'x'}, 2<<20)...)
	tests := []struct {
		name string
		data []byte
		lim  Limits
		line int
		flag string
	}{
		// 16 MiB of blank lines after an SWF header, in 16 KB of gzip. The
		// cap lets 4 MiB + 1 bytes through, to see the excess: the
		// 15-byte header and 4,194,290 blank lines (lines 2 to
		// 4,194,291) are read, the error is at line 4,194,292.
		{"bomb.swf.gz", gzipped(t, []byte("; Version: 2.2\n"), newlines), Limits{MaxDecompressed: 4 << 20}, 4<<20 - 12, "max-decompressed"},
		{"bomb.swf.zst", zst.Bytes(), Limits{MaxDecompressed: 4 << 20}, 4<<20 - 12, "max-decompressed"},
		// A Parquet file in gzip is spooled to a temporary file: capped.
		{"bomb.parquet.gz", gzipped(t, []byte("PAR1"), zeros), Limits{MaxDecompressed: 4 << 20}, 1, "max-decompressed"},
		{"long.json", append(append([]byte(`[{"jobid": "`), bytes.Repeat([]byte{'a'}, 2<<20)...), `"}]`...), Limits{MaxRecord: 1 << 20}, 1, "max-record"},
		{"long.sacct", long, Limits{MaxRecord: 1 << 20}, 2, "max-record"},
		// The header is line 1: the 51st job, one too many, is line 52.
		{"many.swf", []byte(swf.String()), Limits{MaxJobs: 50}, 52, "max-jobs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readHostile(t, tc.data, tc.name, Options{Limits: tc.lim})
			var le *LimitError
			var pe *ParseError
			if !errors.As(err, &le) || le.Flag != tc.flag || !errors.As(err, &pe) {
				t.Fatalf("got %v, want a %s limit", err, tc.flag)
			}
			if pe.Line != tc.line {
				t.Errorf("line %d, want %d: %v", pe.Line, tc.line, err)
			}
		})
	}
	if testing.Short() {
		return
	}
	// With the default limits a bomb of blank lines is read to its end,
	// in bounded memory: 16 Mi lines.
	if _, err := readHostile(t, gzipped(t, []byte("; Version: 2.2\n"), newlines), "blank.swf.gz", Options{}); err != nil {
		t.Errorf("blank lines: %v", err)
	}
	// The default cap, 100 times the compressed size and at least 256
	// MiB: 300 gzip members of 1 MiB of zeros each (1 KB apiece) after
	// one holding "PAR1" decompress to 300 MiB; the spool stops at
	// 256 MiB.
	member := gzipped(t, make([]byte, 1<<20))
	bomb := gzipped(t, []byte("PAR1"))
	for range 300 {
		bomb = append(bomb, member...)
	}
	_, err := readHostile(t, bomb, "bomb-default.parquet.gz", Options{})
	var le *LimitError
	if !errors.As(err, &le) || le.Flag != "max-decompressed" || le.Limit != 256<<20 {
		t.Errorf("default cap: %v", err)
	}
}
