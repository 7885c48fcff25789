package traces

import (
	"bytes"
	"errors"
	"math"
	"strconv"

	"github.com/schedsim/schedsim/workload"
)

// This file holds the parsers for the value formats sacct prints
// (../shared/reference/slurm-gpu-facts.md section 1). They take bytes,
// allocate nothing on success unless they return strings, and return
// errors that say what was expected; the caller adds the position.

var (
	errTimestamp = errKind(ErrSyntax, "want YYYY-MM-DDTHH:MM:SS, Unknown or None")
	errDuration  = errKind(ErrSyntax, "want [D-]HH:MM:SS or MM:SS (optionally .fraction)")
	errTimelimit = errKind(ErrSyntax, "want [D-]HH:MM:SS, MM:SS, UNLIMITED or Partition_Limit")
	errMinutes   = errKind(ErrSyntax, "want whole minutes, UNLIMITED or Partition_Limit")
	errCount     = errKind(ErrSyntax, "want a non-negative integer")
	errCountBig  = errKind(ErrRange, "must be at most 2147483647")
	errMem       = errKind(ErrSyntax, "want a size such as 4000M, 1.50G, 32G (units K, M, G, T, P)")
	errMemBig    = errKind(ErrRange, "memory size too large")
)

// maxSeconds bounds parsed times and durations (about 285 million years),
// so sums of them cannot overflow int64.
const maxSeconds = 1 << 53

// isUnknownTime reports the sacct spellings of an unset time.
func isUnknownTime(b []byte) bool {
	return len(b) == 0 || string(b) == "Unknown" || string(b) == "None" || string(b) == "N/A"
}

// parseTimestamp parses a sacct Submit/Start/End value, taken as a UTC
// wall-clock reading, into Unix seconds (years before 1970 are refused, so
// no time collides with workload.Unknown). "Unknown", "None" and "" give
// workload.Unknown. A bare integer is taken as Unix seconds
// (SLURM_TIME_FORMAT=%s). Both 'T' and ' ' separate date and time.
func parseTimestamp(b []byte) (workload.Time, error) {
	if isUnknownTime(b) {
		return workload.Unknown, nil
	}
	if n, ok := parseUint(b, maxSeconds); ok {
		return workload.Time(n), nil
	}
	if len(b) != 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return 0, errTimestamp
	}
	y, ok1 := digits(b[0:4])
	mo, ok2 := digits(b[5:7])
	d, ok3 := digits(b[8:10])
	h, ok4 := digits(b[11:13])
	mi, ok5 := digits(b[14:16])
	s, ok6 := digits(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return 0, errTimestamp
	}
	if y < 1970 {
		return 0, errKind(ErrRange, "timestamps before 1970 are not supported")
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59 {
		return 0, errKind(ErrRange, "no such date or time of day")
	}
	days := daysFromCivil(y, mo, d)
	return workload.Time(days*86400 + h*3600 + mi*60 + s), nil
}

// digits parses a fixed-width run of ASCII digits.
func digits(b []byte) (int64, bool) {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, len(b) > 0
}

// parseUint parses a non-empty run of ASCII digits no greater than max.
func parseUint(b []byte, max int64) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (max-int64(c-'0'))/10 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (H. Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// parseDuration parses an Elapsed-style duration: D-HH:MM:SS, D-HH:MM,
// D-HH, HH:MM:SS or MM:SS, the last component optionally with a decimal
// fraction (dropped: durations are whole seconds, rounded down). Hours
// must be < 24 when days are given; minutes and seconds < 60 below a larger
// unit. "" and "INVALID" (what sacct prints for a negative duration) give
// workload.Unknown.
func parseDuration(b []byte) (workload.Time, error) {
	if len(b) == 0 || string(b) == "INVALID" {
		return workload.Unknown, nil
	}
	var days int64 = -1
	if i := bytes.IndexByte(b, '-'); i >= 0 {
		d, ok := parseUint(b[:i], 1<<31)
		if !ok {
			return 0, errDuration
		}
		days = d
		b = b[i+1:]
	}
	// Drop a fraction on the last component.
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		if _, ok := digits(b[i+1:]); !ok || bytes.IndexByte(b[:i], '.') >= 0 {
			return 0, errDuration
		}
		b = b[:i]
	}
	var parts [3]int64
	n := 0
	for len(b) > 0 || n == 0 {
		if n == 3 {
			return 0, errDuration
		}
		i := bytes.IndexByte(b, ':')
		var p []byte
		if i < 0 {
			p, b = b, nil
		} else {
			p, b = b[:i], b[i+1:]
			if len(b) == 0 {
				return 0, errDuration // trailing colon
			}
		}
		v, ok := parseUint(p, 1<<40)
		if !ok || len(p) > 12 {
			return 0, errDuration
		}
		parts[n] = v
		n++
	}
	var h, m, s int64
	switch {
	case days >= 0 && n == 1:
		h = parts[0]
	case days >= 0 && n == 2:
		h, m = parts[0], parts[1]
	case n == 3:
		h, m, s = parts[0], parts[1], parts[2]
	case days < 0 && n == 2:
		m, s = parts[0], parts[1]
	default:
		return 0, errDuration
	}
	if days >= 0 && h > 23 {
		return 0, errKind(ErrRange, "hours must be < 24 after a day count")
	}
	if s > 59 || (m > 59 && (days >= 0 || n == 3)) {
		return 0, errKind(ErrRange, "minutes and seconds must be < 60")
	}
	if days < 0 {
		days = 0
	}
	total := days*86400 + h*3600 + m*60 + s
	if total > maxSeconds || total < 0 {
		return 0, errKind(ErrRange, "duration too long")
	}
	return workload.Time(total), nil
}

// isNoLimit reports the sacct spellings of "no time limit".
func isNoLimit(b []byte) bool {
	switch string(b) {
	case "UNLIMITED", "Partition_Limit", "NONE", "INFINITE":
		return true
	}
	return false
}

// parseTimelimit parses a Timelimit value into seconds; UNLIMITED,
// Partition_Limit and "" give workload.Unknown.
func parseTimelimit(b []byte) (workload.Time, error) {
	if isNoLimit(b) {
		return workload.Unknown, nil
	}
	if len(b) == 0 {
		return workload.Unknown, nil
	}
	t, err := parseDuration(b)
	if err != nil || string(b) == "INVALID" {
		return 0, errTimelimit
	}
	return t, nil
}

// parseTimelimitRaw parses TimelimitRaw (whole minutes) into seconds.
func parseTimelimitRaw(b []byte) (workload.Time, error) {
	if len(b) == 0 || isNoLimit(b) {
		return workload.Unknown, nil
	}
	n, ok := parseUint(b, maxSeconds/60)
	if !ok {
		return 0, errMinutes
	}
	return workload.Time(n * 60), nil
}

// parseSeconds parses ElapsedRaw (whole seconds); "" gives Unknown.
func parseSeconds(b []byte) (workload.Time, error) {
	if len(b) == 0 {
		return workload.Unknown, nil
	}
	n, ok := parseUint(b, maxSeconds)
	if !ok {
		return 0, errKind(ErrSyntax, "want whole seconds")
	}
	return workload.Time(n), nil
}

// parseCount parses a non-negative int32 count; "" gives -1.
func parseCount(b []byte) (int64, error) {
	if len(b) == 0 {
		return -1, nil
	}
	n, ok := parseUint(b, 1<<62)
	if !ok {
		return 0, errCount
	}
	if n > math.MaxInt32 {
		return 0, errCountBig
	}
	return n, nil
}

// maxMemMiB bounds memory sizes (1 EiB in MiB).
const maxMemMiB = 1 << 40

// parseMemMiB parses a sacct memory size ("4000M", "1.50G", "2T", "512K",
// or a bare number, taken as unit) into MiB, rounding up to whole MiB.
func parseMemMiB(b []byte, unit byte) (int64, error) {
	if len(b) == 0 {
		return 0, errMem
	}
	u := unit
	if c := b[len(b)-1]; c < '0' || c > '9' {
		u = c
		b = b[:len(b)-1]
	}
	var shift int // power of 1024 relative to MiB
	switch u {
	case 'K', 'k':
		shift = -1
	case 'M', 'm':
		shift = 0
	case 'G', 'g':
		shift = 1
	case 'T', 't':
		shift = 2
	case 'P', 'p':
		shift = 3
	default:
		return 0, errMem
	}
	intPart, frac := b, []byte(nil)
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		intPart, frac = b[:i], b[i+1:]
		if len(frac) == 0 || len(frac) > 3 {
			return 0, errMem
		}
	}
	ip, ok := parseUint(intPart, 1<<50)
	if !ok {
		return 0, errMem
	}
	var fnum, fden int64 = 0, 1
	if frac != nil {
		f, ok := digits(frac)
		if !ok {
			return 0, errMem
		}
		fnum = f
		for range frac {
			fden *= 10
		}
	}
	// value = (ip + fnum/fden) * 1024^shift MiB, rounded up.
	mul := int64(1)
	for range max(shift, 0) {
		mul *= 1024
	}
	if ip > maxMemMiB/mul {
		return 0, errMemBig
	}
	whole := ip * mul
	// fractional part in MiB: fnum*mul/fden, rounded up.
	fracMiB := (fnum*mul + fden - 1) / fden
	total := whole + fracMiB
	if shift < 0 {
		// KiB: (ip + f) / 1024 rounded up
		total = (ip*fden + fnum + 1024*fden - 1) / (1024 * fden)
	}
	if total > maxMemMiB {
		return 0, errMemBig
	}
	return total, nil
}

// reqMem is a parsed ReqMem value.
type reqMem struct {
	mib     int64
	perCPU  bool // old style "4000Mc"
	perNode bool // old style "64Gn"
}

// parseReqMem parses ReqMem: new style "32G" (whole job), old style
// "4000Mc" (per CPU) or "64Gn" (per node).
func parseReqMem(b []byte) (reqMem, error) {
	var r reqMem
	if n := len(b); n > 0 {
		switch b[n-1] {
		case 'c':
			r.perCPU = true
			b = b[:n-1]
		case 'n':
			r.perNode = true
			b = b[:n-1]
		}
	}
	v, err := parseMemMiB(b, 'M')
	if err != nil {
		return r, errKind(ErrSyntax, "want a size such as 32G or 4000M, or old-style 4000Mc (per CPU) / 64Gn (per node)")
	}
	r.mib = v
	return r, nil
}

// tres is a parsed ReqTRES or AllocTRES value. A count is -1 when its key
// is absent.
type tres struct {
	nodes, cpus, gpus int64
	mem               int64 // MiB
	typed             int64 // sum of gres/gpu:TYPE counts, -1 if none
	gpuType           string
	mps               int64 // gres/mps: the job's MPS shares summed over its nodes, -1 if absent
}

// parseTRES parses a comma-separated TRES list such as
// "billing=8,cpu=8,gres/gpu:v100=1,gres/gpu=1,mem=10G,node=1". Keys other
// than node, cpu, mem, gres/gpu, gres/gpu:TYPE and gres/mps are checked for form and
// otherwise ignored. With several GPU types the type is left empty. typeOf
// interns type names.
func parseTRES(b []byte, typeOf *interner) (tres, error) {
	t := tres{nodes: -1, cpus: -1, gpus: -1, mem: -1, typed: -1, mps: -1}
	types := 0
	var firstType []byte
	for len(b) > 0 {
		var item []byte
		if i := bytes.IndexByte(b, ','); i >= 0 {
			item, b = b[:i], b[i+1:]
			if len(b) == 0 {
				return t, errKind(ErrSyntax, "trailing comma in TRES list")
			}
		} else {
			item, b = b, nil
		}
		eq := bytes.IndexByte(item, '=')
		if eq <= 0 {
			return t, errKind(ErrSyntax, "want comma-separated name=value pairs")
		}
		key, val := item[:eq], item[eq+1:]
		switch {
		case string(key) == "node":
			n, err := parseTRESCount(val)
			if err != nil {
				return t, err
			}
			t.nodes = n
		case string(key) == "cpu":
			n, err := parseTRESCount(val)
			if err != nil {
				return t, err
			}
			t.cpus = n
		case string(key) == "mem":
			if string(val) == "NONE" {
				continue
			}
			n, err := parseMemMiB(val, 'M')
			if err != nil {
				return t, err
			}
			t.mem = n
		case string(key) == "gres/gpu":
			n, err := parseTRESCount(val)
			if err != nil {
				return t, err
			}
			t.gpus = n
		case string(key) == "gres/mps":
			n, err := parseTRESCount(val)
			if err != nil {
				return t, err
			}
			t.mps = n
		case bytes.HasPrefix(key, []byte("gres/gpu:")):
			typ := key[len("gres/gpu:"):]
			if len(typ) == 0 {
				return t, errKind(ErrSyntax, "empty GPU type in gres/gpu:TYPE")
			}
			n, err := parseTRESCount(val)
			if err != nil {
				return t, err
			}
			if t.typed < 0 {
				t.typed = 0
			}
			t.typed += n
			if t.typed > math.MaxInt32 {
				return t, errCountBig
			}
			if types == 0 {
				firstType = typ
				types = 1
			} else if !bytes.Equal(firstType, typ) {
				types++
			}
		}
	}
	if types == 1 {
		t.gpuType = typeOf.get(firstType)
	}
	return t, nil
}

func parseTRESCount(b []byte) (int64, error) {
	n, ok := parseUint(b, 1<<62)
	if !ok {
		return 0, errKind(ErrSyntax, "want name=count with a non-negative integer count")
	}
	if n > math.MaxInt32 {
		return 0, errCountBig
	}
	return n, nil
}

// gpuCount returns the TRES GPU count: the untyped gres/gpu key when
// present (never adding the typed keys on top), else the sum of the typed
// keys, else -1.
func (t *tres) gpuCount() int64 {
	if t.gpus >= 0 {
		return t.gpus
	}
	return t.typed
}

// parseOldGRES parses an old-style GRES column (ReqGRES, AllocGRES, Gres):
// comma-separated "gpu", "gpu:2", "gpu:v100:2", optionally "gres/"
// prefixed and followed by "(IDX:0-1)". It returns the GPU count (-1 when
// no gpu entry) and the type when exactly one is named.
func parseOldGRES(b []byte, typeOf *interner) (int64, string, error) {
	count := int64(-1)
	types := 0
	var firstType []byte
	for len(b) > 0 {
		// Split at a comma outside parentheses.
		depth, end := 0, len(b)
		for i, c := range b {
			if c == '(' {
				depth++
			} else if c == ')' {
				depth--
			} else if c == ',' && depth == 0 {
				end = i
				break
			}
		}
		item := b[:end]
		if end < len(b) {
			b = b[end+1:]
		} else {
			b = nil
		}
		if i := bytes.IndexByte(item, '('); i >= 0 {
			item = item[:i]
		}
		item = bytes.TrimPrefix(item, []byte("gres/"))
		parts := bytes.Split(item, []byte(":"))
		if string(parts[0]) != "gpu" {
			if len(parts[0]) == 0 {
				return 0, "", errKind(ErrSyntax, "want gpu[:type][:count] entries")
			}
			continue
		}
		var n int64 = 1
		var typ []byte
		switch len(parts) {
		case 1:
		case 2:
			if v, ok := parseUint(parts[1], math.MaxInt32); ok {
				n = v
			} else {
				typ = parts[1]
			}
		case 3:
			typ = parts[1]
			v, ok := parseUint(parts[2], math.MaxInt32)
			if !ok {
				return 0, "", errKind(ErrSyntax, "want gpu[:type][:count] entries")
			}
			n = v
		default:
			return 0, "", errKind(ErrSyntax, "want gpu[:type][:count] entries")
		}
		if count < 0 {
			count = 0
		}
		count += n
		if count > math.MaxInt32 {
			return 0, "", errCountBig
		}
		if len(typ) > 0 {
			if types == 0 {
				firstType = typ
				types = 1
			} else if !bytes.Equal(firstType, typ) {
				types++
			}
		}
	}
	typ := ""
	if types == 1 {
		typ = typeOf.get(firstType)
	}
	return count, typ, nil
}

// stateBase returns the base word of a State value: "CANCELLED by 123"
// gives "CANCELLED", and the fixed-width truncation mark in "CANCELLED+"
// is dropped. The base must be upper-case letters and underscores.
func stateBase(b []byte) ([]byte, error) {
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		b = b[:i]
	}
	b = bytes.TrimSuffix(b, []byte{'+'})
	for _, c := range b {
		if (c < 'A' || c > 'Z') && c != '_' {
			return nil, errKind(ErrSyntax, "want a Slurm state such as COMPLETED, FAILED or CANCELLED by UID")
		}
	}
	return b, nil
}

// jobID is a parsed sacct JobID of a job (not step) row.
type jobID struct {
	arrayJob  []byte // "123" of "123_4" or "123_[5-9]"; nil if not an array
	task      int64  // 4 of "123_4"; -1 otherwise
	arrayExpr []byte // "5-9%4" of "123_[5-9%4]"; nil otherwise
}

var errJobID = errKind(ErrSyntax, "want a Slurm job id: 123, 123_4, 123_[5-9], 123+0, or a step 123.batch")

// splitStep splits a JobID into the job part and reports whether it was a
// step row ("123.batch", "123_4.0", "123+1.extern", "123.0+1"). The job
// part of "123.0+1" is "123+1"; it is returned in scratch in that case.
func splitStep(b []byte, scratch []byte) (job []byte, step bool, _ []byte) {
	i := bytes.IndexByte(b, '.')
	if i < 0 {
		return b, false, scratch
	}
	job, rest := b[:i], b[i+1:]
	if p := bytes.IndexByte(rest, '+'); p >= 0 && bytes.IndexByte(job, '+') < 0 {
		scratch = append(append(append(scratch[:0], job...), '+'), rest[p+1:]...)
		return scratch, true, scratch
	}
	return job, true, scratch
}

// parseJobID parses the job part of a JobID.
func parseJobID(b []byte) (jobID, error) {
	id := jobID{task: -1}
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 0 || i > 18 {
		return id, errJobID
	}
	rest := b[i:]
	if len(rest) > 0 && rest[0] == '_' {
		id.arrayJob = b[:i]
		rest = rest[1:]
		if len(rest) > 0 && rest[0] == '[' {
			end := bytes.IndexByte(rest, ']')
			if end < 0 {
				return id, errJobID
			}
			id.arrayExpr = rest[1:end]
			rest = rest[end+1:]
		} else {
			j := 0
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			t, ok := parseUint(rest[:j], math.MaxInt32)
			if !ok {
				return id, errJobID
			}
			id.task = t
			rest = rest[j:]
		}
	}
	if len(rest) > 0 && rest[0] == '+' {
		if _, ok := parseUint(rest[1:], math.MaxInt32); !ok {
			return id, errJobID
		}
		rest = nil
	}
	if len(rest) != 0 {
		return id, errJobID
	}
	return id, nil
}

// arrayRange is one item of an array expression: lo..hi by step.
type arrayRange struct{ lo, hi, step int64 }

// maxArrayTasks bounds the tasks one pending array record may expand to
// (Slurm's MaxArraySize cannot exceed 4,000,001).
const maxArrayTasks = 4_000_001

// errArrayBudget: an array expression expands to more tasks than the
// read has left (Limits.MaxArrayTasks).
var errArrayBudget = errors.New("array tasks over budget")

// parseArrayExpr parses the inside of "123_[...]": comma-separated N, N-M
// or N-M:S items, an optional %T throttle, and sacct's "..." truncation
// mark (the items after it, and a possibly cut item before it, are lost;
// truncated reports it). When the tasks exceed budget it keeps no more
// ranges, counts the rest and returns errArrayBudget with the total.
func parseArrayExpr(b []byte, budget int64) (rs []arrayRange, tasks int64, truncated bool, err error) {
	bad := errKind(ErrSyntax, "want an array expression such as [5-9], [1,3,5-9:2] or [5-9%4]")
	if i := bytes.Index(b, []byte("...")); i >= 0 {
		truncated = true
		b = b[:i]
		// The item before the mark may have been cut: keep only complete ones.
		if j := bytes.LastIndexByte(b, ','); j >= 0 {
			b = b[:j]
		} else {
			b = nil
		}
	} else if i := bytes.IndexByte(b, '%'); i >= 0 {
		if _, ok := parseUint(b[i+1:], math.MaxInt32); !ok {
			return nil, 0, false, bad
		}
		b = b[:i]
	}
	if len(b) == 0 {
		if truncated {
			return nil, 0, true, nil
		}
		return nil, 0, false, bad
	}
	for len(b) > 0 {
		item := b
		if i := bytes.IndexByte(b, ','); i >= 0 {
			item, b = b[:i], b[i+1:]
			if len(b) == 0 {
				return nil, 0, false, bad // a trailing comma
			}
		} else {
			b = nil
		}
		r := arrayRange{step: 1}
		if i := bytes.IndexByte(item, ':'); i >= 0 {
			s, ok := parseUint(item[i+1:], math.MaxInt32)
			if !ok || s == 0 {
				return nil, 0, false, bad
			}
			r.step = s
			item = item[:i]
		}
		lo, hi := item, item
		if i := bytes.IndexByte(item, '-'); i >= 0 {
			lo, hi = item[:i], item[i+1:]
		}
		var ok1, ok2 bool
		r.lo, ok1 = parseUint(lo, math.MaxInt32)
		r.hi, ok2 = parseUint(hi, math.MaxInt32)
		if !ok1 || !ok2 || r.hi < r.lo {
			return nil, 0, false, bad
		}
		tasks += (r.hi-r.lo)/r.step + 1
		if tasks > maxArrayTasks {
			return nil, 0, false, errKind(ErrRange, "array expands to more than 4000001 tasks")
		}
		if tasks > budget {
			rs = nil
			continue
		}
		rs = append(rs, r)
	}
	if tasks > budget {
		return nil, tasks, truncated, errArrayBudget
	}
	return rs, tasks, truncated, nil
}

// parseDeps parses a Dependency value: "afterok:123:124,afterany:5+10",
// "singleton", "?"-separated alternatives, and "(unfulfilled)"-style
// suffixes. "", "(null)" and "None" give no dependencies. aftercorr is
// read as afterok and afterburstbuffer as afterany, the nearest kinds
// workload models.
func parseDeps(b []byte) ([]workload.Dependency, error) {
	switch string(b) {
	case "", "(null)", "None", "none":
		return nil, nil
	}
	bad := errKind(ErrSyntax, "want TYPE:JOBID[:JOBID...] items (after, afterany, afterok, afternotok, aftercorr, singleton) separated by ',' or '?'")
	var deps []workload.Dependency
	for len(b) > 0 {
		end := bytes.IndexAny(b, ",?")
		var item []byte
		if end < 0 {
			item, b = b, nil
		} else {
			item, b = b[:end], b[end+1:]
		}
		if i := bytes.IndexByte(item, '('); i >= 0 {
			item = item[:i]
		}
		if string(item) == "singleton" {
			deps = append(deps, workload.Dependency{Type: workload.DepSingleton})
			continue
		}
		parts := bytes.Split(item, []byte(":"))
		if len(parts) < 2 {
			return nil, bad
		}
		var typ workload.DepType
		switch string(parts[0]) {
		case "after":
			typ = workload.DepAfter
		case "afterany", "afterburstbuffer":
			typ = workload.DepAfterAny
		case "afterok", "aftercorr":
			typ = workload.DepAfterOK
		case "afternotok":
			typ = workload.DepAfterNotOK
		default:
			return nil, bad
		}
		for _, id := range parts[1:] {
			if i := bytes.IndexByte(id, '+'); i >= 0 {
				if _, ok := parseUint(id[i+1:], math.MaxInt32); !ok {
					return nil, bad
				}
				id = id[:i]
			}
			if _, err := parseJobID(id); err != nil {
				return nil, bad
			}
			deps = append(deps, workload.Dependency{Type: typ, JobID: string(id)})
		}
	}
	return deps, nil
}

// fmtCount formats n for notes with thousands separators.
func fmtCount(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// parseOldMPS returns the MPS count of an old-style GRES column
// ("mps:50", "gres/mps:50", "gpu:0,mps:25(IDX:0)"): per node, -1 when no
// mps entry has a count. Malformed entries are left to parseOldGRES.
func parseOldMPS(b []byte) int64 {
	n := int64(-1)
	for _, item := range bytes.Split(b, []byte(",")) {
		if i := bytes.IndexByte(item, '('); i >= 0 {
			item = item[:i]
		}
		parts := bytes.Split(bytes.TrimPrefix(item, []byte("gres/")), []byte(":"))
		if string(parts[0]) != "mps" || len(parts) < 2 {
			continue
		}
		if v, ok := parseUint(parts[len(parts)-1], math.MaxInt32); ok {
			n = max(n, 0) + v
		}
	}
	return n
}
