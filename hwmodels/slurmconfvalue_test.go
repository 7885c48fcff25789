package hwmodels

import "testing"

// TestSlurmConfValue: the last global setting wins, keys match without
// case, comments are dropped, and a NodeName line's pairs are not global
// settings.
func TestSlurmConfValue(t *testing.T) {
	conf := []byte("KillWait=30\n# KillWait=99\nkillwait = 5 # later\nNodeName=gn1 KillWait=7\nPriorityCalcPeriod=1\n")
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"KillWait", "5", true},
		{"PRIORITYCALCPERIOD", "1", true},
		{"OverTimeLimit", "", false},
	} {
		if got, ok := SlurmConfValue(conf, tc.key); got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %q %v, want %q %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}
