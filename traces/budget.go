package traces

import (
	"fmt"
	"runtime/metrics"
	"sync"
	"unsafe"

	"github.com/schedsim/schedsim/workload"
)

// A process may set a memory budget (SetMemoryBudget; schedsim run
// --max-memory). Reading a whole trace (Open, Read) then checks, before
// each large allocation of jobs, that the heap that survived the last
// collection plus that allocation stays within budgetShare of it, and
// otherwise stops with a *LimitError naming the budget's flag. The
// collector, held under the budget by a soft memory limit, keeps the rest
// of the heap in check; a single allocation it cannot, so one of a few
// gigabytes (the jobs of a 10 M-job trace, 2.9 GB) is refused here
// rather than made.

var memoryBudget struct {
	sync.Mutex
	limit int64  // bytes; 0: none
	flag  string // the flag that sets it, without "--"
}

// budgetShareNum/Den is the part of the budget the live heap may reach.
const budgetShareNum, budgetShareDen = 7, 8

// SetMemoryBudget sets the process's memory budget to limit bytes (0:
// none), set by the command-line flag named flag ("max-memory").
func SetMemoryBudget(limit int64, flag string) {
	memoryBudget.Lock()
	memoryBudget.limit, memoryBudget.flag = limit, flag
	memoryBudget.Unlock()
}

// jobBytes is the size of one held Job, strings and lists aside.
const jobBytes = int64(unsafe.Sizeof(workload.Job{}))

// reserve returns a *LimitError when allocating need more bytes, to hold
// jobs past the held ones, would take the live heap past the budget's
// share; nil without a budget.
func reserve(need int64, held int) error {
	return ReserveMemory(need, fmt.Sprintf("holding the trace's jobs (%s read)", fmtCount(held)))
}

// ReserveMemory returns a *LimitError when allocating need more bytes
// for what (a phrase: "simulating 8,000,000 jobs") would take the heap
// that survived the last collection past 7/8 of the memory budget
// (SetMemoryBudget), so that a caller about to make a large allocation
// stops with a message naming the budget instead of making it; nil
// without a budget.
func ReserveMemory(need int64, what string) error {
	memoryBudget.Lock()
	limit, flag := memoryBudget.limit, memoryBudget.flag
	memoryBudget.Unlock()
	if limit <= 0 {
		return nil
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	var live int64
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = int64(s[0].Value.Uint64())
	}
	if live+need <= limit/budgetShareDen*budgetShareNum {
		return nil
	}
	return &LimitError{Flag: flag, Limit: limit, Bytes: true,
		Msg: fmt.Sprintf("%s needs %s more on top of a live heap of %s, past %d/%d of the memory budget",
			what, humanSize(need), humanSize(live), budgetShareNum, budgetShareDen)}
}

// humanSize writes n bytes in KiB, MiB or GiB with one decimal.
func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
