package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/schedsim/schedsim/workload"
)

// SchemaVersion is the schema_version WriteSummaryJSON writes. It changes
// only when a key is removed, renamed or changes meaning; adding keys does
// not change it.
const SchemaVersion = 1

// WriteSummaryJSON writes s as one indented JSON object followed by a
// newline. Keys are snake_case and always in the same order; every float
// is written with exactly six decimals; times are integer seconds. The
// keys are listed in doc.go. Equal Summaries give byte-identical output.
func WriteSummaryJSON(w io.Writer, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(toJSON(s))
}

// fixed is a float64 that marshals with six decimals ("0.682500").
type fixed float64

func (f fixed) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("reports: cannot write %v as JSON", v)
	}
	if v == 0 {
		v = 0 // no "-0.000000"
	}
	return strconv.AppendFloat(nil, v, 'f', 6, 64), nil
}

type jsonSummary struct {
	SchemaVersion int             `json:"schema_version"`
	Policy        string          `json:"policy"`
	Seed          uint64          `json:"seed"`
	Cluster       jsonCluster     `json:"cluster"`
	Trace         jsonTrace       `json:"trace"`
	Run           jsonRun         `json:"run"`
	Jobs          jsonJobs        `json:"jobs"`
	Window        jsonWindow      `json:"window"`
	Utilization   jsonUtilization `json:"utilization"`
	Wait          jsonStats       `json:"wait_s"`
	Slowdown      jsonSlowdown    `json:"bounded_slowdown"`
	Partitions    []jsonPartition `json:"partitions"`
}

type jsonCluster struct {
	Name       string `json:"name"`
	Nodes      int    `json:"nodes"`
	GPUs       int64  `json:"gpus"`
	CPUs       int64  `json:"cpus"`
	Partitions int    `json:"partitions"`
}

type jsonTrace struct {
	Source   string   `json:"source"`
	Epoch    int64    `json:"epoch"`
	EpochUTC string   `json:"epoch_utc"`
	Jobs     int      `json:"jobs"`
	Notes    []string `json:"notes"`
}

type jsonRun struct {
	EndS   int64    `json:"end_s"`
	Events int64    `json:"events"`
	Notes  []string `json:"notes"`
}

type jsonStates struct {
	Completed  int `json:"completed"`
	Timeout    int `json:"timeout"`
	Cancelled  int `json:"cancelled"`
	Rejected   int `json:"rejected"`
	Unfinished int `json:"unfinished"`
}

type jsonNotStarted struct {
	Cancelled int `json:"cancelled"`
	Rejected  int `json:"rejected"`
	Pending   int `json:"pending"`
}

type jsonTraceState struct {
	State string `json:"state"`
	Count int    `json:"count"`
}

type jsonJobs struct {
	Total        int              `json:"total"`
	Started      int              `json:"started"`
	ByState      jsonStates       `json:"by_state"`
	NotStarted   jsonNotStarted   `json:"not_started"`
	ByTraceState []jsonTraceState `json:"by_trace_state"`
}

type jsonWindow struct {
	FirstSubmitS *int64 `json:"first_submit_s"`
	LastEndS     *int64 `json:"last_end_s"`
	MakespanS    int64  `json:"makespan_s"`
}

type jsonUtil struct {
	Fraction   fixed `json:"fraction"`
	AllocatedS int64 `json:"allocated_s"`
	AvailableS int64 `json:"available_s"`
}

type jsonUtilization struct {
	GPU  jsonUtil `json:"gpu"`
	Node jsonUtil `json:"node"`
	CPU  jsonUtil `json:"cpu"`
}

type jsonStats struct {
	Count int   `json:"count"`
	Mean  fixed `json:"mean"`
	P50   fixed `json:"p50"`
	P95   fixed `json:"p95"`
	P99   fixed `json:"p99"`
	Max   fixed `json:"max"`
}

type jsonSlowdown struct {
	TauS  int64 `json:"tau_s"`
	Count int   `json:"count"`
	Mean  fixed `json:"mean"`
	Max   fixed `json:"max"`
}

type jsonPartition struct {
	Name      string     `json:"name"`
	InCluster bool       `json:"in_cluster"`
	Jobs      int        `json:"jobs"`
	Started   int        `json:"started"`
	ByState   jsonStates `json:"by_state"`
	Wait      jsonStats  `json:"wait_s"`
}

func toJSON(s Summary) jsonSummary {
	j := jsonSummary{
		SchemaVersion: SchemaVersion,
		Policy:        s.Policy,
		Seed:          s.Seed,
		Cluster: jsonCluster{
			Name:       s.Cluster.Name,
			Nodes:      s.Cluster.Nodes,
			GPUs:       s.Cluster.GPUs,
			CPUs:       s.Cluster.CPUs,
			Partitions: s.Cluster.Partitions,
		},
		Trace: jsonTrace{
			Source:   s.Trace.Source,
			Epoch:    s.Trace.Epoch,
			EpochUTC: time.Unix(s.Trace.Epoch, 0).UTC().Format(time.RFC3339),
			Jobs:     s.Trace.Jobs,
			Notes:    nonNil(s.Trace.Notes),
		},
		Run: jsonRun{
			EndS:   int64(s.RunEnd),
			Events: s.Events,
			Notes:  nonNil(s.Notes),
		},
		Jobs: jsonJobs{
			Total:   s.Jobs,
			Started: s.Started,
			ByState: jsonStatesOf(s.States),
			NotStarted: jsonNotStarted{
				Cancelled: s.NotStarted.Cancelled,
				Rejected:  s.NotStarted.Rejected,
				Pending:   s.NotStarted.Pending,
			},
			ByTraceState: []jsonTraceState{},
		},
		Window: jsonWindow{
			FirstSubmitS: knownTime(s.FirstSubmit),
			LastEndS:     knownTime(s.LastEnd),
			MakespanS:    int64(s.Makespan),
		},
		Utilization: jsonUtilization{
			GPU:  jsonUtilOf(s.GPU),
			Node: jsonUtilOf(s.Node),
			CPU:  jsonUtilOf(s.CPU),
		},
		Wait: jsonStatsOf(s.Wait),
		Slowdown: jsonSlowdown{
			TauS:  int64(s.Slowdown.Tau),
			Count: s.Slowdown.Count,
			Mean:  fixed(s.Slowdown.Mean),
			Max:   fixed(s.Slowdown.Max),
		},
		Partitions: []jsonPartition{},
	}
	for _, ts := range s.TraceStates {
		j.Jobs.ByTraceState = append(j.Jobs.ByTraceState, jsonTraceState{State: ts.State, Count: ts.Count})
	}
	for _, p := range s.Partitions {
		j.Partitions = append(j.Partitions, jsonPartition{
			Name:      p.Name,
			InCluster: p.InCluster,
			Jobs:      p.Jobs,
			Started:   p.Started,
			ByState:   jsonStatesOf(p.States),
			Wait:      jsonStatsOf(p.Wait),
		})
	}
	return j
}

func jsonStatesOf(c StateCounts) jsonStates {
	return jsonStates{
		Completed:  c.Completed,
		Timeout:    c.Timeout,
		Cancelled:  c.Cancelled,
		Rejected:   c.Rejected,
		Unfinished: c.Unfinished,
	}
}

func jsonUtilOf(u Utilization) jsonUtil {
	return jsonUtil{Fraction: fixed(u.Fraction), AllocatedS: u.Allocated, AvailableS: u.Available}
}

func jsonStatsOf(st Stats) jsonStats {
	return jsonStats{
		Count: st.Count,
		Mean:  fixed(st.Mean),
		P50:   fixed(st.P50),
		P95:   fixed(st.P95),
		P99:   fixed(st.P99),
		Max:   fixed(st.Max),
	}
}

// knownTime returns nil (JSON null) for workload.Unknown.
func knownTime(t workload.Time) *int64 {
	if t == workload.Unknown {
		return nil
	}
	v := int64(t)
	return &v
}

// nonNil makes an absent list marshal as [] rather than null.
func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
