package reports

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// compressHostlist returns names as a Slurm hostlist expression, the form
// scontrol show hostlist prints: "gpu[001-004,009],login1".
//
// Each name is split into a prefix and a trailing run of decimal digits.
// Names with the same prefix and digit width are merged into one bracket
// group of ascending, de-duplicated numbers in which consecutive numbers
// become ranges; a group holding a single number is written without
// brackets. Zero-padded numbers ("007") keep their width; an unpadded
// number joins the widest padded group of its prefix whose width does not
// exceed its own length, since it is written the same way there (so
// "gpu099", "gpu100" give "gpu[099-100]"); other unpadded numbers share a
// group of their own ("n9", "n10" give "n[9-10]"). Names without trailing
// digits, or with more digits than a uint64 holds, are kept whole.
// Entries are ordered by prefix, then width (whole names first). Duplicate
// names appear once. The result is the empty string for no names.
//
// TODO: replace with hwmodels.CompressHostlist once it lands.
func compressHostlist(names []string) string {
	if len(names) == 1 {
		return names[0] // the common case; the same as the general path
	}
	type host struct {
		prefix, digits string
		num            uint64
	}
	type group struct {
		prefix string
		width  int // 0 for a whole name; 1 for unpadded numbers
		nums   []uint64
	}
	var hosts []host
	padded := map[string][]int{} // prefix → padded widths
	var groups []group
	for _, name := range names {
		i := len(name)
		for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
			i--
		}
		n, err := strconv.ParseUint(name[i:], 10, 64)
		if i == len(name) || err != nil {
			groups = append(groups, group{prefix: name})
			continue
		}
		h := host{prefix: name[:i], digits: name[i:], num: n}
		hosts = append(hosts, h)
		if w := len(h.digits); w > 1 && h.digits[0] == '0' && !slices.Contains(padded[h.prefix], w) {
			padded[h.prefix] = append(padded[h.prefix], w)
		}
	}
	type key struct {
		prefix string
		width  int
	}
	byKey := map[key]int{} // → index in groups
	for _, h := range hosts {
		w := len(h.digits)
		if !(w > 1 && h.digits[0] == '0') {
			// Unpadded: the widest padded width ≤ its length, else 1.
			best := 1
			for _, pw := range padded[h.prefix] {
				if pw <= w && pw > best {
					best = pw
				}
			}
			w = best
		}
		k := key{h.prefix, w}
		gi, ok := byKey[k]
		if !ok {
			gi = len(groups)
			byKey[k] = gi
			groups = append(groups, group{prefix: h.prefix, width: w})
		}
		groups[gi].nums = append(groups[gi].nums, h.num)
	}
	slices.SortFunc(groups, func(a, b group) int {
		return cmp.Or(strings.Compare(a.prefix, b.prefix), cmp.Compare(a.width, b.width))
	})
	var b strings.Builder
	for gi, g := range groups {
		if gi > 0 && g.width == 0 && groups[gi-1].width == 0 && groups[gi-1].prefix == g.prefix {
			continue // duplicate whole name
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(g.prefix)
		if g.width == 0 {
			continue
		}
		slices.Sort(g.nums)
		nums := slices.Compact(g.nums)
		if len(nums) == 1 {
			writePadded(&b, nums[0], g.width)
			continue
		}
		b.WriteByte('[')
		for i := 0; i < len(nums); {
			j := i
			for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
				j++
			}
			if i > 0 {
				b.WriteByte(',')
			}
			writePadded(&b, nums[i], g.width)
			if j > i {
				b.WriteByte('-')
				writePadded(&b, nums[j], g.width)
			}
			i = j + 1
		}
		b.WriteByte(']')
	}
	return b.String()
}

// writePadded writes n in decimal, zero-padded to width digits.
func writePadded(b *strings.Builder, n uint64, width int) {
	s := strconv.FormatUint(n, 10)
	for range width - len(s) {
		b.WriteByte('0')
	}
	b.WriteString(s)
}
