package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

var updateBench = flag.Bool("update-bench", false, "rewrite bench/year-model.yaml from bench/thunder-model.yaml")

// benchDir is the repository's bench directory, from this package's.
const benchDir = "../../bench"

// yearJobs is how many jobs the benchmark trace has, and yearDays the span
// the year model's arrival rates give them.
const (
	yearJobs = 1_000_000
	yearDays = 365
)

// yearModel derives bench/year-model.yaml from the fit of the Thunder log
// (bench/thunder-model.yaml): every hourly arrival rate is multiplied by
// one factor so that 1 M jobs arrive in about 365 days; sizes, runtimes,
// limits, users and partitions are the fit's.
func yearModel(fit *workload.Model) *workload.Model {
	m := *fit
	perWeek := 0.0
	for _, r := range fit.HourlyRate {
		perWeek += r
	}
	k := yearJobs / (perWeek * yearDays / 7)
	m.HourlyRate = make([]float64, len(fit.HourlyRate))
	for i, r := range fit.HourlyRate {
		m.HourlyRate[i] = r * k
	}
	m.Source = fmt.Sprintf("%s; hourly rates x %.6f for %d jobs in %d days", fit.Source, k, yearJobs, yearDays)
	return &m
}

func readModel(t testing.TB, name string) *workload.Model {
	t.Helper()
	f, err := os.Open(filepath.Join(benchDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := workload.ReadModel(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBenchYearModel checks that bench/year-model.yaml is yearModel of
// bench/thunder-model.yaml (go test -run BenchYearModel -update-bench
// rewrites it).
func TestBenchYearModel(t *testing.T) {
	var want bytes.Buffer
	if err := workload.WriteModel(&want, yearModel(readModel(t, "thunder-model.yaml"))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(benchDir, "year-model.yaml")
	if *updateBench {
		if err := os.WriteFile(path, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%s is not the year model of thunder-model.yaml; rerun with -update-bench", path)
	}
	// The benchmark scenario is valid.
	if _, err := scenario.Load(filepath.Join(benchDir, "year-1024x8.yaml")); err != nil {
		t.Fatal(err)
	}
}

// yearRun builds the benchmark scenario, cut to its first n jobs. It skips
// the benchmark when bench/data has no trace (make bench-data-year).
func yearRun(b *testing.B, n int) *scenario.Run {
	b.Helper()
	return yearRunOf(b, "year-1024x8.yaml", n)
}

// yearRunOf is yearRun for another scenario of bench/ on the year trace.
func yearRunOf(b *testing.B, file string, n int) *scenario.Run {
	b.Helper()
	s, err := scenario.Load(filepath.Join(benchDir, file))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(s.Resolve(s.Trace.File)); err != nil {
		b.Skipf("no benchmark trace (%v): run make bench-data-year", err)
	}
	run, err := s.Build(catalog.Builtin())
	if err != nil {
		b.Fatal(err)
	}
	run.Head(n)
	return run
}

// replay simulates run with the benchmark timer running, checks that every
// job ended (or was rejected), and returns the record and the live heap
// after the run per job: the record and what it still references, the
// policy, engine and the run's trace slice being garbage by then.
func replay(b *testing.B, run *scenario.Run) (*sim.Record, float64) {
	b.Helper()
	runtime.GC()
	b.StartTimer()
	rec, err := run.Simulate()
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	for i := range rec.Jobs {
		// A job requeued MaxBatchRequeue times is held for good, as in
		// Slurm; any other left unfinished is a fault.
		if j := &rec.Jobs[i]; j.State == sim.Unfinished && j.Reason != sim.ReasonJobHoldMaxRequeue.String() {
			b.Fatalf("job %d never finished (%s)", i, j.Reason)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return rec, float64(ms.HeapAlloc) / float64(len(rec.Jobs))
}

// BenchmarkYear replays the first 10k, 30k, 100k, 300k and 1 M jobs of
// the benchmark trace (bench/year-1024x8.yaml: 1,024 nodes × 8 H100,
// slurm policy with Slurm 22.05 defaults). The trace is read and the
// policy built outside the timer. It reports jobs/s and events/s, the heap
// in use after the run per job (see replay), and the heap
// the process obtained (runtime.MemStats HeapSys: its peak, including the
// whole 1 M-job trace read before cutting it).
func BenchmarkYear(b *testing.B) {
	for _, n := range []int{10_000, 30_000, 100_000, 300_000, yearJobs} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			var events int64
			var heapPerJob float64
			for b.Loop() {
				b.StopTimer()
				run := yearRun(b, n)
				var rec *sim.Record
				rec, heapPerJob = replay(b, run)
				events = rec.Events
				b.StartTimer()
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "jobs/s")
			b.ReportMetric(float64(events*int64(b.N))/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(heapPerJob, "heapB/job")
			b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heapsysMiB")
		})
	}
}

// yearNodesJobs is how many jobs BenchmarkYearNodes replays: 100k took
// over ten minutes per cluster size below 4,096 nodes (BENCHMARKS.md).
const yearNodesJobs = 10_000

// BenchmarkYearNodes replays the first yearNodesJobs jobs of the benchmark
// trace on 64 to 8,192 uniform nodes (8 H100 each, one partition), with
// submit times stretched or compressed by 1,024/nodes so that the offered
// load per GPU stays that of the 1,024-node cluster. Jobs wider than a
// small cluster are rejected at submit (a handful at 64 nodes). It reports
// jobs/s, the heap after the run per job, and the time-average queue
// length.
func BenchmarkYearNodes(b *testing.B) {
	for _, nodes := range []int{64, 256, 1024, 4096, 8192} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			var heapPerJob, depth float64
			for b.Loop() {
				b.StopTimer()
				run := yearRun(b, yearNodesJobs)
				run.Cluster = hwmodels.UniformCluster("uniform", nodes, 112, 8, 2<<20)
				for i := range run.Trace.Jobs {
					j := &run.Trace.Jobs[i]
					j.Submit = j.Submit * 1024 / workload.Time(nodes)
					j.Partition = ""
				}
				var rec *sim.Record
				rec, heapPerJob = replay(b, run)
				depth = queueLength(rec)
				b.StartTimer()
			}
			b.ReportMetric(float64(yearNodesJobs*b.N)/b.Elapsed().Seconds(), "jobs/s")
			b.ReportMetric(heapPerJob, "heapB/job")
			b.ReportMetric(depth, "queue")
		})
	}
}

// yearPreemptJobs is how many jobs BenchmarkYearPreempt replays.
const yearPreemptJobs = 20_000

// BenchmarkYearPreempt replays the first yearPreemptJobs jobs of the year
// trace with partition preemption (bench/year-preempt.yaml: debug at a
// higher PriorityTier on every node, batch jobs requeued; 180 runs
// preempted), where the backfill cycle tries to preempt for every
// waiting debug record. It reports jobs/s and the preemptions.
func BenchmarkYearPreempt(b *testing.B) {
	var preempted int
	for b.Loop() {
		b.StopTimer()
		rec, _ := replay(b, yearRunOf(b, "year-preempt.yaml", yearPreemptJobs))
		preempted = 0
		for _, r := range rec.Runs {
			if r.State == sim.Preempted {
				preempted++
			}
		}
		b.StartTimer()
	}
	if preempted == 0 {
		b.Fatal("no preemption: the benchmark measures nothing it is for")
	}
	b.ReportMetric(float64(yearPreemptJobs*b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(preempted), "preempted")
}

// queueLength returns the time-average number of waiting jobs (Little's
// law: the total wait over the makespan).
func queueLength(rec *sim.Record) float64 {
	var wait float64
	for i := range rec.Jobs {
		if r := &rec.Jobs[i]; r.Start >= 0 {
			wait += float64(r.Start - r.Submit)
		}
	}
	return wait / float64(max(rec.End, 1))
}

// yearQueueJobs is how many jobs BenchmarkYearQueueDepth replays.
const yearQueueJobs = 30_000

// BenchmarkYearQueueDepth replays the first yearQueueJobs jobs of the
// benchmark trace at submit-time compressions that deepen the queue (load
// 1×, 1.2×, 1.5× the benchmark's), and reports the time-average number of
// waiting jobs next to the time and the heap after the run per job.
func BenchmarkYearQueueDepth(b *testing.B) {
	for _, load := range []float64{1, 1.2, 1.5} {
		b.Run(fmt.Sprintf("load=%g", load), func(b *testing.B) {
			var heapPerJob, depth float64
			for b.Loop() {
				b.StopTimer()
				run := yearRun(b, yearQueueJobs)
				for i := range run.Trace.Jobs {
					j := &run.Trace.Jobs[i]
					j.Submit = workload.Time(float64(j.Submit) / load)
				}
				var rec *sim.Record
				rec, heapPerJob = replay(b, run)
				depth = queueLength(rec)
				b.StartTimer()
			}
			b.ReportMetric(float64(yearQueueJobs*b.N)/b.Elapsed().Seconds(), "jobs/s")
			b.ReportMetric(heapPerJob, "heapB/job")
			b.ReportMetric(depth, "queue")
		})
	}
}
