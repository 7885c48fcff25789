package reports

import (
	"fmt"
	"io"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// benchRecord is a synthetic run of n jobs on 128 nodes of 8 GPUs: job i
// is submitted at i, waits i%600 s, runs 3600 s on (i%4)+1 nodes and
// takes all 8 GPUs of each. It need not be feasible, only valid.
func benchRecord(n int) *sim.Record {
	cl := &hwmodels.Cluster{Name: "bench", Partitions: []hwmodels.Partition{{Name: "gpu"}}}
	for k := range 128 {
		cl.Nodes = append(cl.Nodes, hwmodels.Node{Name: fmt.Sprintf("gpu%03d", k+1), GPUs: 8, CPUs: 64, Partitions: 1})
		cl.Partitions[0].Nodes = append(cl.Partitions[0].Nodes, int32(k))
	}
	rows := make([]fixtureJob, n)
	for i := range rows {
		submit := sim.Time(i)
		start := submit + sim.Time(i%600)
		var alloc []sim.NodeAlloc
		for k := range i%4 + 1 {
			alloc = append(alloc, sim.NodeAlloc{Node: int32((i + k) % 128), GPUs: 8, CPUs: 64})
		}
		rows[i] = fixtureJob{id: fmt.Sprint(i), user: "u", part: "gpu", traceState: "COMPLETED",
			submit: submit, start: start, end: start + 3600, state: sim.Completed, alloc: alloc}
	}
	return buildRecord(cl, rows, sim.Time(n+600+3600))
}

func BenchmarkSummarize(b *testing.B) {
	rec := benchRecord(100_000)
	var s Summary
	for b.Loop() {
		s = Summarize(rec, SummaryOptions{})
	}
	if s.Started != 100_000 || s.Wait.Max != 599 {
		b.Fatalf("started %d, max wait %v; want 100000, 599", s.Started, s.Wait.Max)
	}
	b.ReportMetric(float64(b.N)*100_000/b.Elapsed().Seconds(), "jobs/s")
}

func BenchmarkWriteJobsCSV(b *testing.B) {
	rec := benchRecord(100_000)
	var cw countWriter
	for b.Loop() {
		cw = 0
		if err := WriteJobsCSV(&cw, rec); err != nil {
			b.Fatal(err)
		}
	}
	if cw < 100_000*40 {
		b.Fatalf("wrote %d bytes, want at least 40 a row", cw)
	}
	b.ReportMetric(float64(b.N)*100_000/b.Elapsed().Seconds(), "jobs/s")
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
