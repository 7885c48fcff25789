package traces

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/workload"
)

// utc returns the Unix time of a zone-less sacct timestamp read as UTC,
// computed with the time package as an independent check.
func utc(t testing.TB, s string) workload.Time {
	t.Helper()
	tm, err := time.Parse("2006-01-02T15:04:05", s)
	if err != nil {
		t.Fatal(err)
	}
	return workload.Time(tm.Unix())
}

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want workload.Time
		err  error
	}{
		{name: "T separator", in: "2023-08-31T12:29:47", want: utc(t, "2023-08-31T12:29:47")},
		{name: "space separator", in: "2019-01-01 08:55:55", want: utc(t, "2019-01-01T08:55:55")},
		{name: "leap day", in: "2024-02-29T23:59:59", want: utc(t, "2024-02-29T23:59:59")},
		{name: "epoch", in: "1970-01-01T00:00:00", want: 0},
		{name: "before 1970", in: "1969-12-31T23:59:59", err: ErrRange}, // would collide with workload.Unknown
		{name: "year 2100", in: "2100-03-01T00:00:00", want: utc(t, "2100-03-01T00:00:00")},
		{name: "Unknown", in: "Unknown", want: workload.Unknown},
		{name: "None", in: "None", want: workload.Unknown},
		{name: "empty", in: "", want: workload.Unknown},
		{name: "unix seconds", in: "1700000000", want: 1700000000},
		{name: "no leap day", in: "2023-02-29T00:00:00", err: ErrRange},
		{name: "hour 24", in: "2023-02-01T24:00:00", err: ErrRange},
		{name: "month 13", in: "2023-13-01T00:00:00", err: ErrRange},
		{name: "zone suffix", in: "2023-02-01T00:00:00Z", err: ErrSyntax},
		{name: "short", in: "2023-02-01", err: ErrSyntax},
		{name: "letters", in: "2023-0a-01T00:00:00", err: ErrSyntax},
		{name: "lower unknown", in: "unknown", err: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTimestamp([]byte(tt.in))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("parseTimestamp(%q) error = %v, want %v", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseTimestamp(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("parseTimestamp(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want workload.Time
		err  error
	}{
		{in: "00:00:00", want: 0},
		{in: "03:34:13", want: 3*3600 + 34*60 + 13},
		{in: "1-04:33:44", want: 86400 + 4*3600 + 33*60 + 44},
		{in: "163-00:18:41", want: 163*86400 + 18*60 + 41},
		{in: "10-00:00:00", want: 10 * 86400},
		{in: "23:08.358", want: 23*60 + 8}, // MM:SS.mmm, fraction dropped
		{in: "00:00.001", want: 0},
		{in: "05:00", want: 300},
		{in: "1-02:03", want: 86400 + 2*3600 + 3*60}, // D-HH:MM
		{in: "2-12", want: 2*86400 + 12*3600},        // D-HH
		{in: "36:00:00", want: 36 * 3600},            // hours beyond a day without a day count
		{in: "", want: workload.Unknown},
		{in: "INVALID", want: workload.Unknown},
		{in: "1-24:00:00", err: ErrRange},
		{in: "00:60:00", err: ErrRange},
		{in: "00:00:60", err: ErrRange},
		{in: "12", err: ErrSyntax},
		{in: "1:2:3:4", err: ErrSyntax},
		{in: "01:", err: ErrSyntax},
		{in: "-01:00", err: ErrSyntax},
		{in: "aa:bb", err: ErrSyntax},
		{in: "01:02.3.4", err: ErrSyntax},
		{in: "1-", err: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseDuration([]byte(tt.in))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("parseDuration(%q) error = %v, want %v", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("parseDuration(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseTimelimit(t *testing.T) {
	tests := []struct {
		in   string
		raw  bool // TimelimitRaw (minutes)
		want workload.Time
		err  error
	}{
		{in: "19:50:00", want: 19*3600 + 50*60},
		{in: "1-23:59:00", want: 86400 + 23*3600 + 59*60},
		{in: "10:00", want: 600}, // MM:SS
		{in: "UNLIMITED", want: workload.Unknown},
		{in: "Partition_Limit", want: workload.Unknown},
		{in: "", want: workload.Unknown},
		{in: "INVALID", err: ErrSyntax},
		{in: "forever", err: ErrSyntax},
		{in: "2880", raw: true, want: 2880 * 60},
		{in: "UNLIMITED", raw: true, want: workload.Unknown},
		{in: "Partition_Limit", raw: true, want: workload.Unknown},
		{in: "1.5", raw: true, err: ErrSyntax},
	}
	for _, tt := range tests {
		name := tt.in
		if tt.raw {
			name = "raw " + name
		}
		t.Run(name, func(t *testing.T) {
			parse := parseTimelimit
			if tt.raw {
				parse = parseTimelimitRaw
			}
			got, err := parse([]byte(tt.in))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("error = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func TestParseMem(t *testing.T) {
	tests := []struct {
		in   string
		want reqMem
		err  error
	}{
		{in: "32G", want: reqMem{mib: 32 * 1024}},
		{in: "4000M", want: reqMem{mib: 4000}},
		{in: "199G", want: reqMem{mib: 199 * 1024}},
		{in: "1.50G", want: reqMem{mib: 1536}},
		{in: "2T", want: reqMem{mib: 2 << 20}},
		{in: "1P", want: reqMem{mib: 1 << 30}},
		{in: "1294440K", want: reqMem{mib: 1265}}, // 1264.1 MiB, rounded up
		{in: "0.01G", want: reqMem{mib: 11}},      // 10.24 MiB, rounded up
		{in: "4000", want: reqMem{mib: 4000}},     // bare: MiB
		{in: "4000Mc", want: reqMem{mib: 4000, perCPU: true}},
		{in: "64Gn", want: reqMem{mib: 65536, perNode: true}},
		{in: "0n", want: reqMem{mib: 0, perNode: true}},
		{in: "", err: ErrSyntax},
		{in: "G", err: ErrSyntax},
		{in: "12X", err: ErrSyntax},
		{in: "1.G", err: ErrSyntax},
		{in: "1.2345G", err: ErrSyntax},
		{in: "-4G", err: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseReqMem([]byte(tt.in))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("parseReqMem(%q) error = %v, want %v", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(reqMem{})); diff != "" {
				t.Errorf("parseReqMem(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	if _, err := parseMemMiB([]byte("99999999999999P"), 'M'); !errors.Is(err, ErrRange) && !errors.Is(err, ErrSyntax) {
		t.Errorf("huge memory: err = %v, want a range or syntax error", err)
	}
}

func TestParseTRES(t *testing.T) {
	type got struct {
		Nodes, CPUs, GPUs, Mem int64
		Type                   string
	}
	tests := []struct {
		name string
		in   string
		want got
		err  error
	}{
		{name: "cpu only", in: "billing=24,cpu=1,mem=199G,node=1", want: got{1, 1, -1, 199 * 1024, ""}},
		{name: "untyped only", in: "billing=1,cpu=1,gres/gpu=1,mem=10G,node=1", want: got{1, 1, 1, 10240, ""}},
		{name: "typed and untyped, count once", in: "billing=8,cpu=8,gres/gpu:v100=1,gres/gpu=1,mem=10G,node=1", want: got{1, 8, 1, 10240, "v100"}},
		{name: "h100 node", in: "billing=128,cpu=128,gres/gpu:h100=8,gres/gpu=8,mem=1000G,node=1", want: got{1, 128, 8, 1000 * 1024, "h100"}},
		{name: "typed only", in: "cpu=4,gres/gpu:a100=2,node=1", want: got{1, 4, 2, -1, "a100"}},
		{name: "two types", in: "gres/gpu:a100=2,gres/gpu:v100=1,gres/gpu=3", want: got{-1, -1, 3, -1, ""}},
		{name: "two types no untyped", in: "gres/gpu:a100=2,gres/gpu:v100=1", want: got{-1, -1, 3, -1, ""}},
		{name: "mig type", in: "gres/gpu:3g.20gb=1,gres/gpu=1", want: got{-1, -1, 1, -1, "3g.20gb"}},
		{name: "old order", in: "cpu=4,mem=16G,node=1,billing=4", want: got{1, 4, -1, 16384, ""}},
		{name: "decimal mem", in: "mem=1.50G", want: got{-1, -1, -1, 1536, ""}},
		{name: "mem NONE", in: "cpu=1,mem=NONE", want: got{-1, 1, -1, -1, ""}},
		{name: "other keys", in: "energy=123,fs/disk=0,license/matlab=1,gres/gpumem=80G,gres/gpuutil=100", want: got{-1, -1, -1, -1, ""}},
		{name: "no equals", in: "cpu=1,mem", err: ErrSyntax},
		{name: "trailing comma", in: "cpu=1,", err: ErrSyntax},
		{name: "bad count", in: "cpu=x", err: ErrSyntax},
		{name: "negative gpus", in: "gres/gpu=-1", err: ErrSyntax},
		{name: "huge cpus", in: "cpu=99999999999", err: ErrRange},
		{name: "empty type", in: "gres/gpu:=1", err: ErrSyntax},
		{name: "bad mem", in: "mem=lots", err: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := parseTRES([]byte(tt.in), newInterner(8))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("parseTRES(%q) error = %v, want %v", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g := got{tr.nodes, tr.cpus, tr.gpuCount(), tr.mem, tr.gpuType}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("parseTRES(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseOldGRES(t *testing.T) {
	tests := []struct {
		in    string
		count int64
		typ   string
		err   error
	}{
		{in: "gpu:2", count: 2},
		{in: "gpu:v100:2", count: 2, typ: "v100"},
		{in: "gpu:v100:2(IDX:0,2)", count: 2, typ: "v100"},
		{in: "gpu", count: 1},
		{in: "gpu:k80", count: 1, typ: "k80"},
		{in: "gres/gpu:4", count: 4},
		{in: "mps:100,gpu:1", count: 1},
		{in: "mps:100", count: -1},
		{in: "gpu:a:b:c", err: ErrSyntax},
		{in: "gpu:v100:x", err: ErrSyntax},
		{in: ",gpu:1", err: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, typ, err := parseOldGRES([]byte(tt.in), newInterner(8))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("error = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil || n != tt.count || typ != tt.typ {
				t.Errorf("parseOldGRES(%q) = %d, %q, %v; want %d, %q", tt.in, n, typ, err, tt.count, tt.typ)
			}
		})
	}
}

func TestStateBase(t *testing.T) {
	tests := []struct{ in, want string }{
		{"COMPLETED", "COMPLETED"},
		{"CANCELLED by 10304007", "CANCELLED"},
		{"CANCELLED+", "CANCELLED"},
		{"NODE_FAIL", "NODE_FAIL"},
		{"OUT_OF_MEMORY", "OUT_OF_MEMORY"},
		{"REQUEUED", "REQUEUED"},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := stateBase([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("stateBase(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"completed", "DONE!", "4"} {
		if _, err := stateBase([]byte(bad)); !errors.Is(err, ErrSyntax) {
			t.Errorf("stateBase(%q) error = %v, want ErrSyntax", bad, err)
		}
	}
}

func TestJobIDs(t *testing.T) {
	type id struct {
		Job      string
		Step     bool
		ArrayJob string
		Task     int64
		Expr     string
	}
	tests := []struct {
		in   string
		want id
		err  bool
	}{
		{in: "123", want: id{Job: "123", Task: -1}},
		{in: "123.batch", want: id{Job: "123", Step: true, Task: -1}},
		{in: "123.extern", want: id{Job: "123", Step: true, Task: -1}},
		{in: "123.0", want: id{Job: "123", Step: true, Task: -1}},
		{in: "5908801_3", want: id{Job: "5908801_3", ArrayJob: "5908801", Task: 3}},
		{in: "7216821_144.batch", want: id{Job: "7216821_144", Step: true, ArrayJob: "7216821", Task: 144}},
		{in: "123_[5-9]", want: id{Job: "123_[5-9]", ArrayJob: "123", Task: -1, Expr: "5-9"}},
		{in: "123_[5-9%4]", want: id{Job: "123_[5-9%4]", ArrayJob: "123", Task: -1, Expr: "5-9%4"}},
		{in: "123+0", want: id{Job: "123+0", Task: -1}},
		{in: "123+0.1", want: id{Job: "123+0", Step: true, Task: -1}},
		{in: "123.0+1", want: id{Job: "123+1", Step: true, Task: -1}},
		{in: "abc", err: true},
		{in: "", err: true},
		{in: "123_", err: true},
		{in: "123_[5-9", err: true},
		{in: "123+", err: true},
		{in: "123x", err: true},
		{in: "-5", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			job, step, _ := splitStep([]byte(tt.in), nil)
			p, err := parseJobID(job)
			if tt.err {
				if !errors.Is(err, ErrSyntax) {
					t.Fatalf("parseJobID(%q) error = %v, want ErrSyntax", job, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := id{Job: string(job), Step: step, ArrayJob: string(p.arrayJob), Task: p.task, Expr: string(p.arrayExpr)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseArrayExpr(t *testing.T) {
	tests := []struct {
		in        string
		tasks     []int64
		truncated bool
		err       error
	}{
		{in: "5-9", tasks: []int64{5, 6, 7, 8, 9}},
		{in: "5-9%4", tasks: []int64{5, 6, 7, 8, 9}},
		{in: "1,3,5-7", tasks: []int64{1, 3, 5, 6, 7}},
		{in: "0-10:5", tasks: []int64{0, 5, 10}},
		{in: "0-11:5", tasks: []int64{0, 5, 10}},
		{in: "7", tasks: []int64{7}},
		{in: "1,3,5-7,9-1...", tasks: []int64{1, 3, 5, 6, 7}, truncated: true},
		{in: "1-3...", truncated: true},
		{in: "9-5", err: ErrSyntax},
		{in: "", err: ErrSyntax},
		{in: "1-5:0", err: ErrSyntax},
		{in: "1-5%x", err: ErrSyntax},
		{in: "a-b", err: ErrSyntax},
		{in: "0-4000001", err: ErrRange},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			rs, n, trunc, err := parseArrayExpr([]byte(tt.in), maxArrayTasks)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("error = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			e := arrayExpansion{tmpl: workload.NewJob("x"), ranges: rs}
			if len(rs) > 0 {
				e.next = rs[0].lo
			}
			for {
				j, ok := e.nextTask()
				if !ok {
					break
				}
				got = append(got, int64(j.ArrayTaskID))
			}
			if diff := cmp.Diff(tt.tasks, got); diff != "" {
				t.Errorf("tasks (-want +got):\n%s", diff)
			}
			if int(n) != len(tt.tasks) || trunc != tt.truncated {
				t.Errorf("count %d truncated %v, want %d %v", n, trunc, len(tt.tasks), tt.truncated)
			}
		})
	}
}

func TestParseDeps(t *testing.T) {
	d := func(typ workload.DepType, id string) workload.Dependency {
		return workload.Dependency{Type: typ, JobID: id}
	}
	tests := []struct {
		in   string
		want []workload.Dependency
		err  bool
	}{
		{in: "", want: nil},
		{in: "(null)", want: nil},
		{in: "afterok:123,afterany:5", want: []workload.Dependency{d(workload.DepAfterOK, "123"), d(workload.DepAfterAny, "5")}},
		{in: "afterok:1:2", want: []workload.Dependency{d(workload.DepAfterOK, "1"), d(workload.DepAfterOK, "2")}},
		{in: "after:7+10", want: []workload.Dependency{d(workload.DepAfter, "7")}},
		{in: "afternotok:8_3(unfulfilled)", want: []workload.Dependency{d(workload.DepAfterNotOK, "8_3")}},
		{in: "singleton", want: []workload.Dependency{{Type: workload.DepSingleton}}},
		{in: "afterany:1?singleton", want: []workload.Dependency{d(workload.DepAfterAny, "1"), {Type: workload.DepSingleton}}},
		{in: "aftercorr:9", want: []workload.Dependency{d(workload.DepAfterOK, "9")}},
		{in: "afterwards:1", err: true},
		{in: "afterok", err: true},
		{in: "afterok:x", err: true},
		{in: "afterok:1+x", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseDeps([]byte(tt.in))
			if tt.err {
				if !errors.Is(err, ErrSyntax) {
					t.Fatalf("error = %v, want ErrSyntax", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSWFNum(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  error
	}{
		{in: "0", want: 0},
		{in: "-1", want: -1},
		{in: "-1.00", want: -1},
		{in: "142.00", want: 142},
		{in: "552.21", want: 552},
		{in: "182.97", want: 183},
		{in: "2.5", want: 3},
		{in: "7.", want: 7},
		{in: ".5", want: 1},
		{in: "+5", want: 5},
		{in: "-5", err: ErrRange},
		{in: "-2", err: ErrRange},
		{in: "1e3", err: ErrSyntax},
		{in: "0x10", err: ErrSyntax},
		{in: "NaN", err: ErrSyntax},
		{in: "-", err: ErrSyntax},
		{in: ".", err: ErrSyntax},
		{in: "1.2.3", err: ErrSyntax},
		{in: "99999999999999999999", err: ErrRange},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSWFNum([]byte(tt.in))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("parseSWFNum(%q) error = %v, want %v", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("parseSWFNum(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestFmtCount(t *testing.T) {
	for in, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 121039: "121,039", 1234567: "1,234,567"} {
		if got := fmtCount(in); got != want {
			t.Errorf("fmtCount(%d) = %q, want %q", in, got, want)
		}
	}
}
