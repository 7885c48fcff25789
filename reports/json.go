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
	ConfigHash    string          `json:"config_hash"`
	Schedsim      jsonBuild       `json:"schedsim"`
	Cluster       jsonCluster     `json:"cluster"`
	Trace         jsonTrace       `json:"trace"`
	Run           jsonRun         `json:"run"`
	Jobs          jsonJobs        `json:"jobs"`
	Window        jsonWindow      `json:"window"`
	Utilization   jsonUtilization `json:"utilization"`
	WaitDef       string          `json:"wait_definition"`
	Wait          jsonStats       `json:"wait_s"`
	Slowdown      jsonSlowdown    `json:"bounded_slowdown"`
	Partitions    []jsonPartition `json:"partitions"`
	Response      jsonStats       `json:"response_s"`
	WaitBy        jsonWaitBy      `json:"wait_by"`
	Throughput    jsonThroughput  `json:"throughput"`
	Fairness      jsonFairness    `json:"fairness"`
	Fragmentation jsonFrag        `json:"fragmentation"`
	Preemption    jsonPreemption  `json:"preemption"`
	Failures      jsonFailures    `json:"failures"`
	Reasons       []jsonReason    `json:"pending_reasons"`
	Timeline      jsonTimeline    `json:"timeline"`
	// Energy is present only when the cluster has a power model.
	Energy *jsonEnergy `json:"energy,omitempty"`
}

// jsonBuild is the schedsim build that wrote the file.
type jsonBuild struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Modified bool   `json:"modified"`
}

type jsonEnergy struct {
	ITKWh              fixed  `json:"it_kwh"`
	FacilityKWh        fixed  `json:"facility_kwh"`
	JobsKWh            fixed  `json:"jobs_kwh"`
	IdleKWh            fixed  `json:"idle_kwh"`
	PUE                fixed  `json:"pue"`
	PricePerKWh        fixed  `json:"price_per_kwh"`
	Cost               fixed  `json:"cost"`
	Currency           string `json:"currency"`
	MeanPowerKW        fixed  `json:"mean_power_kw"`
	PeakPowerKW        fixed  `json:"peak_power_kw"`
	SuspendedNodeHours fixed  `json:"suspended_node_hours"`
	Suspends           int    `json:"suspends"`
}

type jsonGroup struct {
	Name string    `json:"name"`
	Jobs int       `json:"jobs"`
	Wait jsonStats `json:"wait_s"`
}

type jsonWaitBy struct {
	User      []jsonGroup `json:"user"`
	Account   []jsonGroup `json:"account"`
	SizeClass []jsonGroup `json:"size_class"`
	GPUType   []jsonGroup `json:"gpu_type"`
}

type jsonThroughput struct {
	FinishedJobs   int   `json:"finished_jobs"`
	JobsPerDay     fixed `json:"jobs_per_day"`
	GPUHours       fixed `json:"gpu_hours"`
	GPUHoursPerDay fixed `json:"gpu_hours_per_day"`
}

type jsonAccount struct {
	Name     string `json:"name"`
	GPUHours fixed  `json:"gpu_hours"`
	Share    fixed  `json:"share"`
	Target   fixed  `json:"target"`
}

type jsonFairness struct {
	Users            int           `json:"users"`
	JainUserSlowdown fixed         `json:"jain_user_slowdown"`
	Accounts         []jsonAccount `json:"accounts"`
}

type jsonFrag struct {
	Samples              int   `json:"samples"`
	MeanFreeGPUs         fixed `json:"mean_free_gpus"`
	MeanUnusableFreeGPUs fixed `json:"mean_unusable_free_gpus"`
	UnusableFraction     fixed `json:"unusable_fraction"`
	// MIG is present only when the cluster has MIG GPUs.
	MIG *jsonMIGFrag `json:"mig,omitempty"`
}

type jsonMIGFrag struct {
	MeanFreeSlices     fixed `json:"mean_free_slices"`
	MeanUnusableSlices fixed `json:"mean_unusable_slices"`
	UnusableFraction   fixed `json:"unusable_fraction"`
}

type jsonPreemption struct {
	Preemptions int `json:"preemptions"`
	Requeues    int `json:"requeues"`
}

type jsonFailures struct {
	NodeFailRuns int   `json:"node_fail_runs"`
	LostGPUHours fixed `json:"lost_gpu_hours"`
}

type jsonReason struct {
	Reason string `json:"reason"`
	JobS   int64  `json:"job_s"`
}

type jsonTimeline struct {
	IntervalS int64 `json:"interval_s"`
	Samples   int   `json:"samples"`
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
	Preempted  int `json:"preempted"`
	NodeFail   int `json:"node_fail"`
	// The states the trace records (sim's outcome.go), after the others
	// so that the older keys keep their places.
	Failed      int `json:"failed"`
	OutOfMemory int `json:"out_of_memory"`
	BootFail    int `json:"boot_fail"`
	Deadline    int `json:"deadline"`
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
	// GPUEffective is present only when the runtime model stretched a
	// run (EffectiveGPU.StretchedRuns > 0).
	GPUEffective *jsonEffective `json:"gpu_effective,omitempty"`
}

type jsonEffective struct {
	Fraction       fixed `json:"fraction"`
	EffectiveS     int64 `json:"effective_s"`
	LostToStretchS int64 `json:"lost_to_stretch_s"`
	StretchedRuns  int   `json:"stretched_runs"`
}

type jsonStats struct {
	Count int   `json:"count"`
	Mean  fixed `json:"mean"`
	P50   fixed `json:"p50"`
	P90   fixed `json:"p90"`
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
		ConfigHash:    s.ConfigHash,
		Schedsim:      jsonBuild{Version: s.Build.Version, Revision: s.Build.Revision, Modified: s.Build.Modified},
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
		WaitDef: s.WaitDefinition,
		Wait:    jsonStatsOf(s.Wait),
		Slowdown: jsonSlowdown{
			TauS:  int64(s.Slowdown.Tau),
			Count: s.Slowdown.Count,
			Mean:  fixed(s.Slowdown.Mean),
			Max:   fixed(s.Slowdown.Max),
		},
		Partitions: []jsonPartition{},
		Response:   jsonStatsOf(s.Response),
		WaitBy: jsonWaitBy{
			User:      jsonGroups(s.WaitBy.Users),
			Account:   jsonGroups(s.WaitBy.Accounts),
			SizeClass: jsonGroups(s.WaitBy.SizeClasses),
			GPUType:   jsonGroups(s.WaitBy.GPUTypes),
		},
		Throughput: jsonThroughput{
			FinishedJobs:   s.Throughput.Finished,
			JobsPerDay:     fixed(s.Throughput.JobsPerDay),
			GPUHours:       fixed(s.Throughput.GPUHours),
			GPUHoursPerDay: fixed(s.Throughput.GPUHoursPerDay),
		},
		Fairness: jsonFairness{
			Users:            s.Fairness.Users,
			JainUserSlowdown: fixed(s.Fairness.JainUserSlowdown),
			Accounts:         []jsonAccount{},
		},
		Fragmentation: jsonFrag{
			Samples:              s.Fragmentation.Samples,
			MeanFreeGPUs:         fixed(s.Fragmentation.MeanFreeGPUs),
			MeanUnusableFreeGPUs: fixed(s.Fragmentation.MeanUnusableFreeGPUs),
			UnusableFraction:     fixed(s.Fragmentation.UnusableFraction),
		},
		Preemption: jsonPreemption{Preemptions: s.Disruption.Preemptions, Requeues: s.Disruption.Requeues},
		Failures: jsonFailures{
			NodeFailRuns: s.Disruption.NodeFailRuns,
			LostGPUHours: fixed(float64(s.Disruption.LostGPUSeconds) / 3600),
		},
		Reasons:  []jsonReason{},
		Timeline: jsonTimeline{IntervalS: int64(s.SampleInterval), Samples: s.Samples},
	}
	if e := s.GPUEffective; e.StretchedRuns > 0 {
		j.Utilization.GPUEffective = &jsonEffective{
			Fraction: fixed(e.Fraction), EffectiveS: e.Effective, LostToStretchS: e.LostToStretch, StretchedRuns: e.StretchedRuns,
		}
	}
	if f := s.Fragmentation; f.MIG {
		j.Fragmentation.MIG = &jsonMIGFrag{
			MeanFreeSlices:     fixed(f.MeanFreeMIGSlices),
			MeanUnusableSlices: fixed(f.MeanUnusableMIGSlices),
			UnusableFraction:   fixed(f.MIGUnusableFraction),
		}
	}
	if e := s.Energy; e.Modeled {
		j.Energy = &jsonEnergy{
			ITKWh: fixed(e.ITKWh), FacilityKWh: fixed(e.FacilityKWh), JobsKWh: fixed(e.JobsKWh), IdleKWh: fixed(e.IdleKWh),
			PUE: fixed(e.PUE), PricePerKWh: fixed(e.PricePerKWh), Cost: fixed(e.Cost), Currency: e.Currency,
			MeanPowerKW: fixed(e.MeanPowerKW), PeakPowerKW: fixed(e.PeakPowerKW),
			SuspendedNodeHours: fixed(float64(e.SuspendedNodeSeconds) / 3600), Suspends: e.Suspends,
		}
	}
	for _, a := range s.Fairness.Accounts {
		j.Fairness.Accounts = append(j.Fairness.Accounts, jsonAccount{
			Name: a.Name, GPUHours: fixed(float64(a.GPUSeconds) / 3600), Share: fixed(a.Share), Target: fixed(a.Target),
		})
	}
	for _, r := range s.PendingReasons {
		j.Reasons = append(j.Reasons, jsonReason{Reason: r.Reason, JobS: r.JobSeconds})
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
		Preempted:  c.Preempted,
		NodeFail:   c.NodeFail,

		Failed:      c.Failed,
		OutOfMemory: c.OutOfMemory,
		BootFail:    c.BootFail,
		Deadline:    c.Deadline,
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
		P90:   fixed(st.P90),
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

func jsonGroups(gs []GroupStats) []jsonGroup {
	out := []jsonGroup{}
	for _, g := range gs {
		out = append(out, jsonGroup{Name: g.Name, Jobs: g.Jobs, Wait: jsonStatsOf(g.Wait)})
	}
	return out
}
