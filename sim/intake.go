package sim

import (
	"unsafe"

	"github.com/schedsim/schedsim/workload"
)

// UpFrontBytes is what Run allocates per job of a trace of jobs jobs
// before its first event: the record (a JobRecord each) and the
// controller's per-job arrays (status, request index, reason, limit,
// partition). It is a lower bound of what a run holds for its jobs
// (TestHeldBytesPerJobRun measures the rest), which a caller with a
// memory budget checks before Run makes the allocation.
func UpFrontBytes(jobs int) int64 {
	per := unsafe.Sizeof(JobRecord{}) + unsafe.Sizeof(jobStatus(0)) + unsafe.Sizeof(uint32(0)) +
		unsafe.Sizeof(PendingReason(0)) + unsafe.Sizeof(Time(0)) + unsafe.Sizeof(int32(0))
	return int64(jobs) * int64(per)
}

// requests holds the jobs' resolved requests (what submit made of
// workload.Job.Request) interned: a trace has few distinct requests (the
// 1 M-job year trace 158), so a job keeps a 4-byte index into a table of
// the distinct ones instead of its own 48-byte copy.
type requests struct {
	of    []uint32           // per job: index into table; 0 until submitted
	table []workload.Request // distinct requests; table[0] is the zero request
	index map[workload.Request]uint32
	last  uint32 // index of the request set last: consecutive jobs often ask alike
}

func newRequests(jobs int) requests {
	return requests{of: make([]uint32, jobs), table: []workload.Request{{}}, index: map[workload.Request]uint32{{}: 0}}
}

// get returns job ref's resolved request, the zero request before it was
// set. The request is shared with every job that asks alike: read it, never
// change it through the pointer.
func (q *requests) get(ref JobRef) *workload.Request { return &q.table[q.of[ref]] }

// set makes req job ref's resolved request.
func (q *requests) set(ref JobRef, req workload.Request) {
	if q.table[q.last] != req {
		k, ok := q.index[req]
		if !ok {
			k = uint32(len(q.table))
			q.table = append(q.table, req)
			q.index[req] = k
		}
		q.last = k
	}
	q.of[ref] = q.last
}
