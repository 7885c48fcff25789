package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
)

func TestFormatSeconds(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "00:00:00"},
		{59.4, "00:00:59"},
		{59.5, "00:01:00"},       // halves round away from zero
		{9500, "02:38:20"},       // fixture makespan
		{86399, "23:59:59"},      // last second before a day
		{86400, "1d 00:00:00"},   // one day
		{93784.4, "1d 02:03:04"}, // 86400 + 2·3600 + 3·60 + 4
		{12*86400 + 3*3600 + 4*60 + 5, "12d 03:04:05"},
		{-61, "-00:01:01"},
		{math.NaN(), "invalid"},
		{math.Inf(1), "invalid"},
	}
	for _, tt := range tests {
		if got := FormatSeconds(tt.in); got != tt.want {
			t.Errorf("FormatSeconds(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWriteTableNoTrailingBlanks checks both table goldens' rule that no
// line ends in a blank.
func TestWriteTableNoTrailingBlanks(t *testing.T) {
	for name, rec := range map[string]*sim.Record{"fixture": fixtureRecord(), "empty": emptyRunRecord()} {
		var b strings.Builder
		if err := WriteTable(&b, Summarize(rec, SummaryOptions{})); err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(b.String(), "\n") {
			if diff := cmp.Diff(strings.TrimRight(line, " "), line); diff != "" {
				t.Errorf("%s: line %d has trailing blanks: %q", name, i+1, line)
			}
		}
	}
}

// emptyRunRecord is a run in which nothing started: one job, rejected,
// with no trace state. Its goldens show dashes for the waits and slowdown
// and null for the window's last end.
func emptyRunRecord() *sim.Record {
	cl := &hwmodels.Cluster{Name: "c", Nodes: []hwmodels.Node{{Name: "n1", GPUs: 1, CPUs: 1, Partitions: 1}},
		Partitions: []hwmodels.Partition{{Name: "p", Nodes: []int32{0}}}}
	return buildRecord(cl, []fixtureJob{
		{id: "1", part: "p", submit: 3, start: U, end: U, state: sim.Rejected, partIdx: 0},
	}, 3)
}
