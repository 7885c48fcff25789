package schedsim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

const lifeHead = "version: 1\ncluster: {builtin: example}\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: easy}\n"

func TestLifecycleParseErrors(t *testing.T) {
	// Line 5 is the first line after lifeHead.
	cases := []struct{ name, src, want string }{
		{"bad duration", "controller:\n  time_limit_sweep: 30x\n",
			`s.yaml:6: controller.time_limit_sweep: "30x": want a duration of whole seconds`},
		{"negative", "controller: {requeue_delay: -5}\n",
			`s.yaml:5: controller.requeue_delay: "-5": must be >= 0`},
		{"unknown key", "controller:\n  requeue_dely: 5\n", `s.yaml:6: controller: unknown key "requeue_dely" (want time_limit_sweep, `},
		{"mtbf missing", "failures:\n  mttr: 4h\n", `s.yaml:5: failures.mtbf: missing`},
		{"mttr zero", "failures:\n  mtbf: 30d\n  mttr: 0\n", `s.yaml:7: failures.mttr: must be > 0`},
		{"state", "node_events:\n  - at: 10\n    nodes: h100-001\n    state: broken\n",
			`s.yaml:8: node_events[0].state: "broken": want one of down, drain, up`},
		{"event time", "node_events:\n  - {at: 10, nodes: h100-001, state: up}\n  - {at: yesterday, nodes: h100-001, state: up}\n",
			`s.yaml:7: node_events[1].at: "yesterday": want seconds since the trace epoch or an RFC 3339 time`},
		{"hostlist", "node_events:\n  - {at: 10, nodes: \"h100-[001-\", state: down}\n",
			`s.yaml:6: node_events[0].nodes: `},
		{"end and duration", "reservations:\n  - name: m\n    start: 0\n    end: 10\n    duration: 4h\n    nodes: h100-001\n",
			`s.yaml:6: reservations[0]: give exactly one of end or duration`},
		{"no nodes", "reservations:\n  - {name: m, start: 0, duration: 4h}\n",
			`s.yaml:6: reservations[0].nodes: missing (want a hostlist`},
		{"enforce", "controller: {enforce_part_limits: SOMETIMES}\n",
			`s.yaml:5: controller.enforce_part_limits: "SOMETIMES": want NO, ANY, YES or ALL`},
		{"twice", "reservations:\n  - {name: m, start: 0, duration: 4h, nodes: h100-001}\n  - {name: m, start: 0, duration: 4h, nodes: h100-002}\n",
			`s.yaml:7: reservations[1].name: "m": named twice`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(lifeHead+tc.src), "s.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseDur(t *testing.T) {
	for in, want := range map[string]sim.Time{"0": 0, "90": 90, "90s": 90, "5m": 300, "4h": 14400, "30d": 2592000, "1h30m": 5400} {
		if got, err := parseDur(in); err != nil || got != want {
			t.Errorf("parseDur(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5s", "1ms", "h", "3w"} {
		if _, err := parseDur(in); err == nil {
			t.Errorf("parseDur(%q): no error", in)
		}
	}
}

func TestLifecycleBuild(t *testing.T) {
	// Times: the reservation's RFC 3339 start is made relative to the
	// trace epoch; a bare number is already relative.
	epoch := int64(1_175_000_000) // 2007-03-27T12:53:20Z
	c := hwmodels.ExampleCluster()
	src := lifeHead + `controller:
  time_limit_sweep: 30s
  over_time_limit: 5m
  requeue_delay: 0
  job_requeue: false
failures: {mtbf: 30d, mttr: 4h}
node_events:
  - {at: 3600, nodes: "h100-[002-003]", state: drain}
  - {at: 7200, nodes: "h100-003,h100-002", state: up}
reservations:
  - name: maint
    start: "2007-03-27T13:53:20Z"
    duration: 4h
    nodes: "a100-[015-016],a100-001"
`
	s, err := Parse([]byte(src), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.buildLifecycle(c, epoch)
	if err != nil {
		t.Fatal(err)
	}
	a1 := int32(32) // a100-001 follows the 32 h100 nodes
	want := Lifecycle{
		Reservations: []sim.AdvanceReservation{{Name: "maint", Start: 3600, End: 3600 + 4*3600, Nodes: []int32{a1, a1 + 14, a1 + 15}}},
		NodeEvents: []sim.NodeEvent{
			{At: 3600, Node: 1, Down: true, Drain: true}, {At: 3600, Node: 2, Down: true, Drain: true},
			{At: 7200, Node: 1}, {At: 7200, Node: 2},
		},
		Failures:       &sim.FailureModel{MTBF: 30 * 86400, MTTR: 4 * 3600},
		TimeLimitSweep: 30, OverTimeLimit: 300, RequeueDelay: -1,
	}
	if d := cmp.Diff(want, l); d != "" {
		t.Errorf("lifecycle (-want +got):\n%s", d)
	}

	// Defaults: Slurm's JobRequeue=1, requeue delay left to sim (120 s).
	s, err = Parse([]byte(lifeHead), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if l, err = s.buildLifecycle(c, epoch); err != nil || !l.JobRequeue || l.RequeueDelay != 0 {
		t.Errorf("defaults: %+v, %v", l, err)
	}

	// EnforcePartLimits: the scenario's, else the cluster's slurm.conf
	// setting, else NO.
	for _, tc := range []struct {
		scen, conf string
		want       sim.PartLimits
	}{
		{"", "", sim.PartLimitsNo},
		{"controller: {enforce_part_limits: yes}\n", "", sim.PartLimitsAny},
		{"controller: {enforce_part_limits: ALL}\n", "NO", sim.PartLimitsAll},
		{"", "ALL", sim.PartLimitsAll},
		{"controller: {enforce_part_limits: NO}\n", "ANY", sim.PartLimitsNo},
	} {
		cc := *c
		if tc.conf != "" {
			cc.Slurm = &hwmodels.SlurmSettings{Settings: []hwmodels.KeyValue{{Key: "EnforcePartLimits", Value: tc.conf}}}
		}
		s, err := Parse([]byte(lifeHead+tc.scen), "s.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if l, err := s.buildLifecycle(&cc, epoch); err != nil || l.EnforcePartLimits != tc.want {
			t.Errorf("scenario %q, slurm.conf %q: EnforcePartLimits %v, %v; want %v", tc.scen, tc.conf, l.EnforcePartLimits, err, tc.want)
		}
	}

	// Names the cluster lacks and times before the trace are errors with
	// their line.
	bad := []struct{ src, want string }{
		{"node_events:\n  - {at: 10, nodes: gpu001, state: down}\n", `s.yaml:6: node_events[0].nodes: node "gpu001" is not in cluster example`},
		{"node_events:\n  - {at: \"2007-01-01T00:00:00\", nodes: h100-001, state: down}\n", `s.yaml:6: node_events[0].at: "2007-01-01T00:00:00" is before the trace's first submit`},
		{"reservations:\n  - {name: m, start: 100, end: 50, nodes: h100-001}\n", `s.yaml:6: reservations[0].end: "50" is not after start "100"`},
	}
	for _, b := range bad {
		s, err := Parse([]byte(lifeHead+b.src), "s.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.buildLifecycle(c, epoch); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("error %v, want it to contain %q", err, b.want)
		}
	}
}
