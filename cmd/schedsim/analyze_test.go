package main

import (
	"reflect"
	"testing"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/sim"
)

// TestAnalyzeWithoutRows checks that an Analysis that keeps no job rows
// (what `run` without --out makes) has the same summary and timeline as
// one that keeps them, on the embedded Thunder slice under three policies
// and under the slurm policy with node failures that requeue jobs (so
// jobs have earlier runs).
func TestAnalyzeWithoutRows(t *testing.T) {
	failures, err := scenario.Parse([]byte(`version: 1
seed: 3
cluster: {builtin: example}
trace: {builtin: llnl-thunder-slice, swf: {procs_per_gpu: 8}, partition_map: {"1": h100, "2": h100}}
policy: {name: slurm}
controller: {job_requeue: true, time_limit_sweep: 30s}
failures: {mtbf: 30d, mttr: 4h}
runtime: {comm_stretch: true}
`), "failures.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]*scenario.Scenario{"failures": failures}
	for _, p := range []string{"fifo", "easy", "slurm"} { // conservative takes 26 s here
		s := scenario.Default()
		s.Policy.Name = p
		cases[p] = s
	}
	for _, name := range []string{"fifo", "easy", "slurm", "failures"} {
		t.Run(name, func(t *testing.T) {
			run, err := cases[name].Build(catalog.Builtin())
			if err != nil {
				t.Fatal(err)
			}
			rec, err := run.Simulate()
			if err != nil {
				t.Fatal(err)
			}
			if name == "failures" && len(rec.Runs) == 0 {
				t.Fatal("no job was requeued: the case does not test earlier runs")
			}
			opts := reports.SummaryOptions{SampleInterval: 3600}
			full := reports.Analyze(rec, opts)
			opts.NoJobRows = true
			lean := reports.Analyze(rec, opts)
			if lean.Jobs != nil {
				t.Fatalf("NoJobRows kept %d rows", len(lean.Jobs))
			}
			if len(full.Jobs) != len(rec.Jobs) {
				t.Fatalf("%d rows for %d jobs", len(full.Jobs), len(rec.Jobs))
			}
			if !reflect.DeepEqual(full.Summary, lean.Summary) {
				t.Errorf("summaries differ:\nrows:    %+v\nno rows: %+v", full.Summary, lean.Summary)
			}
			if !reflect.DeepEqual(full.Timeline, lean.Timeline) {
				t.Error("timelines differ")
			}
			if got := reports.Summarize(rec, opts); !reflect.DeepEqual(got, full.Summary) {
				t.Error("Summarize differs from Analyze")
			}
			var ended int
			for i := range rec.Jobs {
				if rec.Jobs[i].State != sim.Unfinished {
					ended++
				}
			}
			if ended == 0 {
				t.Fatal("no job ended")
			}
		})
	}
}
