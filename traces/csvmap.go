package traces

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schedsim/schedsim/workload"
)

// CSV targets: the job fields a CSV column can be mapped onto, and the
// kind of value each takes.
const (
	kindString = iota
	kindTime
	kindDuration
	kindCount
	kindMem
)

var csvTargets = map[string]int{
	"id": kindString, "name": kindString, "user": kindString, "account": kindString,
	"partition": kindString, "qos": kindString, "state": kindString, "gpu_type": kindString,
	"array_job": kindString,
	"submit":    kindTime, "start": kindTime, "end": kindTime,
	"runtime": kindDuration, "limit": kindDuration, "wait": kindDuration,
	"nodes": kindCount, "cpus": kindCount, "gpus": kindCount, "array_task": kindCount,
	"mem": kindMem,
}

// CSVTargets returns the names of the job fields a CSV column can be
// mapped onto, sorted.
func CSVTargets() []string {
	out := make([]string, 0, len(csvTargets))
	for k := range csvTargets {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// CSVColumn is where one job field comes from: a column of the header row
// and the unit or layout of its values.
//
// Units by kind of field:
//   - timestamps (submit, start, end): "datetime" ("2006-01-02 15:04:05",
//     also with 'T'; the default), "unix" (Unix seconds, decimals
//     rounded), "unixms" (Unix milliseconds), "rel" (seconds from the
//     start of the trace, Unix time 0 + CSVMap.Epoch), or a Go time
//     layout ("02/01/2006 15:04").
//   - durations (runtime, limit, wait): "s" (the default), "ms", "min",
//     "h", or "slurm" ([D-]HH:MM:SS, MM:SS).
//   - counts (nodes, cpus, gpus, array_task): "" (a number; decimals are
//     rounded up), or "milli" (thousandths, rounded up: cpu_milli 1500 is
//     2 CPUs).
//   - memory (mem): "mib" (the default), "kib", "gib", "b", or "slurm"
//     (a number with a K/M/G/T suffix).
type CSVColumn struct {
	Column string
	Unit   string
}

// CSVMap maps the columns of a CSV file with a header row onto job
// fields. Columns not mapped are kept in Job.Extra under their header
// names.
type CSVMap struct {
	// Name names the mapping in notes (a preset name, or "custom").
	Name string
	// Fields maps target names (CSVTargets) to columns.
	Fields map[string]CSVColumn
	// Delimiter separates fields; 0 means ','.
	Delimiter byte
	// TimeZone is the IANA zone wall-clock timestamps were written in;
	// "" reads them as UTC readings (as the sacct reader does).
	TimeZone string
	// Epoch is the Unix time that "rel" timestamps count from.
	Epoch int64
	// KeepDuplicates keeps rows that repeat an earlier row exactly; by
	// default they are dropped and counted.
	KeepDuplicates bool
}

// Preset names for CSVPreset.
const (
	PresetEagle  = "eagle"
	PresetHelios = "helios"
)

// CSVPresets returns the names of the built-in column mappings.
func CSVPresets() []string { return []string{PresetEagle, PresetHelios} }

// CSVPreset returns a built-in column mapping:
//
//   - "eagle": the NREL Eagle Slurm export (github.com/NREL/eagle-jobs,
//     data/sample_eagle_data.csv; OEDI submission 5860). wallclock_req and
//     run_time are seconds; processors_req is not a core count (it mostly
//     equals nodes_req) and mem_req has no documented unit, so both stay
//     in Extra.
//   - "helios": SenseTime Helios cluster_log.csv (github.com/
//     S-Lab-System-Group/HeliosData): vc (virtual cluster, a Slurm
//     partition) is the partition, duration is end - start in seconds,
//     queue is start - submit in seconds.
func CSVPreset(name string) (CSVMap, bool) {
	dt := func(col string) CSVColumn { return CSVColumn{Column: col, Unit: "datetime"} }
	s := func(col string) CSVColumn { return CSVColumn{Column: col, Unit: "s"} }
	c := func(col string) CSVColumn { return CSVColumn{Column: col} }
	switch name {
	case PresetEagle:
		return CSVMap{Name: PresetEagle, Fields: map[string]CSVColumn{
			"id": c("job_id"), "user": c("user"), "account": c("account"), "partition": c("partition"),
			"qos": c("qos"), "limit": s("wallclock_req"), "nodes": c("nodes_req"), "gpus": c("gpus_req"),
			"submit": dt("submit_time"), "start": dt("start_time"), "end": dt("end_time"),
			"runtime": s("run_time"), "state": c("state"), "name": c("name"),
		}}, true
	case PresetHelios:
		return CSVMap{Name: PresetHelios, Fields: map[string]CSVColumn{
			"id": c("job_id"), "user": c("user"), "partition": c("vc"), "gpus": c("gpu_num"),
			"cpus": c("cpu_num"), "nodes": c("node_num"), "state": c("state"),
			"submit": dt("submit_time"), "start": dt("start_time"), "end": dt("end_time"),
			"runtime": s("duration"), "wait": s("queue"),
		}}, true
	}
	return CSVMap{}, false
}

// ParseCSVMap parses a mapping written as
// "target=column[:unit],target=column[:unit],..." (the --map flag), on top
// of base (a preset, or the zero CSVMap). The unit follows the first ':'
// and may itself hold ':' (a Go layout such as 2006-01-02 15:04:05).
func ParseCSVMap(spec string, base CSVMap) (CSVMap, error) {
	m := base
	m.Fields = make(map[string]CSVColumn, len(base.Fields)+8)
	for k, v := range base.Fields {
		m.Fields[k] = v
	}
	if m.Name == "" {
		m.Name = "custom"
	} else if spec != "" {
		m.Name += "+custom"
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		target, rest, ok := strings.Cut(item, "=")
		target = strings.ToLower(strings.TrimSpace(target))
		if !ok || rest == "" {
			return CSVMap{}, fmt.Errorf("traces: csv map %q: want target=column[:unit]", item)
		}
		if _, known := csvTargets[target]; !known {
			return CSVMap{}, fmt.Errorf("traces: csv map %q: unknown target %q (want one of %s)", item, target, strings.Join(CSVTargets(), ", "))
		}
		col, unit, _ := strings.Cut(rest, ":")
		cc := CSVColumn{Column: strings.TrimSpace(col), Unit: unit}
		if err := checkUnit(target, cc.Unit); err != nil {
			return CSVMap{}, fmt.Errorf("traces: csv map %q: %w", item, err)
		}
		m.Fields[target] = cc
	}
	return m, nil
}

func checkUnit(target, unit string) error {
	u := strings.ToLower(unit)
	switch csvTargets[target] {
	case kindString:
		if unit != "" {
			return fmt.Errorf("%s takes no unit", target)
		}
	case kindTime:
		switch u {
		case "", "datetime", "iso", "unix", "unixms", "rel":
		default:
			if !strings.ContainsAny(unit, "0123456789") {
				return fmt.Errorf("timestamp unit %q: want datetime, unix, unixms, rel or a Go layout", unit)
			}
		}
	case kindDuration:
		switch u {
		case "", "s", "ms", "min", "h", "slurm":
		default:
			return fmt.Errorf("duration unit %q: want s, ms, min, h or slurm", unit)
		}
	case kindCount:
		switch u {
		case "", "milli":
		default:
			return fmt.Errorf("count unit %q: want none or milli", unit)
		}
	case kindMem:
		switch u {
		case "", "mib", "kib", "gib", "b", "slurm":
		default:
			return fmt.Errorf("memory unit %q: want mib, kib, gib, b or slurm", unit)
		}
	}
	return nil
}

// String writes the mapping back in ParseCSVMap form, targets sorted.
func (m CSVMap) String() string {
	keys := make([]string, 0, len(m.Fields))
	for k := range m.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		c := m.Fields[k]
		b.WriteString(k + "=" + c.Column)
		if c.Unit != "" {
			b.WriteString(":" + c.Unit)
		}
	}
	return b.String()
}

// Sentinel kinds, as CSVStats.Sentinels counts them.
const (
	SentinelEmpty    = "empty"    // ""
	SentinelUnknown  = "unknown"  // Unknown, None, NA, N/A, null, NaN, -1 in a time
	SentinelInfinite = "infinite" // 4294967295 (uint32 INFINITE), UNLIMITED, Partition_Limit, INFINITE
	SentinelLost     = "lost"     // 9.22e18 and other values near int64/uint64 max
)

// sentinel classifies a value that stands for "no value".
func sentinel(b []byte) string {
	switch len(b) {
	case 0:
		return SentinelEmpty
	case 2:
		if b[0] == 'N' && b[1] == 'A' {
			return SentinelUnknown
		}
	}
	switch string(b) {
	case "Unknown", "unknown", "UNKNOWN", "None", "none", "NONE", "N/A", "n/a", "null", "NULL", "NaN", "nan":
		return SentinelUnknown
	case "4294967295", "4294967294", "UNLIMITED", "Unlimited", "unlimited", "Partition_Limit", "INFINITE", "infinite", "inf", "Inf":
		return SentinelInfinite
	}
	if len(b) >= 4 && (b[0] >= '0' && b[0] <= '9') {
		if b[0] == '9' && len(b) >= 19 || b[0] == '1' && len(b) >= 20 || bytes.ContainsAny(b, "eE") {
			if f, err := strconv.ParseFloat(string(b), 64); err == nil && f >= 9e18 {
				return SentinelLost
			}
		}
	}
	return ""
}

// CSVStats counts what a CSVReader did with its input.
type CSVStats struct {
	Rows             int // data rows read
	Jobs             int // jobs returned
	Duplicates       int // rows repeating an earlier row exactly, dropped
	RenamedIDs       int // rows whose id repeated an earlier, different row: renamed id_N
	NoSubmit         int // rows without a submit time, skipped
	Bad              int // bad rows skipped (Lenient)
	CancelledPending int // jobs cancelled before they started
	Pending          int // jobs that never started and have no end (runtime 0)
	Running          int // jobs with a start and no end or runtime: runtime censored
	// Sentinels counts values that stood for "no value", by "target kind"
	// ("limit infinite", "start unknown", "gpus empty").
	Sentinels map[string]int
}

// CSVReader reads a CSV job table through a CSVMap one job at a time.
type CSVReader struct {
	rec     *csvRecords
	path    string
	m       CSVMap
	loc     *time.Location
	names   []string
	col     map[string]int // target -> column index
	units   map[string]string
	extra   []int
	in      []*interner
	states  *interner
	err     error
	stats   CSVStats
	badErrs []*ParseError
	lenient bool
	seen    map[string]*idSeen
	tcols   [len(csvTargetList)]int // column index of each target, -1 if unmapped
}

// csvTargetList fixes an order of the targets for the fast column table.
var csvTargetList = [...]string{"id", "name", "user", "account", "partition", "qos", "state", "gpu_type",
	"array_job", "submit", "start", "end", "runtime", "limit", "wait", "nodes", "cpus", "gpus", "array_task", "mem"}

const (
	tID = iota
	tName
	tUser
	tAccount
	tPartition
	tQOS
	tState
	tGPUType
	tArrayJob
	tSubmit
	tStart
	tEnd
	tRuntime
	tLimit
	tWait
	tNodes
	tCPUs
	tGPUs
	tArrayTask
	tMem
)

type idSeen struct {
	n      int
	hashes []uint64
}

// NewCSVReader returns a reader of the CSV table r, having read its header
// row. path names the input in errors. The mapping must name a submit
// column; every mapped column must be in the header.
func NewCSVReader(r io.Reader, path string, m CSVMap, lenient bool) (*CSVReader, error) {
	return newCSVReaderLimits(r, path, m, lenient, Limits{}.resolve())
}

func newCSVReaderLimits(r io.Reader, path string, m CSVMap, lenient bool, lim Limits) (*CSVReader, error) {
	cr := &CSVReader{rec: newCSVRecords(r, path, m.Delimiter), path: path, m: m, lenient: lenient,
		states: newInterner(256), seen: map[string]*idSeen{}}
	cr.rec.lr.max = int(lim.MaxRecord)
	cr.stats.Sentinels = map[string]int{}
	if m.TimeZone != "" {
		loc, err := time.LoadLocation(m.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("traces: csv time zone %q: %w", m.TimeZone, err)
		}
		cr.loc = loc
	}
	for t, c := range m.Fields {
		if err := checkUnit(t, c.Unit); err != nil {
			return nil, fmt.Errorf("traces: csv map %s: %w", t, err)
		}
	}
	if _, ok := m.Fields["submit"]; !ok {
		return nil, fmt.Errorf("traces: csv map %s: no submit column (a replay needs submit times)", m.Name)
	}
	hdr, err := cr.rec.next()
	if err == io.EOF {
		return nil, &ParseError{Path: path, Line: 1, Err: errKind(ErrNoHeader, "empty CSV: want a header row")}
	}
	if err != nil {
		return nil, err
	}
	names, byName, err := headerNames(hdr, path, cr.rec.start, false)
	if err != nil {
		return nil, err
	}
	cr.names = names
	cr.rec.maxFields = len(names) + 1
	used := make([]bool, len(cr.names))
	for i := range cr.tcols {
		cr.tcols[i] = -1
	}
	cr.units = map[string]string{}
	for ti, t := range csvTargetList {
		c, ok := m.Fields[t]
		if !ok {
			continue
		}
		i, ok := byName[c.Column]
		if !ok {
			return nil, &ParseError{Path: path, Line: cr.rec.start, Field: t, Value: c.Column,
				Err: errKind(ErrMissingColumn, fmt.Sprintf("no column %q in the header (mapping %s)", c.Column, m.Name))}
		}
		cr.tcols[ti] = i
		cr.units[t] = strings.ToLower(c.Unit)
		if csvTargets[t] == kindTime && !isNamedTimeUnit(c.Unit) {
			cr.units[t] = c.Unit // a Go layout keeps its case
		}
		used[i] = true
	}
	for i := range cr.names {
		if !used[i] {
			cr.extra = append(cr.extra, i)
		}
	}
	cr.in = make([]*interner, len(cr.names))
	budget := int64(internBudget)
	for i := range cr.in {
		cr.in[i] = newInterner(4096).share(&budget)
	}
	return cr, nil
}

func isNamedTimeUnit(u string) bool {
	switch strings.ToLower(u) {
	case "", "datetime", "iso", "unix", "unixms", "rel":
		return true
	}
	return false
}

// Columns returns the header names.
func (cr *CSVReader) Columns() []string { return cr.names }

// Stats returns the counts so far.
func (cr *CSVReader) Stats() CSVStats { return cr.stats }

// Next returns the next job, or io.EOF after the last.
func (cr *CSVReader) Next() (workload.Job, error) {
	for {
		if cr.err != nil {
			return workload.Job{}, cr.err
		}
		f, err := cr.rec.next()
		if err != nil {
			cr.err = err
			continue
		}
		cr.stats.Rows++
		line := cr.rec.start
		if len(f) != len(cr.names) && !(len(f) == len(cr.names)+1 && len(f[len(f)-1]) == 0) {
			perr := &ParseError{Path: cr.path, Line: line, Err: errKind(ErrFieldCount, fmt.Sprintf("%d fields, want %d as in the header", len(f), len(cr.names)))}
			if cr.bad(perr) {
				continue
			}
			return workload.Job{}, perr
		}
		j, ok, perr := cr.parse(f, line)
		if perr != nil {
			if cr.bad(perr) {
				continue
			}
			return workload.Job{}, perr
		}
		if !ok {
			continue
		}
		cr.stats.Jobs++
		return j, nil
	}
}

func (cr *CSVReader) bad(perr *ParseError) bool {
	if !cr.lenient {
		cr.err = perr
		return false
	}
	cr.stats.Bad++
	if len(cr.badErrs) < maxNotedErrors {
		cr.badErrs = append(cr.badErrs, perr)
	}
	return true
}

// value returns the field of target t, or nil with ok false when the
// target is unmapped or its value is a sentinel (counted).
func (cr *CSVReader) value(f [][]byte, t int) ([]byte, bool) {
	c := cr.tcols[t]
	if c < 0 {
		return nil, false
	}
	v := bytes.TrimSpace(f[c])
	if csvTargets[csvTargetList[t]] == kindString {
		return v, len(v) > 0
	}
	if k := sentinel(v); k != "" {
		cr.stats.Sentinels[csvTargetList[t]+" "+k]++
		return nil, false
	}
	return v, true
}

func (cr *CSVReader) parse(f [][]byte, line int) (j workload.Job, ok bool, perr *ParseError) {
	bad := func(t int, err error) *ParseError {
		c := cr.tcols[t]
		return &ParseError{Path: cr.path, Line: line, Field: cr.names[c], Value: string(f[c]), Err: err}
	}
	str := func(t int) string {
		if v, ok := cr.value(f, t); ok {
			return cr.in[cr.tcols[t]].get(v)
		}
		return ""
	}
	tm := func(t int) (workload.Time, *ParseError) {
		v, ok := cr.value(f, t)
		if !ok {
			return workload.Unknown, nil
		}
		x, err := cr.parseTime(v, cr.units[csvTargetList[t]])
		if err != nil {
			return 0, bad(t, err)
		}
		return x, nil
	}
	dur := func(t int) (workload.Time, *ParseError) {
		v, ok := cr.value(f, t)
		if !ok {
			return workload.Unknown, nil
		}
		x, err := parseCSVDuration(v, cr.units[csvTargetList[t]])
		if err != nil {
			return 0, bad(t, err)
		}
		return x, nil
	}
	count := func(t int) (int64, *ParseError) {
		v, ok := cr.value(f, t)
		if !ok {
			return -1, nil
		}
		x, err := parseCSVCount(v, cr.units[csvTargetList[t]])
		if err != nil {
			return 0, bad(t, err)
		}
		return x, nil
	}

	submit, perr := tm(tSubmit)
	if perr != nil {
		return j, false, perr
	}
	if submit == workload.Unknown {
		cr.stats.NoSubmit++
		return j, false, nil
	}

	// Identity and duplicates.
	id := str(tID)
	if id == "" {
		id = "row" + strconv.Itoa(line)
	}
	sum := rowHash(f)
	seen := cr.seen[id]
	suffix := ""
	if seen == nil {
		cr.seen[id] = &idSeen{n: 1, hashes: []uint64{sum}}
	} else {
		if !cr.m.KeepDuplicates && slices.Contains(seen.hashes, sum) {
			cr.stats.Duplicates++
			return j, false, nil
		}
		seen.hashes = append(seen.hashes, sum)
		suffix = "_" + strconv.Itoa(seen.n)
		seen.n++
		cr.stats.RenamedIDs++
	}
	j = workload.NewJob(id + suffix)
	if suffix != "" {
		j.ArrayJobID = id
		j.ArrayTaskID = int32(min(seen.n-1, math.MaxInt32))
	}
	j.Name = str(tName)
	j.User = str(tUser)
	j.Account = str(tAccount)
	j.Partition = str(tPartition)
	j.QOS = str(tQOS)
	if v, ok := cr.value(f, tState); ok {
		base := v
		if i := bytes.IndexAny(v, " +"); i > 0 {
			base = v[:i]
		}
		j.TraceState = cr.states.get(bytes.ToUpper(base))
	}
	if aj := str(tArrayJob); aj != "" {
		j.ArrayJobID = aj
		at, perr := count(tArrayTask)
		if perr != nil {
			return j, false, perr
		}
		if at > math.MaxInt32 {
			return j, false, bad(tArrayTask, errCountBig)
		}
		j.ArrayTaskID = int32(at)
	}

	start, perr := tm(tStart)
	if perr != nil {
		return j, false, perr
	}
	end, perr := tm(tEnd)
	if perr != nil {
		return j, false, perr
	}
	runtime, perr := dur(tRuntime)
	if perr != nil {
		return j, false, perr
	}
	if j.TimeLimit, perr = dur(tLimit); perr != nil {
		return j, false, perr
	}
	if j.TimeLimit == 0 {
		j.TimeLimit = workload.Unknown
	}
	wait, perr := dur(tWait)
	if perr != nil {
		return j, false, perr
	}
	if start == workload.Unknown && wait != workload.Unknown {
		start = submit + wait
	}
	if runtime == workload.Unknown && start != workload.Unknown && end != workload.Unknown {
		if end < start {
			return j, false, bad(tEnd, errKind(ErrRange, "end is before start"))
		}
		runtime = end - start
	}
	j.Submit = submit
	j.TraceStart = start
	j.TraceEnd = end
	switch {
	case start == workload.Unknown && j.TraceState == "CANCELLED":
		j.CancelAfter = 0
		if end != workload.Unknown && end > submit {
			j.CancelAfter = end - submit
		}
		// It never ran: a duration column's figure is the time it
		// waited, not a runtime (found by FuzzCSVRead).
		runtime = 0
		cr.stats.CancelledPending++
	case start == workload.Unknown && end == workload.Unknown:
		cr.stats.Pending++
	case start != workload.Unknown && runtime == workload.Unknown:
		cr.stats.Running++
		runtime = 0
	}
	j.Runtime = max(runtime, 0)

	nodes, perr := count(tNodes)
	if perr != nil {
		return j, false, perr
	}
	cpus, perr := count(tCPUs)
	if perr != nil {
		return j, false, perr
	}
	gpus, perr := count(tGPUs)
	if perr != nil {
		return j, false, perr
	}
	for _, x := range []struct {
		t int
		v int64
	}{{tNodes, nodes}, {tCPUs, cpus}, {tGPUs, gpus}} {
		if x.v > math.MaxInt32 {
			return j, false, bad(x.t, errCountBig)
		}
	}
	mem := int64(-1)
	if v, ok := cr.value(f, tMem); ok {
		var err error
		if mem, err = parseCSVMem(v, cr.units["mem"]); err != nil {
			return j, false, bad(tMem, err)
		}
	}
	j.Request = workload.Request{
		Nodes:   int32(max(nodes, 0)),
		CPUs:    int32(max(cpus, 0)),
		GPUs:    int32(max(gpus, 0)),
		GPUType: str(tGPUType),
		MemMB:   max(mem, 0),
	}

	n := 0
	for _, c := range cr.extra {
		if len(f[c]) > 0 {
			n++
		}
	}
	if n > 0 {
		j.Extra = make([]workload.Field, 0, n)
		for _, c := range cr.extra {
			if len(f[c]) > 0 {
				j.Extra = append(j.Extra, workload.Field{Name: cr.names[c], Value: cr.in[c].get(f[c])})
			}
		}
	}
	return j, true, nil
}

var errCSVNumber = errKind(ErrSyntax, "want a number")

// parseCSVFloat parses a plain decimal number (no exponent needed, but
// accepted), refusing NaN and infinities.
func parseCSVFloat(b []byte) (float64, error) {
	if n, ok := parseUint(b, maxSeconds); ok {
		return float64(n), nil
	}
	// Fast path for "123.0".
	if i := bytes.IndexByte(b, '.'); i > 0 {
		if n, ok := parseUint(b[:i], maxSeconds); ok {
			frac := b[i+1:]
			allZero := true
			for _, c := range frac {
				if c < '0' || c > '9' {
					allZero = false
					break
				}
				if c != '0' {
					allZero = false
				}
			}
			if allZero {
				return float64(n), nil
			}
		}
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errCSVNumber
	}
	return x, nil
}

func (cr *CSVReader) parseTime(b []byte, unit string) (workload.Time, error) {
	var t workload.Time
	switch unit {
	case "", "datetime", "iso":
		x, err := parseTimestamp(b)
		if err != nil {
			return 0, err
		}
		t = x
		if cr.loc != nil {
			u := time.Unix(int64(x), 0).UTC()
			t = workload.Time(time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), 0, cr.loc).Unix())
		}
		return t, nil
	case "unix", "unixms", "rel":
		x, err := parseCSVFloat(b)
		if err != nil {
			return 0, err
		}
		if unit == "unixms" {
			x /= 1000
		}
		if x < 0 || x > maxSeconds {
			return 0, errKind(ErrRange, "time must be >= 0")
		}
		t = workload.Time(math.Round(x))
		if unit == "rel" {
			t += workload.Time(cr.m.Epoch)
		}
		return t, nil
	}
	loc := cr.loc
	if loc == nil {
		loc = time.UTC
	}
	tt, err := time.ParseInLocation(unit, string(b), loc)
	if err != nil {
		return 0, errKind(ErrSyntax, "want a time in the layout "+unit)
	}
	if tt.Unix() < 0 {
		return 0, errKind(ErrRange, "timestamps before 1970 are not supported")
	}
	return workload.Time(tt.Unix()), nil
}

func parseCSVDuration(b []byte, unit string) (workload.Time, error) {
	if unit == "slurm" {
		return parseDuration(b)
	}
	x, err := parseCSVFloat(b)
	if err != nil {
		return 0, errKind(ErrSyntax, "want a number of "+orDefaultUnit(unit, "s"))
	}
	switch unit {
	case "ms":
		x /= 1000
	case "min":
		x *= 60
	case "h":
		x *= 3600
	}
	if !(x >= 0 && x <= maxSeconds) {
		return 0, errKind(ErrRange, "duration must be >= 0")
	}
	return workload.Time(math.Round(x)), nil
}

func orDefaultUnit(u, def string) string {
	if u == "" {
		return def
	}
	return u
}

func parseCSVCount(b []byte, unit string) (int64, error) {
	x, err := parseCSVFloat(b)
	if err != nil {
		return 0, err
	}
	if unit == "milli" {
		x /= 1000
	}
	if !(x >= 0 && x <= math.MaxInt32) {
		return 0, errKind(ErrRange, "count must be >= 0")
	}
	return int64(math.Ceil(x)), nil
}

func parseCSVMem(b []byte, unit string) (int64, error) {
	if unit == "slurm" {
		return parseMemMiB(b, 'M')
	}
	x, err := parseCSVFloat(b)
	if err != nil {
		return 0, err
	}
	switch unit {
	case "kib":
		x /= 1024
	case "gib":
		x *= 1024
	case "b":
		x /= 1 << 20
	}
	if !(x >= 0 && x <= maxMemMiB) {
		return 0, errKind(ErrRange, "memory must be >= 0")
	}
	return int64(math.Ceil(x)), nil
}

// Notes returns remarks on what the reader did; call it after io.EOF.
func (cr *CSVReader) Notes() []string {
	s := cr.stats
	var notes []string
	add := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	add("CSV columns mapped by %s: %s", cr.m.Name, cr.m.String())
	if cr.loc == nil {
		add("CSV wall-clock timestamps (no zone) read as UTC readings")
	}
	if s.Duplicates > 0 {
		add("dropped %s rows that repeat an earlier row exactly", fmtCount(s.Duplicates))
	}
	if s.RenamedIDs > 0 {
		add("%s rows repeat an earlier row's job id with other values: renamed id_N (N = 1, 2, ... in row order) as tasks of an array with that id", fmtCount(s.RenamedIDs))
	}
	if s.NoSubmit > 0 {
		add("skipped %s rows without a submit time", fmtCount(s.NoSubmit))
	}
	if len(s.Sentinels) > 0 {
		keys := make([]string, 0, len(s.Sentinels))
		for k := range s.Sentinels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %s", k, fmtCount(s.Sentinels[k]))
		}
		add("values standing for \"none\" taken as absent: %s", strings.Join(parts, ", "))
	}
	if s.CancelledPending > 0 {
		add("%s jobs were cancelled before they started", fmtCount(s.CancelledPending))
	}
	if s.Pending > 0 {
		add("%s jobs never started and have no end: kept with runtime 0", fmtCount(s.Pending))
	}
	if s.Running > 0 {
		add("%s jobs have a start but no end or runtime: runtime 0 (censored)", fmtCount(s.Running))
	}
	if s.Bad > 0 {
		msgs := make([]string, len(cr.badErrs))
		for i, e := range cr.badErrs {
			msgs[i] = e.Error()
		}
		add("skipped %s bad rows (lenient); first: %s", fmtCount(s.Bad), strings.Join(msgs, "; "))
	}
	return notes
}

// rowHash is the FNV-1a hash of a row's fields, each followed by a 0 byte.
func rowHash(f [][]byte) uint64 {
	h := uint64(14695981039346656037)
	for _, x := range f {
		for _, c := range x {
			h ^= uint64(c)
			h *= 1099511628211
		}
		h *= 1099511628211 // the 0 separator
	}
	return h
}
