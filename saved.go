package schedsim

import (
	"maps"
	"path/filepath"

	yaml "go.yaml.in/yaml/v3"
)

// A run records its scenario as YAML (OUT/scenario.yaml, whose SHA-256 is
// the outputs' config hash), and `schedsim run --scenario OUT/scenario.yaml`
// must run it again to the same outputs. MarshalYAML writes what that
// needs: every key with its value (so a default that changes between
// builds does not change a recorded run), file paths made absolute (the
// recorded file lives elsewhere than the scenario it came from, and
// relative paths are taken from its own directory), and no null for
// absent sections (an "inline: null" beside "builtin: example" reads as
// two clusters).

// thunderMapping is the documented mapping of the built-in trace
// llnl-thunder-slice onto the example cluster (docs/scenario.md): each
// job asks for ceil(procs/10) GPUs, and Thunder's partitions 1 (pbatch)
// and 2 (pdebug) become gpu.
var thunderMapping = struct {
	procsPerGPU  int
	partitionMap map[string]string
}{10, map[string]string{"1": "gpu", "2": "gpu"}}

// builtinTraceDefaults gives a built-in trace its documented mapping
// where the scenario does not say otherwise: swf.procs_per_gpu when
// neither procs_per_gpu nor procs_per_node is written, partition_map when
// it is not written. Without it a scenario naming the built-in trace (a
// sweep's base, say) replayed it CPU-only.
func (s *Scenario) builtinTraceDefaults() {
	if s.Trace.Builtin != "llnl-thunder-slice" {
		return
	}
	tr := mapValue(s.root, "trace")
	swf := mapValue(tr, "swf")
	if mapValue(swf, "procs_per_gpu") == nil && mapValue(swf, "procs_per_node") == nil {
		s.Trace.SWF.ProcsPerGPU = thunderMapping.procsPerGPU
	}
	if mapValue(tr, "partition_map") == nil {
		s.Trace.PartitionMap = maps.Clone(thunderMapping.partitionMap)
	}
}

// mapValue returns the value of key in mapping n (aliases followed), or
// nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// savedScenario is Scenario without its methods, for MarshalYAML.
type savedScenario Scenario

// MarshalYAML implements yaml.Marshaler: the scenario as a run records
// it (see above).
func (s Scenario) MarshalYAML() (any, error) {
	out := savedScenario(s)
	out.Cluster.File = s.absPath(s.Cluster.File)
	out.Cluster.Calibration = s.absPath(s.Cluster.Calibration)
	out.Trace.File = s.absPath(s.Trace.File)
	out.Output.Dir = s.absPath(s.Output.Dir)
	return out, nil
}

// absPath returns p resolved against the scenario's directory and made
// absolute ("" stays "").
func (s *Scenario) absPath(p string) string {
	if p == "" {
		return ""
	}
	r := s.Resolve(p)
	if a, err := filepath.Abs(r); err == nil {
		return a
	}
	return r
}
