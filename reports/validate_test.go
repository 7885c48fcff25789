package reports

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

func TestKendallTauB(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
		want float64
	}{
		{"same order", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		// Pairs: (1,2) c, (1,3) c, (2,3) d: (2-1)/3.
		{"one swap", []float64{1, 2, 3}, []float64{1, 3, 2}, 1.0 / 3},
		// x ties on (1,2): tx=1; (1,3) c, (2,3) c: 2/sqrt(3·2).
		{"tie in x", []float64{1, 1, 2}, []float64{1, 2, 3}, 2 / math.Sqrt(6)},
	}
	for _, tc := range tests {
		if got := KendallTauB(tc.x, tc.y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if !math.IsNaN(KendallTauB([]float64{1}, []float64{1})) {
		t.Error("one pair: want NaN")
	}
}

// TestValidate: four jobs with recorded starts 10, 20, 30, 40 and
// simulated 10 (Δ 0), 45 (Δ 25), 400 (Δ 370), 7300 (Δ 7260); one never
// started in the trace. Within 30 s: 2/4; 5 min: 2/4; 1 h: 3/4. The
// quantiles are type 7 (workload.Quantile) of 0, 25, 370, 7260: median
// h = 1.5, 25 + 0.5·345 = 197.5; p95 h = 2.85, 370 + 0.85·6890 = 6226.5.
// Partition a (0, 25): 12.5 and 0.95·25 = 23.75; b (370, 7260): 3815 and
// 370 + 0.95·6890 = 6915.5. The start orders agree: tau 1.
func TestValidate(t *testing.T) {
	c := &hwmodels.Cluster{Partitions: []hwmodels.Partition{{Name: "a"}, {Name: "b"}}}
	tr := &workload.Trace{}
	rec := &sim.Record{Cluster: c, Trace: tr, Policy: "slurm"}
	add := func(id string, part int32, recorded, simulated sim.Time) {
		j := workload.NewJob(id)
		j.TraceStart = recorded
		tr.Jobs = append(tr.Jobs, j)
		rec.Jobs = append(rec.Jobs, sim.JobRecord{Ref: sim.JobRef(len(rec.Jobs)), Start: simulated, Part: part})
	}
	add("1", 0, 10, 10)
	add("2", 0, 20, 45)
	add("3", 1, 30, 400)
	add("4", 1, 40, 7300)
	add("5", 1, workload.Unknown, workload.Unknown)
	rec.Reasons = sim.ReasonLogOf(sim.ReasonChange{At: 5, Job: 3, Reason: sim.ReasonPriority}, sim.ReasonChange{At: 100, Job: 3, Reason: sim.ReasonResources})
	v := Validate(rec, ValidateOptions{Worst: 2})
	want := Agreement{Jobs: 4, WithinBfInterval: 0.5, Within5Min: 0.5, Within1Hour: 0.75, MedianAbsDelta: 197.5, P95AbsDelta: 6226.5}
	if d := cmp.Diff(want, v.Agreement); d != "" {
		t.Errorf("agreement (-want +got):\n%s", d)
	}
	if v.Compared != 4 || v.NoRecordedStart != 1 || v.KendallTau != 1 {
		t.Errorf("compared %d, no recorded start %d, tau %v", v.Compared, v.NoRecordedStart, v.KendallTau)
	}
	wantParts := []PartitionAgreement{
		{"a", Agreement{Jobs: 2, WithinBfInterval: 1, Within5Min: 1, Within1Hour: 1, MedianAbsDelta: 12.5, P95AbsDelta: 23.75}},
		{"b", Agreement{Jobs: 2, WithinBfInterval: 0, Within5Min: 0, Within1Hour: 0.5, MedianAbsDelta: 3815, P95AbsDelta: 6915.5}},
	}
	if d := cmp.Diff(wantParts, v.Partitions, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("partitions (-want +got):\n%s", d)
	}
	wantWorst := []WorstJob{
		{ID: "4", Partition: "b", Recorded: 40, Simulated: 7300, Delta: 7260, Reasons: []string{"Priority@5", "Resources@100"}},
		{ID: "3", Partition: "b", Recorded: 30, Simulated: 400, Delta: 370, Reasons: []string{}},
	}
	if d := cmp.Diff(wantWorst, v.Worst); d != "" {
		t.Errorf("worst (-want +got):\n%s", d)
	}
}
