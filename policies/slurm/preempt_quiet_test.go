package slurm

import (
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

// TestPreemptQuiet: a preemptor kills no more for KillWait +
// MessageTimeout after its preemption began, slurm.conf's values or
// Slurm's defaults (30 + 10 s); a value Slurm would not take is an error
// naming the setting, not a silent default.
func TestPreemptQuiet(t *testing.T) {
	with := func(kv ...string) *hwmodels.Cluster {
		c := &hwmodels.Cluster{Slurm: &hwmodels.SlurmSettings{}}
		for i := 0; i < len(kv); i += 2 {
			c.Slurm.Settings = append(c.Slurm.Settings, hwmodels.KeyValue{Key: kv[i], Value: kv[i+1]})
		}
		return c
	}
	for _, tc := range []struct {
		name string
		c    *hwmodels.Cluster
		want sim.Time
		err  string
	}{
		{"no cluster settings: 30 + 10", &hwmodels.Cluster{}, 40, ""},
		{"the harness's KillWait 2 + default 10 (gen-41: 12 s)", with("KillWait", "2"), 12, ""},
		{"both set", with("killwait", " 5 ", "MessageTimeout", "7"), 12, ""},
		{"zero", with("KillWait", "0", "MessageTimeout", "0"), 0, ""},
		{"not a number", with("KillWait", "30s"), 0, `KillWait: "30s"`},
		{"negative", with("MessageTimeout", "-1"), 0, `MessageTimeout: "-1"`},
		{"over 16 bits", with("KillWait", "99999999999999999999"), 0, "KillWait"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := preemptQuiet(tc.c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "cluster slurm setting") {
					t.Fatalf("got %d, %v; want an error naming %s", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}
