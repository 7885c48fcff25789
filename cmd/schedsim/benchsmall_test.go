package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// smallTrace is the 20,000-job HPC2N log of issue 18's small-end budget
// (EASY, --cluster header: ≤ 40 ms CPU whole-process without outputs,
// ≤ 150 ms with --out).
const smallTrace = "../../../shared/traces/HPC2N-2002-2.1-cln.first20000.swf.gz"

// BenchmarkSmallRun runs `schedsim run --trace <HPC2N 20k> --cluster
// header --policy easy` in process, as the command does after start-up:
// read and parse the trace, build the cluster, simulate, analyze and
// print (to io.Discard), and with --out write every output. Process
// start (runtime and package init) is not in it; BENCHMARKS.md measures
// the whole process too. It skips without ../shared.
func BenchmarkSmallRun(b *testing.B) {
	if _, err := os.Stat(smallTrace); err != nil {
		b.Skipf("no small-end trace (%v)", err)
	}
	for _, tc := range []struct {
		name string
		out  bool
	}{{"plain", false}, {"out", true}} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				args := []string{"run", "--trace", smallTrace, "--cluster", "header", "--policy", "easy", "--quiet"}
				if tc.out {
					args = append(args, "--out", filepath.Join(dir, "out"))
				}
				root := newRootCmd()
				root.SetArgs(args)
				root.SetOut(io.Discard)
				root.SetErr(io.Discard)
				if err := execute(root); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/run")
		})
	}
}
