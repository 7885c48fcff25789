package schedsim

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestLimits: scale_load and failure models that would exhaust memory or
// time are refused with the line, the figure and the limit.
func TestLimits(t *testing.T) {
	head := "version: 1\ncluster: {builtin: example}\ntrace:\n  builtin: llnl-thunder-slice\n"
	for _, tt := range []struct{ name, body, want string }{
		// 5,303 jobs × 1000 = 5,303,000 > 2,000,000; 2e6/5303 = 377.14.
		{"scale_load 1000", "  transforms: {scale_load: 1000}\npolicy: {name: fifo}\n",
			"s.yaml:5: trace.transforms.scale_load: 1000 would make the trace's 5303 jobs about 5303000, more than limits.max_jobs (2000000); want scale_load at most 377.1"},
		{"raised", "  transforms: {scale_load: 3}\npolicy: {name: fifo}\nlimits: {max_jobs: 10000}\n",
			"s.yaml:5: trace.transforms.scale_load: 3 would make the trace's 5303 jobs about 15909, more than limits.max_jobs (10000)"},
		// The example cluster's 48 nodes over the horizon (the last
		// submit, about ten days in, plus a year): mtbf 1 s + mttr 1 s
		// is a failure every 2 s a node, 7.8e8 in all.
		{"mtbf 1s", "policy: {name: fifo}\nfailures: {mtbf: 1s, mttr: 1s}\n",
			"s.yaml:6: failures.mtbf: 1s on 48 nodes (mttr 1s) over the run's horizon of"},
		{"mtbf 1m", "policy: {name: fifo}\nfailures: {mtbf: 1m, mttr: 1m}\n", "s.yaml:6: failures.mtbf: 1m on 48 nodes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(head+tt.body), "s.yaml")
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Build(catalog.Builtin())
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant  %s", err, tt.want)
			}
		})
	}
	// A month's MTBF is far inside the budget.
	s, err := Parse([]byte(head+"policy: {name: fifo}\nfailures: {mtbf: 30d, mttr: 4h}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Build(catalog.Builtin()); err != nil {
		t.Errorf("mtbf 30d: %v", err)
	}
	if _, err := Parse([]byte(head+"policy: {name: fifo}\nlimits: {max_jobs: -1}\n"), "s.yaml"); err == nil || !strings.Contains(err.Error(), "s.yaml:6: limits.max_jobs: must be >= 0") {
		t.Errorf("negative limit: %v", err)
	}
}

// TestFailureBudgetFigure checks the failure estimate by hand: 48 nodes,
// jobs submitted at 0 and 86,400 (a one-day span, so the horizon is the
// last submit plus a year: 86,400 + 31,536,000 = 31,622,400 s), mtbf
// 600 s + mttr 600 s: 48 × 31,622,400 / 1,200 = 1,264,896 failures, over
// the default 200,000; limits.max_failures 2,000,000 accepts it; the
// least MTBF within 200,000 is ceil(48 × 31,622,400 / 200,000) − 600 =
// 7,590 − 600 = 6,990 s (116.5 minutes).
func TestFailureBudgetFigure(t *testing.T) {
	s, err := Parse([]byte("version: 1\ncluster: {builtin: example}\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: fifo}\nfailures: {mtbf: 600, mttr: 600}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	jobs := []workload.Job{workload.NewJob("1"), workload.NewJob("2")}
	jobs[1].Submit = 86400
	f := &sim.FailureModel{MTBF: 600, MTTR: 600}
	err = s.checkFailures(hwmodels.ExampleCluster(), &workload.Trace{Jobs: jobs}, f)
	if want := "s.yaml:5: failures.mtbf: 600 on 48 nodes (mttr 600) over the run's horizon of 366.0d would draw about 1.26e+06 failures, more than limits.max_failures (200000); want mtbf of at least 116.5m"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v\nwant  %s", err, want)
	}
	s.Limits.MaxFailures = 2000000
	if err := s.checkFailures(hwmodels.ExampleCluster(), &workload.Trace{Jobs: jobs}, f); err != nil {
		t.Errorf("with max_failures 2000000: %v", err)
	}
}

// TestMaxNodeEventsLimit: a run whose failure model would log more node
// availability changes than limits.max_node_events is refused as the
// inputs' fault (sim.ErrLimit, not ErrInternal), naming the key. On the
// example cluster's 48 nodes with mtbf 30d and mttr 4h, the built-in
// trace's submit span of 10.2 days is expected to make about
// 2 × 48 × 10.2d / 30.17d ≈ 32 changes: over a limit of 10, far under
// the default.
func TestMaxNodeEventsLimit(t *testing.T) {
	src := "version: 1\ncluster: {builtin: example}\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: fifo}\n" +
		"failures: {mtbf: 30d, mttr: 4h}\nlimits: {max_node_events: 10}\n"
	s, err := Parse([]byte(src), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Run()
	if !errors.Is(err, sim.ErrLimit) || errors.Is(err, ErrInternal) || !strings.Contains(err.Error(), "limits.max_node_events") {
		t.Fatalf("error %v: want sim.ErrLimit naming limits.max_node_events, not ErrInternal", err)
	}
	s.Limits.MaxNodeEvents = 0 // the default bound
	if _, err := s.Run(); err != nil {
		t.Fatalf("with the default bound: %v", err)
	}
	if _, err := Parse([]byte(strings.Replace(src, "max_node_events: 10", "max_node_events: -1", 1)), "s.yaml"); err == nil || !strings.Contains(err.Error(), "s.yaml:6: limits.max_node_events: must be >= 0") {
		t.Errorf("negative bound: %v", err)
	}
}
