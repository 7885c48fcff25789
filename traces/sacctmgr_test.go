package traces

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/workload"
)

func readTable(t *testing.T, name string, req []string) *SacctmgrTable {
	t.Helper()
	path := filepath.Join("testdata", "sacctmgr", name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tb, err := ReadSacctmgr(f, path, req)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestParseAssoc(t *testing.T) {
	as, err := ParseAssoc(readTable(t, "assoc.txt", AssocColumns))
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 6 {
		t.Fatalf("%d associations, want 6", len(as))
	}
	// Line 5: alice in physics with Share=parent and two QOS.
	want := Assoc{Cluster: "conformance", Account: "physics", User: "alice", Shares: -1, Priority: -1,
		QOS: []string{"normal", "high"}, DefaultQOS: "normal", MaxJobs: -1, Line: 5}
	if !reflect.DeepEqual(as[3], want) {
		t.Errorf("alice = %+v, want %+v", as[3], want)
	}
	// Line 4: physics under root, 40 shares, GrpTRES kept as written.
	if a := as[2]; a.User != "" || a.Parent != "root" || a.Shares != 40 || a.GrpTRES != "gres/gpu=16" {
		t.Errorf("physics = %+v", a)
	}
	// Line 6: bob, 3 shares, priority 10, MaxJobs 4.
	if a := as[4]; a.Shares != 3 || a.Priority != 10 || a.MaxJobs != 4 {
		t.Errorf("bob = %+v", a)
	}
	// Line 2: root's Share is empty: 1, as sacctmgr creates it.
	if as[0].Shares != 1 {
		t.Errorf("root shares = %v, want 1", as[0].Shares)
	}
}

func TestParseQOS(t *testing.T) {
	qs, err := ParseQOS(readTable(t, "qos.txt", QOSColumns))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 {
		t.Fatalf("%d QOS, want 2", len(qs))
	}
	h := qs[1]
	// GraceTime 00:02:00 is 120 s; MaxWall 1-00:00:00 is 86400 s.
	if h.Name != "high" || h.Priority != 100 || !reflect.DeepEqual(h.Preempt, []string{"normal", "low"}) ||
		h.PreemptMode != "requeue" || h.GraceTime != 120 || h.UsageFactor != 2 || h.MaxTRESPU != "gres/gpu=8" ||
		h.MaxJobsPU != 4 || h.MaxSubmitPU != 10 || h.MaxWall != 86400 {
		t.Errorf("high = %+v", h)
	}
	if n := qs[0]; n.Priority != 0 || n.MaxWall != workload.Unknown || n.MaxJobsPU != -1 {
		t.Errorf("normal = %+v", n)
	}
}

func TestParseEvents(t *testing.T) {
	es, err := ParseEvents(readTable(t, "event.txt", EventColumns))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 {
		t.Fatalf("%d events, want 3", len(es))
	}
	// 2026-11-30T09:07:51 UTC is 1796029671 (= the Unix day 20787 × 86400
	// + 9·3600 + 7·60 + 51).
	if e := es[1]; e.Node != "gn1" || e.Start != 1796029671 || e.End != 1796029711 || e.State != "DOWN" {
		t.Errorf("gn1 event = %+v", e)
	}
	if e := es[2]; e.End != workload.Unknown || e.State != "DRAIN" {
		t.Errorf("gn2 event = %+v", e)
	}
	if e := es[0]; e.Node != "" || e.ClusterNodes != "gn[1-4]" {
		t.Errorf("cluster event = %+v", e)
	}
}

func TestParseReservations(t *testing.T) {
	rs, err := ParseReservations(readTable(t, "reservation.txt", ReservationColumns))
	if err != nil {
		t.Fatal(err)
	}
	// 09:10:00 is 1796029800, 09:12:00 120 s later.
	want := []Reservation{{Cluster: "conformance", Name: "maint", Nodes: "gn[1-2]", Flags: "MAINT,SPEC_NODES", Start: 1796029800, End: 1796029920, Line: 2}}
	if !reflect.DeepEqual(rs, want) {
		t.Errorf("got %+v, want %+v", rs, want)
	}
}

func TestSacctmgrErrors(t *testing.T) {
	cases := []struct {
		name, in string
		req      []string
		parse    func(*SacctmgrTable) error
		want     string
	}{
		{"missing column", "Account|User\nroot|\n", AssocColumns, nil, `x.txt:1: Share: the header lacks it`},
		{"field count", "Account|User|Share\nroot||1|extra\n", AssocColumns, nil, `x.txt:2: 4 fields, the header has 3`},
		{"dup column", "Account|User|user\n", nil, nil, `x.txt:1: user: column named twice (columns 2 and 3)`},
		{"bad share", "Account|User|Share\nphys|bob|-2\n", AssocColumns, func(t *SacctmgrTable) error { _, err := ParseAssoc(t); return err },
			`x.txt:2: Share: "-2": want shares >= 0 or "parent"`},
		{"bad time", "NodeName|TimeStart|TimeEnd|State\ngn1|yesterday|Unknown|DOWN\n", EventColumns, func(t *SacctmgrTable) error { _, err := ParseEvents(t); return err },
			`x.txt:2: TimeStart: "yesterday": want a time YYYY-MM-DDTHH:MM:SS`},
		{"end before start", "NodeName|TimeStart|TimeEnd|State\ngn1|2026-01-02T00:00:00|2026-01-01T00:00:00|DOWN\n", EventColumns, func(t *SacctmgrTable) error { _, err := ParseEvents(t); return err },
			`x.txt:2: TimeEnd: "2026-01-01T00:00:00": before TimeStart 2026-01-02T00:00:00`},
		{"dup qos", "Name|Priority\nnormal|0\nnormal|1\n", QOSColumns, func(t *SacctmgrTable) error { _, err := ParseQOS(t); return err },
			`x.txt:3: Name: "normal": QOS listed twice (also line 2)`},
		{"bad priority", "Name|Priority\nnormal|high\n", QOSColumns, func(t *SacctmgrTable) error { _, err := ParseQOS(t); return err },
			`x.txt:2: Priority: "high": want a whole number >= 0`},
	}
	for _, c := range cases {
		tb, err := ReadSacctmgr(strings.NewReader(c.in), "x.txt", c.req)
		if err == nil && c.parse != nil {
			err = c.parse(tb)
		}
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %T, want *ParseError", c.name, err)
		}
		if !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %q, want prefix %q on one line", c.name, err, c.want)
		}
	}
}

func TestSacctmgrTrailingAndEmpty(t *testing.T) {
	// sacctmgr -p ends every line with the delimiter.
	tb, err := ReadSacctmgr(strings.NewReader("Name|Priority|\nnormal|0|\n"), "p.txt", QOSColumns)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := ParseQOS(tb)
	if err != nil || len(qs) != 1 || qs[0].Name != "normal" {
		t.Fatalf("got %+v, %v", qs, err)
	}
	tb, err = ReadSacctmgr(strings.NewReader(""), "e.txt", AssocColumns)
	if err != nil || len(tb.Rows) != 0 {
		t.Fatalf("empty: %+v, %v", tb, err)
	}
	if as, err := ParseAssoc(tb); err != nil || as != nil {
		t.Fatalf("empty assoc: %v, %v", as, err)
	}
}

// FuzzSacctmgr checks that no input makes the sacctmgr readers panic, and
// that every error is a one-line *ParseError.
func FuzzSacctmgr(f *testing.F) {
	for _, name := range []string{"assoc.txt", "qos.txt", "event.txt", "reservation.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", "sacctmgr", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("Name|Priority\n|\n"))
	f.Add([]byte("NodeName|TimeStart|TimeEnd|State\ngn1|1796029671|N/A|DOWN\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := ReadSacctmgr(strings.NewReader(string(data)), "f.txt", nil)
		if err != nil {
			checkOneLine(t, err)
			return
		}
		for _, p := range []func(*SacctmgrTable) error{
			func(t *SacctmgrTable) error { _, err := ParseAssoc(t); return err },
			func(t *SacctmgrTable) error { _, err := ParseQOS(t); return err },
			func(t *SacctmgrTable) error { _, err := ParseEvents(t); return err },
			func(t *SacctmgrTable) error { _, err := ParseReservations(t); return err },
		} {
			if err := p(tb); err != nil {
				checkOneLine(t, err)
			}
		}
	})
}

func checkOneLine(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("%T %v, want *ParseError", err, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error spans lines: %q", err)
	}
}

func TestParseSubmitLineInfo(t *testing.T) {
	in, err := ParseSubmitLine("sbatch -H --parsable --array=0-3%2 --dependency=afterok:2 --no-requeue -t 5 --wrap sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	// -t 5 is five minutes: 300 s.
	want := SubmitLineInfo{Requeue: -1, Throttle: 2, Deps: []workload.Dependency{{Type: workload.DepAfterOK, JobID: "2"}}, HasDeps: true,
		Hold: true, TimeLimit: 300, HasTime: true}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got %+v, want %+v", in, want)
	}
	if in, _ := ParseSubmitLine("sbatch --hold job.sh"); !in.Hold {
		t.Errorf("--hold not seen")
	}
	if in, _ := ParseSubmitLine("sbatch job.sh -H"); in.Hold {
		t.Errorf("-H after the script is the script's argument")
	}
}
