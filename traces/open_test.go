package traces

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "swf header", in: "; Version: 2.2\n; Computer: IBM SP2\n", want: FormatSWF},
		{name: "swf record", in: "    1        0 588530    937  306 142.00    -1   -1  35100    -1  1  97  -1 307  3 -1 -1 -1\n", want: FormatSWF},
		{name: "swf after blank lines", in: "\n\n  ; comment\n", want: FormatSWF},
		{name: "sacct header", in: "JobID|JobName|Submit\n", want: FormatSacct},
		{name: "sacct header later column", in: "User|Account|JobID\n", want: FormatSacct},
		{name: "sacct header comma", in: "JobID,Submit\n", want: FormatSacct},
		{name: "sacct snowman rows", in: "4034541☃EYR378CSFYHIMYW☃user424☃\n", want: FormatSacct},
		{name: "sacct step row", in: "7965768.batch|batch|\n", want: FormatSacct},
		{name: "sacct array row", in: "5908801_3|x|\n", want: FormatSacct},
		{name: "sacct het row", in: "123+0|x\n", want: FormatSacct},
		{name: "bom", in: "\ufeffJobID|Submit\n", want: FormatSacct},
		{name: "csv", in: "job_id,user,account\n1,u,a\n"},
		{name: "17 numbers", in: "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n"},
		{name: "prose", in: "hello world\n"},
		{name: "empty", in: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, in := range [][]byte{[]byte(tt.in), gz(t, []byte(tt.in))} {
				got, err := DetectFormat(in)
				if tt.want == "" {
					if !errors.Is(err, ErrUnknownFormat) {
						t.Errorf("DetectFormat(%q) = %q, %v; want ErrUnknownFormat", in, got, err)
					}
					continue
				}
				if err != nil || got != tt.want {
					t.Errorf("DetectFormat(%q) = %q, %v; want %q", in, got, err, tt.want)
				}
			}
		})
	}
	// A truncated gzip prefix still detects.
	z := gz(t, []byte(strings.Repeat("; Note: padding padding padding\n", 5000)))
	if got, err := DetectFormat(z[:200]); err != nil || got != FormatSWF {
		t.Errorf("truncated gzip prefix: %q, %v", got, err)
	}
}

func TestOpenGzipByMagic(t *testing.T) {
	dir := t.TempDir()
	// A gzip file whose name does not say so.
	p := filepath.Join(dir, "thunder.txt")
	if err := os.WriteFile(p, gz(t, []byte(mustRead(t, "testdata/thunder_excerpt.swf"))), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trace
	if res.Format != FormatSWF || res.SWF == nil || res.SWF.MaxProcs != 4008 || res.Skipped != 2 || len(tr.Jobs) != 12 {
		t.Fatalf("result %+v, %d jobs", res, len(tr.Jobs))
	}
	// Rebased: the first submit is time 0 and Epoch its Unix time.
	if tr.Epoch != 1170175078 || tr.Jobs[0].Submit != 0 || tr.Jobs[len(tr.Jobs)-1].Submit != 986396 {
		t.Errorf("epoch %d, first submit %d, last %d", tr.Epoch, tr.Jobs[0].Submit, tr.Jobs[len(tr.Jobs)-1].Submit)
	}
	if tr.Source != "thunder.txt (SWF: Linux cluster (Thunder), High Performance Computing - Lawrence Livermore National Laboratory, 12 jobs)" {
		t.Errorf("source %q", tr.Source)
	}
	if len(tr.Notes) == 0 || !strings.Contains(tr.Notes[0], "skipped 2 SWF records") {
		t.Errorf("notes %q", tr.Notes)
	}
	// A given format gives the same jobs.
	res2, err := Open(p, Options{Format: FormatSWF})
	if err != nil || len(res2.Trace.Jobs) != len(tr.Jobs) {
		t.Errorf("Open with Format: %v", err)
	}
}

func TestReadSacct(t *testing.T) {
	res, err := Read(strings.NewReader(mustRead(t, "testdata/habrok_excerpt.sacct")), "habrok_excerpt.sacct", Options{Sacct: SacctOptions{Fields: JobinfoFields}})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trace
	if res.Format != FormatSacct || res.SWF != nil || len(tr.Jobs) != 14 {
		t.Fatalf("result %+v", res)
	}
	for i := 1; i < len(tr.Jobs); i++ {
		if tr.Jobs[i].Submit < tr.Jobs[i-1].Submit {
			t.Fatalf("jobs not sorted by submit at %d", i)
		}
	}
	// Earliest submit in the excerpt: 2355320_24 at 2023-06-02T17:48:56.
	if tr.Jobs[0].ID != "2355320_24" || tr.Epoch != int64(utc(t, "2023-06-02T17:48:56")) {
		t.Errorf("first job %s, epoch %d", tr.Jobs[0].ID, tr.Epoch)
	}
	if !strings.Contains(strings.Join(tr.Notes, "\n"), "folded 19 step rows") {
		t.Errorf("notes %q", tr.Notes)
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := Read(strings.NewReader("x"), "f", Options{Format: "csv"}); err == nil {
		t.Error("unknown format accepted")
	}
	_, err := Read(strings.NewReader("hello\n"), "f.txt", Options{})
	if !errors.Is(err, ErrUnknownFormat) || !strings.HasPrefix(err.Error(), "f.txt: ") {
		t.Errorf("undetectable: %v", err)
	}
	// A corrupt gzip stream is a positional read error.
	z := gz(t, []byte(mustRead(t, "testdata/ctc_head.swf")))
	z[len(z)-5] ^= 0xff // break the CRC
	_, err = Read(bytes.NewReader(z), "c.swf.gz", Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrRead) || pe.Path != "c.swf.gz" {
		t.Errorf("corrupt gzip: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// Strict by default, lenient on request.
	bad := mustRead(t, "testdata/kth_head.swf") + "1 2 3\n"
	if _, err := Read(strings.NewReader(bad), "k", Options{}); !errors.Is(err, ErrFieldCount) {
		t.Errorf("strict: %v", err)
	}
	res, err := Read(strings.NewReader(bad), "k", Options{Lenient: true})
	if err != nil || res.Bad != 1 || len(res.Trace.Jobs) != 6 {
		t.Errorf("lenient: %+v, %v", res, err)
	}
}

func TestParseErrorMessage(t *testing.T) {
	tests := []struct {
		err  *ParseError
		want string
	}{
		{&ParseError{Path: "jobs.swf", Line: 1042, Field: "run_time", Value: "-5", Err: errKind(ErrRange, "must be >= 0 or -1 (unknown)")},
			`jobs.swf:1042: run_time: "-5": must be >= 0 or -1 (unknown)`},
		{&ParseError{Line: 3, Err: ErrFieldCount}, `line 3: wrong number of fields`},
		{&ParseError{Path: "a", Line: 1, Field: "State", Value: "", Err: ErrSyntax}, `a:1: State: "": invalid syntax`},
		{&ParseError{Path: "a", Line: 2, Field: "JobName", Value: strings.Repeat("x", 100), Err: ErrSyntax},
			`a:2: JobName: "` + strings.Repeat("x", 80) + `...": invalid syntax`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.err, errors.Unwrap(tt.err)) {
			t.Errorf("%q does not unwrap", tt.err)
		}
	}
}

// TestOpenNoExtra reads SWF, sacct and CSV excerpts with and without
// Options.NoExtra: the jobs, notes and counts are the same but for Extra,
// which NoExtra leaves nil, and the trace has some Extra lists to drop.
func TestOpenNoExtra(t *testing.T) {
	for _, tc := range []struct {
		file string
		opts Options
	}{
		{file: "hpc2n_head.swf"},
		{file: "kth_head.swf"},
		{file: "thunder_excerpt.swf", opts: Options{SWF: SWFOptions{ProcsPerGPU: 10}}},
		{file: "habrok_excerpt.sacct", opts: Options{Sacct: SacctOptions{Fields: JobinfoFields}}},
		{file: "synthetic_header.psv"},
		{file: "eagle_excerpt.csv", opts: Options{Format: FormatEagle}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", tc.file)
			want, err := Open(path, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			o := tc.opts
			o.NoExtra = true
			got, err := Open(path, o)
			if err != nil {
				t.Fatal(err)
			}
			lists := 0
			for i := range want.Trace.Jobs {
				if len(want.Trace.Jobs[i].Extra) > 0 {
					lists++
				}
				want.Trace.Jobs[i].Extra = nil
			}
			if lists == 0 {
				t.Fatalf("%s: no job has Extra: the test shows nothing", tc.file)
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Result{})); diff != "" {
				t.Errorf("NoExtra (-want +got):\n%s", diff)
			}
		})
	}
}
