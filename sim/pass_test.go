package sim

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/workload"
)

// passLog declares tm and logs every Schedule call (instant and passes
// due); it starts nothing.
type passLog struct {
	tm    Timing
	calls []passCall
}

type passCall struct {
	At  Time
	Due PassSet
}

func (*passLog) Name() string                              { return "passlog" }
func (p *passLog) Begin(RunInfo) (Timing, error)           { return p.tm, nil }
func (*passLog) JobStarted(JobRef, Time, []NodeAlloc)      {}
func (*passLog) JobEnded(JobRef, Time, []NodeAlloc, State) {}
func (p *passLog) Schedule(due PassSet, v View, _ *rand.Rand) Plan {
	p.calls = append(p.calls, passCall{v.Now(), due})
	return Plan{}
}

// TestDeclaredPasses checks when the controller calls Schedule for a
// policy with an event pass "ev" (bit 0), "a" every 20 s (bit 1) and "b"
// every 30 s at phase 5 (bit 2). Nothing ever starts. x is submitted at
// 3 and y at 20:
//
//	3   x's submit: {ev}; the next periodic instant is min(20, 5) = 5
//	5   {b}; then min(20, 35) = 20
//	20  y's submit and a's instant: one call, {ev, a}; then 35
//	35  {b}; 40 {a}; 60 {a}
//
// Settle is the longest Period, 30: the state last changed at 20, so the
// first pass at or after 50, the one at 60, ends the run. No call falls
// at the other multiples of gcd(20, 30) = 10 or of 5.
func TestDeclaredPasses(t *testing.T) {
	p := &passLog{tm: Timing{Passes: []Pass{
		{Name: "ev", OnEvent: true},
		{Name: "a", Period: 20},
		{Name: "b", Period: 30, Phase: 5},
	}}}
	tr := &workload.Trace{Jobs: []workload.Job{job("x", 3, 10, 10, 1), job("y", 20, 10, 10, 1)}}
	rec := run(t, Config{Trace: tr, Policy: p})
	want := []passCall{{3, 1}, {5, 4}, {20, 3}, {35, 4}, {40, 2}, {60, 2}}
	if d := cmp.Diff(want, p.calls); d != "" {
		t.Errorf("Schedule calls (-want +got):\n%s", d)
	}
	if rec.End != 60 || rec.Jobs[0].State != Unfinished {
		t.Errorf("run ended at %d with x %v, want 60 and UNFINISHED", rec.End, rec.Jobs[0].State)
	}
}

// TestTimingChecked checks that Run refuses a Timing it cannot follow,
// naming the policy and the pass.
func TestTimingChecked(t *testing.T) {
	tr := &workload.Trace{Jobs: []workload.Job{job("x", 0, 10, 10, 1)}}
	for _, tc := range []struct {
		tm   Timing
		want string
	}{
		{Timing{}, "declares 0 passes"},
		{Timing{Passes: []Pass{{OnEvent: true}}}, "pass 0 has no name"},
		{Timing{Passes: []Pass{{Name: "p", Period: 30, Phase: 30}}}, "pass p: want Period >= 0 and Phase in [0, Period)"},
		{Timing{Passes: []Pass{{Name: "p"}}}, "pass p: neither OnEvent nor a Period"},
		{Timing{Passes: []Pass{{Name: "late", OnEvent: true, AfterEnds: true}}}, "pass late: AfterEnds needs OnEvent and Timing.EndsAfterPasses"},
		{Timing{Passes: make([]Pass, MaxPasses+1)}, "declares 65 passes"},
	} {
		_, err := Run(Config{Cluster: twoNodes(), Trace: tr, Policy: &passLog{tm: tc.tm}})
		if err == nil || !strings.Contains(err.Error(), "policy passlog: "+tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.tm, err, tc.want)
		}
	}
}
