package schedsim

import (
	"bytes"
	"embed"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/hwmodels/calibrate"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/traces"
	"github.com/schedsim/schedsim/workload"
)

//go:embed defaults/default.yaml defaults/llnl-thunder-2007-slice.swf.gz
var defaults embed.FS

// Default returns the embedded default scenario.
func Default() *Scenario {
	data, err := defaults.ReadFile("defaults/default.yaml")
	if err != nil {
		panic("scenario: embedded default missing: " + err.Error())
	}
	s, err := Parse(data, "")
	if err != nil {
		panic("scenario: embedded default invalid: " + err.Error())
	}
	s.Path = ""
	return s
}

// thunderSlice describes the embedded trace for run headers.
const thunderSlice = "embedded slice of LLNL-Thunder-2007-1.1-cln.swf (jobs 91558-96898, May 2007; " +
	"Parallel Workloads Archive, Feitelson, Tsafrir & Krakov, JPDC 2014; log courtesy of Moe Jette, LLNL)"

// Run is a scenario resolved into the values a simulation needs.
type Run struct {
	Name        string
	Cluster     *hwmodels.Cluster
	ClusterDesc string
	Trace       *workload.Trace
	Policy      sim.Policy
	Seed        uint64
	OutDir      string
	// Lifecycle is the controller settings, failures, node events and
	// reservations, resolved (see Config).
	Lifecycle Lifecycle
	// Runtime is the runtime model's scaling, nil when off (hardware.go).
	Runtime *sim.RuntimeScaling

	// Progress, when set, is called as the simulation advances
	// (sim.Config.Progress): for a progress bar.
	Progress func(now sim.Time, done, total int)
	// NoJobRows makes Analyze keep no per-job rows, for a run that
	// writes no per-job outputs (reports.SummaryOptions.NoJobRows).
	NoJobRows bool
	// StreamJobRows makes Analyze keep what makes the per-job rows again
	// instead of the rows, for a run whose only reader of them is
	// reports.OutDir.WriteRun (reports.SummaryOptions.StreamJobRows).
	StreamJobRows bool
	// TextOnly makes Analyze compute only what the text summary prints,
	// for a run whose only output is that text
	// (reports.SummaryOptions.TextOnly).
	TextOnly bool
	// Calibration is the applied cluster.calibration (nil without one),
	// read from CalibrationFile; CalibrationNotes say what of it could
	// not be applied.
	Calibration      *calibrate.Calibration
	CalibrationFile  string
	CalibrationNotes []string

	// scen is the scenario as built, with what Head and Calibrate change
	// after Build; text is its Effective rendering and notes the
	// calibration file's digest, which the recorded scenario carries.
	scen          Scenario
	text, notes   []byte
	sample        sim.Time
	maxNodeEvents int
}

// Build validates s, loads the cluster and trace and constructs the
// policy from reg.
func (s *Scenario) Build(reg policies.Registry) (*Run, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	text, _, err := s.Effective()
	if err != nil {
		return nil, err
	}
	r := &Run{Name: s.Name, Seed: s.Seed, OutDir: s.Resolve(s.Output.Dir), scen: *s, text: text, sample: sim.Time(s.Output.SampleSeconds()), maxNodeEvents: s.Limits.MaxNodeEvents}
	res, err := s.loadTrace()
	if err != nil {
		return nil, err
	}
	r.Trace = res.Trace
	if err := s.loadCluster(r, res.SWF); err != nil {
		return nil, err
	}
	workload.MapPartitions(r.Trace, s.Trace.PartitionMap)
	applyPartitionDefaults(r.Cluster, r.Trace)
	if r.Lifecycle, err = s.buildLifecycle(r.Cluster, r.Trace.Epoch); err != nil {
		return nil, err
	}
	if err := s.checkFailures(r.Cluster, r.Trace, r.Lifecycle.Failures); err != nil {
		return nil, err
	}
	s.applyRules(r.Cluster, r.Trace, &r.Lifecycle)
	if r.Runtime, err = s.buildRuntime(r.Cluster); err != nil {
		return nil, err
	}
	p, err := reg.New(s.Policy.Name, s.policyArgs)
	if err != nil {
		return nil, &Error{Path: s.pathOr("scenario"), Line: lineOf(s.root, "policy", "name"), Field: "policy", Msg: err.Error()}
	}
	// Begin now, not only when the run starts, so that a cluster setting
	// the policy cannot take (the slurm policy reads the cluster's
	// slurm.conf settings) is reported at the scenario's policy line.
	if _, err := p.Begin(sim.RunInfo{Cluster: r.Cluster, Jobs: r.Trace.Len()}); err != nil {
		return nil, &Error{Path: s.pathOr("scenario"), Line: lineOf(s.root, "policy", "name"), Field: "policy", Msg: err.Error()}
	}
	r.Policy = p
	if c := s.Cluster.Calibration; c != "" {
		if err := r.applyCalibration(s.Resolve(c)); err != nil {
			return nil, &Error{Path: s.pathOr("scenario"), Line: lineOf(s.root, "cluster", "calibration"), Field: "cluster.calibration", Msg: err.Error()}
		}
	}
	return r, nil
}

func (s *Scenario) pathOr(def string) string {
	if s.Path == "" {
		return def
	}
	return s.Path
}

// packAbove, when not 0, replaces the memory budget's count of jobs above
// which Build holds a trace's jobs packed (SetPackAbove).
var packAbove atomic.Int64

// SetPackAbove makes Build hold a read trace's jobs packed
// (workload.Packed) once more than n are read, whatever the memory
// budget; n < 0 never packs, 0 restores the budget's rule
// (traces.PackAboveForBudget). The outputs are the same either way:
// tests set it to check that, and to measure what packing costs.
func SetPackAbove(n int) { packAbove.Store(int64(n)) }

func (s *Scenario) traceOptions() (traces.Options, error) {
	o := traces.Options{
		Format:  s.Trace.Format,
		Lenient: s.Trace.Lenient,
		Sacct:   traces.SacctOptions{Delimiter: s.Trace.Sacct.Delimiter, Fields: s.Trace.Sacct.Fields, TimeZone: s.Trace.TimeZone},
		SWF:     traces.SWFOptions{ProcsPerNode: s.Trace.SWF.ProcsPerNode, ProcsPerGPU: s.Trace.SWF.ProcsPerGPU},
		Head:    s.readHead(),
		NoExtra: s.NoTraceExtra,
	}
	o.PackAbove = traces.PackAboveForBudget()
	if n := packAbove.Load(); n != 0 {
		o.PackAbove = int(n)
	}
	var m traces.CSVMap
	if p := s.Trace.CSV.Preset; p != "" {
		var ok bool
		if m, ok = traces.CSVPreset(p); !ok {
			return o, &Error{Path: s.pathOr("scenario"), Line: lineOf(s.root, "trace", "csv", "preset"), Field: "trace.csv.preset",
				Msg: fmt.Sprintf("unknown preset %q (want one of %s)", p, strings.Join(traces.CSVPresets(), ", "))}
		}
		if o.Format == "" && s.Trace.CSV.Map == "" {
			o.Format = p
		}
	}
	if s.Trace.CSV.Map != "" {
		var err error
		if m, err = traces.ParseCSVMap(s.Trace.CSV.Map, m); err != nil {
			return o, &Error{Path: s.pathOr("scenario"), Line: lineOf(s.root, "trace", "csv", "map"), Field: "trace.csv.map", Msg: err.Error()}
		}
	}
	m.TimeZone = s.Trace.TimeZone
	o.CSV = m
	return o, nil
}

// applyTransforms applies the trace section's transforms in the order
// filter, window, remap_gpu, scale_load.
// read is how many jobs the reader read (traces.Result.Read; 0 for a
// trace given in memory).
func (s *Scenario) applyTransforms(t *workload.Trace, read int) error {
	tf := s.Trace.Transforms
	bad := func(key string, err error) error {
		return &Error{Path: s.pathOr("scenario"), Line: lineOf(s.root, "trace", "transforms", key), Field: "trace.transforms." + key, Msg: err.Error()}
	}
	f := tf.Filter
	if len(f.Users)+len(f.Partitions)+len(f.States) > 0 {
		workload.Filter{Users: f.Users, Partitions: f.Partitions, States: f.States}.Apply(t)
	}
	if tf.Window.From != "" || tf.Window.To != "" {
		from, err := ParseWhen(tf.Window.From)
		if err != nil {
			return bad("window", err)
		}
		to, err := ParseWhen(tf.Window.To)
		if err != nil {
			return bad("window", err)
		}
		workload.Window(t, from, to)
	}
	if len(tf.RemapGPU) > 0 {
		sp := tf.Speedup
		if sp == 0 {
			sp = 1
		}
		if _, err := workload.RemapGPU(t, tf.RemapGPU, sp); err != nil {
			return bad("remap_gpu", err)
		}
	}
	if tf.ScaleLoad > 0 && tf.ScaleLoad != 1 {
		if err := s.checkScale(t.Len(), tf.ScaleLoad); err != nil {
			return err
		}
		seed := tf.ScaleSeed
		if seed == 0 {
			seed = s.Seed
		}
		if err := workload.ScaleLoad(t, tf.ScaleLoad, seed); err != nil {
			return bad("scale_load", err)
		}
	}
	if s.readHead() > 0 && read > t.Len() {
		// The reader cut the trace already (traces.Options.Head).
		t.Notes = append(t.Notes, headNote(t.Len(), read))
		return nil
	}
	headTrace(t, tf.Head)
	return nil
}

// readHead is the Options.Head the reader may apply: trace.transforms.head
// when no transform before it changes which jobs come first (filter,
// window, remap_gpu and scale_load run before the cut), else 0.
func (s *Scenario) readHead() int {
	tf := s.Trace.Transforms
	f := tf.Filter
	if len(f.Users)+len(f.Partitions)+len(f.States) > 0 || tf.Window.From != "" || tf.Window.To != "" ||
		len(tf.RemapGPU) > 0 || (tf.ScaleLoad > 0 && tf.ScaleLoad != 1) {
		return 0
	}
	return tf.Head
}

func headNote(n, total int) string {
	return fmt.Sprintf("trace.transforms.head %d (run --jobs): replayed the first %d of %d jobs (submit order)", n, n, total)
}

// headTrace cuts t to its first n jobs in submit order and says so in
// its notes; n <= 0, or at least its length, leaves it whole.
func headTrace(t *workload.Trace, n int) bool {
	total := t.Len()
	if n <= 0 || n >= total {
		return false
	}
	if t.Packed != nil {
		k := 0
		t.Edit(func(*workload.Job) bool { k++; return k <= n })
	} else {
		t.Jobs = slices.Clone(t.Jobs[:n]) // frees the rest
	}
	t.Notes = append(t.Notes, headNote(n, total))
	return true
}

// ParseWhen parses a time bound: "" (none, 0), Unix seconds,
// 2006-01-02, 2006-01-02T15:04:05 or RFC 3339 (UTC unless it says).
func ParseWhen(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02", time.RFC3339} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.Unix(), nil
		}
	}
	return 0, fmt.Errorf("%q: want Unix seconds, 2006-01-02 or 2006-01-02T15:04:05", v)
}

func (s *Scenario) loadTrace() (*traces.Result, error) {
	res, err := s.readTrace()
	if err != nil {
		return nil, err
	}
	if err := s.applyTransforms(res.Trace, res.Read); err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Scenario) readTrace() (*traces.Result, error) {
	opts, err := s.traceOptions()
	if err != nil {
		return nil, err
	}
	if t := s.Trace.Jobs; t != nil {
		cp := *t
		cp.Jobs = append([]workload.Job(nil), t.Jobs...)
		return &traces.Result{Trace: &cp}, nil
	}
	if s.Trace.Builtin != "" {
		data, err := defaults.ReadFile("defaults/llnl-thunder-2007-slice.swf.gz")
		if err != nil {
			return nil, err
		}
		opts.Format = "swf"
		res, err := traces.Read(bytes.NewReader(data), "llnl-thunder-2007-slice.swf.gz", opts)
		if err != nil {
			return nil, err
		}
		res.Trace.Source = thunderSlice
		return res, nil
	}
	return traces.Open(s.Resolve(s.Trace.File), opts)
}

func (s *Scenario) loadCluster(r *Run, hdr *traces.SWFHeader) error {
	switch {
	case s.Cluster.Spec != nil:
		r.Cluster, r.ClusterDesc = s.Cluster.Spec, "cluster "+s.Cluster.Spec.Name+" (given in Go)"
	case s.Cluster.File != "":
		c, err := hwmodels.LoadCluster(s.Resolve(s.Cluster.File))
		if err != nil {
			return err
		}
		r.Cluster, r.ClusterDesc = c, s.Cluster.File
	case !s.Cluster.Inline.IsZero():
		c, err := hwmodels.ParseCluster(s.Fragment(&s.Cluster.Inline), s.pathOr("scenario"))
		if err != nil {
			return err
		}
		r.Cluster, r.ClusterDesc = c, "inline in "+s.pathOr("scenario")
	case s.Cluster.Builtin == "example":
		r.Cluster, r.ClusterDesc = hwmodels.ExampleCluster(), "embedded example cluster"
	case s.Cluster.Builtin == "swf-header":
		if hdr == nil {
			return &Error{Path: s.pathOr("scenario"), Line: lineOf(s.root, "cluster", "builtin"), Field: "cluster.builtin",
				Msg: "swf-header needs an SWF trace"}
		}
		c, err := headerCluster(hdr, s.Trace.SWF, s.tracePath())
		if err != nil {
			return err
		}
		r.Cluster = c
		r.ClusterDesc = fmt.Sprintf("the machine the SWF header describes (MaxNodes %d, MaxProcs %d)", hdr.MaxNodes, hdr.MaxProcs)
	}
	return nil
}

// tracePath names the scenario's trace in messages.
func (s *Scenario) tracePath() string {
	switch {
	case s.Trace.File != "":
		return s.Resolve(s.Trace.File)
	case s.Trace.Builtin != "":
		return s.Trace.Builtin
	}
	return "trace"
}

// headerCluster builds the machine an SWF header describes: MaxNodes nodes
// sharing MaxProcs processors, with processors (or, mapped, GPUs) as the
// scheduled unit. The header's numbers are checked against what a
// cluster may hold (hwmodels.MaxClusterNodes nodes, MaxNodeCPUs CPUs and
// MaxNodeGPUs GPUs a node) before anything is built: the error names the
// trace, the header line and the bound.
func headerCluster(h *traces.SWFHeader, o SWF, path string) (*hwmodels.Cluster, error) {
	nodes, procs := h.MaxNodes, h.MaxProcs
	bad := func(key, format string, args ...any) error {
		line := 0
		for i, f := range h.Fields {
			if f.Key == key {
				line = i + 1 // the header is the file's leading lines
				break
			}
		}
		pos := path
		if line > 0 {
			pos = fmt.Sprintf("%s:%d", path, line)
		}
		return fmt.Errorf("%s: %s: %s (the machine --cluster header, cluster.builtin swf-header, builds from the SWF header; give a cluster spec instead)", pos, key, fmt.Sprintf(format, args...))
	}
	switch {
	case nodes <= 0 && procs <= 0:
		return nil, fmt.Errorf("%s: the SWF header gives neither MaxNodes nor MaxProcs (cluster.builtin swf-header needs one; give a cluster spec instead)", path)
	case nodes <= 0:
		if procs > hwmodels.MaxClusterNodes {
			return nil, bad("MaxProcs", "%d processors and no MaxNodes would be %d one-processor nodes, more than the %d a cluster may have", procs, procs, hwmodels.MaxClusterNodes)
		}
		nodes = procs
	case procs <= 0:
		procs = nodes
	}
	if procs < nodes {
		// CTC says "MaxNodes: 338 (batch partition; 512 total)" and
		// MaxProcs 338: one processor per node.
		nodes = procs
	}
	if nodes > hwmodels.MaxClusterNodes {
		return nil, bad("MaxNodes", "%d nodes, more than the %d a cluster may have", nodes, hwmodels.MaxClusterNodes)
	}
	ppn := procs / nodes // rounded up below; procs + nodes - 1 may overflow
	if procs%nodes != 0 {
		ppn++
	}
	if ppn > hwmodels.MaxNodeCPUs {
		return nil, bad("MaxProcs", "%d processors on %d nodes is %d a node, more than the %d a node may have", procs, nodes, ppn, hwmodels.MaxNodeCPUs)
	}
	if o.ProcsPerGPU > 0 {
		gpn := (ppn + o.ProcsPerGPU - 1) / o.ProcsPerGPU
		if gpn > hwmodels.MaxNodeGPUs {
			return nil, bad("MaxProcs", "%d processors a node at procs_per_gpu %d is %d GPUs a node, more than the %d a node may have", ppn, o.ProcsPerGPU, gpn, hwmodels.MaxNodeGPUs)
		}
		return hwmodels.UniformCluster("swf-header", nodes, int32(ppn), int32(gpn), 0), nil
	}
	return hwmodels.UniformCluster("swf-header", nodes, int32(ppn), 0, 0), nil
}

// applyPartitionDefaults gives jobs that ask for no CPUs or no memory the
// defaults of the partition they run in (its first listed partition the
// cluster has, else the default partition), as slurmctld fills a job
// request from the partition's DefCpuPerGPU, DefMemPerGPU and
// DefMemPerCPU: CPUs = GPUs × DefCpuPerGPU for a GPU job without CPUs;
// memory = GPUs × DefMemPerGPU for a GPU job, else CPUs × DefMemPerCPU
// (a CPU job without CPUs counts one a node, as the controller does). A
// trace note says how many jobs took them.
func applyPartitionDefaults(c *hwmodels.Cluster, t *workload.Trace) {
	found := false
	for i := range c.Partitions {
		p := &c.Partitions[i]
		found = found || p.DefCPUPerGPU > 0 || p.DefMemPerCPU > 0 || p.DefMemPerGPU > 0
	}
	if !found {
		return
	}
	const maxMem = int64(1) << 50 // far above any node; the controller rejects the job
	var cpuN, memN int
	t.Edit(func(j *workload.Job) bool {
		p := &c.Partitions[c.DefaultPartition]
		for name := range strings.SplitSeq(j.Partition, ",") {
			if pi := c.PartitionIndex(strings.TrimSpace(name)); pi >= 0 {
				p = &c.Partitions[pi]
				break
			}
		}
		r := &j.Request
		if r.GPUs > 0 && r.CPUs == 0 && p.DefCPUPerGPU > 0 {
			r.CPUs = int32(min(int64(r.GPUs)*int64(p.DefCPUPerGPU), math.MaxInt32))
			cpuN++
		}
		if r.MemMB != 0 {
			return true
		}
		switch {
		case r.GPUs > 0 && p.DefMemPerGPU > 0:
			r.MemMB = min(int64(r.GPUs), maxMem/p.DefMemPerGPU) * p.DefMemPerGPU
			memN++
		case p.DefMemPerCPU > 0 && (r.GPUs == 0 || p.DefMemPerGPU == 0):
			cpus := int64(r.CPUs)
			if cpus == 0 && r.GPUs == 0 {
				cpus = int64(max(r.Nodes, 1))
			}
			if cpus > 0 {
				r.MemMB = min(cpus, maxMem/p.DefMemPerCPU) * p.DefMemPerCPU
				memN++
			}
		}
		return true
	})
	if cpuN+memN > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("partition defaults: %d jobs took DefCpuPerGPU CPUs, %d jobs DefMemPerGPU or DefMemPerCPU memory", cpuN, memN))
	}
}
