package hwmodels

import "testing"

// TestUplinkCapacity: a three-level tree of 8 nodes, 2 per leaf, 2 leaves
// per pod, 2:1 at both levels. A leaf's uplink carries 2 nodes / 2 = 1
// node bandwidth; a pod gets 2 leaves × 1 from below and passes 2 / 2 = 1
// up; the core has no uplink (0).
func TestUplinkCapacity(t *testing.T) {
	nodes := []int32{0, 1, 2, 3, 4, 5, 6, 7}
	f, err := BuildFatTree(FatTreeParams{LeafSize: 2, LeavesPerPod: 2, LeafOversubscription: 2, PodOversubscription: 2}, nodes, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"leaf01": 1, "leaf04": 1, "pod01": 1, "pod02": 1, "core": 0}
	below := map[string]int32{"leaf01": 2, "pod02": 4, "core": 8}
	for i, s := range f.Switches {
		if w, ok := want[s.Name]; ok {
			if got := f.UplinkCapacity(int32(i)); got != w {
				t.Errorf("UplinkCapacity(%s) = %v, want %v", s.Name, got, w)
			}
		}
		if w, ok := below[s.Name]; ok {
			if got := f.NodesBelow(int32(i)); got != w {
				t.Errorf("NodesBelow(%s) = %d, want %d", s.Name, got, w)
			}
		}
	}
	if got := f.UplinkCapacity(-1); got != 0 {
		t.Errorf("UplinkCapacity(-1) = %v, want 0", got)
	}
}
