package policies

import (
	"math/rand/v2"

	"github.com/schedsim/schedsim/sim"
)

// FIFO is strict priority-order scheduling without backfill: each pass
// starts queued jobs in queue order while they fit and stops at the first
// job that does not, which blocks every job behind it, in any partition.
// It wants a pass after every submit or job end. A job starts only on
// nodes that no advance reservation (maintenance window) holds during
// [now, now+limit); one that fits only by reaching into a window does not
// fit, and blocks the queue like any other.
//
// A FIFO keeps scratch buffers between passes; it must not be used by two
// runs at once.
type FIFO struct {
	Base
	pass Pass
}

var _ sim.Policy = (*FIFO)(nil)

// NewFIFO returns a FIFO policy placing jobs with placer (FirstFit when
// nil).
func NewFIFO(placer Placer) *FIFO {
	f := &FIFO{pass: NewPass(placer, false)}
	f.pass.mirror = true
	return f
}

// Name returns "fifo".
func (*FIFO) Name() string { return "fifo" }

// Begin implements sim.Policy: the run starts with no kept state, and
// has one pass after every event (OnEvents).
func (f *FIFO) Begin(sim.RunInfo) (sim.Timing, error) {
	f.pass.begin()
	return OnEvents(), nil
}

// Schedule implements sim.Policy. The returned Plan's slices are reused by
// the next call.
func (f *FIFO) Schedule(_ sim.PassSet, v sim.View, _ *rand.Rand) sim.Plan {
	p := &f.pass
	p.Reset(v)
	pend := v.Pending()
	for i := range pend {
		if !p.TryStart(&pend[i]) {
			break // the head blocks everyone
		}
	}
	return p.Plan()
}
