package hwmodels

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// MIG geometry (NVIDIA MIG User Guide r580, supported-mig-profiles and
// concepts pages; nvidia-smi mig -lgip / -lgipp outputs; see
// ../shared/reference/slurm-gpu-facts.md §6.1–6.2).
//
// A GA100/GH100 GPU in MIG mode has 8 memory slices and 7 compute (SM)
// slices. A GPU instance of a profile occupies a contiguous range of memory
// slices [start, start+MemSlices) at one of the profile's allowed starts,
// and ComputeSlices of the 7 compute slices. Instances may not overlap in
// memory slices; that, the allowed starts and each profile's instance limit
// are the whole placement rule. A request that fits by counting free slices
// may still not fit by geometry: with 1g instances at slices 0 and 4 there
// are 6 free slices, yet no 3g (starts 0 or 4, 4 slices) can be placed.

// Slices of a GA100/GH100 GPU in MIG mode.
const (
	MIGMemSlices     = 8
	MIGComputeSlices = 7
)

// MIGProfile is one GPU-instance profile of a MIG geometry.
type MIGProfile struct {
	// Name is the profile name, "<compute slices>g.<memory GB>gb", with
	// "+me" for the media-extension variant ("1g.10gb+me").
	Name string
	// ID is the nvidia-smi GPU-instance profile ID (19, 20, 15, 14, 9, 5, 0).
	ID int32
	// ComputeSlices (of 7) and MemSlices (of 8) the instance takes.
	ComputeSlices int32
	MemSlices     int32
	// Starts has bit s set when the instance may start at memory slice s.
	Starts uint8
	// MaxInstances is the most instances of the profile one GPU holds.
	MaxInstances int32
	// MediaExt marks a +me profile: it takes the GPU's only OFA unit, so at
	// most one +me instance of any profile exists per GPU.
	MediaExt bool
	// MemMiB and SMs are what nvidia-smi mig -lgip reported on real GPUs
	// (the lower value where outputs differ); zero when not observed.
	MemMiB int32
	SMs    int32
}

// StartList returns the allowed starts in ascending order.
func (p *MIGProfile) StartList() []int32 {
	var out []int32
	for s := int32(0); s < MIGMemSlices; s++ {
		if p.Starts&(1<<s) != 0 {
			out = append(out, s)
		}
	}
	return out
}

// mask returns the memory-slice bits of an instance of p at start.
func (p *MIGProfile) mask(start int32) uint8 {
	return uint8(((1 << p.MemSlices) - 1) << start)
}

// MIGGeometry is the MIG profile table of a GPU model family.
type MIGGeometry struct {
	// Name is the geometry name ("a100-40gb", "h100-80gb"), which
	// `schedsim hw mig-layout --gpu` accepts besides catalog model names.
	Name string
	// Profiles, in the order of the MIG User Guide's table (smallest
	// first). Profile indices into this slice identify profiles below.
	Profiles []MIGProfile
	// Source says where the table comes from.
	Source string
}

// MIGInstance is a GPU instance: a profile (index into
// MIGGeometry.Profiles) at a start memory slice.
type MIGInstance struct {
	Profile int32
	Start   int32
}

// Start masks shared by every geometry (nvidia-smi mig -lgipp, observed on
// A100-40GB, H100-80GB SXM and H100 NVL; the MIG guide gives A100-80GB and
// H200 the same profile IDs and placements).
const (
	starts1g = 0b0111_1111 // 0,1,2,3,4,5,6
	starts2m = 0b0101_0101 // 0,2,4,6 (1g with 2/8 memory)
	starts2g = 0b0001_0101 // 0,2,4
	starts3g = 0b0001_0001 // 0,4
	starts0  = 0b0000_0001 // 0
)

const migSource = "NVIDIA MIG User Guide r580 profile tables; starts from nvidia-smi mig -lgipp " +
	"(../shared/reference/slurm-gpu-facts.md §6.1–6.2)"

// migTable builds the seven-profile table common to A100/H100/H200 from the
// memory figures in the names and the observed MiB and SM values (0 = not
// observed).
func migTable(name string, mem [7]string, mib, sms [7]int32, src string) MIGGeometry {
	shape := [7]struct {
		id, c, m, max int32
		starts        uint8
		me            bool
	}{
		{19, 1, 1, 7, starts1g, false},
		{20, 1, 1, 1, starts1g, true},
		{15, 1, 2, 4, starts2m, false},
		{14, 2, 2, 3, starts2g, false},
		{9, 3, 4, 2, starts3g, false},
		{5, 4, 4, 1, starts0, false},
		{0, 7, 8, 1, starts0, false},
	}
	g := MIGGeometry{Name: name, Source: src}
	for i, s := range shape {
		g.Profiles = append(g.Profiles, MIGProfile{
			Name: mem[i], ID: s.id, ComputeSlices: s.c, MemSlices: s.m, Starts: s.starts,
			MaxInstances: s.max, MediaExt: s.me, MemMiB: mib[i], SMs: sms[i],
		})
	}
	return g
}

// migGeometries is sorted by Name.
var migGeometries = []MIGGeometry{
	// A100-SXM4-40GB (108 SMs, 98 usable in 7g): GiB 4.75, 9.62, 9.62,
	// 19.50, 19.50, 39.25 observed.
	migTable("a100-40gb",
		[7]string{"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"},
		[7]int32{4864, 4864, 9856, 9856, 19968, 19968, 40192},
		[7]int32{14, 14, 14, 28, 42, 56, 98}, migSource),
	// A100-SXM4-80GB: same geometry and IDs; GiB not observed; SM counts
	// as A100-40GB.
	migTable("a100-80gb",
		[7]string{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
		[7]int32{},
		[7]int32{14, 14, 14, 28, 42, 56, 98}, migSource),
	// H100-80GB, values observed on SXM5 (132 SMs); the PCIe card (114
	// SMs) has lower per-profile SM counts, not observed.
	migTable("h100-80gb",
		[7]string{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
		[7]int32{9856, 9856, 19968, 19968, 40192, 40448, 81152},
		[7]int32{16, 16, 26, 32, 60, 64, 132}, migSource),
	// H200-141GB (SXM and NVL): names from the MIG guide; 1g/2g/7g values
	// from a parser fixture, 60 SMs for 3g.71gb from several users; 1g.35gb
	// and 4g.71gb not observed. Placements assumed as H100 (same IDs).
	migTable("h200-141gb",
		[7]string{"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"},
		[7]int32{16384, 16384, 0, 33280, 71475, 0, 143360},
		[7]int32{16, 16, 0, 32, 60, 0, 132}, migSource+"; H200 placements not directly observed"),
}

// MIGGeometries returns the built-in MIG geometries sorted by name; the
// caller must not modify them.
func MIGGeometries() []MIGGeometry { return migGeometries }

// LookupMIG returns the MIG geometry called name: a geometry name
// ("a100-40gb") or the name of a catalog GPU model that has one
// ("a100-sxm-40gb").
func LookupMIG(name string) (*MIGGeometry, bool) {
	for i := range migGeometries {
		if migGeometries[i].Name == name {
			return &migGeometries[i], true
		}
	}
	if g, ok := LookupGPU(name); ok && g.MIG != "" {
		return LookupMIG(g.MIG)
	}
	return nil, false
}

// migGeometryChoices lists the names LookupMIG accepts, for messages.
func migGeometryChoices() string {
	var names []string
	for _, g := range migGeometries {
		names = append(names, g.Name)
	}
	for _, g := range gpuCatalog {
		if g.MIG != "" && !slices.Contains(names, g.Name) {
			names = append(names, g.Name)
		}
	}
	return strings.Join(names, ", ")
}

// MIGGeometryChoices lists the names LookupMIG accepts, comma separated.
func MIGGeometryChoices() string { return migGeometryChoices() }

// Profile returns the index of the profile called name: the profile name
// ("1g.10gb", any case) or a Slurm GRES type ending in it after an
// underscore ("h100_1g.10gb", as in gres.conf Type=h100_1g.10gb).
func (g *MIGGeometry) Profile(name string) (int32, bool) {
	name = strings.ToLower(name)
	for i := range g.Profiles {
		p := g.Profiles[i].Name
		if name == p || strings.HasSuffix(name, "_"+p) {
			return int32(i), true
		}
	}
	return -1, false
}

// ProfileNames lists the profile names, comma separated, for messages.
func (g *MIGGeometry) ProfileNames() string {
	names := make([]string, len(g.Profiles))
	for i := range g.Profiles {
		names[i] = g.Profiles[i].Name
	}
	return strings.Join(names, ", ")
}

// migUse is the occupancy of one GPU.
type migUse struct {
	mem     uint8 // occupied memory slices
	compute int32
	count   [16]int32 // instances per profile (tables have 7 profiles)
	me      bool      // a +me instance exists
}

// use computes the occupancy of instances, or an error when they are not a
// valid configuration.
func (g *MIGGeometry) use(instances []MIGInstance) (migUse, error) {
	var u migUse
	for i, in := range instances {
		if in.Profile < 0 || int(in.Profile) >= len(g.Profiles) || int(in.Profile) >= len(u.count) {
			return u, fmt.Errorf("instance %d: no profile %d in %s", i, in.Profile, g.Name)
		}
		p := &g.Profiles[in.Profile]
		if err := g.fits(&u, in.Profile, in.Start); err != nil {
			return u, fmt.Errorf("%s at slice %d: %w", p.Name, in.Start, err)
		}
		u.add(p, in.Profile, in.Start)
	}
	return u, nil
}

func (u *migUse) add(p *MIGProfile, pi, start int32) {
	u.mem |= p.mask(start)
	u.compute += p.ComputeSlices
	u.count[pi]++
	u.me = u.me || p.MediaExt
}

// errNoStart and the others are the reasons fits gives.
var (
	errNoStart    = errors.New("not an allowed start")
	errOverlap    = errors.New("overlaps an instance's memory slices")
	errMaxCount   = errors.New("instance limit reached")
	errMediaExt   = errors.New("the GPU already has a +me instance")
	errNoCompute  = errors.New("not enough compute slices")
	errBadProfile = errors.New("unknown profile")
)

// fits reports why profile pi cannot start at start given u, or nil.
func (g *MIGGeometry) fits(u *migUse, pi, start int32) error {
	if pi < 0 || int(pi) >= len(g.Profiles) {
		return errBadProfile
	}
	p := &g.Profiles[pi]
	switch {
	case start < 0 || start >= MIGMemSlices || p.Starts&(1<<start) == 0:
		return errNoStart
	case u.mem&p.mask(start) != 0:
		return errOverlap
	case u.count[pi] >= p.MaxInstances:
		return errMaxCount
	case p.MediaExt && u.me:
		return errMediaExt
	case u.compute+p.ComputeSlices > MIGComputeSlices:
		return errNoCompute
	}
	return nil
}

// Check reports whether instances are a valid configuration of one GPU: known
// profiles at allowed starts, no overlapping memory slices, instance limits
// and the one +me instance respected, at most 7 compute slices.
func (g *MIGGeometry) Check(instances []MIGInstance) error {
	_, err := g.use(instances)
	return err
}

// Starts returns the memory slices at which profile p can be placed on a
// GPU holding current (a valid configuration), ascending; none when it
// cannot be placed.
func (g *MIGGeometry) Starts(current []MIGInstance, p int32) []int32 {
	u, err := g.use(current)
	if err != nil {
		return nil
	}
	var out []int32
	for s := int32(0); s < MIGMemSlices; s++ {
		if g.fits(&u, p, s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// Place says whether profile p can be placed on a GPU holding current and
// where: of the valid starts, the one that leaves the largest profile still
// placeable afterwards, then the most (profile, start) choices, then the
// lowest start — a best-fit that keeps room for big instances. ok is
// false when there is no valid start (by geometry, whatever the free slice
// counts say) or current is not a valid configuration.
func (g *MIGGeometry) Place(current []MIGInstance, p int32) (start int32, ok bool) {
	u, err := g.use(current)
	if err != nil {
		return -1, false
	}
	best, bestLargest, bestChoices := int32(-1), int32(-1), -1
	for s := int32(0); s < MIGMemSlices; s++ {
		if g.fits(&u, p, s) != nil {
			continue
		}
		after := u
		after.add(&g.Profiles[p], p, s)
		largest, choices := g.room(&after)
		if largest > bestLargest || largest == bestLargest && choices > bestChoices {
			best, bestLargest, bestChoices = s, largest, choices
		}
	}
	return best, best >= 0
}

// size orders profiles by compute slices, then memory slices.
func (p *MIGProfile) size() int32 { return p.ComputeSlices<<4 | p.MemSlices }

// room returns the size of the largest profile placeable on u (0 when
// none; +me profiles ignored) and the number of (profile, start) pairs
// placeable.
func (g *MIGGeometry) room(u *migUse) (largest int32, choices int) {
	for pi := range g.Profiles {
		p := &g.Profiles[pi]
		if p.MediaExt {
			continue
		}
		for s := int32(0); s < MIGMemSlices; s++ {
			if g.fits(u, int32(pi), s) == nil {
				choices++
				largest = max(largest, p.size())
			}
		}
	}
	return largest, choices
}

// LayoutError says why a MIG layout cannot be configured.
type LayoutError struct {
	Geometry string
	Reason   string
}

func (e *LayoutError) Error() string { return e.Geometry + ": " + e.Reason }

// Layout places the profiles (indices, a multiset) on one empty GPU, as an
// operator configuring a fixed layout would (nvidia-smi mig -cgi), and
// returns each instance's start in the order given. It searches every
// assignment of allowed starts (largest profiles first, lower starts
// first), so it fails only when no valid placement exists; the error is a
// *LayoutError saying why: an instance limit, more slices than the GPU has,
// or a geometric conflict between profiles that fit by count.
func (g *MIGGeometry) Layout(profiles []int32) ([]MIGInstance, error) {
	var count [16]int32
	var mem, compute, me int32
	for _, pi := range profiles {
		if pi < 0 || int(pi) >= len(g.Profiles) || int(pi) >= len(count) {
			return nil, &LayoutError{g.Name, fmt.Sprintf("no profile %d", pi)}
		}
		p := &g.Profiles[pi]
		count[pi]++
		mem += p.MemSlices
		compute += p.ComputeSlices
		if p.MediaExt {
			me++
		}
	}
	for pi := range g.Profiles {
		if p := &g.Profiles[pi]; count[pi] > p.MaxInstances {
			return nil, &LayoutError{g.Name, fmt.Sprintf("%d × %s: at most %d per GPU", count[pi], p.Name, p.MaxInstances)}
		}
	}
	if me > 1 {
		return nil, &LayoutError{g.Name, fmt.Sprintf("%d +me instances: a GPU has one media extension (OFA) unit, so at most one", me)}
	}
	if mem > MIGMemSlices {
		return nil, &LayoutError{g.Name, fmt.Sprintf("needs %d memory slices, a GPU has %d", mem, MIGMemSlices)}
	}
	if compute > MIGComputeSlices {
		return nil, &LayoutError{g.Name, fmt.Sprintf("needs %d compute slices, a GPU has %d", compute, MIGComputeSlices)}
	}
	// Search: big instances first; ties in input order.
	order := make([]int, len(profiles))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		pa, pb := &g.Profiles[profiles[a]], &g.Profiles[profiles[b]]
		if pa.MemSlices != pb.MemSlices {
			return int(pb.MemSlices - pa.MemSlices)
		}
		return int(pb.ComputeSlices - pa.ComputeSlices)
	})
	out := make([]MIGInstance, len(profiles))
	var u migUse
	var search func(k int) bool
	search = func(k int) bool {
		if k == len(order) {
			return true
		}
		i := order[k]
		pi := profiles[i]
		for s := int32(0); s < MIGMemSlices; s++ {
			if g.fits(&u, pi, s) != nil {
				continue
			}
			saved := u
			u.add(&g.Profiles[pi], pi, s)
			out[i] = MIGInstance{Profile: pi, Start: s}
			if search(k + 1) {
				return true
			}
			u = saved
		}
		return false
	}
	if search(0) {
		return out, nil
	}
	return nil, &LayoutError{g.Name, fmt.Sprintf(
		"no placement by geometry: the profiles fit by count (%d of %d memory slices, %d of %d compute slices) but their allowed starts conflict (%s)",
		mem, MIGMemSlices, compute, MIGComputeSlices, g.startsOf(profiles))}
}

// startsOf describes the allowed starts of the distinct profiles given.
func (g *MIGGeometry) startsOf(profiles []int32) string {
	var parts []string
	seen := map[int32]bool{}
	for _, pi := range profiles {
		if seen[pi] {
			continue
		}
		seen[pi] = true
		p := &g.Profiles[pi]
		var st []string
		for _, s := range p.StartList() {
			st = append(st, fmt.Sprint(s))
		}
		parts = append(parts, fmt.Sprintf("%s takes %d slice(s) starting at %s", p.Name, p.MemSlices, strings.Join(st, " or ")))
	}
	return strings.Join(parts, "; ")
}

// ParseLayout resolves profile names (comma-separated or a list) into
// profile indices. An unknown name's error lists the geometry's profiles.
func (g *MIGGeometry) ParseLayout(names []string) ([]int32, error) {
	out := make([]int32, 0, len(names))
	for _, n := range names {
		n = strings.TrimSpace(n)
		pi, ok := g.Profile(n)
		if !ok {
			return nil, fmt.Errorf("unknown MIG profile %q for %s (want %s)", n, g.Name, g.ProfileNames())
		}
		out = append(out, pi)
	}
	return out, nil
}

// MIGFragmentation describes how the free part of one MIG GPU is cut up.
type MIGFragmentation struct {
	// FreeMemSlices and FreeComputeSlices are what no instance holds.
	FreeMemSlices     int32
	FreeComputeSlices int32
	// ByCount is the compute slices of the largest profile (by compute,
	// then memory slices; not +me) that the free slice counts would hold,
	// ignoring geometry; Placeable that of the largest profile that can
	// actually be placed. Both 0 when none.
	ByCount   int32
	Placeable int32
}

// Score is 1 − Placeable/ByCount: 0 when the largest profile the free
// slices could hold by count can be placed (or nothing fits by count), up
// to 1 when free slices exist that no profile can use. It is the share of
// the largest instance's compute that the free capacity promises but
// geometry denies.
func (f MIGFragmentation) Score() float64 {
	if f.ByCount == 0 {
		return 0
	}
	return 1 - float64(f.Placeable)/float64(f.ByCount)
}

// Fragmentation measures one GPU holding current (a valid configuration;
// an invalid one gives the zero value).
func (g *MIGGeometry) Fragmentation(current []MIGInstance) MIGFragmentation {
	u, err := g.use(current)
	if err != nil {
		return MIGFragmentation{}
	}
	f := MIGFragmentation{
		FreeMemSlices:     MIGMemSlices - int32(bits.OnesCount8(u.mem)),
		FreeComputeSlices: MIGComputeSlices - u.compute,
	}
	var byCount int32
	for pi := range g.Profiles {
		p := &g.Profiles[pi]
		if p.MediaExt || u.count[pi] >= p.MaxInstances {
			continue
		}
		if p.MemSlices <= f.FreeMemSlices && p.ComputeSlices <= f.FreeComputeSlices {
			byCount = max(byCount, p.size())
		}
	}
	placeable, _ := g.room(&u)
	f.ByCount, f.Placeable = byCount>>4, placeable>>4
	return f
}

// MaximalLayouts enumerates the distinct maximal configurations of one
// GPU, ignoring +me profiles: multisets of profiles that can be placed
// together and to which no further instance can be added. Each is returned
// as sorted profile indices; the list is sorted. (For the A100/H100/H200
// table there are 38; our enumeration, not an NVIDIA-published list.)
func (g *MIGGeometry) MaximalLayouts() [][]int32 {
	seen := map[string]bool{}
	var out [][]int32
	var cur []MIGInstance
	var walk func(u migUse, from int32)
	walk = func(u migUse, from int32) {
		extended := false
		for pi := range g.Profiles {
			if g.Profiles[pi].MediaExt {
				continue
			}
			for s := int32(0); s < MIGMemSlices; s++ {
				if g.fits(&u, int32(pi), s) != nil {
					continue
				}
				extended = true
				// Enumerate in canonical order (by start slice) to bound work.
				if s < from {
					continue
				}
				next := u
				next.add(&g.Profiles[pi], int32(pi), s)
				cur = append(cur, MIGInstance{int32(pi), s})
				walk(next, s)
				cur = cur[:len(cur)-1]
			}
		}
		if extended {
			return
		}
		ms := make([]int32, len(cur))
		for i, in := range cur {
			ms[i] = in.Profile
		}
		slices.Sort(ms)
		key := fmt.Sprint(ms)
		if !seen[key] {
			seen[key] = true
			out = append(out, ms)
		}
	}
	walk(migUse{}, 0)
	slices.SortFunc(out, slices.Compare)
	return out
}
