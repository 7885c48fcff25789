package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMemoryLimitFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct{ live, current, budget, want uint64 }{
		{100 * mib, memoryLimitFloor, 0, memoryLimitFloor}, // small runs never reach the floor
		{680 * mib, memoryLimitFloor, 0, memoryLimitFloor}, // 850 MiB with headroom: still at the floor
		{800 * mib, memoryLimitFloor, 0, 1000 * mib},       // past it: a quarter over the live heap
		{400 * mib, 1000 * mib, 0, 1000 * mib},             // never lowered
		{4000 * mib, 1000 * mib, 0, 5000 * mib},            // large runs: GOGC=25-like, no thrashing
		{4000 * mib, 1000 * mib, 4500 * mib, 4500 * mib},   // but never above the budget
		{0, memoryLimitFloor, 64 * mib, 64 * mib},          // a budget under the floor lowers it
	} {
		if got := memoryLimitFor(tc.live, tc.current, tc.budget); got != tc.want {
			t.Errorf("memoryLimitFor(%d MiB, %d MiB, %d MiB) = %d MiB, want %d MiB", tc.live/mib, tc.current/mib, tc.budget/mib, got/mib, tc.want/mib)
		}
	}
}

func TestOverBudget(t *testing.T) {
	// 7/8 of 8 GiB is 7 GiB: a live heap of 7 GiB is within it, one byte
	// more is not; no budget never stops.
	const gib = 1 << 30
	for _, tc := range []struct {
		live, budget uint64
		want         bool
	}{
		{7 * gib, 8 * gib, false}, {7*gib + 1, 8 * gib, true}, {100 * gib, 0, false},
	} {
		if got := overBudget(tc.live, tc.budget); got != tc.want {
			t.Errorf("overBudget(%d, %d) = %v, want %v", tc.live, tc.budget, got, tc.want)
		}
	}
}

func TestParseMemTotal(t *testing.T) {
	in := "MemTotal:       24524556 kB\nMemFree:        21000000 kB\n"
	if got, want := parseMemTotal([]byte(in)), uint64(24524556)<<10; got != want {
		t.Errorf("parseMemTotal = %d, want %d", got, want)
	}
	if got := parseMemTotal([]byte("MemFree: 1 kB\n")); got != 0 {
		t.Errorf("parseMemTotal without MemTotal = %d, want 0", got)
	}
}

// TestMemoryBudgetStopsEarly runs the real binary on the embedded default
// scenario at four times its load (about 21,000 jobs; its live heap
// reaches 16 MiB, GODEBUG=gctrace=1) under an 8 MiB budget (the live
// heap may reach 7 MiB): it stops with exit 2 and one line
// naming --max-memory, leaves no output directory or staging directory
// behind, and the same run under the default budget succeeds.
func TestMemoryBudgetStopsEarly(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	code, stderr := exitCode(t, "run", "--quiet", "--set", "trace.transforms.scale_load=4", "--max-memory", "8M", "--out", out)
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
	}
	line := strings.TrimSpace(stderr)
	if strings.Contains(line, "\n") || !strings.Contains(line, "memory budget --max-memory 8M") || !strings.Contains(line, "raise it with --max-memory") {
		t.Errorf("stderr %q: want one line naming --max-memory 8M and how to raise it", stderr)
	}
	if strings.Contains(stderr, "fatal error") || strings.Contains(stderr, "goroutine") {
		t.Errorf("stderr %q: a crash, not a clean stop", stderr)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != ".run.lock" && !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("left %s behind", e.Name())
		}
	}
	if code, stderr := exitCode(t, "run", "--quiet", "--jobs", "300"); code != 0 {
		t.Errorf("default budget: exit %d: %s", code, stderr)
	}
	if code, stderr := exitCode(t, "run", "--quiet", "--jobs", "300", "--max-memory", "0"); code != 0 {
		t.Errorf("--max-memory 0 (none): exit %d: %s", code, stderr)
	}
}
