package traces

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/workload"
)

// heldTrace is n jobs shaped like the year trace's (bench/year-model.yaml):
// numeric ids, no names, 200 users in 20 accounts, two partitions, whole
// GPUs, a time limit, a recorded start and end.
func heldTrace(n int) *workload.Trace {
	tr := &workload.Trace{Epoch: 1_700_000_000}
	tr.Jobs = make([]workload.Job, n)
	for i := range tr.Jobs {
		j := workload.NewJob(fmt.Sprint(i + 1))
		j.User = fmt.Sprintf("u%d", i%200)
		j.Account = fmt.Sprintf("a%d", i%20)
		j.Partition = []string{"batch", "debug"}[i%7/6]
		j.Submit = workload.Time(i * 30)
		j.Runtime = workload.Time(60 + i%3600)
		j.TimeLimit = 7200
		j.TraceState = "COMPLETED"
		j.TraceStart, j.TraceEnd = j.Submit+5, j.Submit+5+j.Runtime
		j.Request = workload.Request{Nodes: 1, GPUs: int32(1 + i%8), CPUs: int32(8 * (1 + i%8))}
		tr.Jobs[i] = j
	}
	return tr
}

// liveHeap returns the heap in use after a forced collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestHeldBytesPerJob: a trace read from SWF, sacct or Parquet holds at
// most maxHeldPerJob bytes of heap per job once read (runtime.MemStats
// after forced collections, the input's bytes excluded: they are alive
// before and after), so a 10 M-job trace is held in about 3 GB.
func TestHeldBytesPerJob(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 100,000 jobs three times")
	}
	const n = 100_000
	const maxHeldPerJob = 300
	for _, format := range []string{FormatSWF, FormatSacct, FormatParquet} {
		var buf bytes.Buffer
		if err := Write(&buf, format, heldTrace(n), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		before := liveHeap()
		res, err := Read(bytes.NewReader(data), "held."+format, Options{Format: format})
		if err != nil {
			t.Fatal(err)
		}
		after := liveHeap()
		if len(res.Trace.Jobs) != n {
			t.Fatalf("%s: %d jobs, want %d", format, len(res.Trace.Jobs), n)
		}
		per := float64(after-before) / n
		t.Logf("%s: %.1f bytes held per job", format, per)
		if per > maxHeldPerJob {
			t.Errorf("%s: %.1f bytes held per job, want at most %d", format, per, maxHeldPerJob)
		}
		runtime.KeepAlive(res)
		runtime.KeepAlive(data)
	}
}

// TestMemoryBudgetRefusesJobs: under a 256 KiB memory budget (7/8 of it,
// 224 KiB, may be live), reading 1,000 jobs stops before the slice of
// their exact length (1,000 x 288 bytes, 281 KiB) is allocated, or
// earlier if the heap is already live, with a one-line *ParseError
// wrapping a *LimitError that names --max-memory; without a budget the
// same read succeeds.
func TestMemoryBudgetRefusesJobs(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, FormatSWF, heldTrace(1000), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	SetMemoryBudget(256<<10, "max-memory")
	_, err := Read(bytes.NewReader(buf.Bytes()), "budget.swf", Options{})
	SetMemoryBudget(0, "")
	var le *LimitError
	var pe *ParseError
	if !errors.As(err, &le) || le.Flag != "max-memory" || !errors.As(err, &pe) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "budget.swf:") || !strings.Contains(err.Error(), "raise it with --max-memory") {
		t.Fatalf("got %v, want a one-line budget error naming budget.swf and --max-memory", err)
	}
	if res, err := Read(bytes.NewReader(buf.Bytes()), "budget.swf", Options{}); err != nil || len(res.Trace.Jobs) != 1000 {
		t.Fatalf("without a budget: %v", err)
	}
}
