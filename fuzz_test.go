package schedsim

import (
	"bytes"
	"errors"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// FuzzParse: Parse never panics and fails only with an *Error; a scenario
// it accepts is recorded (yaml.Marshal, as a run writes scenario.yaml) as
// text that parses again and records the same.
func FuzzParse(f *testing.F) {
	def, _ := defaults.ReadFile("defaults/default.yaml")
	f.Add(def)
	f.Add([]byte(tinyInline + "job_rules:\n  - match: {user: \"u[12]\", partition: b}\n    checkpoint: 10m\n    requeue: false\n    array_throttle: 3\nlimits: {max_jobs: 10}\n"))
	f.Add([]byte("version: 1\ncluster: {builtin: example, inline: null}\ntrace: {builtin: llnl-thunder-slice, swf: {procs_per_gpu: 0}}\npolicy: {name: slurm, args: {bf_window: 60}}\nfailures: {mtbf: 30d, mttr: 4h}\n"))
	f.Add([]byte("version: 1\ncluster: {file: c.yaml}\ntrace: {file: t.swf, partition_map: {}}\npolicy: {name: easy}\ncontroller: {job_requeue: false}\nruntime: {speed: false}\n"))
	f.Add([]byte("version: 1\ncluster:\n  inline: &c {version: 1, name: x, node_groups: [{name: n1, cpus: 1, memory: 1}]}\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: fifo}\njob_rules: [{match: {name: \"[\"}, requeue: true}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "s.yaml")
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *Error", err, err)
			}
			return
		}
		text, err := yaml.Marshal(s)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		s2, err := Parse(text, "s.yaml")
		if err != nil {
			t.Fatalf("the recorded scenario does not parse: %v\n%s", err, text)
		}
		text2, err := yaml.Marshal(s2)
		if err != nil {
			t.Fatalf("marshal again: %v", err)
		}
		if !bytes.Equal(text, text2) {
			t.Fatalf("the record of the record differs:\n%s\n---\n%s", text, text2)
		}
	})
}
