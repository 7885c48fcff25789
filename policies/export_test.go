package policies

import (
	"fmt"
	"math"
	"slices"

	"github.com/schedsim/schedsim/sim"
)

// NewConservativeReference returns the plain conservative pass that
// Conservative is tested against (conservative_reference.go).
func NewConservativeReference(placer Placer) interface {
	sim.Policy
	Reservations() []ConservativeReservation
} {
	return newConservativeReference(placer)
}

// CheckProfile verifies the invariants of c's kept schedule after a pass:
// the profile's boundaries are ascending, the segment totals are those of
// the nodes' states, and every reservation is on its nodes.
func (c *Conservative) CheckProfile() error {
	if c.plain != nil {
		return nil
	}
	return c.st.check()
}

func (s *consState) check() error {
	if !s.built {
		return nil
	}
	if len(s.times) == 0 || s.times[0] != s.now {
		return fmt.Errorf("profile starts at %v, not now %d", s.times[:min(1, len(s.times))], s.now)
	}
	if !slices.IsSorted(s.times) || len(slices.Compact(slices.Clone(s.times))) != len(s.times) {
		return fmt.Errorf("profile boundaries not strictly ascending: %v", s.times)
	}
	if len(s.dif) != len(s.times)*s.stride || len(s.cnt) != len(s.times) {
		return fmt.Errorf("profile has %d boundaries, %d counts, %d totals", len(s.times), len(s.cnt), len(s.dif))
	}
	// Reasons: releases, window ends, reservation starts and ends.
	want := make([]int32, len(s.times))
	reason := func(t sim.Time) error {
		if t <= s.now {
			return nil
		}
		i, ok := slices.BinarySearch(s.times, t)
		if !ok {
			return fmt.Errorf("no boundary at %d", t)
		}
		want[i]++
		return nil
	}
	for _, id := range s.run {
		if err := reason(s.recs[id].runEnd); err != nil {
			return err
		}
	}
	for _, w := range s.windows {
		if err := reason(w.End); err != nil {
			return err
		}
	}
	for _, id := range s.queue {
		r := &s.recs[id]
		if !r.placed {
			continue
		}
		if err := reason(r.start); err != nil {
			return err
		}
		if err := reason(r.end); err != nil {
			return err
		}
		for _, a := range r.alloc {
			if !slices.ContainsFunc(s.node[a.Node].res, func(e consEntry) bool { return e.id == id && e.a == a }) {
				return fmt.Errorf("job %d's reservation is not on node %d", r.job.Ref, a.Node)
			}
		}
	}
	for i := 1; i < len(want); i++ {
		if want[i] != s.cnt[i] {
			return fmt.Errorf("boundary %d has %d reasons, counted %d", s.times[i], want[i], s.cnt[i])
		}
	}
	got := make([]int64, s.stride)
	for i, t := range s.times {
		for j := range got {
			got[j] += s.dif[i*s.stride+j]
		}
		exp := make([]int64, s.stride)
		for n := range s.node {
			g, c, m := s.freeAt(&s.node[n], t, math.MaxInt32)
			for _, k := range []int{3 * int(s.node[n].cls), 3 * s.nclass} {
				exp[k] += int64(s.node[n].totalGPUs(g))
				exp[k+1] += int64(c)
				exp[k+2] += m
			}
		}
		if !slices.Equal(got, exp) {
			return fmt.Errorf("segment %d totals %v, nodes give %v", t, got, exp)
		}
		// Timelines and the free-GPU bits of the segment.
		if len(s.fb) != len(s.times)*s.nw {
			return fmt.Errorf("%d free-GPU words for %d segments of %d", len(s.fb), len(s.times), s.nw)
		}
		for n := range s.node {
			nd := &s.node[n]
			bit := s.fb[i*s.nw+n/64]>>uint(n%64)&1 == 1
			if nd.complex {
				if !bit {
					return fmt.Errorf("segment %d: MIG/MPS node %d has no free-GPU bit", t, n)
				}
				continue
			}
			g, c, m := s.freeAt(nd, t, math.MaxInt32)
			p := nd.tl[nd.tlAt(t)]
			if p.g != g || p.c != c || p.m != m {
				return fmt.Errorf("segment %d: node %d's timeline gives %d/%d/%d, its jobs %d/%d/%d", t, n, p.g, p.c, p.m, g, c, m)
			}
			if bit != (g > 0) {
				return fmt.Errorf("segment %d: node %d's free-GPU bit is %v with %d free", t, n, bit, g)
			}
		}
	}
	return nil
}

// Skipped is how many queued jobs e's passes after only new submissions
// have left untried, knowing they would fail (EASY.quiet).
func (e *EASY) Skipped() int { return e.skipped }

// NoPrune makes e keep every failure it remembers in a pass, as the
// other policies do (Pass.dropCovered).
func (e *EASY) NoPrune() { e.pass.prune = false }
