package slurm

import (
	"fmt"
	"math"

	"github.com/schedsim/schedsim/sim"
)

// boundChecks counts the bounds of Slurm.unitsBound compared with
// plainBound, and boundErr is the first that differed.
var (
	boundChecks int
	finChecks   int
	nowChecks   int
	boundErr    error
)

// CheckBounds turns the comparison of every unitsBound with plainBound on
// or off. It is off by default: the plain sum costs nodes × running jobs
// a call, which made the goldens run for half an hour.
func CheckBounds(on bool) {
	if !on {
		boundCheck, finCheck, nowCheck = nil, nil, nil
		return
	}
	nowCheck = func(s *Policy, now, limit, got sim.Time) {
		nowChecks++
		if want := s.nowMaskPlain(now, limit); want != got && boundErr == nil {
			boundErr = fmt.Errorf("t=%d limit=%d: nowMask's bound %d, over every reservation %d", now, limit, got, want)
		}
	}
	finCheck = func(s *Policy) {
		finChecks++
		b := &s.bf
		free := s.pass.Free
		for x := range free {
			want := free[x]
			for _, r := range b.rel {
				for _, a := range r.alloc {
					if a.Node == int32(x) {
						want.Add(&a)
					}
				}
			}
			got := free[x]
			if b.finSeen[x] {
				got = b.finFree[x]
			}
			if got != want && boundErr == nil {
				boundErr = fmt.Errorf("node %d: kept final free state %+v, made afresh %+v", x, got, want)
			}
		}
	}
	boundCheck = func(s *Policy, t sim.Time, got int64) {
		boundChecks++
		if want := s.plainBound(t); want != got && boundErr == nil {
			boundErr = fmt.Errorf("t=%d: unitsBound %d, plain sum %d", t, got, want)
		}
	}
}

// BoundChecks returns how many reservation-search bounds were compared
// with the plain sum since the last call, and the first difference.
func BoundChecks() (int, error) {
	n, err := boundChecks, boundErr
	boundChecks, boundErr = 0, nil
	return n, err
}

// NowChecks returns how many of nowMask's bounds were compared with
// those made over every reservation since the last call.
func NowChecks() int {
	n := nowChecks
	nowChecks = 0
	return n
}

// FinChecks returns how many times a kept final free state was compared
// with one made afresh since the last call.
func FinChecks() int {
	n := finChecks
	finChecks = 0
	return n
}

// plainBound is unitsBound summed from scratch: over the nodes of b.mask
// the demand's units on the free state with every rel job ending by t
// released.
func (s *Policy) plainBound(t sim.Time) int64 {
	b := &s.bf
	d := b.wr.d
	var sum int64
	for x := range s.pass.Nodes {
		if !b.inMask(int32(x)) || !d.Eligible(&s.pass.Nodes[x]) {
			continue
		}
		f := s.pass.Free[x]
		for _, r := range b.rel {
			if r.end > t {
				continue
			}
			for _, a := range r.alloc {
				if a.Node == int32(x) {
					f.Add(&a)
				}
			}
		}
		sum += int64(d.Fit(f))
	}
	return sum
}

// factChecks counts the retry points that reserve ruled out by facts and
// CheckFacts compared with the plain bound, and factErr is the first
// point whose plain bound was not short of the need.
var (
	factChecks int
	factErr    error
)

// CheckFacts turns the check of every retry point reserve rules out by
// facts (bfFact) on or off: at each reservation boundary of the span,
// the mask of its window and the plain sum by its next boundary (past
// the horizon: by any time) must be short of the need.
func CheckFacts(on bool) {
	if !on {
		factCheck = nil
		return
	}
	factCheck = func(s *Policy, lo, e, limit, horizon sim.Time) {
		b := &s.bf
		for t := lo; t < e && t < horizon; t = s.nextBound(t) {
			s.windowMask(t, limit)
			next := s.nextBound(t)
			if next >= horizon {
				next = math.MaxInt64
			}
			factChecks++
			if got := s.plainBound(next); got >= b.need && factErr == nil {
				factErr = fmt.Errorf("t=%d (span [%d, %d), limit %d): plain bound %d, need %d", t, lo, e, limit, got, b.need)
			}
		}
	}
}

// FactChecks returns how many ruled-out retry points were compared with
// the plain bound since the last call, and the first that failed.
func FactChecks() (int, error) {
	n, err := factChecks, factErr
	factChecks, factErr = 0, nil
	return n, err
}

// NoFacts makes s's reservation searches consult no facts of earlier ones.
func NoFacts(s *Policy) { s.bf.noFacts = true }

// BackfillValid returns the time from which the last backfill cycle that
// ran may come out differently (the bound on skipping cycles).
func (s *Policy) BackfillValid() sim.Time { return s.bf.valid }

// orderChecks counts the queue orders compared with plainOrder, and
// orderErr is the first that differed.
var (
	orderChecks int
	orderErr    error
)

// CheckOrder turns the comparison of every kept queue order (buildOrder)
// with one made from the pending jobs on or off.
func CheckOrder(on bool) {
	if !on {
		orderCheck = nil
		return
	}
	orderCheck = func(s *Policy, pend []sim.PendingJob) {
		orderChecks++
		if err := s.plainOrder(pend); err != nil && orderErr == nil {
			orderErr = fmt.Errorf("t=%d: %v", s.pass.Now, err)
		}
	}
}

// OrderChecks returns how many queue orders were compared since the last
// call, and the first difference.
func OrderChecks() (int, error) {
	n, err := orderChecks, orderErr
	orderChecks, orderErr = 0, nil
	return n, err
}

// plainOrder checks s.order against pend: one record per pending job and
// partition (its own and those of Parts), no other, sorted by qrecCmp.
// The records' priorities are the kept ones (they change only at a
// recalculation), so only the sort on them is checked.
func (s *Policy) plainOrder(pend []sim.PendingJob) error {
	want := map[[2]int64]bool{}
	for i := range pend {
		parts := pend[i].Parts | 1<<uint(pend[i].Part)
		for p := 0; p < 64; p++ {
			if parts&(1<<uint(p)) != 0 {
				want[[2]int64{int64(pend[i].Ref), int64(p)}] = true
			}
		}
	}
	if len(s.order) != len(want) {
		return fmt.Errorf("%d records, want %d", len(s.order), len(want))
	}
	for k, r := range s.order {
		if !want[[2]int64{int64(r.ref), int64(r.part)}] {
			return fmt.Errorf("record %d: job %d partition %d is not pending there", k, r.ref, r.part)
		}
		if k > 0 && qrecCmp(s.order[k-1], r) >= 0 {
			return fmt.Errorf("records %d and %d out of order", k-1, k)
		}
	}
	return nil
}

// WalkAll makes s's emitReasons visit every pending job at every pass,
// and WalkCandidates only its candidates (TestSlurmReasonsCandidates).
func WalkAll(s *Policy) { s.reasonsWalk = walkAll }

// WalkCandidates: see WalkAll.
func WalkCandidates(s *Policy) { s.reasonsWalk = walkCandidates }

// ScanWhole makes s's pending scan visit every pending job at every pass
// instead of the queue changes of the view's Delta (TestSlurmPendingScan).
func ScanWhole(s *Policy) { s.scanAll = true }

// CopyFree makes s copy the free state every pass instead of mirroring
// the view's (TestSlurmMirroredFree).
func CopyFree(s *Policy) { s.copyFree = true }
