package workload

import "testing"

func TestMIGProfileNames(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		typ      string
		ok       bool
	}{
		{"1g.10gb", "1g.10gb", "", true},
		{"3G.40GB", "3g.40gb", "", true},
		{"1g.10gb+me", "1g.10gb+me", "", true},
		{"7g.180gb", "7g.180gb", "", true},
		{"h100_1g.20gb", "1g.20gb", "h100", true},
		{"a100_3g.20gb", "3g.20gb", "a100", true},
		{"h100", "", "", false},
		{"8g.10gb", "", "", false},
		{"0g.10gb", "", "", false},
		{"1g.0gb", "", "", false},
		{"1g.+5gb", "", "", false},
	} {
		typ, p, ok := SplitMIGType(tc.in)
		if ok != tc.ok || p.String() != tc.want || typ != tc.typ {
			t.Errorf("SplitMIGType(%q) = %q, %q, %v; want %q, %q, %v", tc.in, typ, p, ok, tc.typ, tc.want, tc.ok)
		}
	}
	if p, _ := ParseMIGProfile("2g.20gb"); p.Compute() != 2 || p.MemGB() != 20 || p.MediaExt() {
		t.Errorf("2g.20gb: compute %d mem %d me %v", p.Compute(), p.MemGB(), p.MediaExt())
	}
}
