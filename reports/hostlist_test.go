package reports

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
)

func TestCompressHostlist(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  string
	}{
		{"none", nil, ""},
		{"one", []string{"gpu001"}, "gpu001"},
		{"range", []string{"gpu001", "gpu002", "gpu003", "gpu004"}, "gpu[001-004]"},
		{"two", []string{"gpu001", "gpu002"}, "gpu[001-002]"},
		{"gap", []string{"gpu001", "gpu003"}, "gpu[001,003]"},
		{"issue example", []string{"gpu009", "gpu002", "gpu001", "gpu004", "gpu003"}, "gpu[001-004,009]"},
		{"unsorted dups", []string{"gpu003", "gpu001", "gpu003", "gpu002"}, "gpu[001-003]"},
		{"unpadded", []string{"n10", "n9", "n11"}, "n[9-11]"},
		{"zero", []string{"n0", "n1"}, "n[0-1]"},
		// gpu100 is written the same at width 3, so it joins gpu[098-099].
		{"padded then wider", []string{"gpu098", "gpu099", "gpu100", "gpu1000"}, "gpu[098-100,1000]"},
		// n5 cannot be written at width 2: it keeps a group of its own.
		{"mixed widths", []string{"n05", "n5", "n06"}, "n5,n[05-06]"},
		{"prefixes", []string{"b2", "a1", "b1", "a2"}, "a[1-2],b[1-2]"},
		{"literal", []string{"login", "gpu001", "login"}, "gpu001,login"},
		{"literal same as prefix", []string{"gpu", "gpu1", "gpu2"}, "gpu,gpu[1-2]"},
		{"digits inside", []string{"rack1-node07", "rack1-node08", "rack2-node07"}, "rack1-node[07-08],rack2-node07"},
		{"too many digits", []string{"x123456789012345678901234567890"}, "x123456789012345678901234567890"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compressHostlist(tt.names)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("compressHostlist(%q) mismatch (-want +got):\n%s", tt.names, diff)
			}
			// Round trip through hwmodels' expander: the same set of names.
			if got == "" {
				return
			}
			back, err := hwmodels.ExpandHostlist(got)
			if err != nil {
				t.Fatalf("ExpandHostlist(%q): %v", got, err)
			}
			want := slices.Compact(slices.Sorted(slices.Values(tt.names)))
			if diff := cmp.Diff(want, slices.Sorted(slices.Values(back))); diff != "" {
				t.Errorf("ExpandHostlist(%q) mismatch (-want +got):\n%s", got, diff)
			}
		})
	}
}
