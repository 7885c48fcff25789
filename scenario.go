package schedsim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/hwmodels/strictyaml"
	"github.com/schedsim/schedsim/workload"
)

// Version is the scenario schema version this build reads.
const Version = 1

// Scenario is a decoded, validated scenario file. Relative paths in it are
// resolved against the directory of the file.
type Scenario struct {
	Version int     `yaml:"version"`
	Name    string  `yaml:"name"`
	Seed    uint64  `yaml:"seed"`
	Cluster Cluster `yaml:"cluster"`
	Trace   Trace   `yaml:"trace"`
	Policy  Policy  `yaml:"policy"`
	Output  Output  `yaml:"output"`

	// Job lifecycle (lifecycle.go): controller settings, node failures,
	// node events, advance reservations.
	Controller   Controller        `yaml:"controller"`
	Failures     *Failures         `yaml:"failures,omitempty"`
	NodeEvents   []NodeEventSpec   `yaml:"node_events"`
	Reservations []ReservationSpec `yaml:"reservations"`

	// JobRules set per-job submission options (checkpoint interval,
	// array throttle, requeue) of the jobs they match (rules.go).
	JobRules []JobRule `yaml:"job_rules"`

	// Limits bound what in-range values may make a run do (limits.go).
	Limits Limits `yaml:"limits"`

	// Runtime says whether the runtime model changes job runtimes
	// (hardware.go); off by default.
	Runtime Runtime `yaml:"runtime"`

	// Path is the file the scenario came from ("" for the embedded one);
	// src is its text, for positions inside inline sections.
	Path string `yaml:"-"`
	// NoTraceExtra makes Build read the trace file without the columns
	// the replay does not interpret (workload.Job.Extra; see
	// traces.Options.NoExtra), which no run output shows: schedsim run
	// sets it. A trace given in Go (Trace.Jobs) keeps them.
	NoTraceExtra bool `yaml:"-"`
	src          []byte
	root         *yaml.Node
}

// Cluster names the cluster: exactly one of File, Builtin, Inline or
// Spec.
type Cluster struct {
	// File is a cluster spec YAML file (hwmodels schema).
	File string `yaml:"file"`
	// Builtin is "example" (the embedded example cluster) or "swf-header"
	// (the machine an SWF trace's header describes).
	Builtin string `yaml:"builtin"`
	// Inline is a cluster spec written in place (null is absent).
	Inline yaml.Node `yaml:"inline,omitempty"`
	// Spec, when set instead, is the cluster itself, built in Go (a
	// test, a program that makes its own cluster): Build uses it as is.
	// Not part of the file: a recorded scenario does not hold it.
	Spec *hwmodels.Cluster `yaml:"-"`
	// Calibration is a calibration file from `schedsim calibrate`
	// (hwmodels/calibrate): its speed ratios and GPU power replace the
	// datasheet defaults of the cluster. Kept when --cluster replaces
	// the rest of the section.
	Calibration string `yaml:"calibration"`
}

// Trace names the workload: exactly one of File or Builtin.
type Trace struct {
	File string `yaml:"file"`
	// Builtin is "llnl-thunder-slice", the embedded default trace.
	Builtin string `yaml:"builtin"`
	// Format is "sacct" or "swf"; empty means detect from content.
	Format  string `yaml:"format"`
	Lenient bool   `yaml:"lenient"`
	Sacct   Sacct  `yaml:"sacct"`
	SWF     SWF    `yaml:"swf"`
	// PartitionMap renames trace partitions onto cluster partitions
	// ("1": gpu); names not listed are kept.
	PartitionMap map[string]string `yaml:"partition_map"`
	// CSV maps the columns of a CSV trace: a preset (eagle, helios) and/or
	// a map "target=column[:unit],...".
	CSV TraceCSV `yaml:"csv"`
	// TimeZone is the IANA zone of the trace's wall-clock times (sacct,
	// CSV); empty reads them as UTC.
	TimeZone string `yaml:"time_zone"`
	// Transforms are applied after reading, in the order filter, window,
	// remap_gpu, scale_load.
	Transforms TraceTransforms `yaml:"transforms"`
	// RecordedGPU is the GPU model (catalog name, "a100-sxm-80gb") the
	// trace was recorded on, for the runtime model's speed ratio; jobs
	// that request a GPU type were recorded on that type's model.
	RecordedGPU string `yaml:"recorded_gpu"`
	// Jobs, when set, is the workload itself, built in memory (the
	// conformance package builds it from a real-Slurm record): it is used
	// as is, File only names where it came from, and the reader options
	// and transforms do not apply. Not part of the file.
	Jobs *workload.Trace `yaml:"-"`
}

// TraceCSV holds the column map of a CSV trace.
type TraceCSV struct {
	Preset string `yaml:"preset"`
	Map    string `yaml:"map"`
}

// TraceTransforms are trace transforms (workload package).
type TraceTransforms struct {
	// Filter keeps jobs of these users, partitions, states; From and To
	// bound submits (Unix seconds or 2006-01-02[T15:04:05] UTC).
	Filter struct {
		Users      []string `yaml:"users"`
		Partitions []string `yaml:"partitions"`
		States     []string `yaml:"states"`
	} `yaml:"filter"`
	Window struct {
		From string `yaml:"from"`
		To   string `yaml:"to"`
	} `yaml:"window"`
	// RemapGPU moves jobs between GPU types ("a100": h100), dividing
	// their runtimes by Speedup (default 1).
	RemapGPU map[string]string `yaml:"remap_gpu"`
	Speedup  float64           `yaml:"speedup"`
	// ScaleLoad multiplies the arrival rate (0 or 1: unchanged), drawing
	// with ScaleSeed (default: the scenario seed).
	ScaleLoad float64 `yaml:"scale_load"`
	ScaleSeed uint64  `yaml:"scale_seed"`
	// Head keeps only the first Head jobs in submit order, after the
	// other transforms (0: all), for a quick look at a long trace
	// (run --jobs).
	Head int `yaml:"head"`
}

// Sacct holds sacct reader options.
type Sacct struct {
	// Delimiter between fields; empty means detect ("|" or "☃").
	Delimiter string `yaml:"delimiter"`
	// Fields names the columns of headerless (sacct -n) output, in order.
	Fields []string `yaml:"fields"`
}

// SWF holds Standard Workload Format options.
type SWF struct {
	// ProcsPerNode maps processors to whole nodes (ceil); 0 leaves
	// processors as the scheduled unit.
	ProcsPerNode int `yaml:"procs_per_node"`
	// ProcsPerGPU maps a job's processors to ceil(procs/ProcsPerGPU) GPUs,
	// for replaying a CPU log on a GPU cluster; 0 keeps CPUs.
	ProcsPerGPU int `yaml:"procs_per_gpu"`
}

// Policy names a scheduling policy and its parameters.
type Policy struct {
	Name string    `yaml:"name"`
	Args yaml.Node `yaml:"args,omitempty"`
}

// Output says where results go.
type Output struct {
	// Dir receives the outputs (summary.json, jobs.csv, jobs.parquet,
	// timeline.parquet, jobs.sacct, plots/, report.html); empty prints
	// the summary only.
	Dir string `yaml:"dir"`
	// SampleInterval is the timeline's bin width as a Go duration of
	// whole seconds ("1h", "15m"); empty means one hour, widened to whole
	// hours so that a run has at most 2000 bins.
	SampleInterval string `yaml:"sample_interval"`
}

// SampleSeconds returns output.sample_interval in seconds, 0 when unset.
// Validate has checked it.
func (o Output) SampleSeconds() int64 {
	d, err := time.ParseDuration(o.SampleInterval)
	if o.SampleInterval == "" || err != nil {
		return 0
	}
	return int64(d / time.Second)
}

// Error is a scenario error with its position.
type Error struct {
	Path  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads and validates a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse decodes and validates a scenario from data; path names it in errors
// and anchors relative paths.
func Parse(data []byte, path string) (*Scenario, error) {
	root, err := strictyaml.Parse(data)
	if err != nil {
		return nil, yamlError(path, err)
	}
	if root == nil {
		return nil, &Error{Path: path, Msg: "empty scenario (want at least version: 1)"}
	}
	return fromRoot(data, path, root)
}

// DecodeStrict decodes YAML text (one document) into v strictly
// (strictyaml.Decode: unknown and repeated keys, values that do not fit),
// with errors as *Error at path and the line.
func DecodeStrict(data []byte, path string, v any) error {
	return yamlError(path, strictyaml.Decode(data, v))
}

// yamlError gives a strictyaml error its file.
func yamlError(path string, err error) error {
	var e *strictyaml.Error
	if errors.As(err, &e) {
		return &Error{Path: path, Line: e.Line, Field: e.Field, Msg: e.Msg}
	}
	if err != nil {
		return &Error{Path: path, Msg: err.Error()}
	}
	return nil
}

// lineOf finds the line of the value at a key path under a mapping node, or
// of the deepest key found.
func lineOf(n *yaml.Node, keys ...string) int {
	path := make([]any, len(keys))
	for i, k := range keys {
		path[i] = k
	}
	return strictyaml.Line(n, path...)
}

var (
	clusterBuiltins = []string{"example", "swf-header"}
	traceBuiltins   = []string{"llnl-thunder-slice"}
	formats         = []string{"sacct", "swf", "csv", "eagle", "helios", "alibaba", "philly", "arrow", "parquet"}
)

// Validate checks the scenario's constraints; Parse calls it, and callers
// that change a scenario after parsing (command-line overrides) call it
// again. Errors carry the file line where the scenario came from a file.
func (s *Scenario) Validate() error {
	path := s.Path
	if path == "" {
		path = "scenario"
	}
	bad := func(msg string, keys ...string) error {
		return &Error{Path: path, Line: lineOf(s.root, keys...), Field: strings.Join(keys, "."), Msg: msg}
	}
	if s.Version != Version {
		return bad(fmt.Sprintf("must be %d, got %d", Version, s.Version), "version")
	}
	if isNullNode(&s.Cluster.Inline) {
		s.Cluster.Inline = yaml.Node{} // "inline: null", as older runs saved it
	}
	if isNullNode(&s.Policy.Args) {
		s.Policy.Args = yaml.Node{}
	}
	inline := !s.Cluster.Inline.IsZero()
	switch n := btoi(s.Cluster.File != "") + btoi(s.Cluster.Builtin != "") + btoi(inline) + btoi(s.Cluster.Spec != nil); {
	case n == 0:
		return bad("give one of file, builtin or inline", "cluster")
	case n > 1:
		return bad("give only one of file, builtin or inline", "cluster")
	}
	if s.Cluster.Builtin != "" && !slices.Contains(clusterBuiltins, s.Cluster.Builtin) {
		return bad(fmt.Sprintf("unknown builtin %q (want %s)", s.Cluster.Builtin, strings.Join(clusterBuiltins, ", ")), "cluster", "builtin")
	}
	switch {
	case s.Trace.File == "" && s.Trace.Builtin == "" && s.Trace.Jobs == nil:
		return bad("give one of file or builtin", "trace")
	case s.Trace.File != "" && s.Trace.Builtin != "":
		return bad("give only one of file or builtin", "trace")
	}
	if s.Trace.Builtin != "" && !slices.Contains(traceBuiltins, s.Trace.Builtin) {
		return bad(fmt.Sprintf("unknown builtin %q (want %s)", s.Trace.Builtin, strings.Join(traceBuiltins, ", ")), "trace", "builtin")
	}
	if s.Trace.Format != "" && !slices.Contains(formats, s.Trace.Format) {
		return bad(fmt.Sprintf("unknown format %q (want %s, or leave empty to detect)", s.Trace.Format, strings.Join(formats, ", ")), "trace", "format")
	}
	if !(s.Trace.SWF.ProcsPerNode >= 0) {
		return bad(fmt.Sprintf("must be >= 0, got %d", s.Trace.SWF.ProcsPerNode), "trace", "swf", "procs_per_node")
	}
	if !(s.Trace.SWF.ProcsPerGPU >= 0) {
		return bad(fmt.Sprintf("must be >= 0, got %d", s.Trace.SWF.ProcsPerGPU), "trace", "swf", "procs_per_gpu")
	}
	if tf := s.Trace.Transforms; !(tf.ScaleLoad >= 0 && tf.ScaleLoad <= 1000) {
		return bad(fmt.Sprintf("must be in [0, 1000], got %v", tf.ScaleLoad), "trace", "transforms", "scale_load")
	}
	if tf := s.Trace.Transforms; tf.Head < 0 {
		return bad(fmt.Sprintf("must be >= 0, got %d", tf.Head), "trace", "transforms", "head")
	}
	if tf := s.Trace.Transforms; !(tf.Speedup >= 0) {
		return bad(fmt.Sprintf("must be >= 0, got %v", tf.Speedup), "trace", "transforms", "speedup")
	}
	if s.Trace.SWF.ProcsPerGPU > 0 && s.Trace.SWF.ProcsPerNode > 0 {
		return bad("procs_per_gpu and procs_per_node exclude each other", "trace", "swf")
	}
	if si := s.Output.SampleInterval; si != "" {
		if d, err := time.ParseDuration(si); err != nil || d < time.Second || d%time.Second != 0 {
			return bad(fmt.Sprintf("%q: want a duration of whole seconds, at least 1s (\"1h\", \"15m\")", si), "output", "sample_interval")
		}
	}
	if s.Policy.Name == "" {
		return bad("missing (want a policy name such as easy or fifo)", "policy", "name")
	}
	if err := s.validateRuntime(); err != nil {
		return err
	}
	if err := s.validateRules(); err != nil {
		return err
	}
	if err := s.validateLimits(); err != nil {
		return err
	}
	return s.validateLifecycle()
}

// isNullNode reports whether n is a YAML null ("key: null" or "key:").
func isNullNode(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Resolve returns p relative to the scenario file's directory, unless it
// is absolute or the scenario has no file.
func (s *Scenario) Resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || s.Path == "" {
		return p
	}
	return filepath.Join(filepath.Dir(s.Path), p)
}

// Fragment returns the scenario text of an inline section (cluster.inline,
// policy.args) with every line outside it blanked, so a parser of the
// section reports line numbers of the scenario file itself. It returns nil
// for an absent section. For a scenario built in Go (no file text), it
// returns the section's YAML.
func (s *Scenario) Fragment(n *yaml.Node) []byte {
	if n.IsZero() {
		return nil
	}
	if s.src == nil {
		text, err := yaml.Marshal(n)
		if err != nil {
			return nil
		}
		return text
	}
	first, last := n.Line, maxLine(n)
	lines := strings.SplitAfter(string(s.src), "\n")
	var b strings.Builder
	for i, l := range lines {
		ln := i + 1
		if ln > last {
			break
		}
		switch {
		case ln < first:
			b.WriteString("\n")
		case ln == first:
			// Blank the "key: " before the value on its first line.
			col := max(n.Column-1, 0)
			if col > len(l) {
				col = len(l)
			}
			b.WriteString(strings.Repeat(" ", col) + l[col:])
		default:
			b.WriteString(l)
		}
	}
	return []byte(b.String())
}

func maxLine(n *yaml.Node) int {
	m := n.Line
	for _, c := range n.Content {
		m = max(m, maxLine(c))
	}
	return m
}
