package reports

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNodeBusyWideWindow checks that the busy intervals kept as 64-bit
// times (a window over 2³² s) are those kept as 32-bit offsets; the
// timeline fixture checks the offsets' node-seconds by hand.
func TestNodeBusyWideWindow(t *testing.T) {
	rec := fixtureRecord()
	runs := newRunTable(rec)
	s, _ := baseSummary(rec, runs, fixtureOptions, "test")
	narrow := newNodeBusy(rec, runs, s.FirstSubmit, s.LastEnd)
	wide := newNodeBusy(rec, runs, s.FirstSubmit, s.FirstSubmit+math.MaxUint32+10)
	if narrow.wide != nil || wide.wide == nil || len(narrow.iv) == 0 {
		t.Fatalf("narrow uses wide: %v; wide uses wide: %v; %d intervals", narrow.wide != nil, wide.wide != nil, len(narrow.iv))
	}
	for n := range rec.Cluster.Nodes {
		if d := cmp.Diff(narrow.of(nil, n), wide.of(nil, n), cmp.AllowUnexported(interval{})); d != "" {
			t.Errorf("node %d (-narrow +wide):\n%s", n, d)
		}
	}
	if narrow.seconds() != wide.seconds() || narrow.seconds() != 7805+10800+2300 {
		t.Errorf("busy node-seconds %d narrow, %d wide; want 20905 (the fixture's bins)", narrow.seconds(), wide.seconds())
	}
}
