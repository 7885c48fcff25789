package workload

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

func TestMapPartitions(t *testing.T) {
	tr := &Trace{Jobs: []Job{{Partition: "1"}, {Partition: "2,9"}, {Partition: ""}, {Partition: "9"}, {Partition: "2,9"}}}
	MapPartitions(tr, map[string]string{"2": "gpu", "1": "gpu"})
	var got []string
	for _, j := range tr.Jobs {
		got = append(got, j.Partition)
	}
	if d := cmp.Diff([]string{"gpu", "gpu,9", "", "9", "gpu,9"}, got); d != "" {
		t.Errorf("partitions (-want +got):\n%s", d)
	}
	// Jobs with the same partitions share the mapped string.
	if unsafe.StringData(tr.Jobs[1].Partition) != unsafe.StringData(tr.Jobs[4].Partition) {
		t.Error("jobs 1 and 4 hold two copies of the mapped partitions")
	}
	if d := cmp.Diff([]string{"partitions mapped (1→gpu, 2→gpu): 3 jobs"}, tr.Notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}

func TestRebase(t *testing.T) {
	a, b, c := NewJob("a"), NewJob("b"), NewJob("c")
	a.Submit, b.Submit, c.Submit = 1000, 900, 1000
	b.TraceStart, b.TraceEnd = 950, 990
	tr := &Trace{Jobs: []Job{a, b, c}}
	tr.Rebase(5)
	type row struct {
		ID                string
		Submit, Start, En Time
	}
	var got []row
	for _, j := range tr.Jobs {
		got = append(got, row{j.ID, j.Submit, j.TraceStart, j.TraceEnd})
	}
	// Sorted by submit, stable for the tie a/c; times relative to b's
	// submit, whose absolute value (base 5 + 900) is the epoch.
	want := []row{{"b", 0, 50, 90}, {"a", 100, -1, -1}, {"c", 100, -1, -1}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rebased (-want +got):\n%s", d)
	}
	if tr.Epoch != 905 {
		t.Errorf("epoch = %d, want 905", tr.Epoch)
	}
}
