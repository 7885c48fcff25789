package slurm

import (
	"fmt"

	"github.com/schedsim/schedsim/sim"
)

// boundChecks counts the bounds of Slurm.unitsBound compared with
// plainBound, and boundErr is the first that differed.
var (
	boundChecks int
	boundErr    error
)

// CheckBounds turns the comparison of every unitsBound with plainBound on
// or off. It is off by default: the plain sum costs nodes × running jobs
// a call, which made the goldens run for half an hour.
func CheckBounds(on bool) {
	if !on {
		boundCheck = nil
		return
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
