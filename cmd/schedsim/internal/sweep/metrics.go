package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Metric is one figure of a run, read from its summary.json.
type Metric struct {
	Name string // column name in sweep.parquet
	Path string // dotted key path in summary.json
	Doc  string
}

// Metrics are the columns of sweep.parquet after the parameters, in order.
// Every value comes from the run's summary.json (reports/doc.go documents
// the keys), so a resumed scenario gives the same row as a fresh run.
var Metrics = []Metric{
	{"jobs", "jobs.total", "jobs in the trace"},
	{"started", "jobs.started", "jobs that started"},
	{"completed", "jobs.by_state.completed", "jobs ended COMPLETED"},
	{"timeout", "jobs.by_state.timeout", "jobs ended TIMEOUT"},
	{"rejected", "jobs.by_state.rejected", "jobs rejected at submit"},
	{"unfinished", "jobs.by_state.unfinished", "jobs never finished"},
	{"makespan_s", "window.makespan_s", "first submit to last end, seconds"},
	{"util_gpu", "utilization.gpu.fraction", "allocated over available GPU-seconds"},
	{"util_node", "utilization.node.fraction", "allocated over available node-seconds"},
	{"wait_mean_s", "wait_s.mean", "mean wait of started jobs, seconds"},
	{"wait_p50_s", "wait_s.p50", "median wait"},
	{"wait_p90_s", "wait_s.p90", "90th percentile wait"},
	{"wait_p95_s", "wait_s.p95", "95th percentile wait"},
	{"wait_p99_s", "wait_s.p99", "99th percentile wait"},
	{"wait_max_s", "wait_s.max", "longest wait"},
	{"bsld_mean", "bounded_slowdown.mean", "mean bounded slowdown (tau 10 s)"},
	{"bsld_max", "bounded_slowdown.max", "largest bounded slowdown"},
	{"response_mean_s", "response_s.mean", "mean submit-to-end time"},
	{"response_p95_s", "response_s.p95", "95th percentile submit-to-end time"},
	{"jobs_per_day", "throughput.jobs_per_day", "finished jobs per day"},
	{"gpu_hours", "throughput.gpu_hours", "GPU-hours of finished jobs"},
	{"jain_user_slowdown", "fairness.jain_user_slowdown", "Jain index of per-user mean slowdown"},
	{"frag_unusable", "fragmentation.unusable_fraction", "share of free GPUs no queued job could use"},
	{"preemptions", "preemption.preemptions", "preemptions"},
	{"events", "run.events", "simulation events"},
}

// DefaultPlotMetrics are plotted when the sweep file lists none.
var DefaultPlotMetrics = []string{"wait_mean_s", "wait_p95_s", "bsld_mean", "util_gpu", "makespan_s"}

// MetricNames lists the metric names in column order.
func MetricNames() []string {
	out := make([]string, len(Metrics))
	for i, m := range Metrics {
		out[i] = m.Name
	}
	return out
}

func metricIndex(name string) int {
	for i, m := range Metrics {
		if m.Name == name {
			return i
		}
	}
	return -1
}

// summaryInfo is what a sweep reads from a run's summary.json.
type summaryInfo struct {
	ConfigHash string
	Values     []float64 // one per Metrics entry
}

// readSummary reads the config hash and the metrics from summary.json's
// bytes. A key summary.json lacks is an error: the metric list follows
// summary.json's schema version 1.
func readSummary(data []byte) (*summaryInfo, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("summary.json: %w", err)
	}
	info := &summaryInfo{Values: make([]float64, len(Metrics))}
	if h, ok := doc["config_hash"].(string); ok {
		info.ConfigHash = h
	}
	for i, m := range Metrics {
		var v any = doc
		for k := range strings.SplitSeq(m.Path, ".") {
			obj, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = obj[k]
		}
		f, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("summary.json: no number at %s (metric %s)", m.Path, m.Name)
		}
		info.Values[i] = f
	}
	return info, nil
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
