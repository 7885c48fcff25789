package sim

import "github.com/schedsim/schedsim/workload"

// jobStore gives the controller the trace's jobs by ref: the trace's own
// slice, or, for a packed trace (workload.Trace.Packed), the jobs decoded
// when first asked for (at submit) and dropped when they are done, so a
// run holds a Job only for the jobs queued or running.
type jobStore struct {
	jobs   []workload.Job
	packed *workload.Packed
	n      int
	// Packed only: slot[ref] is the job's index in live plus one (0: not
	// decoded); live holds the decoded jobs in slabs, so a pointer stays
	// valid while the slab grows.
	slot []int32
	live [][]workload.Job
	// free lists slots to reuse; done those released since the last
	// recycle, which a caller may still point into until the event loop
	// moves on (recycle).
	free, done []int32
	used       int32
}

// jobSlab is how many decoded jobs a slab holds.
const jobSlab = 1024

func newJobStore(t *workload.Trace) jobStore {
	if t.Packed == nil {
		return jobStore{jobs: t.Jobs, n: len(t.Jobs)}
	}
	return jobStore{packed: t.Packed, n: t.Packed.Len(), slot: make([]int32, t.Packed.Len())}
}

// at returns job ref, decoding it first for a packed trace.
func (s *jobStore) at(ref JobRef) *workload.Job {
	if s.packed == nil {
		return &s.jobs[ref]
	}
	if k := s.slot[ref]; k > 0 {
		return &s.live[(k-1)/jobSlab][(k-1)%jobSlab]
	}
	var k int32
	if n := len(s.free); n > 0 {
		k, s.free = s.free[n-1], s.free[:n-1]
	} else {
		k = s.used
		s.used++
		if int(k)/jobSlab == len(s.live) {
			s.live = append(s.live, make([]workload.Job, jobSlab))
		}
	}
	s.slot[ref] = k + 1
	j := &s.live[k/jobSlab][k%jobSlab]
	s.packed.Job(int(ref), j)
	return j
}

// peek returns job ref without keeping it decoded: for one-off reads
// of jobs not yet submitted or already done.
func (s *jobStore) peek(ref JobRef) workload.Job {
	if s.packed == nil || s.slot[ref] > 0 {
		return *s.at(ref)
	}
	return s.packed.At(int(ref))
}

// submit returns job ref's submit time.
func (s *jobStore) submit(ref JobRef) Time {
	if s.packed == nil || s.slot[ref] > 0 {
		return s.at(ref).Submit
	}
	return s.packed.Submit(int(ref))
}

// release drops job ref, done for good, from the decoded jobs; its slot
// is reused after the next recycle.
func (s *jobStore) release(ref JobRef) {
	if s.packed == nil || s.slot[ref] == 0 {
		return
	}
	k := s.slot[ref] - 1
	s.slot[ref] = 0
	s.done = append(s.done, k) // left as it is: a caller may still read it

}

// recycle makes the slots released so far reusable: called where no
// pointer from at is held (between events).
func (s *jobStore) recycle() {
	if len(s.done) > 0 {
		s.free = append(s.free, s.done...)
		s.done = s.done[:0]
	}
}
