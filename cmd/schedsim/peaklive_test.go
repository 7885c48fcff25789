package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
)

// peakLiveEnv makes a re-executed test binary (SCHEDSIM_RUN_MAIN=1)
// track the live heap after every collection and print the largest on
// stderr when main returns ("peak-live N"). The live heap is process-wide
// (runtime/metrics), so it is measured in a child that runs one command
// and nothing else.
const peakLiveEnv = "SCHEDSIM_PEAK_LIVE"

// peakLive is the largest live heap seen after a collection.
var peakLive atomic.Uint64

// trackPeakLive collects after every quarter of growth of the live heap
// (GOGC=25: the peak is then within a quarter of the truth between two
// collections) and records the live heap after each collection.
func trackPeakLive() {
	debug.SetGCPercent(25)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		runtime.AddCleanup(new([32]byte), func(struct{}) {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				if v := sample[0].Value.Uint64(); v > peakLive.Load() {
					peakLive.Store(v)
				}
			}
			arm()
		}, struct{}{})
	}
	arm()
}

// TestRunPeakLiveHeap: `schedsim run --out` on the year benchmark's
// cluster and policy (bench/year-1024x8.yaml, slurm) holds at most
// maxLivePerJob bytes of live heap per job at its peak, over the whole
// command (read, simulate, analyze, write every output). The figure is
// the slope between two trace lengths synthesized from the year model,
// (peak(big) − peak(small)) / (big − small), so the fixed part (the
// binary's tables, the cluster, the plots' rasters) cancels out; each
// run is a child process, as the live heap is the process's.
//
// The bound is what the code holds now (1,167 bytes a job when
// written, 2026-12-02) with a fifth of room: the first weeks of the
// year trace are where the queue forms, so a job there costs more than
// over the whole year (the 1 M-job run peaks near 800 B/job live; see
// BENCHMARKS.md, "Memory"), and it is the growth per job, not the fixed
// part, that a regression in what the run keeps per job moves.
func TestRunPeakLiveHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("two replays of tens of thousands of jobs with every output")
	}
	const small, big = 10_000, 50_000
	const maxLivePerJob = 1400
	dir := t.TempDir()
	peak := map[int]uint64{}
	for _, n := range []int{small, big} {
		trace := filepath.Join(dir, fmt.Sprintf("year-%d.parquet", n))
		if _, err := schedsim(t, "trace", "synth", filepath.Join(benchDir, "year-model.yaml"),
			"--jobs", strconv.Itoa(n), "--seed", "1", "--out", trace); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "run", "--scenario", filepath.Join(benchDir, "year-1024x8.yaml"),
			"--trace", trace, "--partition-map", "1=batch,2=debug", "--quiet", "--out", filepath.Join(dir, fmt.Sprint("out-", n)))
		cmd.Env = append(os.Environ(), "SCHEDSIM_RUN_MAIN=1", peakLiveEnv+"=1")
		var stderr bytes.Buffer
		cmd.Stderr, cmd.Stdout = &stderr, &bytes.Buffer{}
		if err := cmd.Run(); err != nil {
			t.Fatalf("%d jobs: %v\n%s", n, err, stderr.String())
		}
		i := bytes.LastIndex(stderr.Bytes(), []byte("peak-live "))
		if i < 0 {
			t.Fatalf("%d jobs: no figure in\n%s", n, stderr.String())
		}
		var v uint64
		if _, err := fmt.Sscan(stderr.String()[i+len("peak-live "):], &v); err != nil {
			t.Fatalf("%d jobs: %v in\n%s", n, err, stderr.String())
		}
		peak[n] = v
		t.Logf("%d jobs: peak live heap %.1f MB", n, float64(v)/(1<<20))
	}
	per := (float64(peak[big]) - float64(peak[small])) / (big - small)
	t.Logf("%.0f bytes of peak live heap per job", per)
	if per > maxLivePerJob {
		t.Errorf("peak live heap %.0f bytes per job, want at most %d", per, maxLivePerJob)
	}
}
