package traces

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/workload"

	"github.com/google/go-cmp/cmp"
)

// sharedTraces returns <module root>/../shared/traces, or skips the test
// when that directory (the project's real trace fixtures) is absent.
func sharedTraces(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the test directory: cannot find ../shared/traces")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "traces")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real trace fixtures not available (%s is absent); the testdata excerpts still run", p)
	}
	return p
}

// openMaybeGzip opens a fixture, gunzipping .gz files (by name: this is
// the test's own independent path, not the reader's).
func openMaybeGzip(t *testing.T, path string) io.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if !strings.HasSuffix(path, ".gz") {
		return f
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

func TestSharedSacctFixture(t *testing.T) {
	dir := sharedTraces(t)
	path := filepath.Join(dir, "sacct-parsable_habrok-rug.txt")

	// Independent count: distinct job ids among rows without a step suffix.
	ids := map[string]bool{}
	steps := 0
	sc := bufio.NewScanner(openMaybeGzip(t, path))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		id, _, _ := strings.Cut(sc.Text(), "☃")
		if strings.Contains(id, ".") {
			steps++
		} else if id != "" {
			ids[id] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// The fixture's README: 242 lines = 100 jobs + 142 steps.
	if len(ids) != 100 || steps != 142 {
		t.Fatalf("independent scan found %d jobs and %d steps, README says 100 and 142", len(ids), steps)
	}

	res, err := Open(path, Options{Sacct: SacctOptions{Fields: JobinfoFields}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trace.Jobs) != len(ids) || res.Skipped != 0 {
		t.Errorf("read %d jobs (%d skipped), want %d", len(res.Trace.Jobs), res.Skipped, len(ids))
	}
	for _, j := range res.Trace.Jobs {
		if !ids[j.ID] {
			t.Errorf("job %s is not a job row of the file", j.ID)
		}
	}
	notes := strings.Join(res.Trace.Notes, "\n")
	if !strings.Contains(notes, "folded 142 step rows into their jobs") {
		t.Errorf("notes:\n%s", notes)
	}
	// Delimiter auto-detected; explicit delimiter gives the same.
	res2, err := Open(path, Options{Format: FormatSacct, Sacct: SacctOptions{Fields: JobinfoFields, Delimiter: "☃"}})
	if err != nil || len(res2.Trace.Jobs) != 100 {
		t.Errorf("explicit delimiter: %v", err)
	}
}

// swfCount scans an SWF log independently: job records, records without
// a submit time (the only ones that are not jobs), and the all -1
// phantoms among those.
func swfCount(t *testing.T, r io.Reader) (records, skip, allMinus1 int) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("not a number: %q", s)
		}
		return v
	}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, ";") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 18 {
			t.Fatalf("record with %d fields: %q", len(f), line)
		}
		records++
		submit, run, alloc, req := num(f[1]), num(f[3]), num(f[4]), num(f[7])
		if submit == -1 {
			skip++
		}
		if submit == -1 && run == -1 && alloc == -1 && req == -1 {
			allMinus1++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return records, skip, allMinus1
}

func TestSharedSWFFixtures(t *testing.T) {
	dir := sharedTraces(t)
	// Record counts and header figures from ../shared/traces/README.md.
	tests := []struct {
		file               string
		records, allMinus1 int
		maxNodes, maxProcs int
		unixStart          int64
	}{
		{file: "CTC-SP2-1996-3.1-cln.swf.gz", records: 77222, maxNodes: 338, maxProcs: 338, unixStart: 835823160},
		{file: "LLNL-Thunder-2007-1.1-cln.swf.gz", records: 121039, allMinus1: 1190, maxNodes: 1002, maxProcs: 4008, unixStart: 1170175078},
		{file: "KTH-SP2-1996-2.1-cln.swf.gz", records: 27992, maxNodes: 100, maxProcs: 100, unixStart: 843480031},
		{file: "HPC2N-2002-2.1-cln.first20000.swf.gz", records: 20000, maxNodes: 240, maxProcs: 240, unixStart: 1027839845},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, tt.file)
			records, skip, allMinus1 := swfCount(t, openMaybeGzip(t, path))
			if records != tt.records || allMinus1 != tt.allMinus1 {
				t.Fatalf("independent scan: %d records, %d all -1; README says %d and %d", records, allMinus1, tt.records, tt.allMinus1)
			}
			res, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Format != FormatSWF || len(res.Trace.Jobs) != records-skip || res.Skipped != skip {
				t.Errorf("read %d jobs, %d skipped; want %d and %d", len(res.Trace.Jobs), res.Skipped, records-skip, skip)
			}
			h := res.SWF
			if h.MaxNodes != tt.maxNodes || h.MaxProcs != tt.maxProcs || h.UnixStartTime != tt.unixStart {
				t.Errorf("header MaxNodes %d MaxProcs %d UnixStartTime %d", h.MaxNodes, h.MaxProcs, h.UnixStartTime)
			}
			if res.Trace.Epoch < tt.unixStart || res.Trace.Jobs[0].Submit != 0 {
				t.Errorf("epoch %d, first submit %d", res.Trace.Epoch, res.Trace.Jobs[0].Submit)
			}
			for i, j := range res.Trace.Jobs {
				// A job without processors never started.
				if j.Request.CPUs <= 0 && !(j.Runtime == 0 && j.CancelledPending()) || j.Runtime < 0 || j.Submit < 0 || (i > 0 && j.Submit < res.Trace.Jobs[i-1].Submit) {
					t.Fatalf("job %s: %+v", j.ID, j)
				}
			}

			// Write the whole log back and read it again: the same jobs.
			var buf bytes.Buffer
			if err := WriteSWF(&buf, *h, res.Trace); err != nil {
				t.Fatal(err)
			}
			res2, err := Read(&buf, tt.file+" (written)", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res2.Trace.Jobs) != len(res.Trace.Jobs) {
				t.Fatalf("read back %d jobs of %d", len(res2.Trace.Jobs), len(res.Trace.Jobs))
			}
			for i := range res.Trace.Jobs {
				// reflect.DeepEqual first: cmp is slow on 100k jobs.
				if a, b := res.Trace.Jobs[i], res2.Trace.Jobs[i]; !reflect.DeepEqual(a, b) {
					t.Fatalf("job %d written and read back (-first +second):\n%s", i, cmp.Diff(a, b))
				}
			}
		})
	}
}

// readAll collects jobs from next until io.EOF.
func readAll(next func() (workload.Job, error)) ([]workload.Job, error) {
	var jobs []workload.Job
	for {
		j, err := next()
		if err == io.EOF {
			return jobs, nil
		}
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
}
