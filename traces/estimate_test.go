package traces

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/schedsim/schedsim/workload"
)

// swfLines returns an SWF log of n jobs, one a second. With aligned set
// its columns have fixed widths, as the Parallel Workloads Archive's
// cleaned logs do; otherwise its lines grow longer through the file (job
// numbers and run times gain digits), and an estimate from the first
// lines falls short.
func swfLines(n int, aligned bool) []byte {
	var b strings.Builder
	b.WriteString("; Version: 2.2\n; UnixStartTime: 1000000000\n; MaxNodes: 64\n; MaxProcs: 64\n")
	format := "%d %d 0 %d %d -1 -1 %d %d -1 1 %d 1 1 1 1 -1 -1\n"
	if aligned {
		format = "%7d %9d 0 %9d %3d -1 -1 %3d %6d -1 1 %2d 1 1 1 1 -1 -1\n"
	}
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, format, i, i, 10+i%97*i, 1+i%8, 1+i%8, 3600, 1+i%5)
	}
	return []byte(b.String())
}

// TestOpenEstimatesSWFJobs checks that a whole read of an SWF file, plain
// and gzip-compressed, returns the same jobs as a read of it
// zstd-compressed (whose decompressed size the reader does not know, so
// that it collects the jobs in chunks), in one slice the estimate from
// the decompressed size fitted: no more than an eighth plus the slack
// unused. For aligned columns the estimate is above the count, so the
// slice has room left: the jobs were not copied into one of their exact
// length at the end, as a chunked read does.
func TestOpenEstimatesSWFJobs(t *testing.T) {
	for _, n := range []int{10, 300, 5000, 40000} {
		for _, aligned := range []bool{true, false} {
			raw := swfLines(n, aligned)
			var zb bytes.Buffer
			zw, err := zstd.NewWriter(&zb)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := zw.Write(raw); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			want, err := Read(bytes.NewReader(zb.Bytes()), "log.swf.zst", Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name string
				data []byte
			}{{"plain.swf", raw}, {"log.swf.gz", gz(t, raw)}} {
				path := filepath.Join(t.TempDir(), tc.name)
				if err := os.WriteFile(path, tc.data, 0o644); err != nil {
					t.Fatal(err)
				}
				got, err := Open(path, Options{})
				if err != nil {
					t.Fatal(err)
				}
				jobs := got.Trace.Jobs
				if len(jobs) != n || !reflect.DeepEqual(jobs, want.Trace.Jobs) {
					t.Fatalf("%d jobs (aligned %v), %s: the jobs differ from the zstd read's (%d, %d jobs)", n, aligned, tc.name, len(jobs), len(want.Trace.Jobs))
				}
				spare := cap(jobs) - len(jobs)
				if spare > len(jobs)/8+estimateSlack {
					t.Errorf("%d jobs (aligned %v), %s: %d unused slots, want at most %d", n, aligned, tc.name, spare, len(jobs)/8+estimateSlack)
				}
				if aligned && n >= 300 && spare == 0 {
					t.Errorf("%d jobs, %s: no room left in the slice: the jobs were copied, not read into the estimate's slice", n, tc.name)
				}
			}
		}
	}
}

// TestExtraInterner: equal lists are shared, one slice per distinct list
// (names and values compared exactly, NUL bytes included), and every
// list keeps its values.
func TestExtraInterner(t *testing.T) {
	list := func(a, b string) []workload.Field {
		return []workload.Field{{Name: "allocated_processors", Value: a}, {Name: "average_cpu_time", Value: b}}
	}
	var x extraInterner
	first := map[string]*workload.Field{}
	for i := range 5000 {
		a, b := fmt.Sprint(i%7), fmt.Sprint(i%3)
		if i%5 == 0 {
			a, b = "x\x00", "y" // values with NUL bytes
		} else if i%5 == 1 {
			a, b = "x", "\x00y"
		}
		got := x.intern(list(a, b))
		if want := list(a, b); !reflect.DeepEqual(got, want) {
			t.Fatalf("list %d: %q, want %q", i, got, want)
		}
		key := a + "|" + b
		if p, ok := first[key]; ok && p != &got[0] {
			t.Fatalf("list %d (%q): not shared with the first equal list", i, key)
		}
		first[key] = &got[0]
	}
	if x.intern(nil) != nil {
		t.Error("an empty list is not nil")
	}
	// Lists with the same values under other names hash alike (the hash
	// is of the values) and stay apart.
	other := func(a, b string) []workload.Field {
		return []workload.Field{{Name: "requested_processors", Value: a}, {Name: "average_cpu_time", Value: b}}
	}
	var renamed *workload.Field
	for i := range 2 {
		got, want := x.intern(other("1", "2")), other("1", "2")
		if !reflect.DeepEqual(got, want) || &got[0] == first["1|2"] {
			t.Fatalf("renamed list %d: %q, want %q, not shared with %q", i, got, want, list("1", "2"))
		}
		if renamed != nil && &got[0] != renamed {
			t.Fatalf("renamed list %d: not shared with the first equal list", i)
		}
		renamed = &got[0]
		if p := x.intern(list("1", "2")); &p[0] != first["1|2"] {
			t.Fatalf("renamed list %d: %q is no longer shared", i, p)
		}
	}
}
