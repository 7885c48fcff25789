package schedsim

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
)

// TestOverride sets keys as the run flags do and checks the scenario
// field each one reaches, and the errors of keys and values that cannot
// be set.
func TestOverride(t *testing.T) {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	yes := true
	tests := []struct {
		name, key, value string
		get              func(s *Scenario) any
		want             any
		err              string
	}{
		{name: "trace replaces the section", key: "trace", value: "jobs.swf",
			get: func(s *Scenario) any { return s.Trace }, want: Trace{File: abs("jobs.swf")}},
		{name: "cluster builtin", key: "cluster", value: "header",
			get: func(s *Scenario) any { return s.Cluster.Builtin }, want: "swf-header"},
		{name: "cluster file must exist", key: "cluster", value: "no-such.yaml",
			err: "cluster: stat no-such.yaml: no such file or directory"},
		{name: "policy drops its args", key: "policy", value: "fifo",
			get: func(s *Scenario) any { return s.Policy }, want: Policy{Name: "fifo"}},
		{name: "uint64", key: "seed", value: "7", get: func(s *Scenario) any { return s.Seed }, want: uint64(7)},
		{name: "int", key: "trace.swf.procs_per_gpu", value: "4", get: func(s *Scenario) any { return s.Trace.SWF.ProcsPerGPU }, want: 4},
		{name: "float", key: "trace.transforms.scale_load", value: "1.5", get: func(s *Scenario) any { return s.Trace.Transforms.ScaleLoad }, want: 1.5},
		{name: "bool", key: "trace.lenient", value: "true", get: func(s *Scenario) any { return s.Trace.Lenient }, want: true},
		{name: "pointer to bool", key: "controller.job_requeue", value: "1", get: func(s *Scenario) any { return s.Controller.JobRequeue }, want: &yes},
		{name: "list", key: "trace.transforms.filter.users", value: "alice, bob,", get: func(s *Scenario) any { return s.Trace.Transforms.Filter.Users }, want: []string{"alice", "bob"}},
		{name: "map", key: "trace.partition_map", value: "1=gpu,2=gpu", get: func(s *Scenario) any { return s.Trace.PartitionMap }, want: map[string]string{"1": "gpu", "2": "gpu"}},
		{name: "a section through a nil pointer", key: "failures.mtbf", value: "30d", get: func(s *Scenario) any { return s.Failures.MTBF }, want: "30d"},
		{name: "path made absolute", key: "output.dir", value: "out", get: func(s *Scenario) any { return s.Output.Dir }, want: abs("out")},
		{name: "unknown key", key: "trace.swf.procs", value: "1", err: `trace.swf.procs: unknown key "procs" (want procs_per_node, procs_per_gpu)`},
		{name: "bad integer", key: "trace.swf.procs_per_gpu", value: "four", err: `trace.swf.procs_per_gpu: "four": want an integer`},
		{name: "bad seed", key: "seed", value: "-1", err: `seed: "-1": want an integer >= 0`},
		{name: "bad bool", key: "trace.lenient", value: "yes", err: `trace.lenient: "yes": want true or false`},
		{name: "bad map", key: "trace.partition_map", value: "gpu", err: `trace.partition_map: "gpu": want from=to`},
		{name: "a section", key: "trace.swf", value: "1", err: "trace.swf: a section: set one of its keys, or set it in the scenario file"},
		{name: "under a scalar", key: "seed.x", value: "1", err: "seed.x: seed is not a section"},
		{name: "inline YAML", key: "cluster.inline.name", value: "x", err: "cluster.inline.name: cluster.inline is not a section: it is YAML of its own, set in the scenario file"},
		{name: "a list of sections", key: "node_events", value: "x", err: "node_events: a list of sections: set it in the scenario file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Default()
			s.Policy.Args = yaml.Node{Kind: yaml.MappingNode} // to see that policy drops it
			err := s.Override(tt.key, tt.value)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("Override(%q, %q) = %v, want %s", tt.key, tt.value, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, tt.get(s)); d != "" {
				t.Errorf("Override(%q, %q) (-want +got):\n%s", tt.key, tt.value, d)
			}
		})
	}
}
