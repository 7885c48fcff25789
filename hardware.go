package schedsim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Runtime is the scenario's runtime section: whether and how the runtime
// model (docs/hardware.md, "Runtime model") changes job runtimes. The job
// classes and speed ratios themselves are the cluster spec's (runtime:
// classes, ratios). Everything is off by default, which is right when the
// trace replays on the hardware it was recorded on.
type Runtime struct {
	// Speed scales runtimes by the speed ratio between the GPU model a job
	// was recorded on (its GPU type's model, else trace.recorded_gpu) and
	// the model it runs on. Default: on when trace.recorded_gpu is set,
	// else off.
	Speed *bool `yaml:"speed,omitempty"`
	// CommStretch turns on the communication model for multi-node jobs on
	// the cluster's fabric. Default off.
	CommStretch bool `yaml:"comm_stretch"`
	// CommModel is how CommStretch models communication: ring (default)
	// or tree, the contention model (sim/comm.go: jobs share the uplinks
	// max-min fair, their rates change as jobs start and end), or fixed,
	// the former model (a run spanning leaves stretched by 1 + f × (o −
	// 1) whatever else runs; kept for comparison).
	CommModel string `yaml:"comm_model"`
	// Class is the job class of every job (default: the cluster spec's
	// runtime.default_class, training unless it says otherwise).
	Class string `yaml:"class"`
	// ClassByPartition gives the class of jobs by their trace partition
	// (the first one named when a job lists several); others take Class.
	ClassByPartition map[string]string `yaml:"class_by_partition"`
}

// on reports whether the section asks for any runtime change.
func (r *Runtime) on(recorded string) bool {
	return r.speed(recorded) || r.CommStretch
}

func (r *Runtime) speed(recorded string) bool {
	if r.Speed != nil {
		return *r.Speed
	}
	return recorded != ""
}

// validateRuntime checks what can be checked without the cluster.
func (s *Scenario) validateRuntime() error {
	switch s.Runtime.CommModel {
	case "", sim.CommRing, sim.CommTree, "fixed":
	default:
		return s.lifecycleError(fmt.Sprintf("unknown communication model %q (want ring, tree or fixed)", s.Runtime.CommModel), "runtime", "comm_model")
	}
	if m := s.Trace.RecordedGPU; m != "" && strings.TrimSpace(m) != m {
		return s.lifecycleError(fmt.Sprintf("%q: surrounding spaces", m), "trace", "recorded_gpu")
	}
	return nil
}

// buildRuntime resolves the runtime section against the cluster: the
// recorded GPU model and the class names must exist.
func (s *Scenario) buildRuntime(c *hwmodels.Cluster) (*sim.RuntimeScaling, error) {
	rt := &s.Runtime
	rec := s.Trace.RecordedGPU
	if rec != "" {
		if _, ok := c.GPU(rec); !ok {
			return nil, s.lifecycleError(fmt.Sprintf("unknown GPU model %q (want a catalog model such as a100-sxm-80gb, or one of the cluster's gpu_models; schedsim hw catalog lists them)", rec),
				"trace", "recorded_gpu")
		}
	}
	classes := make([]string, 0, len(c.Runtime.Classes))
	for _, k := range c.Runtime.Classes {
		classes = append(classes, k.Name)
	}
	checkClass := func(name string, path ...any) error {
		if name == "" || slices.Contains(classes, name) {
			return nil
		}
		return s.lifecycleError(fmt.Sprintf("unknown job class %q (want %s, or add it to the cluster spec's runtime.classes)", name, strings.Join(classes, ", ")), path...)
	}
	if err := checkClass(rt.Class, "runtime", "class"); err != nil {
		return nil, err
	}
	parts := make([]string, 0, len(rt.ClassByPartition))
	for p := range rt.ClassByPartition {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range parts {
		if err := checkClass(rt.ClassByPartition[p], "runtime", "class_by_partition", p); err != nil {
			return nil, err
		}
	}
	if !rt.on(rec) {
		return nil, nil
	}
	out := &sim.RuntimeScaling{Speed: rt.speed(rec), RecordedGPU: rec}
	if rt.CommStretch {
		switch rt.CommModel {
		case "fixed":
			out.CommStretch = true
		case "":
			out.Comm = sim.CommRing
		default:
			out.Comm = rt.CommModel
		}
	}
	if rt.Class != "" || len(rt.ClassByPartition) > 0 {
		def, byPart := rt.Class, rt.ClassByPartition
		out.Class = func(j *workload.Job) string {
			if len(byPart) > 0 {
				p, _, _ := strings.Cut(j.Partition, ",")
				if k, ok := byPart[strings.TrimSpace(p)]; ok {
					return k
				}
			}
			return def
		}
	}
	return out, nil
}
