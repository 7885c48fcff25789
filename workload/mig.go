package workload

import (
	"fmt"
	"strconv"
	"strings"
)

// MIGProfile names a MIG GPU-instance profile ("1g.10gb", "3g.40gb",
// "1g.10gb+me") in four bytes: the compute slices (1 to 7), the memory in
// GB as the profile name states it (1 to 65535) and the media-extension
// flag. The zero value means no MIG profile: the request is for whole GPUs.
// Profile names are only meaningful together with a GPU model's MIG table
// ("1g.10gb" is the 1-slice profile on an H100 but the 2-slice one on an
// A100-40GB); the simulator resolves them per node (hwmodels.MIGGeometry.
// Profile).
type MIGProfile uint32

const (
	migMemBits     = 16
	migComputeBits = 4
	migMediaExt    = 1 << (migMemBits + migComputeBits)
)

// NewMIGProfile returns the profile of compute slices (1 to 7) and memGB
// (1 to 65535), with the media extension when me is set; ok is false when
// a value is out of range.
func NewMIGProfile(compute, memGB int, me bool) (MIGProfile, bool) {
	if !(compute >= 1 && compute <= 7) || !(memGB >= 1 && memGB < 1<<migMemBits) {
		return 0, false
	}
	p := MIGProfile(memGB) | MIGProfile(compute)<<migMemBits
	if me {
		p |= migMediaExt
	}
	return p, true
}

// ParseMIGProfile parses a profile name "<compute>g.<memory>gb", with an
// optional "+me" suffix, case-insensitive ("1g.10gb", "3G.40GB",
// "1g.10gb+me").
func ParseMIGProfile(s string) (MIGProfile, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	body, me := strings.CutSuffix(name, "+me")
	c, rest, ok := strings.Cut(body, "g.")
	if ok {
		var mem string
		if mem, ok = strings.CutSuffix(rest, "gb"); ok {
			ci, err1 := strconv.Atoi(c)
			mi, err2 := strconv.Atoi(mem)
			if err1 == nil && err2 == nil && c[0] != '+' && mem[0] != '+' {
				if p, ok := NewMIGProfile(ci, mi, me); ok {
					return p, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("not a MIG profile name: %q (want <compute slices>g.<memory GB>gb, e.g. 1g.10gb or 3g.40gb+me, compute slices 1 to 7)", s)
}

// SplitMIGType splits a GPU GRES type that names a MIG profile into the
// GPU type and the profile, as gres.conf and Slurm requests write them:
// "1g.10gb" gives ("", 1g.10gb) and "h100_1g.20gb" gives ("h100",
// 1g.20gb). ok is false when t names no MIG profile (a plain GPU type such
// as "h100").
func SplitMIGType(t string) (gpuType string, p MIGProfile, ok bool) {
	name := t
	if i := strings.LastIndexByte(t, '_'); i >= 0 {
		gpuType, name = t[:i], t[i+1:]
	}
	p, err := ParseMIGProfile(name)
	if err != nil {
		return "", 0, false
	}
	return strings.ToLower(gpuType), p, true
}

// Compute returns the compute slices (0 for the zero profile).
func (p MIGProfile) Compute() int { return int(p>>migMemBits) & (1<<migComputeBits - 1) }

// MemGB returns the memory in GB the name states (0 for the zero profile).
func (p MIGProfile) MemGB() int { return int(p & (1<<migMemBits - 1)) }

// MediaExt reports the "+me" variant.
func (p MIGProfile) MediaExt() bool { return p&migMediaExt != 0 }

// String returns the profile name ("1g.10gb"), "" for the zero profile.
func (p MIGProfile) String() string {
	if p == 0 {
		return ""
	}
	s := strconv.Itoa(p.Compute()) + "g." + strconv.Itoa(p.MemGB()) + "gb"
	if p.MediaExt() {
		s += "+me"
	}
	return s
}
