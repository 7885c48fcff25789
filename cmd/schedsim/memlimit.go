package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/schedsim/schedsim/traces"
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
//
// Until the heap first reaches gcStartHeap the collector does not run at
// all (debug.SetGCPercent(-1), with the soft limit at gcStartHeap): a
// small run (20,000 SWF jobs without outputs peaks under 60 MB of heap)
// then spends nothing on collections that would free little, and a
// larger one collects as before from its first collection on. A GOGC set
// by the user keeps the collector as it says from the start.
//
// A run also has a memory budget (run --max-memory): the soft limit never
// goes above it, and once the heap that survives a collection passes
// budgetShare of it, the run stops with one line naming the budget and
// how to raise it, exit 2, instead of growing until the kernel or the Go
// runtime kills it with an out-of-memory error that scripts cannot tell
// from a crash.
const (
	// memoryLimitFloor leaves room under 1 GB for what is not Go heap:
	// the 1 M-job year replay peaks at 943 MB RSS with it (964 MB with
	// 900 MiB).
	memoryLimitFloor = 850 << 20
	memoryHeadroom   = 4 // the limit is at least live + live/memoryHeadroom
	// budgetShare is the part of the budget the live heap may reach:
	// the rest is the collector's room to work (the heap grows past the
	// live data between collections) and what is not heap (stacks, the
	// runtime's own structures, arrow-go's buffers).
	budgetShareNum, budgetShareDen = 7, 8
	// autoBudgetNum/Den is the default budget's share of the machine's
	// memory (or of the cgroup's limit, when lower).
	autoBudgetNum, autoBudgetDen = 3, 4
	// gcStartHeap is the heap the first collection waits for.
	gcStartHeap = 64 << 20
)

// memoryLimitFor returns the soft limit for a live heap of live bytes,
// never below current, and never above budget (when not 0).
func memoryLimitFor(live, current, budget uint64) uint64 {
	l := max(current, memoryLimitFloor, live+live/memoryHeadroom)
	if budget > 0 {
		l = min(l, budget)
	}
	return l
}

// overBudget reports whether a live heap of live bytes passes budget's
// share (never with budget 0).
func overBudget(live, budget uint64) bool {
	return budget > 0 && live > budget/budgetShareDen*budgetShareNum
}

// memBudget is the process's memory budget, set by a command
// (setMemoryBudget) and read after every collection.
var memBudget struct {
	sync.Mutex
	limit uint64 // bytes; 0: none
	flag  string // how the message names it: "--max-memory 4G (auto: ...)"
	abort func() // removes what the command has half written
}

// setMemoryBudget sets the budget to limit bytes (0: none), described
// in the stop message as desc; abort, when not nil, runs before the
// process exits over the budget.
func setMemoryBudget(limit uint64, desc string, abort func()) {
	memBudget.Lock()
	memBudget.limit, memBudget.flag, memBudget.abort = limit, desc, abort
	memBudget.Unlock()
	// The trace readers refuse an allocation that would pass it.
	traces.SetMemoryBudget(int64(limit), "max-memory")
	if limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		governor.Lock()
		governor.limit = memoryLimitFor(0, governor.limit, limit)
		governorApply()
		governor.Unlock()
	}
}

// governor is the soft limit governMemory keeps.
var governor struct {
	sync.Mutex
	limit uint64
	// cold is set until the first collection, while the collector is
	// off; gcPercent is the setting to restore then.
	cold      bool
	gcPercent int
}

// governorApply sets the runtime's soft limit to the governor's, or to
// gcStartHeap while cold (when lower). The caller holds governor.
func governorApply() {
	l := governor.limit
	if governor.cold {
		l = min(l, gcStartHeap)
	}
	debug.SetMemoryLimit(int64(l))
}

// governMemory sets the soft memory limit and keeps it ahead of the live
// heap, unless GOMEMLIMIT is set, and stops the process over its memory
// budget either way.
func governMemory() {
	own := os.Getenv("GOMEMLIMIT") == ""
	governor.Lock()
	governor.limit = memoryLimitFloor
	if own {
		if os.Getenv("GOGC") == "" {
			governor.cold = true
			governor.gcPercent = debug.SetGCPercent(-1)
		}
		governorApply()
	}
	governor.Unlock()
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
				live := sample[0].Value.Uint64()
				memBudget.Lock()
				budget := memBudget.limit
				memBudget.Unlock()
				if overBudget(live, budget) {
					stopOverBudget(live)
				}
				if own {
					governor.Lock()
					l := memoryLimitFor(live, governor.limit, budget)
					if governor.cold {
						governor.cold = false
						debug.SetGCPercent(governor.gcPercent)
						governor.limit = l
						governorApply()
					} else if l != governor.limit {
						governor.limit = l
						governorApply()
					}
					governor.Unlock()
				}
			}
			arm()
		}, struct{}{})
	}
	arm()
}

// stopOverBudget ends the process: what the command half wrote is
// removed, one line says which limit stopped it and how to raise it, and
// the exit status is 2 (the input asked for more than the limit allows).
func stopOverBudget(live uint64) {
	memBudget.Lock()
	abort, desc := memBudget.abort, memBudget.flag
	memBudget.abort = nil
	memBudget.Unlock()
	if abort != nil {
		abort()
	}
	fmt.Fprintf(os.Stderr, "schedsim: stopped early: the run holds %s of live data, over %d/%d of its memory budget %s; raise it with --max-memory SIZE (up to what the machine can give), or replay fewer jobs (--jobs N, --window-from/--window-to)\n",
		humanBytes(live), budgetShareNum, budgetShareDen, desc)
	os.Exit(exitBadInput)
}

// humanBytes writes n bytes in MiB or GiB with one decimal.
func humanBytes(n uint64) string {
	if n >= 10<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// addMemoryFlag registers --max-memory on cmd and returns its value.
func addMemoryFlag(cmd *cobra.Command) *memoryFlag {
	m := &memoryFlag{}
	cmd.Flags().Var(m, "max-memory", "memory budget of the run: it stops with exit 2 once its live data pass 7/8 of this (size such as 4G; auto: 3/4 of the machine's memory or of the cgroup's limit, whichever is lower; 0: none)")
	return m
}

// memoryFlag is --max-memory: a size, "auto" (the default) or 0.
type memoryFlag struct {
	set   bool
	bytes int64
}

func (m *memoryFlag) String() string {
	if !m.set {
		return "auto"
	}
	return traces.FormatSize(m.bytes)
}

func (m *memoryFlag) Set(s string) error {
	if s == "auto" {
		m.set = false
		return nil
	}
	n, err := traces.ParseSize(s)
	if err != nil {
		return err
	}
	m.set, m.bytes = true, n
	return nil
}

func (m *memoryFlag) Type() string { return "size" }

// budget returns the budget in bytes (0: none) and how the stop message
// names it.
func (m *memoryFlag) budget() (uint64, string) {
	if m.set {
		if m.bytes == 0 {
			return 0, ""
		}
		return uint64(m.bytes), "--max-memory " + traces.FormatSize(m.bytes)
	}
	total, what := machineMemory()
	if total == 0 {
		return 0, ""
	}
	b := total / autoBudgetDen * autoBudgetNum
	return b, fmt.Sprintf("--max-memory %s (auto: %d/%d of %s %s)", traces.FormatSize(int64(b)), autoBudgetNum, autoBudgetDen, what, traces.FormatSize(int64(total)))
}

// machineMemory returns the memory this process may use, and what it is:
// the cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes) when lower
// than the machine's memory (/proc/meminfo MemTotal), else the latter.
// It returns 0 where neither can be read (not Linux).
func machineMemory() (uint64, string) {
	total := uint64(0)
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		total = parseMemTotal(b)
	}
	what := "the machine's memory"
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && (total == 0 || n < total) {
			total, what = n, "the cgroup's memory limit"
		}
		break
	}
	return total, what
}

// parseMemTotal returns the MemTotal line of /proc/meminfo in bytes, or
// 0 without one.
func parseMemTotal(b []byte) uint64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			n, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return 0
			}
			if len(f) < 3 || f[2] == "kB" {
				n <<= 10
			}
			return n
		}
	}
	return 0
}
