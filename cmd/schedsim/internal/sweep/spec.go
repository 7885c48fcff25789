package sweep

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/hwmodels/strictyaml"
	"github.com/schedsim/schedsim/policies/catalog"
)

// Version is the sweep file schema version this build reads.
const Version = 1

// File is a decoded sweep file.
type File struct {
	Version int       `yaml:"version"`
	Name    string    `yaml:"name"`
	Base    yaml.Node `yaml:"base"`
	Grid    Grid      `yaml:"grid"`
	Output  Output    `yaml:"output"`
}

// Grid holds the swept axes. An absent axis takes the base scenario's
// value. Scenarios are expanded clusters × policies × load scales × seeds,
// the seed varying fastest.
type Grid struct {
	Clusters   []ClusterVariant `yaml:"clusters"`
	Policies   []PolicyVariant  `yaml:"policies"`
	LoadScales []float64        `yaml:"load_scales"`
	Seeds      Seeds            `yaml:"seeds"`
}

// ClusterVariant is a named cluster: exactly one of File, Builtin or
// Inline, as in a scenario's cluster section.
type ClusterVariant struct {
	Name    string    `yaml:"name"`
	File    string    `yaml:"file"`
	Builtin string    `yaml:"builtin"`
	Inline  yaml.Node `yaml:"inline"`
}

// PolicyVariant is a policy and its parameters under a label (default:
// the policy's name).
type PolicyVariant struct {
	Label string    `yaml:"label"`
	Name  string    `yaml:"name"`
	Args  yaml.Node `yaml:"args"`
}

// Seeds is a list of seeds, written as a YAML list ([1, 2, 3]) or as a
// range ({from: 1, count: 10}).
type Seeds struct {
	List []uint64
	line int
}

// UnmarshalYAML reads either form.
func (s *Seeds) UnmarshalYAML(n *yaml.Node) error {
	s.line = n.Line
	switch n.Kind {
	case yaml.SequenceNode:
		return n.Decode(&s.List)
	case yaml.MappingNode:
		var r struct {
			From  uint64 `yaml:"from"`
			Count int    `yaml:"count"`
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k != "from" && k != "count" {
				return strictyaml.Errorf(n.Content[i], "unknown key %q (want from, count)", k)
			}
		}
		if err := n.Decode(&r); err != nil {
			return err
		}
		if !(r.Count >= 1 && r.Count <= 100000) {
			return strictyaml.Errorf(n, "count must be in [1, 100000], got %d", r.Count)
		}
		for i := range r.Count {
			s.List = append(s.List, r.From+uint64(i))
		}
		return nil
	}
	return strictyaml.Errorf(n, "want a list of seeds or {from: N, count: K}")
}

// Output says where the sweep's results go.
type Output struct {
	// Dir receives runs/ (one directory per scenario), sweep.parquet and
	// plots/; relative to the sweep file. Default: the sweep file's name
	// without its extension, plus "-out", next to it.
	Dir string `yaml:"dir"`
	// Plots lists the metrics to plot against each swept parameter
	// (default DefaultPlotMetrics).
	Plots []string `yaml:"plots"`
	// SampleInterval is each run's output.sample_interval.
	SampleInterval string `yaml:"sample_interval"`
}

// Sweep is a validated sweep file expanded into its points.
type Sweep struct {
	Path   string
	Name   string
	Hash   string // sha256 of the sweep file's bytes
	OutDir string // resolved output directory
	Plots  []string
	Points []Point
	// Axes lists the swept parameters (those with more than one value), in
	// the order cluster, policy, load_scale; seeds are bands, not axes.
	Axes []string
	src  []byte
}

// Point is one scenario of the sweep.
type Point struct {
	Index      int
	Name       string // "cluster=big/policy=easy/load=0.8/seed=3", swept axes only
	Dir        string // under OutDir/runs, from Name with unsafe characters replaced
	Cluster    string // cluster variant name ("base" when not swept)
	Policy     string // policy label
	PolicyName string // the policy's registered name
	LoadScale  float64
	Seed       uint64
	Scenario   *scenario.Scenario
	Hash       string // config hash of Scenario (scenario.Effective)
}

// Error is a sweep file error with its position.
type Error = scenario.Error

// Load reads, validates and expands a sweep file.
func Load(path string) (*Sweep, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse validates and expands a sweep file's text; path names it in errors
// and anchors relative paths.
func Parse(data []byte, path string) (*Sweep, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if err := scenario.DecodeStrict(data, path, &File{}); err != nil {
			return nil, err
		}
		return nil, &Error{Path: path, Msg: err.Error()}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{Path: path, Msg: "empty sweep file (want at least version: 1 and base:)"}
	}
	root := doc.Content[0]
	var f File
	if err := scenario.DecodeStrict(data, path, &f); err != nil {
		return nil, err
	}
	bad := func(msg string, keys ...string) error {
		return &Error{Path: path, Line: lineOf(root, keys...), Field: strings.Join(keys, "."), Msg: msg}
	}
	if f.Version != Version {
		return nil, bad(fmt.Sprintf("must be %d, got %d", Version, f.Version), "version")
	}
	if f.Base.IsZero() {
		return nil, bad("missing (want a scenario: cluster, trace, policy, ...)", "base")
	}
	if f.Base.Kind != yaml.MappingNode {
		return nil, bad("want a mapping (a scenario)", "base")
	}
	if err := scenario.CheckKeys(path, &f.Base, reflect.TypeFor[scenario.Scenario](), "base"); err != nil {
		return nil, err
	}
	if v := mapGet(&f.Base, "output"); v != nil && mapGet(v, "dir") != nil {
		return nil, bad("set the sweep's output.dir, not the base scenario's", "base", "output", "dir")
	}
	base := cloneNode(&f.Base)
	if mapGet(base, "version") == nil {
		mapSet(base, "version", scalar(strconv.Itoa(scenario.Version), base.Line))
	}
	if f.Output.SampleInterval != "" {
		out := mapGet(base, "output")
		if out == nil {
			out = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: base.Line}
			mapSet(base, "output", out)
		}
		mapSet(out, "sample_interval", str(f.Output.SampleInterval, lineOf(root, "output", "sample_interval")))
	}
	// The base alone must be a valid scenario.
	bs, err := scenario.FromNode(data, path, base)
	if err != nil {
		return nil, err
	}

	g := f.Grid
	gridNode := mapGet(root, "grid")
	// Cluster variants.
	type clusterAxis struct {
		name string
		node *yaml.Node // the cluster section
	}
	clusters := []clusterAxis{{name: "base", node: mapGet(base, "cluster")}}
	if g.Clusters != nil {
		if len(g.Clusters) == 0 {
			return nil, bad("empty list (leave it out to use the base cluster)", "grid", "clusters")
		}
		clusters = clusters[:0]
		seqNode := mapGet(gridNode, "clusters")
		for i, c := range g.Clusters {
			item := seqNode.Content[i]
			at := func(msg string) error {
				return &Error{Path: path, Line: item.Line, Field: fmt.Sprintf("grid.clusters[%d]", i), Msg: msg}
			}
			if c.Name == "" {
				return nil, at("missing name")
			}
			for _, prev := range clusters {
				if prev.name == c.Name {
					return nil, at(fmt.Sprintf("duplicate name %q", c.Name))
				}
			}
			sec := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: item.Line, Column: item.Column}
			for j := 0; j+1 < len(item.Content); j += 2 {
				if item.Content[j].Value != "name" {
					sec.Content = append(sec.Content, item.Content[j], item.Content[j+1])
				}
			}
			clusters = append(clusters, clusterAxis{name: c.Name, node: sec})
		}
	}
	// Policy variants.
	type policyAxis struct {
		label, name string
		node        *yaml.Node
	}
	pols := []policyAxis{{label: bs.Policy.Name, name: bs.Policy.Name, node: mapGet(base, "policy")}}
	if g.Policies != nil {
		if len(g.Policies) == 0 {
			return nil, bad("empty list (leave it out to use the base policy)", "grid", "policies")
		}
		pols = pols[:0]
		seqNode := mapGet(gridNode, "policies")
		for i, p := range g.Policies {
			item := seqNode.Content[i]
			at := func(msg string) error {
				return &Error{Path: path, Line: item.Line, Field: fmt.Sprintf("grid.policies[%d]", i), Msg: msg}
			}
			if p.Name == "" {
				return nil, at("missing name (the policy: fifo, easy, conservative, slurm)")
			}
			label := p.Label
			if label == "" {
				label = p.Name
			}
			for _, prev := range pols {
				if prev.label == label {
					return nil, at(fmt.Sprintf("duplicate label %q (give each variant of a policy its own label)", label))
				}
			}
			sec := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: item.Line, Column: item.Column}
			for j := 0; j+1 < len(item.Content); j += 2 {
				if item.Content[j].Value != "label" {
					sec.Content = append(sec.Content, item.Content[j], item.Content[j+1])
				}
			}
			pols = append(pols, policyAxis{label: label, name: p.Name, node: sec})
		}
	}
	// Load scales.
	baseLoad := bs.Trace.Transforms.ScaleLoad
	if baseLoad == 0 {
		baseLoad = 1
	}
	loads := []float64{baseLoad}
	if g.LoadScales != nil {
		if len(g.LoadScales) == 0 {
			return nil, bad("empty list (leave it out to use the base load)", "grid", "load_scales")
		}
		loads = g.LoadScales
		for i, l := range loads {
			if !(l > 0 && l <= 1000) {
				return nil, bad(fmt.Sprintf("load_scales[%d]: %v: must be in (0, 1000]", i, l), "grid", "load_scales")
			}
			if slices.Contains(loads[:i], l) {
				return nil, bad(fmt.Sprintf("load_scales[%d]: %v listed twice", i, l), "grid", "load_scales")
			}
		}
	}
	// Seeds.
	seeds := []uint64{bs.Seed}
	if mapGet(gridNode, "seeds") != nil {
		if len(g.Seeds.List) == 0 {
			return nil, bad("empty list (leave it out to use the base seed)", "grid", "seeds")
		}
		seeds = g.Seeds.List
		for i, s := range seeds {
			if slices.Contains(seeds[:i], s) {
				return nil, bad(fmt.Sprintf("seed %d listed twice", s), "grid", "seeds")
			}
		}
	}
	// Plots.
	plots := f.Output.Plots
	if plots == nil {
		plots = DefaultPlotMetrics
	}
	for _, m := range plots {
		if metricIndex(m) < 0 {
			return nil, bad(fmt.Sprintf("unknown metric %q (want one of %s)", m, strings.Join(MetricNames(), ", ")), "output", "plots")
		}
	}

	sw := &Sweep{Path: path, Name: f.Name, Hash: hashBytes(data), Plots: plots, src: data}
	if len(clusters) > 1 {
		sw.Axes = append(sw.Axes, ParamCluster)
	}
	if len(pols) > 1 {
		sw.Axes = append(sw.Axes, ParamPolicy)
	}
	if len(loads) > 1 {
		sw.Axes = append(sw.Axes, ParamLoad)
	}
	dir := f.Output.Dir
	if dir == "" {
		dir = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)) + "-out"
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(path), dir)
	}
	sw.OutDir = dir

	dirs := map[string]string{}
	for _, c := range clusters {
		for _, p := range pols {
			for _, l := range loads {
				for _, seed := range seeds {
					pt := Point{Index: len(sw.Points), Cluster: c.name, Policy: p.label, PolicyName: p.name, LoadScale: l, Seed: seed}
					var parts, dparts []string
					add := func(k, v string) {
						parts = append(parts, k+"="+v)
						dparts = append(dparts, safeName(k+"="+v))
					}
					if len(clusters) > 1 {
						add("cluster", c.name)
					}
					if len(pols) > 1 {
						add("policy", p.label)
					}
					if len(loads) > 1 {
						add("load", formatFloat(l))
					}
					if len(seeds) > 1 || len(parts) == 0 {
						add("seed", strconv.FormatUint(seed, 10))
					}
					pt.Name = strings.Join(parts, "/")
					pt.Dir = filepath.Join(dparts...)
					if other, ok := dirs[pt.Dir]; ok {
						return nil, bad(fmt.Sprintf("scenarios %q and %q would share the output directory runs/%s: rename a variant", other, pt.Name, pt.Dir), "grid")
					}
					dirs[pt.Dir] = pt.Name

					n := cloneNode(base)
					mapSet(n, "cluster", c.node)
					mapSet(n, "policy", p.node)
					mapSet(n, "seed", scalar(strconv.FormatUint(seed, 10), lineOf(root, "grid", "seeds")))
					mapSet(n, "name", str(pt.Name, base.Line))
					tr := mapGet(n, "trace")
					if tr != nil && (l != baseLoad || mapGet(mapGet(tr, "transforms"), "scale_load") != nil) {
						tr = cloneNode(tr)
						mapSet(n, "trace", tr)
						tf := mapGet(tr, "transforms")
						if tf == nil {
							tf = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: tr.Line}
						} else {
							tf = cloneNode(tf)
						}
						mapSet(tr, "transforms", tf)
						mapSet(tf, "scale_load", scalar(formatFloat(l), lineOf(root, "grid", "load_scales")))
					}
					s, err := scenario.FromNode(data, path, n)
					if err != nil {
						return nil, err
					}
					if err := s.CheckPolicy(catalog.Builtin()); err != nil {
						return nil, err
					}
					pt.Scenario = s
					if _, pt.Hash, err = s.Effective(); err != nil {
						return nil, err
					}
					sw.Points = append(sw.Points, pt)
				}
			}
		}
	}
	return sw, nil
}

// Parameters of a point, as sweep.parquet's columns and plot axes name them.
const (
	ParamCluster = "cluster"
	ParamPolicy  = "policy"
	ParamLoad    = "load_scale"
)

// safeName keeps a directory name portable: letters, digits and ._=+-
// stay, anything else becomes "_"; "." and ".." become "_".
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._=+-", c) >= 0
		if !ok {
			b[i] = '_'
		}
	}
	if s := string(b); s != "" && s != "." && s != ".." {
		return s
	}
	return "_"
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// scalar is a plain scalar whose type the decoder resolves (numbers);
// str is a string scalar.
func scalar(v string, line int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: v, Line: line}
}

func str(v string, line int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: line}
}

// mapGet returns the value of key k in mapping n, or nil.
func mapGet(n *yaml.Node, k string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i+1]
		}
	}
	return nil
}

// mapSet sets key k of mapping n to v (n's own Content is replaced, never
// a shared one).
func mapSet(n *yaml.Node, k string, v *yaml.Node) {
	content := slices.Clone(n.Content)
	for i := 0; i+1 < len(content); i += 2 {
		if content[i].Value == k {
			// A new key node, at the value's line, so that errors about
			// the key point where the value came from.
			content[i] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: v.Line}
			content[i+1] = v
			n.Content = content
			return
		}
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: v.Line}
	n.Content = append(content, key, v)
}

// cloneNode copies n's top level; children are shared (mapSet never
// changes a shared Content slice).
func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = slices.Clone(n.Content)
	return &c
}

// lineOf finds the line of the value at a key path under mapping n, or of
// the deepest key found.
func lineOf(n *yaml.Node, keys ...string) int {
	if n == nil {
		return 0
	}
	line := n.Line
	for _, k := range keys {
		v := mapGet(n, k)
		if v == nil {
			return line
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				line = n.Content[i].Line
			}
		}
		n = v
	}
	return line
}
