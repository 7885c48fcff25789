package hwmodels

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"blank", " \t\n", nil},
		{"single", "gpu01", []string{"gpu01"}},
		{"padded range", "gpu[001-003]", []string{"gpu001", "gpu002", "gpu003"}},
		{"list and range", "n[1-3,7]", []string{"n1", "n2", "n3", "n7"}},
		{"suffix", "a[01-02]b", []string{"a01b", "a02b"}},
		{"unpadded crosses width", "n[8-10]", []string{"n8", "n9", "n10"}},
		{"padding from first number", "n[08-10]", []string{"n08", "n09", "n10"}},
		{"order kept", "n[3,1]", []string{"n3", "n1"}},
		{"two groups", "r[1-2]n[1-2]", []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{"comma list", "gpu[01-02],cpu01", []string{"gpu01", "gpu02", "cpu01"}},
		{"whitespace and empty items", " a1 ,, b2\tc3 ", []string{"a1", "b2", "c3"}},
		{"hyphen in name", "h100-[001-002]", []string{"h100-001", "h100-002"}},
		{"dots and underscores", "node_a.b[1-2]", []string{"node_a.b1", "node_a.b2"}},
		{"duplicates kept", "n1,n[1-2]", []string{"n1", "n1", "n2"}},
		{"bracket only", "[1-2]", []string{"1", "2"}},
		{"zero", "n[0-1]", []string{"n0", "n1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExpandHostlist(tt.in)
			if err != nil {
				t.Fatalf("ExpandHostlist(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ExpandHostlist(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestExpandHostlistErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"gpu[1-", `hostlist "gpu[1-": "[" at offset 3 has no closing "]"`},
		{"gpu1]", `hostlist "gpu1]": "]" at offset 4 without "["`},
		{"n[1-[2]]", `hostlist "n[1-[2]]": nested "[" at offset 4`},
		{"n[]", `hostlist "n[]": empty "[]" at offset 1`},
		{"n[3-1]", `hostlist "n[3-1]": range "3-1" at offset 2 runs backwards`},
		{"n[1,a]", `hostlist "n[1,a]": bad range "a" at offset 4 (want N or N-M, N and M of 1 to 18 digits)`},
		{"n[1-]", `hostlist "n[1-]": bad range "1-" at offset 2 (want N or N-M, N and M of 1 to 18 digits)`},
		{"n[-1]", `hostlist "n[-1]": bad range "-1" at offset 2 (want N or N-M, N and M of 1 to 18 digits)`},
		{"n[1-2-3]", `hostlist "n[1-2-3]": bad range "1-2-3" at offset 2 (want N or N-M, N and M of 1 to 18 digits)`},
		{"n[1, 2]", `hostlist "n[1, 2]": bad range " 2" at offset 4 (want N or N-M, N and M of 1 to 18 digits)`},
		{"n[1234567890123456789]", `hostlist "n[1234567890123456789]": bad range "1234567890123456789" at offset 2 (want N or N-M, N and M of 1 to 18 digits)`},
		{"gpu@1", `hostlist "gpu@1": invalid character '@' at offset 3 (want letters, digits, '-', '_', '.' and [ranges])`},
		{"n[0-1048576]", `hostlist "n[0-1048576]": expands to more than 1048576 names`},
		{"a[0-1023]b[0-1024]", `hostlist "a[0-1023]b[0-1024]": expands to more than 1048576 names`},
		{"n[0-999999999999999999]", `hostlist "n[0-999999999999999999]": expands to more than 1048576 names`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ExpandHostlist(tt.in)
			if err == nil {
				t.Fatalf("ExpandHostlist(%q) = %q, want error %q", tt.in, got, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("ExpandHostlist(%q) error\n got: %s\nwant: %s", tt.in, err, tt.want)
			}
			if !errors.Is(err, ErrHostlist) {
				t.Errorf("error %v does not wrap ErrHostlist", err)
			}
		})
	}
}

func TestCompressHostlist(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"nil", nil, ""},
		{"one", []string{"gpu01"}, "gpu01"},
		{"brief example", []string{"gpu001", "gpu002", "gpu003", "gpu004", "gpu009"}, "gpu[001-004,009]"},
		{"unsorted with duplicates", []string{"n3", "n1", "n2", "n1", ""}, "n[1-3]"},
		{"unpadded crosses width", []string{"n8", "n9", "n10", "n11"}, "n[8-11]"},
		{"padding break", []string{"n08", "n9"}, "n[08,9]"},
		{"padded crosses width", []string{"n098", "n099", "n100", "n101"}, "n[098-101]"},
		{"same number two widths", []string{"n1", "n01"}, "n[1,01]"},
		{"several prefixes", []string{"gpu02", "cpu01", "gpu01", "cpu02", "login"}, "cpu[01-02],gpu[01-02],login"},
		{"plain name before its numbered kin", []string{"gpu1", "gpu", "gpu2"}, "gpu,gpu[1-2]"},
		{"digits in prefix", []string{"h100-001", "h100-002", "a100-001"}, "a100-001,h100-[001-002]"},
		{"only trailing digits ranged", []string{"a01b", "a02b"}, "a01b,a02b"},
		{"singles", []string{"n1", "n3", "n5"}, "n[1,3,5]"},
		{"huge suffix kept literal", []string{"n1234567890123456789"}, "n1234567890123456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CompressHostlist(tt.in); got != tt.want {
				t.Errorf("CompressHostlist(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestHostlistRoundTrip checks that compressing a canonical hostlist's
// expansion gives the hostlist back, and expanding it gives the names.
func TestHostlistRoundTrip(t *testing.T) {
	for _, s := range []string{
		"gpu[001-032]",
		"a100-[001-016],h100-[001-032]",
		"n[1-3,7,9-12]",
		"n[8-10,012-013]",
		"node[0001-1024]",
		"login,n[0-1]",
		"rack1-n[01-04]",
		"x",
	} {
		names, err := ExpandHostlist(s)
		if err != nil {
			t.Fatalf("ExpandHostlist(%q): %v", s, err)
		}
		if got := CompressHostlist(names); got != s {
			t.Errorf("CompressHostlist(ExpandHostlist(%q)) = %q", s, got)
		}
	}
}

// sortedHostSet is the set CompressHostlist documents: names sorted by
// prefix, number, width, without duplicates or empty names.
func sortedHostSet(names []string) []string {
	keys := make([]hostKey, 0, len(names))
	for _, n := range names {
		if n != "" {
			keys = append(keys, splitHost(n))
		}
	}
	slices.SortFunc(keys, func(a, b hostKey) int {
		if c := strings.Compare(a.prefix, b.prefix); c != 0 {
			return c
		}
		if (a.digits == "") != (b.digits == "") {
			if a.digits == "" {
				return -1
			}
			return 1
		}
		if a.num != b.num {
			if a.num < b.num {
				return -1
			}
			return 1
		}
		return len(a.digits) - len(b.digits)
	})
	var out []string
	for i, k := range keys {
		if i == 0 || k.name != keys[i-1].name {
			out = append(out, k.name)
		}
	}
	return out
}

func FuzzHostlistRoundTrip(f *testing.F) {
	for _, s := range []string{"gpu[001-004,009]", "n[8-10]", "n08,n9,n10", "a[01-02]b,c", "r[1-2]n[1-2]", "x,x1,x01,x001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ExpandHostlist(s)
		if err != nil {
			if !errors.Is(err, ErrHostlist) {
				t.Fatalf("ExpandHostlist(%q): error %v does not wrap ErrHostlist", s, err)
			}
			return
		}
		if len(names) > 1<<12 {
			return // keep iterations fast
		}
		c := CompressHostlist(names)
		back, err := ExpandHostlist(c)
		if err != nil {
			t.Fatalf("ExpandHostlist(CompressHostlist(%q) = %q): %v", s, c, err)
		}
		if diff := cmp.Diff(sortedHostSet(names), back); diff != "" {
			t.Fatalf("round trip of %q via %q (-want +got):\n%s", s, c, diff)
		}
		if c2 := CompressHostlist(back); c2 != c {
			t.Fatalf("CompressHostlist not stable: %q then %q", c, c2)
		}
	})
}

// TestHostlisterMatchesCompress checks Hostlister.Append against
// CompressHostlist of the same names, on random increasing index lists
// over clusters in hostOrder and out of it (padded and unpadded
// numbers, names without digits, an empty name).
func TestHostlisterMatchesCompress(t *testing.T) {
	clusters := [][]string{
		{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10", "n11", "n12"},
		{"gpu001", "gpu002", "gpu003", "gpu010", "gpu011", "login", "x"},
		{"b2", "a1", "a3", "a2", "b1", "a10", "a09", "c", "", "a1x"},
		{"r1n08", "r1n9", "r1n10", "r2n1", "r2n01", "r2n2"},
		// Sorted: Append's fast path (runs), and its fallback for a
		// prefix that mixes a padded width with others (n08, n9, n10).
		{"a1", "a2", "a3", "b", "c01", "c02", "c03", "c05", "d7", "d8", "d9", "d10", "d11", "e", "f0", "f1"},
		{"n08", "n9", "n10", "n11", "p1", "p2"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Random sorted clusters, each prefix padded to one width or not.
	for range 40 {
		var names []string
		for _, prefix := range []string{"a", "gpu", "r1n", "x-"} {
			width := rng.IntN(4) // 0: unpadded
			for v := range rng.IntN(30) {
				if rng.IntN(3) == 0 {
					continue
				}
				names = append(names, fmt.Sprintf("%s%0*d", prefix, width, v))
			}
			if rng.IntN(3) == 0 {
				names = append(names, prefix+"login")
			}
		}
		slices.SortFunc(names, func(a, b string) int { return hostOrder(splitHost(a), splitHost(b)) })
		names = slices.Compact(names)
		if h := NewHostlister(names); h.runs == nil && len(names) > 0 {
			t.Fatalf("%v: no fast path", names)
		}
		clusters = append(clusters, names)
	}
	if h := NewHostlister(clusters[4]); h.runs == nil {
		t.Errorf("%v: no fast path", clusters[4])
	}
	if h := NewHostlister(clusters[5]); !h.sorted || h.runs != nil {
		t.Errorf("%v: sorted %v, fast path %v; want sorted, no fast path", clusters[5], h.sorted, h.runs != nil)
	}
	for ci, names := range clusters {
		h := NewHostlister(names)
		for trial := range 300 {
			var nodes []int32
			var sel []string
			for i := range names {
				if rng.IntN(2) == 0 {
					nodes = append(nodes, int32(i))
					sel = append(sel, names[i])
				}
			}
			got := string(h.Append([]byte("pre:"), nodes))
			want := "pre:" + CompressHostlist(sel)
			if got != want {
				t.Fatalf("cluster %d trial %d nodes %v: Append %q, CompressHostlist %q", ci, trial, nodes, got, want)
			}
		}
	}
	// Cluster order sorted: the sort is skipped, the result the same.
	if h := NewHostlister(clusters[0]); !h.sorted {
		t.Errorf("n1..n12 not seen as sorted")
	}
	if h := NewHostlister(clusters[2]); h.sorted {
		t.Errorf("b2, a1, ... seen as sorted")
	}
	if got := string(NewHostlister(clusters[0]).Append(nil, []int32{0, 1, 2, 8, 9, 11})); got != "n[1-3,9-10,12]" {
		t.Errorf("got %q, want n[1-3,9-10,12]", got)
	}
}
