package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReasonLogRoundTrip appends changes with every kind of delta (same
// time, later, earlier, extreme; job refs up, down and far; reasons past
// the header's five bits) over many chunks and reads them back in order.
func TestReasonLogRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	want := []ReasonChange{
		{At: math.MinInt64, Job: math.MaxInt32, Reason: 255},
		{At: math.MaxInt64, Job: math.MinInt32, Reason: reasonEscape},
		{At: math.MaxInt64, Job: 0, Reason: 0},
	}
	at, job := Time(0), JobRef(0)
	for range 300_000 {
		switch rng.IntN(4) {
		case 0:
			at += Time(rng.IntN(1 << 20))
		case 1:
			at -= Time(rng.IntN(100))
		}
		switch rng.IntN(3) {
		case 0:
			job += JobRef(rng.IntN(64))
		case 1:
			job -= JobRef(rng.IntN(5000))
		default:
			job = JobRef(rng.Int32())
		}
		r := PendingReason(rng.IntN(int(numReasons)))
		if rng.IntN(50) == 0 {
			r = PendingReason(rng.IntN(256))
		}
		want = append(want, ReasonChange{At: at, Job: job, Reason: r})
	}
	l := ReasonLogOf(want...)
	if l.Len() != len(want) {
		t.Fatalf("Len %d, want %d", l.Len(), len(want))
	}
	if d := cmp.Diff(want, l.Changes()); d != "" {
		t.Fatalf("read back (-want +got):\n%s", d)
	}
	// Peek does not consume; a stopped range stops.
	r := l.Reader()
	for i := range 3 {
		p, _ := r.Peek()
		c, ok := r.Next()
		if !ok || p != c || c != want[i] {
			t.Fatalf("change %d: peek %+v, next %+v, want %+v", i, p, c, want[i])
		}
	}
	n := 0
	for range l.All() {
		if n++; n == 10 {
			break
		}
	}
	var empty ReasonLog
	er := empty.Reader()
	if _, ok := er.Next(); ok || len(empty.Changes()) != 0 {
		t.Fatal("empty log yields changes")
	}
}

// TestReasonLogCompact checks the packing on a realistic stream: passes
// that re-mark queued jobs at one instant, jobs close in ref order.
func TestReasonLogCompact(t *testing.T) {
	var l ReasonLog
	for pass := range 10_000 {
		for j := range 40 {
			l.Add(ReasonChange{At: Time(pass * 30), Job: JobRef(pass + j*3), Reason: PendingReason(1 + (pass+j)%2)})
		}
	}
	if perChange := float64(l.Bytes()) / float64(l.Len()); perChange > 3 {
		t.Fatalf("%.2f bytes per change, want at most 3", perChange)
	}
}

func TestReasonLogEqual(t *testing.T) {
	a := ReasonLogOf(ReasonChange{At: 1, Job: 2, Reason: ReasonPriority}, ReasonChange{At: 1, Job: 3, Reason: ReasonResources})
	b := ReasonLogOf(a.Changes()...)
	c := ReasonLogOf(ReasonChange{At: 1, Job: 2, Reason: ReasonPriority}, ReasonChange{At: 2, Job: 3, Reason: ReasonResources})
	if !a.Equal(b) || a.Equal(c) || a.Equal(ReasonLog{}) || !cmp.Equal(a, b) {
		t.Fatal("Equal disagrees with the changes")
	}
}
