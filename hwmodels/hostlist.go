package hwmodels

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxHostlistNames is the most names ExpandHostlist produces from one
// hostlist; a longer expansion is an error, not an allocation.
const MaxHostlistNames = 1 << 20

// maxRangeDigits bounds the digits of one number in a bracket range, so that
// every value and every range size fits an int64 without overflow.
const maxRangeDigits = 18

// ErrHostlist is wrapped by every error ExpandHostlist returns.
var ErrHostlist = errors.New("bad hostlist")

// hostlistError is a hostlist syntax error; it reads as its message and
// unwraps to ErrHostlist.
type hostlistError struct{ msg string }

func (e *hostlistError) Error() string { return e.msg }
func (e *hostlistError) Unwrap() error { return ErrHostlist }

func hostlistErrorf(s, format string, args ...any) error {
	return &hostlistError{msg: fmt.Sprintf("hostlist %q: ", s) + fmt.Sprintf(format, args...)}
}

// hostRange is one item of a bracket list: lo..hi inclusive, each value
// printed zero-padded to width digits (the length of lo as written, as Slurm
// does: "[01-10]" gives 01 … 10, "[1-10]" gives 1 … 10).
type hostRange struct {
	lo, hi uint64
	width  int
}

// hostPart is a literal run of a host pattern (ranges == nil) or one bracket
// group.
type hostPart struct {
	lit    string
	ranges []hostRange
}

// hostPattern is one comma-separated item of a hostlist: literal text and
// bracket groups whose expansion is their Cartesian product, leftmost group
// varying slowest ("r[1-2]n[1-2]" → r1n1, r1n2, r2n1, r2n2).
type hostPattern struct {
	parts []hostPart
}

// count returns how many names p expands to, or limit+1 when that is more
// than limit.
func (p hostPattern) count(limit uint64) uint64 {
	n := uint64(1)
	for _, part := range p.parts {
		if part.ranges == nil {
			continue
		}
		var k uint64
		for _, r := range part.ranges {
			k += r.hi - r.lo + 1
			if k > limit {
				return limit + 1
			}
		}
		n *= k // both factors ≤ limit < 2^32, no overflow
		if n > limit {
			return limit + 1
		}
	}
	return n
}

// appendNames appends the expansion of p to dst.
func (p hostPattern) appendNames(dst []string) []string {
	var buf []byte
	var rec func(i int)
	rec = func(i int) {
		if i == len(p.parts) {
			dst = append(dst, string(buf))
			return
		}
		part := p.parts[i]
		if part.ranges == nil {
			n := len(buf)
			buf = append(buf, part.lit...)
			rec(i + 1)
			buf = buf[:n]
			return
		}
		for _, r := range part.ranges {
			for v := r.lo; ; v++ {
				n := len(buf)
				buf = appendPadded(buf, v, r.width)
				rec(i + 1)
				buf = buf[:n]
				if v == r.hi {
					break
				}
			}
		}
	}
	rec(0)
	return dst
}

// appendPadded appends v in decimal, zero-padded to width digits.
func appendPadded(dst []byte, v uint64, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendUint(tmp[:0], v, 10)
	for i := len(d); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, d...)
}

// isHostByte reports whether c may appear in a host name outside brackets.
func isHostByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.'
}

func isHostlistSep(c byte) bool {
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// parseHostlist parses s into patterns without expanding them.
func parseHostlist(s string) ([]hostPattern, error) {
	var pats []hostPattern
	i := 0
	for i < len(s) {
		if isHostlistSep(s[i]) {
			i++
			continue
		}
		var p hostPattern
		for i < len(s) && !isHostlistSep(s[i]) {
			switch c := s[i]; {
			case c == '[':
				end := strings.IndexByte(s[i:], ']')
				if end < 0 {
					return nil, hostlistErrorf(s, `"[" at offset %d has no closing "]"`, i)
				}
				body := s[i+1 : i+end]
				if j := strings.IndexByte(body, '['); j >= 0 {
					return nil, hostlistErrorf(s, `nested "[" at offset %d`, i+1+j)
				}
				ranges, err := parseBracket(s, body, i+1)
				if err != nil {
					return nil, err
				}
				p.parts = append(p.parts, hostPart{ranges: ranges})
				i += end + 1
			case c == ']':
				return nil, hostlistErrorf(s, `"]" at offset %d without "["`, i)
			case isHostByte(c):
				j := i
				for j < len(s) && isHostByte(s[j]) {
					j++
				}
				p.parts = append(p.parts, hostPart{lit: s[i:j]})
				i = j
			default:
				return nil, hostlistErrorf(s, "invalid character %q at offset %d (want letters, digits, '-', '_', '.' and [ranges])", rune(c), i)
			}
		}
		pats = append(pats, p)
	}
	return pats, nil
}

// parseBracket parses the inside of one bracket group, "1-3,7"; off is the
// offset of body in s, for messages.
func parseBracket(s, body string, off int) ([]hostRange, error) {
	if body == "" {
		return nil, hostlistErrorf(s, `empty "[]" at offset %d`, off-1)
	}
	var out []hostRange
	for item := range strings.SplitSeq(body, ",") {
		loStr, hiStr, isRange := strings.Cut(item, "-")
		lo, err := parseRangeNumber(s, loStr, item, off)
		if err != nil {
			return nil, err
		}
		hi := lo
		if isRange {
			if hi, err = parseRangeNumber(s, hiStr, item, off); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, hostlistErrorf(s, "range %q at offset %d runs backwards", item, off)
			}
		}
		out = append(out, hostRange{lo: lo, hi: hi, width: len(loStr)})
		off += len(item) + 1
	}
	return out, nil
}

func parseRangeNumber(s, num, item string, off int) (uint64, error) {
	if num == "" || len(num) > maxRangeDigits || strings.IndexFunc(num, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, hostlistErrorf(s, "bad range %q at offset %d (want N or N-M, N and M of 1 to %d digits)", item, off, maxRangeDigits)
	}
	v, err := strconv.ParseUint(num, 10, 64)
	if err != nil { // unreachable: at most 18 digits
		return 0, hostlistErrorf(s, "bad number %q at offset %d", num, off)
	}
	return v, nil
}

// ExpandHostlist expands a Slurm hostlist expression into host names, in the
// order written. The forms are Slurm's: names separated by commas (or
// whitespace), each a run of letters, digits, '-', '_' and '.' with bracket
// groups of numbers and ranges, "gpu[001-003,007]" → gpu001, gpu002, gpu003,
// gpu007. A range keeps the zero padding of its first number ("[08-10]" →
// 08, 09, 10; "[8-10]" → 8, 9, 10). Several bracket groups in one name
// expand to their Cartesian product, the leftmost varying slowest
// ("r[1-2]n[1-2]" → r1n1, r1n2, r2n1, r2n2). Duplicates are kept.
//
// An empty or all-whitespace s gives nil and no error. Malformed input
// (unbalanced or nested brackets, empty "[]", a backwards range, a character
// outside the set above) and expansions longer than MaxHostlistNames give an
// error wrapping ErrHostlist.
func ExpandHostlist(s string) ([]string, error) {
	pats, err := parseHostlist(s)
	if err != nil {
		return nil, err
	}
	var total uint64
	for _, p := range pats {
		total += p.count(MaxHostlistNames)
		if total > MaxHostlistNames {
			return nil, hostlistErrorf(s, "expands to more than %d names", MaxHostlistNames)
		}
	}
	if total == 0 {
		return nil, nil
	}
	names := make([]string, 0, total)
	for _, p := range pats {
		names = p.appendNames(names)
	}
	return names, nil
}

// HostlistCount returns how many names the hostlist s expands to (with
// duplicates), without expanding it; limit+1 when that is more than
// limit. Syntax errors are ExpandHostlist's.
func HostlistCount(s string, limit uint64) (uint64, error) {
	pats, err := parseHostlist(s)
	if err != nil {
		return 0, err
	}
	var total uint64
	for _, p := range pats {
		if total += p.count(limit); total > limit {
			return limit + 1, nil
		}
	}
	return total, nil
}

// hostKey is a host name split for CompressHostlist: a prefix and its
// trailing decimal digits, if any.
type hostKey struct {
	name   string
	prefix string
	digits string // "" when the name has no (usable) numeric suffix
	num    uint64
}

func splitHost(name string) hostKey {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	k := hostKey{name: name, prefix: name}
	if d := name[i:]; d != "" && len(d) <= maxRangeDigits {
		k.prefix, k.digits = name[:i], d
		k.num, _ = strconv.ParseUint(d, 10, 64)
	}
	return k
}

// decimalLen returns the number of decimal digits of v, at least 1.
func decimalLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// CompressHostlist returns the Slurm ranged form of a set of host names, the
// reverse of ExpandHostlist: "gpu001, gpu002, gpu003, gpu004, gpu009" →
// "gpu[001-004,009]". Like Slurm's node lists the result is a sorted set:
// duplicates and empty names are dropped, names are ordered by the text
// before their trailing number, then by that number, then by its width.
// Only a name's trailing digits are ranged; consecutive numbers join one
// range only where the padding of its first number reproduces them
// ("n8,n9,n10" → "n[8-10]", "n08,n9" → "n[08,9]"). Names with no trailing
// digits are printed as they are. Nil or empty input gives "".
//
// For names that ExpandHostlist accepts (letters, digits, '-', '_', '.'),
// ExpandHostlist(CompressHostlist(names)) is names sorted and de-duplicated
// as above; other characters are copied through unchecked.
func CompressHostlist(names []string) string {
	if len(names) == 1 {
		return names[0] // one name (or none, if empty) is its own list
	}
	var buf [64]hostKey // most node lists are short: no allocation for them
	keys := buf[:0]
	if len(names) > len(buf) {
		keys = make([]hostKey, 0, len(names))
	}
	for _, n := range names {
		if n != "" {
			keys = append(keys, splitHost(n))
		}
	}
	var out [128]byte
	return string(appendKeys(out[:0], keys, false))
}

// hostOrder is CompressHostlist's order of names.
func hostOrder(a, b hostKey) int {
	return cmp.Or(
		strings.Compare(a.prefix, b.prefix),
		cmp.Compare(min(len(a.digits), 1), min(len(b.digits), 1)), // plain name first
		cmp.Compare(a.num, b.num),
		cmp.Compare(len(a.digits), len(b.digits)),
	)
}

// appendKeys appends the ranged form of keys (which it may sort and
// compact in place) to dst; sorted says keys are in hostOrder without
// duplicates already.
func appendKeys(b []byte, keys []hostKey, sorted bool) []byte {
	if !sorted {
		if !slices.IsSortedFunc(keys, hostOrder) { // node lists usually come in cluster order
			slices.SortFunc(keys, hostOrder)
		}
		keys = slices.CompactFunc(keys, func(a, b hostKey) bool { return a.name == b.name })
	}
	start := len(b)
	for i := 0; i < len(keys); {
		if len(b) > start {
			b = append(b, ',')
		}
		k := keys[i]
		if k.digits == "" {
			b = append(b, k.name...)
			i++
			continue
		}
		j := i + 1
		for j < len(keys) && keys[j].digits != "" && keys[j].prefix == k.prefix {
			j++
		}
		b = append(b, k.prefix...)
		if j == i+1 {
			b = append(b, k.digits...)
			i = j
			continue
		}
		b = append(b, '[')
		for r := i; r < j; {
			lo := keys[r]
			e := r + 1
			// keys[e] continues the range when it is the next number and
			// padding it to lo's width gives its digits back, that is when
			// its length is max(width, length without leading zeros).
			for e < j && keys[e].num == keys[e-1].num+1 &&
				len(keys[e].digits) == max(len(lo.digits), decimalLen(keys[e].num)) {
				e++
			}
			if r > i {
				b = append(b, ',')
			}
			b = append(b, lo.digits...)
			if e-1 > r {
				b = append(b, '-')
				b = append(b, keys[e-1].digits...)
			}
			r = e
		}
		b = append(b, ']')
		i = j
	}
	return b
}

// Hostlister compresses node lists given as indices into a fixed list of
// names (a cluster's nodes), splitting each name once rather than once
// per list: the per-job writers of package reports call it for every
// job. Its results are CompressHostlist's of the named nodes.
type Hostlister struct {
	keys []hostKey
	// sorted says keys are in hostOrder and distinct, so an increasing
	// list of indices needs no sort.
	sorted bool
	buf    []hostKey
	// runs, when not nil, holds per name what appendKeys's grouping
	// reads of it, for names sorted, none empty, and in each prefix
	// either all without leading zeros or all of one width: there a
	// number one more than the name before it always continues its
	// range, whatever the range's first width (see appendKeys), so
	// Append can write the list from runs alone.
	runs []hostRun
}

// hostRun is what Append's fast path reads of name i: its group (names
// with digits and one prefix share one; a name without digits has its
// own) and whether it continues name i-1's range (same group, the next
// number).
type hostRun struct {
	group int32
	cont  bool
}

// NewHostlister returns a Hostlister over names (indexed as given; not
// copied).
func NewHostlister(names []string) *Hostlister {
	h := &Hostlister{keys: make([]hostKey, len(names)), sorted: true}
	for i, n := range names {
		h.keys[i] = splitHost(n)
		if n == "" || i > 0 && hostOrder(h.keys[i-1], h.keys[i]) >= 0 {
			h.sorted = false
		}
	}
	if h.sorted {
		h.runs = hostRuns(h.keys)
	}
	return h
}

// hostRuns returns Hostlister.runs for sorted, distinct, non-empty keys,
// or nil when a prefix has names of different widths some of which are
// padded with leading zeros.
func hostRuns(keys []hostKey) []hostRun {
	runs := make([]hostRun, len(keys))
	for i, k := range keys {
		same := i > 0 && k.digits != "" && keys[i-1].digits != "" && k.prefix == keys[i-1].prefix
		var g int32
		if i > 0 {
			g = runs[i-1].group
			if !same {
				g++
			}
		}
		runs[i] = hostRun{group: g, cont: same && k.num == keys[i-1].num+1}
	}
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && runs[j].group == runs[i].group {
			j++
		}
		unpadded, oneWidth := true, true
		for _, k := range keys[i:j] {
			unpadded = unpadded && len(k.digits) == decimalLen(k.num)
			oneWidth = oneWidth && len(k.digits) == len(keys[i].digits)
		}
		if !unpadded && !oneWidth {
			return nil
		}
		i = j
	}
	return runs
}

// Append appends CompressHostlist of the names of nodes (indices into
// the names, strictly increasing) to dst.
func (h *Hostlister) Append(dst []byte, nodes []int32) []byte {
	if len(nodes) == 1 {
		return append(dst, h.keys[nodes[0]].name...)
	}
	if h.runs != nil {
		return h.appendRuns(dst, nodes)
	}
	keys := h.buf[:0]
	for _, n := range nodes {
		if k := h.keys[n]; k.name != "" {
			keys = append(keys, k)
		}
	}
	h.buf = keys
	return appendKeys(dst, keys, h.sorted)
}

// appendRuns is Append for a Hostlister with runs: appendKeys's output
// for the named nodes, which are in hostOrder since nodes increase.
func (h *Hostlister) appendRuns(b []byte, nodes []int32) []byte {
	for i := 0; i < len(nodes); {
		if i > 0 {
			b = append(b, ',')
		}
		k := &h.keys[nodes[i]]
		g := h.runs[nodes[i]].group
		j := i + 1
		for j < len(nodes) && h.runs[nodes[j]].group == g {
			j++
		}
		if k.digits == "" {
			b = append(b, k.name...)
			i = j
			continue
		}
		b = append(b, k.prefix...)
		if j == i+1 {
			b = append(b, k.digits...)
			i = j
			continue
		}
		b = append(b, '[')
		for r := i; r < j; {
			e := r + 1
			for e < j && nodes[e] == nodes[e-1]+1 && h.runs[nodes[e]].cont {
				e++
			}
			if r > i {
				b = append(b, ',')
			}
			b = append(b, h.keys[nodes[r]].digits...)
			if e-1 > r {
				b = append(b, '-')
				b = append(b, h.keys[nodes[e-1]].digits...)
			}
			r = e
		}
		b = append(b, ']')
		i = j
	}
	return b
}
