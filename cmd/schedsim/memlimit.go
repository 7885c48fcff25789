package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Go's collector lets the heap grow to twice the data that survived the
// last collection before it collects again, so a replay that holds half a
// gigabyte of trace and record would reach a gigabyte of resident memory on
// garbage alone. schedsim therefore sets a soft memory limit
// (debug.SetMemoryLimit): the collector works harder as the heap nears it.
// A fixed limit would make a run whose live data outgrow it collect
// without pause, so after every collection the limit is raised to give the
// live heap at least a quarter of headroom. A GOMEMLIMIT set by the user
// replaces all of this.
const (
	// memoryLimitFloor leaves room under 1 GB for what is not Go heap:
	// the 1 M-job year replay peaks at 943 MB RSS with it (964 MB with
	// 900 MiB).
	memoryLimitFloor = 850 << 20
	memoryHeadroom   = 4 // the limit is at least live + live/memoryHeadroom
)

// memoryLimitFor returns the soft limit for a live heap of live bytes,
// never below current.
func memoryLimitFor(live, current uint64) uint64 {
	return max(current, memoryLimitFloor, live+live/memoryHeadroom)
}

// governMemory sets the soft memory limit and keeps it ahead of the live
// heap, unless GOMEMLIMIT is set.
func governMemory() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := uint64(memoryLimitFloor)
	debug.SetMemoryLimit(int64(limit))
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	// A cleanup on an object nothing references runs once after each
	// collection, in the runtime's cleanup goroutine. The object is 32
	// bytes: one from the tiny allocator (under 16) may share its block
	// and never be collected.
	arm = func() {
		runtime.AddCleanup(new([32]byte), func(struct{}) {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				if l := memoryLimitFor(sample[0].Value.Uint64(), limit); l != limit {
					limit = l
					debug.SetMemoryLimit(int64(limit))
				}
			}
			arm()
		}, struct{}{})
	}
	arm()
}
