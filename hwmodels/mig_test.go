package hwmodels

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// migTables are the reference's tables (slurm-gpu-facts.md §6.1–6.2): per
// geometry, profile name → (ID, compute slices, memory slices, starts, max).
var migTables = map[string][]struct {
	name      string
	id, c, m  int32
	starts    []int32
	maxCount  int32
	mediaExt  bool
	smsObserv int32
}{
	"a100-40gb": {
		{"1g.5gb", 19, 1, 1, []int32{0, 1, 2, 3, 4, 5, 6}, 7, false, 14},
		{"1g.5gb+me", 20, 1, 1, []int32{0, 1, 2, 3, 4, 5, 6}, 1, true, 14},
		{"1g.10gb", 15, 1, 2, []int32{0, 2, 4, 6}, 4, false, 14},
		{"2g.10gb", 14, 2, 2, []int32{0, 2, 4}, 3, false, 28},
		{"3g.20gb", 9, 3, 4, []int32{0, 4}, 2, false, 42},
		{"4g.20gb", 5, 4, 4, []int32{0}, 1, false, 56},
		{"7g.40gb", 0, 7, 8, []int32{0}, 1, false, 98},
	},
	"a100-80gb": {
		{"1g.10gb", 19, 1, 1, []int32{0, 1, 2, 3, 4, 5, 6}, 7, false, 14},
		{"1g.10gb+me", 20, 1, 1, []int32{0, 1, 2, 3, 4, 5, 6}, 1, true, 14},
		{"1g.20gb", 15, 1, 2, []int32{0, 2, 4, 6}, 4, false, 14},
		{"2g.20gb", 14, 2, 2, []int32{0, 2, 4}, 3, false, 28},
		{"3g.40gb", 9, 3, 4, []int32{0, 4}, 2, false, 42},
		{"4g.40gb", 5, 4, 4, []int32{0}, 1, false, 56},
		{"7g.80gb", 0, 7, 8, []int32{0}, 1, false, 98},
	},
	"h100-80gb": {
		{"1g.10gb", 19, 1, 1, []int32{0, 1, 2, 3, 4, 5, 6}, 7, false, 16},
		{"1g.10gb+me", 20, 1, 1, []int32{0, 1, 2, 3, 4, 5, 6}, 1, true, 16},
		{"1g.20gb", 15, 1, 2, []int32{0, 2, 4, 6}, 4, false, 26},
		{"2g.20gb", 14, 2, 2, []int32{0, 2, 4}, 3, false, 32},
		{"3g.40gb", 9, 3, 4, []int32{0, 4}, 2, false, 60},
		{"4g.40gb", 5, 4, 4, []int32{0}, 1, false, 64},
		{"7g.80gb", 0, 7, 8, []int32{0}, 1, false, 132},
	},
	"h200-141gb": {
		{"1g.18gb", 19, 1, 1, []int32{0, 1, 2, 3, 4, 5, 6}, 7, false, 16},
		{"1g.18gb+me", 20, 1, 1, []int32{0, 1, 2, 3, 4, 5, 6}, 1, true, 16},
		{"1g.35gb", 15, 1, 2, []int32{0, 2, 4, 6}, 4, false, 0},
		{"2g.35gb", 14, 2, 2, []int32{0, 2, 4}, 3, false, 32},
		{"3g.71gb", 9, 3, 4, []int32{0, 4}, 2, false, 60},
		{"4g.71gb", 5, 4, 4, []int32{0}, 1, false, 0},
		{"7g.141gb", 0, 7, 8, []int32{0}, 1, false, 132},
	},
}

// TestMIGProfileTables checks every profile of every reference table: its
// figures, its valid starts on an empty GPU (and that every other start is
// refused), that MaxInstances instances fit and one more does not.
func TestMIGProfileTables(t *testing.T) {
	if len(migTables) != len(MIGGeometries()) {
		t.Fatalf("reference has %d tables, catalog %d", len(migTables), len(MIGGeometries()))
	}
	for gname, table := range migTables {
		g, ok := LookupMIG(gname)
		if !ok {
			t.Fatalf("LookupMIG(%q) missing", gname)
		}
		if len(g.Profiles) != len(table) {
			t.Fatalf("%s: %d profiles, want %d", gname, len(g.Profiles), len(table))
		}
		for _, want := range table {
			t.Run(gname+"/"+want.name, func(t *testing.T) {
				pi, ok := g.Profile(want.name)
				if !ok {
					t.Fatalf("profile %q missing", want.name)
				}
				p := g.Profiles[pi]
				got := []int32{p.ID, p.ComputeSlices, p.MemSlices, p.MaxInstances, p.SMs}
				if d := cmp.Diff([]int32{want.id, want.c, want.m, want.maxCount, want.smsObserv}, got); d != "" {
					t.Errorf("id, compute, mem, max, SMs (-want +got):\n%s", d)
				}
				if p.MediaExt != want.mediaExt {
					t.Errorf("MediaExt = %v", p.MediaExt)
				}
				if d := cmp.Diff(want.starts, g.Starts(nil, pi)); d != "" {
					t.Errorf("starts on an empty GPU (-want +got):\n%s", d)
				}
				for s := int32(0); s < MIGMemSlices; s++ {
					err := g.Check([]MIGInstance{{pi, s}})
					if valid := slices.Contains(want.starts, s); valid != (err == nil) {
						t.Errorf("Check at start %d: %v (valid start: %v)", s, err, valid)
					}
				}
				full := slices.Repeat([]int32{pi}, int(want.maxCount))
				if _, err := g.Layout(full); err != nil {
					t.Errorf("%d × %s: %v", want.maxCount, want.name, err)
				}
				if _, err := g.Layout(append(full, pi)); err == nil {
					t.Errorf("%d × %s fits, want the instance limit", want.maxCount+1, want.name)
				}
			})
		}
	}
}

func names(g *MIGGeometry, ins []MIGInstance) string {
	var b []string
	for _, in := range ins {
		b = append(b, fmt.Sprintf("%s@%d", g.Profiles[in.Profile].Name, in.Start))
	}
	return strings.Join(b, " ")
}

func mustLayout(t *testing.T, g *MIGGeometry, spec string) []MIGInstance {
	t.Helper()
	var ins []MIGInstance
	if spec == "" {
		return nil
	}
	for _, f := range strings.Fields(spec) {
		var name string
		var start int32
		at := strings.IndexByte(f, '@')
		name = f[:at]
		fmt.Sscan(f[at+1:], &start)
		pi, ok := g.Profile(name)
		if !ok {
			t.Fatalf("profile %q", name)
		}
		ins = append(ins, MIGInstance{pi, start})
	}
	if err := g.Check(ins); err != nil {
		t.Fatalf("fixture %q invalid: %v", spec, err)
	}
	return ins
}

// TestMIGPlaceGeometryNotCount places profiles on partly used GPUs where the
// free slices would hold the profile by count but no allowed start is free.
func TestMIGPlaceGeometryNotCount(t *testing.T) {
	tests := []struct {
		name, gpu, current, profile string
		wantStart                   int32 // -1: no placement
	}{
		// 6 free memory slices, 5 compute: a 3g (4 slices, starts 0 or 4)
		// fits by count, but slices 0 and 4 are both taken.
		{"3g blocked by 1g at 0 and 4", "h100-80gb", "1g.10gb@0 1g.10gb@4", "3g.40gb", -1},
		// 7 free slices, 6 compute: 4g starts only at 0.
		{"4g blocked by 1g at 3", "a100-40gb", "1g.5gb@3", "4g.20gb", -1},
		// 2 free slices (6, 7) and 2 compute: 2g starts at 0, 2, 4 only.
		{"2g never at slice 6", "a100-80gb", "2g.20gb@0 2g.20gb@2 1g.20gb@4", "2g.20gb", -1},
		// 1g.20gb needs an even start: free slices 1-2 and 5-7.
		{"1g.20gb needs even start", "h100-80gb", "1g.10gb@0 1g.10gb@3 1g.10gb@4", "1g.20gb", 6},
		// Free slice 7 alone is unusable by any 1-slice profile.
		{"slice 7 is only reachable by 2+ slice profiles", "h200-141gb", "1g.18gb@0 1g.18gb@1 1g.18gb@2 1g.18gb@3 1g.18gb@4 1g.18gb@5 1g.18gb@6", "1g.18gb", -1},
		// Best fit: a lone 1g goes where it keeps the 4g and 3g room.
		{"best fit keeps 4g room", "a100-40gb", "", "1g.5gb", 6},
		{"best fit next to a 3g", "a100-40gb", "3g.20gb@0", "2g.10gb", 4},
		{"+me only once", "h100-80gb", "1g.10gb+me@0", "1g.10gb+me", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := LookupMIG(tt.gpu)
			cur := mustLayout(t, g, tt.current)
			pi, _ := g.Profile(tt.profile)
			start, ok := g.Place(cur, pi)
			if !ok {
				start = -1
			}
			if start != tt.wantStart {
				t.Errorf("Place(%s on %q) = %d, want %d (valid starts %v)", tt.profile, tt.current, start, tt.wantStart, g.Starts(cur, pi))
			}
			if ok {
				if err := g.Check(append(slices.Clone(cur), MIGInstance{pi, start})); err != nil {
					t.Errorf("placement invalid: %v", err)
				}
			}
		})
	}
}

func TestMIGFragmentation(t *testing.T) {
	tests := []struct {
		name, gpu, current string
		want               MIGFragmentation
		score              float64
	}{
		{"empty", "h100-80gb", "", MIGFragmentation{8, 7, 7, 7}, 0},
		{"full 7g", "h100-80gb", "7g.80gb@0", MIGFragmentation{0, 0, 0, 0}, 0},
		// 6 free slices and 5 compute promise a 4g; only a 2g can be
		// placed (2g@2): half of its compute denied.
		{"1g at 0 and 4", "h100-80gb", "1g.10gb@0 1g.10gb@4", MIGFragmentation{6, 5, 4, 2}, 0.5},
		// A mix: 3g@4, 1g@0, 1g@2 leave slices 1 and 3 free (2 slices, 2
		// compute): by count a 2g fits, but only 1g profiles place.
		{"mix 3g+1g+1g", "a100-40gb", "3g.20gb@4 1g.5gb@0 1g.5gb@2", MIGFragmentation{2, 2, 2, 1}, 0.5},
		// Packed the best-fit way there is no fragmentation.
		{"packed mix", "a100-40gb", "3g.20gb@4 1g.5gb@0 1g.5gb@1", MIGFragmentation{2, 2, 2, 2}, 0},
		// 7 × 1g: slice 7 free, no compute left: nothing by count.
		{"7 x 1g", "a100-40gb", "1g.5gb@0 1g.5gb@1 1g.5gb@2 1g.5gb@3 1g.5gb@4 1g.5gb@5 1g.5gb@6", MIGFragmentation{1, 0, 0, 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := LookupMIG(tt.gpu)
			got := g.Fragmentation(mustLayout(t, g, tt.current))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if got.Score() != tt.score {
				t.Errorf("Score = %v, want %v", got.Score(), tt.score)
			}
		})
	}
}

// TestMIGFragmentationAfterMix places a mix of instances one by one with
// Place (best fit) and with lowest-start-first: best fit keeps the 4g room
// the last instance needs, lowest-first strands it.
func TestMIGFragmentationAfterMix(t *testing.T) {
	g, _ := LookupMIG("h100-80gb")
	mix := []string{"1g.10gb", "1g.10gb", "4g.40gb"}
	var best, low []MIGInstance
	for i, n := range mix {
		pi, _ := g.Profile(n)
		s, ok := g.Place(best, pi)
		if !ok {
			t.Fatalf("best fit: %s does not fit on %s", n, names(g, best))
		}
		best = append(best, MIGInstance{pi, s})
		st := g.Starts(low, pi)
		if len(st) == 0 {
			if i != 2 {
				t.Fatalf("lowest first: %s does not fit on %s", n, names(g, low))
			}
			// 6 free memory slices and 5 compute: a 4g fits by count only.
			f := g.Fragmentation(low)
			if d := cmp.Diff(MIGFragmentation{6, 5, 4, 3}, f); d != "" {
				t.Errorf("lowest first %s (-want +got):\n%s", names(g, low), d)
			}
			if f.Score() != 0.25 {
				t.Errorf("score %v", f.Score())
			}
			continue
		}
		low = append(low, MIGInstance{pi, st[0]})
	}
	if got := names(g, best); got != "1g.10gb@6 1g.10gb@4 4g.40gb@0" {
		t.Errorf("best fit = %s", got)
	}
	if got := names(g, low); got != "1g.10gb@0 1g.10gb@1" {
		t.Errorf("lowest first = %s", got)
	}
	if f := g.Fragmentation(best); f.Score() != 0 || f.FreeMemSlices != 2 {
		t.Errorf("best fit after the mix: %+v", f)
	}
}

func TestMIGLayout(t *testing.T) {
	tests := []struct {
		gpu, layout string
		want        string // placed instances, or the error
	}{
		{"a100-40gb", "4g.20gb,2g.10gb,1g.5gb", "4g.20gb@0 2g.10gb@4 1g.5gb@6"},
		{"a100-40gb", "1g.5gb,2g.10gb,4g.20gb", "1g.5gb@6 2g.10gb@4 4g.20gb@0"},
		{"h100-80gb", "3g.40gb,2g.20gb,1g.10gb,1g.10gb", "3g.40gb@4 2g.20gb@0 1g.10gb@2 1g.10gb@3"},
		{"h100-80gb", "3g.40gb,3g.40gb", "3g.40gb@0 3g.40gb@4"},
		{"h100-80gb", "4g.40gb,3g.40gb", "4g.40gb@0 3g.40gb@4"},
		{"h100-80gb", "1g.20gb,1g.20gb,1g.20gb,1g.20gb", "1g.20gb@0 1g.20gb@2 1g.20gb@4 1g.20gb@6"},
		{"a100-40gb", "4g.20gb,4g.20gb", "a100-40gb: 2 × 4g.20gb: at most 1 per GPU"},
		{"a100-40gb", "4g.20gb,3g.20gb,1g.5gb", "a100-40gb: needs 9 memory slices, a GPU has 8"},
		{"a100-40gb", "4g.20gb,2g.10gb,2g.10gb", "a100-40gb: needs 8 compute slices, a GPU has 7"},
		{"h100-80gb", "1g.10gb+me,1g.10gb+me", "h100-80gb: 2 × 1g.10gb+me: at most 1 per GPU"},
		// The seed's 7 × 1g.20gb per H100 (gres.conf Count=56 on 8 GPUs).
		{"h100-80gb", strings.Repeat("1g.20gb,", 6) + "1g.20gb", "h100-80gb: 7 × 1g.20gb: at most 4 per GPU"},
	}
	for _, tt := range tests {
		t.Run(tt.gpu+"/"+tt.layout, func(t *testing.T) {
			g, _ := LookupMIG(tt.gpu)
			ps, err := g.ParseLayout(strings.Split(tt.layout, ","))
			if err != nil {
				t.Fatal(err)
			}
			ins, err := g.Layout(ps)
			got := names(g, ins)
			if err != nil {
				got = err.Error()
				var le *LayoutError
				if !errors.As(err, &le) {
					t.Errorf("error %T, want *LayoutError", err)
				}
			} else if cerr := g.Check(ins); cerr != nil {
				t.Errorf("layout invalid: %v", cerr)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestMIGLayoutCountImpliesGeometry: for the built-in tables on an empty
// GPU, every multiset that respects the counts (memory and compute slices,
// instance limits, one +me) has a valid placement, and Layout finds it: the
// only "by count but not by geometry" failures are on partly used GPUs.
// Checked exhaustively over all multisets of up to 8 instances.
func TestMIGLayoutCountImpliesGeometry(t *testing.T) {
	for _, g := range MIGGeometries() {
		n := len(g.Profiles)
		var cur []int32
		var rec func(from int, mem, comp int32)
		checked := 0
		rec = func(from int, mem, comp int32) {
			if len(cur) > 0 {
				checked++
				if _, err := g.Layout(cur); err != nil {
					var le *LayoutError
					if errors.As(err, &le) && strings.HasPrefix(le.Reason, "no placement") {
						t.Errorf("%s: %s: %v", g.Name, names(&g, nil), err)
					}
				}
			}
			for pi := from; pi < n; pi++ {
				p := &g.Profiles[pi]
				if mem+p.MemSlices > MIGMemSlices || comp+p.ComputeSlices > MIGComputeSlices {
					continue
				}
				cur = append(cur, int32(pi))
				rec(pi, mem+p.MemSlices, comp+p.ComputeSlices)
				cur = cur[:len(cur)-1]
			}
		}
		rec(0, 0, 0)
		if checked < 50 {
			t.Errorf("%s: only %d multisets checked", g.Name, checked)
		}
	}
}

func TestMIGMaximalLayouts(t *testing.T) {
	for _, g := range MIGGeometries() {
		got := g.MaximalLayouts()
		// The reference's own enumeration gives 38 (slurm-gpu-facts.md §6.1).
		if len(got) != 38 {
			t.Errorf("%s: %d maximal layouts, want 38", g.Name, len(got))
		}
		for _, ms := range got {
			if _, err := g.Layout(ms); err != nil {
				t.Errorf("%s: maximal layout %v does not place: %v", g.Name, ms, err)
			}
		}
	}
}

func TestMIGProfileLookup(t *testing.T) {
	g, _ := LookupMIG("h100-sxm-80gb")
	if g == nil || g.Name != "h100-80gb" {
		t.Fatalf("LookupMIG(h100-sxm-80gb) = %v", g)
	}
	for _, n := range []string{"1g.20gb", "h100_1g.20gb", "1G.20GB"} {
		if pi, ok := g.Profile(n); !ok || g.Profiles[pi].Name != "1g.20gb" {
			t.Errorf("Profile(%q) = %d, %v", n, pi, ok)
		}
	}
	if _, ok := g.Profile("1g.7gb"); ok {
		t.Error("1g.7gb found")
	}
	if _, ok := LookupMIG("h100-nvl-94gb"); ok {
		t.Error("h100-nvl-94gb has no table in the catalog")
	}
	if _, err := g.ParseLayout([]string{"1g.7gb"}); err == nil || !strings.Contains(err.Error(), "want 1g.10gb, 1g.10gb+me") {
		t.Errorf("ParseLayout error = %v", err)
	}
}
