package sim

import "testing"

func TestMPSMeet(t *testing.T) {
	base := MPSFree{4 << mpsMaxShift, 0}
	a := base.setGPU(0, 40, 1).setGPU(2, 30, 2)
	b := base.setGPU(0, 90, 2).setGPU(1, 50, 1)
	m := MPSMeet(a, b)
	for g, want := range [][2]int32{{90, 2}, {50, 1}, {30, 2}, {0, 0}} {
		if u, c := m.GPU(g); u != want[0] || c != want[1] {
			t.Errorf("MPSMeet GPU %d = %d%%, %d clients, want %v", g, u, c, want)
		}
	}
	if m.MaxClients() != 4 {
		t.Errorf("MaxClients = %d", m.MaxClients())
	}
	if MPSMeet(a, MPSFree{}) != (MPSFree{}) || MPSMeet(MPSFree{}, b) != (MPSFree{}) {
		t.Error("meet with a node without MPS is not zero")
	}
	// With a free GPU on each side the meet is MPSMeet's.
	if got := MPSMeetFree(a, 1, b, 1); got != m {
		t.Errorf("MPSMeetFree with free GPUs = %v, want %v", got, m)
	}
	// b has no free GPU: GPU 2 (in use only in a) cannot be joined in b.
	// a has no free GPU: GPU 1 (in use only in b) cannot be joined in a.
	got := MPSMeetFree(a, 0, b, 0)
	for g, want := range [][2]int32{{90, 2}, {100, 1}, {100, 2}, {0, 0}} {
		if u, c := got.GPU(g); u != want[0] || c != want[1] {
			t.Errorf("MPSMeetFree GPU %d = %d%%, %d clients, want %v", g, u, c, want)
		}
	}
	s := NodeState{FreeGPUs: 0, MPS: got}
	if s.MPSFits(11) || !s.MPSFits(10) {
		t.Error("with no free GPU only GPU 0 (90 % in use) takes a share, up to 10 %")
	}
}
