package main

import "testing"

func TestMemoryLimitFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct{ live, current, want uint64 }{
		{100 * mib, memoryLimitFloor, memoryLimitFloor}, // small runs never reach the floor
		{680 * mib, memoryLimitFloor, memoryLimitFloor}, // 850 MiB with headroom: still at the floor
		{800 * mib, memoryLimitFloor, 1000 * mib},       // past it: a quarter over the live heap
		{400 * mib, 1000 * mib, 1000 * mib},             // never lowered
		{4000 * mib, 1000 * mib, 5000 * mib},            // large runs: GOGC=25-like, no thrashing
	} {
		if got := memoryLimitFor(tc.live, tc.current); got != tc.want {
			t.Errorf("memoryLimitFor(%d MiB, %d MiB) = %d MiB, want %d MiB", tc.live/mib, tc.current/mib, got/mib, tc.want/mib)
		}
	}
}
