package hwmodels

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels/strictyaml"
)

// SpecVersion is the cluster spec schema version this package reads; a spec
// says it with "version: 1".
const SpecVersion = 1

// Limits on a cluster spec. Larger values are errors, so that hostile input
// cannot make the loader allocate without bound.
const (
	// MaxClusterNodes is the most nodes a cluster may have.
	MaxClusterNodes = 1 << 16
	// MaxSpecBytes is the largest cluster spec file accepted.
	MaxSpecBytes = 16 << 20
	// maxGPUsPerNode, maxCPUsPerNode bound node_groups[].gpu.count and cpus.
	maxGPUsPerNode = 1024
	maxCPUsPerNode = 1 << 20
	// maxMemMB bounds node_groups[].memory: 1 EiB in MiB.
	maxMemMB = 1 << 40
	// maxPriority bounds PriorityTier and PriorityJobFactor (slurm.conf(5)).
	maxPriority = 65533
	// maxNameLen bounds cluster, partition, feature and GRES type names.
	maxNameLen = 128
)

// MaxNodeCPUs and MaxNodeGPUs are the most CPUs and GPUs one node may
// have (node_groups[].cpus, node_groups[].gpu.count).
const (
	MaxNodeCPUs = maxCPUsPerNode
	MaxNodeGPUs = maxGPUsPerNode
)

// Sentinel errors a *ParseError's Err wraps, for errors.Is.
var (
	// ErrSyntax: the YAML is malformed, or a value does not parse
	// (hostlist, duration, memory size, integer).
	ErrSyntax = errors.New("syntax error")
	// ErrUnknownField: a key the schema does not have.
	ErrUnknownField = errors.New("unknown field")
	// ErrMissing: a required key is absent or null, or a list is empty.
	ErrMissing = errors.New("missing value")
	// ErrRange: a value is out of its range, or the spec is too large.
	ErrRange = errors.New("value out of range")
	// ErrDuplicate: a key, node, node group, partition or feature is given
	// twice, or a second partition is marked default.
	ErrDuplicate = errors.New("duplicate")
	// ErrUnknownName: a reference to a node or GPU model that does not exist.
	ErrUnknownName = errors.New("unknown name")
)

// ParseError is an error in a cluster spec. Its message reads
//
//	cluster.yaml:12: node_groups[3].gpu.count: must be >= 0, got -2
//
// Path is the file name as given to LoadCluster or ParseCluster (left out of
// the message when empty); Line is 1-based, 0 when the error has no line
// (an empty file); Field is the path of the offending value in the YAML
// ("" for whole-document errors). Err holds the message and wraps one of
// ErrSyntax, ErrUnknownField, ErrMissing, ErrRange, ErrDuplicate or
// ErrUnknownName.
type ParseError struct {
	Path  string
	Line  int
	Field string
	Err   error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	switch {
	case e.Path != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.Path, e.Line)
	case e.Path != "":
		b.WriteString(e.Path + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns Err.
func (e *ParseError) Unwrap() error { return e.Err }

// specError is a message that unwraps to its sentinel kind.
type specError struct {
	kind error
	msg  string
}

func (e *specError) Error() string { return e.msg }
func (e *specError) Unwrap() error { return e.kind }

// LoadCluster reads and resolves the cluster spec in the YAML file at path;
// see ParseCluster. A file that cannot be read gives the *fs.PathError.
func LoadCluster(path string) (*Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCluster(data, path)
}

// ParseCluster decodes a cluster spec (the YAML schema in the package
// documentation and SCHEMA.md) and resolves it into a Cluster: every node
// listed individually, in spec order, partitions with their node indices
// and Node.Partitions bits filled, and exactly one default partition. path
// names the input in error messages and may be empty.
//
// Decoding is strict: unknown and duplicate keys, wrong YAML kinds, values
// out of range and dangling references are errors. The first error found is
// returned as a *ParseError naming the line, the field path and what was
// expected. ParseCluster never panics, whatever data holds.
//
// The nodes of one group share one Features slice (capacity clipped, so an
// append copies); treat it as read-only or copy it before changing it.
func ParseCluster(data []byte, path string) (*Cluster, error) {
	p := &parser{path: path}
	if len(data) > MaxSpecBytes {
		return nil, p.errorf(nil, "", ErrRange, "spec is %d bytes, more than the %d allowed", len(data), MaxSpecBytes)
	}
	root, err := p.document(data)
	if err != nil {
		return nil, err
	}
	return p.cluster(root)
}

// Keys of each mapping of the schema, in documentation order (the order of
// "want ..." in messages), and keys reserved for later versions, which are
// rejected with a message saying so.
var (
	clusterKeys       = []string{"version", "name", "gpu_models", "node_models", "node_groups", "partitions", "fabric", "power", "runtime", "slurm"}
	clusterReserved   = []string{"gpus", "topology"}
	nodeGroupKeys     = []string{"name", "count", "model", "gpu", "cpus", "memory", "features", "weight", "mig", "mps", "power"}
	nodeGroupReserved = []string{"nvlink", "fabric", "sockets", "cores_per_socket", "threads_per_core", "gres", "state"}
	gpuKeys           = []string{"model", "type", "count"}
	gpuReserved       = []string{"mig", "memory", "nvlink", "power"}
	partitionKeys     = []string{"name", "nodes", "max_time", "max_nodes", "default_time", "default", "priority_tier", "priority_job_factor", "def_cpu_per_gpu", "def_mem_per_cpu", "def_mem_per_gpu"}
	partitionReserved = []string{"min_nodes", "over_time_limit", "oversubscribe", "exclusive", "preempt_mode", "grace_time", "qos", "state", "tres_billing_weights"}
)

// parser decodes one spec; it holds the state that resolution builds up.
type parser struct {
	path string
	c    *Cluster
	// groups are the node groups read so far, groupByName indexes them by
	// their name as written, nodeByName indexes c.Nodes.
	groups      []groupInfo
	groupByName map[string]int
	nodeByName  map[string]int32
}

// groupInfo is what partitions need of a node group.
type groupInfo struct {
	name       string
	line       int
	first, end int32 // c.Nodes[first:end]
	field      string
}

func (p *parser) errorf(n *yaml.Node, field string, kind error, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &ParseError{Path: p.path, Line: line, Field: field, Err: &specError{kind: kind, msg: fmt.Sprintf(format, args...)}}
}

// document decodes data into its one YAML document and returns the root
// node (strictyaml.Parse, which reads the line of a syntax error).
// Decoding goes into a yaml.Node tree; the walk after it applies the
// schema strictly and says where and what was expected.
func (p *parser) document(data []byte) (*yaml.Node, error) {
	root, err := strictyaml.Parse(data)
	var e *strictyaml.Error
	switch {
	case errors.As(err, &e) && errors.Is(err, strictyaml.ErrDocuments):
		return nil, &ParseError{Path: p.path, Line: e.Line, Err: &specError{kind: ErrSyntax, msg: e.Msg}}
	case errors.As(err, &e):
		return nil, &ParseError{Path: p.path, Line: e.Line, Err: &specError{kind: ErrSyntax, msg: "malformed YAML: " + e.Msg}}
	case err != nil:
		return nil, p.errorf(nil, "", ErrSyntax, "malformed YAML: %v", err)
	}
	root = deref(root)
	if isNull(root) {
		return nil, p.errorf(root, "", ErrMissing, "empty cluster spec (want a mapping with version, name, node_groups)")
	}
	return root, nil
}

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe says what a node is, for "want X, got Y" messages.
func describe(n *yaml.Node) string { return strictyaml.Describe(n) }

func joinField(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fields is one decoded mapping: its keys, checked against the schema.
type fields struct {
	node *yaml.Node
	path string
	keys map[string]*yaml.Node // key node
	vals map[string]*yaml.Node // value node, aliases followed
}

// mapping checks that n is a mapping whose keys are all in known, with no
// key twice, and returns them. Merge keys ("<<: *anchor") are followed;
// explicit keys win over merged ones, earlier merge sources over later.
func (p *parser) mapping(n *yaml.Node, path string, known, reserved []string) (*fields, error) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, p.errorf(n, path, ErrSyntax, "want a mapping (%s), got %s", strings.Join(known, ", "), describe(n))
	}
	f := &fields{node: n, path: path, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	if err := p.collect(f, n, known, reserved); err != nil {
		return nil, err
	}
	return f, nil
}

func (p *parser) collect(f *fields, n *yaml.Node, known, reserved []string) error {
	entries, err := strictyaml.Entries(n, f.path)
	var e *strictyaml.Error
	if errors.As(err, &e) {
		kind := ErrSyntax
		switch {
		case errors.Is(err, strictyaml.ErrRepeated):
			kind = ErrDuplicate
		case errors.Is(err, strictyaml.ErrSchema):
			kind = ErrRange
		}
		return &ParseError{Path: p.path, Line: e.Line, Field: e.Field, Err: &specError{kind: kind, msg: e.Msg}}
	}
	for _, en := range entries {
		key := en.Key.Value
		field := joinField(f.path, key)
		if !slices.Contains(known, key) {
			if slices.Contains(reserved, key) {
				return p.errorf(en.Key, field, ErrUnknownField, "not supported by this version of the schema (want %s)", strings.Join(known, ", "))
			}
			return p.errorf(en.Key, field, ErrUnknownField, "unknown key (want %s)", strings.Join(known, ", "))
		}
		f.keys[key], f.vals[key] = en.Key, deref(en.Value)
	}
	return nil
}

// get returns the value of key, or nil when it is absent or null.
func (f *fields) get(key string) *yaml.Node {
	v := f.vals[key]
	if isNull(v) {
		return nil
	}
	return v
}

// line returns the line of key's value, or of the mapping when it is absent.
func (f *fields) line(key string) *yaml.Node {
	if v := f.vals[key]; v != nil {
		return v
	}
	return f.node
}

func (f *fields) field(key string) string { return joinField(f.path, key) }

func (p *parser) missing(f *fields, key, want string) error {
	return p.errorf(f.line(key), f.field(key), ErrMissing, "required (%s)", want)
}

// scalar returns the text of a scalar node.
func (p *parser) scalar(n *yaml.Node, field, want string) (string, error) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return "", p.errorf(n, field, ErrSyntax, "want %s, got %s", want, describe(n))
	}
	return n.Value, nil
}

// integer decodes an integer scalar.
func (p *parser) integer(n *yaml.Node, field string) (int64, error) {
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		return 0, p.errorf(n, field, ErrSyntax, "want an integer, got %s", describe(n))
	}
	return v, nil
}

// intRange decodes an integer in [lo, hi].
func (p *parser) intRange(n *yaml.Node, field string, lo, hi int64) (int64, error) {
	v, err := p.integer(n, field)
	if err != nil {
		return 0, err
	}
	if v < lo {
		return 0, p.errorf(n, field, ErrRange, "must be >= %d, got %d", lo, v)
	}
	if v > hi {
		return 0, p.errorf(n, field, ErrRange, "must be <= %d, got %d", hi, v)
	}
	return v, nil
}

// boolean decodes true or false (YAML 1.1 yes/no/on/off too, as yaml.v3 does
// for a bool).
func (p *parser) boolean(n *yaml.Node, field string) (bool, error) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil {
		return false, p.errorf(n, field, ErrSyntax, "want true or false, got %s", describe(n))
	}
	return v, nil
}

// isNameByte reports whether c may appear in a cluster, partition, feature
// or GRES type name.
func isNameByte(c byte) bool {
	return isHostByte(c)
}

// name decodes a name of letters, digits, '-', '_' and '.'.
func (p *parser) name(n *yaml.Node, field string) (string, error) {
	const want = "a name of letters, digits, '-', '_' and '.'"
	s, err := p.scalar(n, field, want)
	if err != nil {
		return "", err
	}
	if s == "" || len(s) > maxNameLen {
		return "", p.errorf(n, field, ErrRange, "want %s, 1 to %d characters, got %q", want, maxNameLen, s)
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return "", p.errorf(n, field, ErrSyntax, "want %s, got %q", want, s)
		}
	}
	return s, nil
}

// sequence checks that n is a list.
func (p *parser) sequence(n *yaml.Node, field, want string) ([]*yaml.Node, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errorf(n, field, ErrSyntax, "want a list of %s, got %s", want, describe(n))
	}
	return n.Content, nil
}

// cluster decodes and resolves the root mapping.
func (p *parser) cluster(root *yaml.Node) (*Cluster, error) {
	f, err := p.mapping(root, "", clusterKeys, clusterReserved)
	if err != nil {
		return nil, err
	}

	vn := f.get("version")
	if vn == nil {
		return nil, p.missing(f, "version", "the schema version, 1")
	}
	v, err := p.integer(vn, "version")
	if err != nil {
		return nil, err
	}
	if v != SpecVersion {
		return nil, p.errorf(vn, "version", ErrRange, "unsupported version %d (want %d)", v, SpecVersion)
	}

	nn := f.get("name")
	if nn == nil {
		return nil, p.missing(f, "name", "the cluster name")
	}
	name, err := p.name(nn, "name")
	if err != nil {
		return nil, err
	}
	p.c = &Cluster{Name: name, Power: DefaultPowerModel(), Runtime: DefaultRuntimeModel()}
	p.groupByName = map[string]int{}
	p.nodeByName = map[string]int32{}
	if gm := f.get("gpu_models"); gm != nil {
		if err := p.gpuModels(gm); err != nil {
			return nil, err
		}
	}
	if nm := f.get("node_models"); nm != nil {
		if err := p.nodeModels(nm); err != nil {
			return nil, err
		}
	}

	gn := f.get("node_groups")
	if gn == nil {
		return nil, p.missing(f, "node_groups", "a list of node groups")
	}
	groups, err := p.sequence(gn, "node_groups", "node groups")
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return nil, p.errorf(gn, "node_groups", ErrMissing, "must list at least one node group")
	}
	for i, g := range groups {
		if err := p.nodeGroup(g, fmt.Sprintf("node_groups[%d]", i)); err != nil {
			return nil, err
		}
	}

	if pn := f.get("partitions"); pn == nil {
		p.c.Partitions = []Partition{allPartition(len(p.c.Nodes))}
	} else if err := p.partitions(pn); err != nil {
		return nil, err
	}
	setPartitionBits(p.c)
	for _, sec := range []struct {
		key    string
		decode func(*yaml.Node) error
	}{{"fabric", p.fabric}, {"power", p.power}, {"runtime", p.runtime}, {"slurm", p.slurm}} {
		if n := f.get(sec.key); n != nil {
			if err := sec.decode(n); err != nil {
				return nil, err
			}
		}
	}
	return p.c, nil
}

// allPartition is the partition "all" of every node, the default partition
// of a spec without partitions and of UniformCluster.
func allPartition(nodes int) Partition {
	idx := make([]int32, nodes)
	for i := range idx {
		idx[i] = int32(i)
	}
	return Partition{Name: "all", Nodes: idx, Default: true, PriorityTier: 1, PriorityJobFactor: 1}
}

// setPartitionBits fills Node.Partitions from Partition.Nodes.
func setPartitionBits(c *Cluster) {
	for i := range c.Nodes {
		c.Nodes[i].Partitions = 0
	}
	for pi := range c.Partitions {
		for _, ni := range c.Partitions[pi].Nodes {
			c.Nodes[ni].Partitions |= 1 << uint(pi)
		}
	}
}

// nodeGroup decodes one node group and appends its nodes.
func (p *parser) nodeGroup(n *yaml.Node, path string) error {
	f, err := p.mapping(n, path, nodeGroupKeys, nodeGroupReserved)
	if err != nil {
		return err
	}

	// name and count give the node names.
	nameNode := f.get("name")
	if nameNode == nil {
		return p.missing(f, "name", `a host name or hostlist, "gpu[001-032]"`)
	}
	nameField := f.field("name")
	name, err := p.scalar(nameNode, nameField, `a host name or hostlist, "gpu[001-032]"`)
	if err != nil {
		return err
	}
	if gi, dup := p.groupByName[name]; dup {
		return p.errorf(nameNode, nameField, ErrDuplicate, "node group %q is already defined by %s (line %d)", name, p.groups[gi].field, p.groups[gi].line)
	}
	pats, err := parseHostlist(name)
	if err != nil {
		return p.errorf(nameNode, nameField, ErrSyntax, "%v", err)
	}
	if len(pats) == 0 {
		return p.errorf(nameNode, nameField, ErrMissing, `empty (want a host name or hostlist, "gpu[001-032]")`)
	}
	var total uint64
	plain := len(pats) == 1
	for _, pt := range pats {
		total += pt.count(MaxClusterNodes)
		for _, part := range pt.parts {
			if part.ranges != nil {
				plain = false
			}
		}
	}
	var names []string
	if cn := f.get("count"); cn != nil {
		cnt, err := p.intRange(cn, f.field("count"), 1, MaxClusterNodes)
		if err != nil {
			return err
		}
		if plain {
			// Prefix form: name "gpu", count 32 → gpu01 … gpu32.
			total = uint64(cnt)
			if err := p.checkNodeTotal(nameNode, nameField, total); err != nil {
				return err
			}
			width := decimalLen(uint64(cnt))
			names = make([]string, cnt)
			for i := range names {
				names[i] = string(appendPadded([]byte(name), uint64(i+1), width))
			}
		} else if total != uint64(cnt) {
			return p.errorf(cn, f.field("count"), ErrRange, "%d does not match the %d nodes of %q (omit count, or give a plain prefix as name)", cnt, total, name)
		}
	}
	if names == nil {
		if err := p.checkNodeTotal(nameNode, nameField, total); err != nil {
			return err
		}
		for _, pt := range pats {
			names = pt.appendNames(names)
		}
	}

	// The node's resources: a node model's, overridden by the group's keys.
	hw, err := p.groupHardware(f)
	if err != nil {
		return err
	}
	var gpus int32
	var model, gresType string
	var cpus, mem int64
	if hw.model != nil {
		gpus, model, cpus, mem = hw.model.GPUs, hw.model.GPUModel, int64(hw.model.CPUs), hw.model.MemMB
		if g, ok := p.c.GPU(model); ok {
			gresType = g.DefaultType
		}
	}
	if gn := f.get("gpu"); gn != nil {
		if gpus, model, gresType, err = p.gpu(gn, f.field("gpu")); err != nil {
			return err
		}
	}
	if cn := f.get("cpus"); cn != nil {
		if cpus, err = p.intRange(cn, f.field("cpus"), 1, maxCPUsPerNode); err != nil {
			return err
		}
	} else if hw.model == nil {
		return p.missing(f, "cpus", "CPUs per node, an integer >= 1")
	}
	if mn := f.get("memory"); mn != nil {
		if mem, err = p.memory(mn, f.field("memory")); err != nil {
			return err
		}
	} else if hw.model == nil {
		return p.missing(f, "memory", `memory per node, "512G" or MiB as an integer`)
	}
	var spec *GPUSpec
	if g, ok := p.c.GPU(model); ok && gpus > 0 {
		spec = &g
	}
	if err := p.groupSharing(f, &hw, gpus, spec); err != nil {
		return err
	}
	var features []string
	if fn := f.get("features"); fn != nil {
		if features, err = p.features(fn, f.field("features")); err != nil {
			return err
		}
	}

	first := int32(len(p.c.Nodes))
	for _, nm := range names {
		if nm == "ALL" {
			return p.errorf(nameNode, nameField, ErrRange, `node name "ALL" is reserved (it means every node in partitions[].nodes)`)
		}
		if ni, dup := p.nodeByName[nm]; dup {
			if ni >= first {
				// This group's name list gives it twice ("n[1,1]").
				return p.errorf(nameNode, nameField, ErrDuplicate, "node %q is named twice in this group's names", nm)
			}
			g := p.groups[p.groupOf(ni)]
			return p.errorf(nameNode, nameField, ErrDuplicate, "node %q is already defined by %s (line %d)", nm, g.field, g.line)
		}
		p.nodeByName[nm] = int32(len(p.c.Nodes))
		p.c.Nodes = append(p.c.Nodes, Node{
			Name:     nm,
			GPUs:     gpus,
			GPUModel: model,
			GPUType:  gresType,
			CPUs:     int32(cpus),
			MemMB:    mem,
			Features: features,
			Group:    int32(len(p.groups)),
			MIG:      hw.mig,
			MPS:      hw.mps,
		})
	}
	group := NodeGroup{Name: name, First: first, End: int32(len(p.c.Nodes)), GPU: spec, MIG: hw.mig, MPS: hw.mps, Weight: hw.weight, BasePowerW: hw.base}
	if hw.model != nil {
		group.NodeModel = hw.model.Name
	}
	p.c.Groups = append(p.c.Groups, group)
	p.groupByName[name] = len(p.groups)
	p.groups = append(p.groups, groupInfo{name: name, line: nameNode.Line, first: first, end: int32(len(p.c.Nodes)), field: path})
	return nil
}

// checkNodeTotal fails when adding total nodes would exceed MaxClusterNodes.
func (p *parser) checkNodeTotal(n *yaml.Node, field string, total uint64) error {
	if uint64(len(p.c.Nodes))+total > MaxClusterNodes {
		return p.errorf(n, field, ErrRange, "the cluster would have more than %d nodes", MaxClusterNodes)
	}
	return nil
}

// groupOf returns the index of the group holding node ni.
func (p *parser) groupOf(ni int32) int {
	for i, g := range p.groups {
		if ni >= g.first && ni < g.end {
			return i
		}
	}
	return len(p.groups) - 1 // unreachable: every node of an earlier group is in one
}

// gpu decodes a node group's gpu mapping.
func (p *parser) gpu(n *yaml.Node, path string) (count int32, model, gresType string, err error) {
	f, err := p.mapping(n, path, gpuKeys, gpuReserved)
	if err != nil {
		return 0, "", "", err
	}
	mn := f.get("model")
	if mn == nil {
		return 0, "", "", p.missing(f, "model", "one of "+gpuModelChoices())
	}
	model, err = p.scalar(mn, f.field("model"), "a GPU model name")
	if err != nil {
		return 0, "", "", err
	}
	if model != CustomGPUModel {
		spec, ok := p.c.GPU(model)
		if !ok {
			return 0, "", "", p.errorf(mn, f.field("model"), ErrUnknownName, "unknown GPU model %q (want %s)", model, p.gpuChoices())
		}
		gresType = spec.DefaultType
	}
	if tn := f.get("type"); tn != nil {
		t, err := p.name(tn, f.field("type"))
		if err != nil {
			return 0, "", "", err
		}
		gresType = strings.ToLower(t)
	}
	cn := f.get("count")
	if cn == nil {
		return 0, "", "", p.missing(f, "count", "GPUs per node, an integer >= 0")
	}
	c, err := p.intRange(cn, f.field("count"), 0, maxGPUsPerNode)
	if err != nil {
		return 0, "", "", err
	}
	return int32(c), model, gresType, nil
}

// memory decodes a memory size: an integer of MiB, or a string with a unit
// suffix K, M, G or T (binary multiples of a byte, as Slurm reads them;
// "KB", "KiB" and lower case are accepted too). The size must be a whole
// number of MiB, at least 1.
func (p *parser) memory(n *yaml.Node, field string) (int64, error) {
	const want = `want a size such as "512G", "2T", "1048576K" or MiB as an integer`
	if n.Kind != yaml.ScalarNode {
		return 0, p.errorf(n, field, ErrSyntax, "%s, got %s", want, describe(n))
	}
	var mib int64
	if n.ShortTag() == "!!int" {
		v, err := p.integer(n, field)
		if err != nil {
			return 0, err
		}
		mib = v
	} else {
		v, err := parseMemMB(n.Value)
		if err != nil {
			return 0, p.errorf(n, field, ErrSyntax, "%s, got %s (%v)", want, describe(n), err)
		}
		mib = v
	}
	if mib < 1 {
		return 0, p.errorf(n, field, ErrRange, "must be at least 1 MiB, got %s", n.Value)
	}
	if mib > maxMemMB {
		return 0, p.errorf(n, field, ErrRange, "must be at most %d MiB, got %s", int64(maxMemMB), n.Value)
	}
	return mib, nil
}

// parseMemMB parses "<digits>[unit]" into MiB.
func parseMemMB(s string) (int64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	num, unit := s[:i], strings.ToUpper(s[i:])
	if num == "" || len(num) > 15 {
		return 0, errors.New("want 1 to 15 digits, then an optional unit")
	}
	v, _ := strconv.ParseInt(num, 10, 64)
	if len(unit) > 1 && (unit[1:] == "B" || unit[1:] == "IB") {
		unit = unit[:1] // KB, KiB → K
	}
	switch unit {
	case "K":
		if v%1024 != 0 {
			return 0, errors.New("not a whole number of MiB")
		}
		return v / 1024, nil
	case "", "M":
		return v, nil
	case "G":
		return v << 10, nil
	case "T":
		if v > maxMemMB>>20 {
			return 0, errors.New("too large")
		}
		return v << 20, nil
	}
	return 0, fmt.Errorf("unknown unit %q (want K, M, G or T)", s[i:])
}

// features decodes a list of feature names.
func (p *parser) features(n *yaml.Node, field string) ([]string, error) {
	items, err := p.sequence(n, field, "feature names")
	if err != nil {
		return nil, err
	}
	var out []string
	for i, it := range items {
		it = deref(it)
		fi := fmt.Sprintf("%s[%d]", field, i)
		s, err := p.name(it, fi)
		if err != nil {
			return nil, err
		}
		if j := slices.Index(out, s); j >= 0 {
			return nil, p.errorf(it, fi, ErrDuplicate, "feature %q is listed twice (also %s[%d])", s, field, j)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return slices.Clip(out), nil
}

// partitions decodes the partition list.
func (p *parser) partitions(n *yaml.Node) error {
	items, err := p.sequence(n, "partitions", "partitions")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return p.errorf(n, "partitions", ErrMissing, `must list at least one partition (or leave the key out for one partition "all" of every node)`)
	}
	if len(items) > MaxPartitions {
		return p.errorf(deref(items[MaxPartitions]), fmt.Sprintf("partitions[%d]", MaxPartitions), ErrRange, "at most %d partitions, got %d", MaxPartitions, len(items))
	}
	type seen struct {
		field string
		line  int
	}
	byName := map[string]seen{}
	def := -1
	for i, it := range items {
		path := fmt.Sprintf("partitions[%d]", i)
		f, err := p.mapping(it, path, partitionKeys, partitionReserved)
		if err != nil {
			return err
		}
		part := Partition{PriorityTier: 1, PriorityJobFactor: 1}

		nn := f.get("name")
		if nn == nil {
			return p.missing(f, "name", "the partition name")
		}
		if part.Name, err = p.name(nn, f.field("name")); err != nil {
			return err
		}
		if prev, dup := byName[part.Name]; dup {
			return p.errorf(nn, f.field("name"), ErrDuplicate, "partition %q is already defined by %s (line %d)", part.Name, prev.field, prev.line)
		}
		byName[part.Name] = seen{path, nn.Line}

		nodes := f.get("nodes")
		if nodes == nil {
			return p.missing(f, "nodes", "ALL, a hostlist, or a list of node-group names and hostlists")
		}
		if part.Nodes, err = p.partitionNodes(nodes, f.field("nodes")); err != nil {
			return err
		}

		if tn := f.get("max_time"); tn != nil {
			if part.MaxTime, err = p.maxTime(tn, f.field("max_time")); err != nil {
				return err
			}
		}
		if mn := f.get("max_nodes"); mn != nil {
			v, err := p.intRange(mn, f.field("max_nodes"), 0, 1<<31-1)
			if err != nil {
				return err
			}
			part.MaxNodes = int32(v)
		}
		if tn := f.get("default_time"); tn != nil {
			if part.DefaultTime, err = p.maxTime(tn, f.field("default_time")); err != nil {
				return err
			}
			if part.MaxTime > 0 && part.DefaultTime > part.MaxTime {
				return p.errorf(tn, f.field("default_time"), ErrRange, "%s exceeds max_time %s (slurmctld drops a DefaultTime above MaxTime; cluster import warns and does the same)",
					FormatSlurmTime(part.DefaultTime), FormatSlurmTime(part.MaxTime))
			}
		}
		if cn := f.get("def_cpu_per_gpu"); cn != nil {
			v, err := p.intRange(cn, f.field("def_cpu_per_gpu"), 0, maxCPUsPerNode)
			if err != nil {
				return err
			}
			part.DefCPUPerGPU = int32(v)
		}
		for _, m := range []struct {
			key string
			dst *int64
		}{{"def_mem_per_cpu", &part.DefMemPerCPU}, {"def_mem_per_gpu", &part.DefMemPerGPU}} {
			if mn := f.get(m.key); mn != nil {
				if *m.dst, err = p.memory(mn, f.field(m.key)); err != nil {
					return err
				}
			}
		}
		if dn := f.get("default"); dn != nil {
			if part.Default, err = p.boolean(dn, f.field("default")); err != nil {
				return err
			}
			if part.Default && def >= 0 {
				first := p.c.Partitions[def]
				return p.errorf(dn, f.field("default"), ErrDuplicate, "only one partition may be the default, and partitions[%d] (%q) already is", def, first.Name)
			}
			if part.Default {
				def = i
			}
		}
		if tn := f.get("priority_tier"); tn != nil {
			v, err := p.intRange(tn, f.field("priority_tier"), 0, maxPriority)
			if err != nil {
				return err
			}
			part.PriorityTier = int32(v)
		}
		if fn := f.get("priority_job_factor"); fn != nil {
			v, err := p.intRange(fn, f.field("priority_job_factor"), 0, maxPriority)
			if err != nil {
				return err
			}
			part.PriorityJobFactor = int32(v)
		}
		p.c.Partitions = append(p.c.Partitions, part)
	}
	if def < 0 {
		def = 0
		p.c.Partitions[0].Default = true
	}
	p.c.DefaultPartition = def
	return nil
}

// maxTime decodes a partition's max_time into seconds, rounded up to whole
// minutes as Slurm stores it; 0 is UNLIMITED.
func (p *parser) maxTime(n *yaml.Node, field string) (int64, error) {
	s, err := p.scalar(n, field, "a Slurm time ("+durationForms+")")
	if err != nil {
		return 0, err
	}
	secs, unlimited, err := ParseSlurmDuration(s)
	if err != nil {
		return 0, p.errorf(n, field, ErrSyntax, "%v", err)
	}
	if unlimited {
		return 0, nil
	}
	if secs == 0 {
		return 0, p.errorf(n, field, ErrRange, "must be at least 1 minute or UNLIMITED, got %q", s)
	}
	return (secs + 59) / 60 * 60, nil
}

// partitionNodes resolves a partition's nodes: one string or a list of
// them, each ALL, a node-group name or a hostlist of defined nodes. The
// result is ascending and without duplicates.
func (p *parser) partitionNodes(n *yaml.Node, field string) ([]int32, error) {
	const want = "ALL, a node-group name or a hostlist"
	entries, fieldOf := []*yaml.Node{n}, func(int) string { return field }
	if n.Kind == yaml.SequenceNode {
		entries = n.Content
		fieldOf = func(i int) string { return fmt.Sprintf("%s[%d]", field, i) }
		if len(entries) == 0 {
			return nil, p.errorf(n, field, ErrMissing, "must name at least one node (want %s)", want)
		}
	}
	member := make([]bool, len(p.c.Nodes))
	done := map[string]bool{}
	// expanded bounds the names all entries expand to, so that a list of
	// many large hostlists cannot make resolution quadratic.
	var expanded uint64
	for i, e := range entries {
		e = deref(e)
		ef := fieldOf(i)
		s, err := p.scalar(e, ef, want)
		if err != nil {
			return nil, err
		}
		if done[s] {
			continue
		}
		done[s] = true
		if s == "ALL" {
			for j := range member {
				member[j] = true
			}
			continue
		}
		if gi, ok := p.groupByName[s]; ok {
			g := p.groups[gi]
			for j := g.first; j < g.end; j++ {
				member[j] = true
			}
			continue
		}
		pats, err := parseHostlist(s)
		if err != nil {
			return nil, p.errorf(e, ef, ErrSyntax, "%v (want %s)", err, want)
		}
		var total uint64
		for _, pt := range pats {
			total += pt.count(MaxClusterNodes)
		}
		if total == 0 {
			return nil, p.errorf(e, ef, ErrMissing, "empty (want %s)", want)
		}
		if total > MaxClusterNodes {
			return nil, p.errorf(e, ef, ErrRange, "hostlist %q names more than %d nodes", s, MaxClusterNodes)
		}
		if expanded += total; expanded > 2*MaxClusterNodes {
			return nil, p.errorf(e, ef, ErrRange, "the hostlists of %s name more than %d nodes in all", field, 2*MaxClusterNodes)
		}
		var names []string
		for _, pt := range pats {
			names = pt.appendNames(names)
		}
		for _, nm := range names {
			ni, ok := p.nodeByName[nm]
			if !ok {
				return nil, p.errorf(e, ef, ErrUnknownName, "unknown node %q (want %s of defined nodes; node groups: %s)", nm, want, p.groupNames())
			}
			member[ni] = true
		}
	}
	var out []int32
	for j, m := range member {
		if m {
			out = append(out, int32(j))
		}
	}
	return out, nil
}

// groupNames lists the node-group names for messages, the first 8 of them.
func (p *parser) groupNames() string {
	const show = 8
	var names []string
	for i, g := range p.groups {
		if i == show {
			names = append(names, fmt.Sprintf("and %d more", len(p.groups)-show))
			break
		}
		names = append(names, g.name)
	}
	return strings.Join(names, ", ")
}
