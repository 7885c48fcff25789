package traces

import (
	"bytes"
	"cmp"
	"hash/fnv"
	"io"
	"slices"
	"sort"

	"github.com/schedsim/schedsim/workload"
)

// Two sacct dumps appended (the same window asked for twice, or
// overlapping windows) list the same records twice. sacct -D lists a
// requeued job once per run, each with its own Start, so a run is a
// JobID and a Start: records of the same run are the same run listed more
// than once, and the one with the longest Elapsed is kept (a later dump
// has seen more of a run still going in an earlier one). A record that
// had not started (no Start: pending at its dump) followed later in the
// input by a started record of the same job is a stale copy of a run the
// later dump saw start, and is dropped too; in one sacct -D dump the
// pending record of a requeued job comes after its earlier runs and is
// kept. Every distinct run is kept.
//
// Finding them takes a first pass over the input that keeps 8 bytes per
// job row (a hash of its JobID), sorted to find the JobIDs that repeat; a
// second pass, only when some do, compares the rows of those alone.

// dupSet is the sorted lines of the job rows to drop.
type dupSet struct {
	lines []int
	next  int // lines[next] is the next to meet, as lines increase
}

// drop reports whether the job row on line is a repeat to drop. Lines
// must be asked in increasing order.
func (d *dupSet) drop(line int) bool {
	if d == nil {
		return false
	}
	for d.next < len(d.lines) && d.lines[d.next] < line {
		d.next++
	}
	return d.next < len(d.lines) && d.lines[d.next] == line
}

// isHeaderRow reports whether line is a sacct header row (it has a JobID
// or JobIDRaw field). A data row is told apart without allocating: it
// rarely holds "jobid" in any case.
func isHeaderRow(line, delim []byte) bool {
	if !hasFoldJobID(line) {
		return false
	}
	for f := range bytes.SplitSeq(line, delim) {
		f = bytes.TrimSpace(f)
		if bytes.EqualFold(f, []byte("JobID")) || bytes.EqualFold(f, []byte("JobIDRaw")) {
			return true
		}
	}
	return false
}

// hasFoldJobID reports whether b contains "jobid" in any case.
func hasFoldJobID(b []byte) bool {
	for len(b) >= 5 {
		i := bytes.IndexAny(b, "jJ")
		if i < 0 || len(b)-i < 5 {
			return false
		}
		if bytes.EqualFold(b[i:i+5], []byte("jobid")) {
			return true
		}
		b = b[i+1:]
	}
	return false
}

// dupRow is a job row of a repeated JobID, from the second pass.
type dupRow struct {
	line    int
	elapsed workload.Time
	started bool
	id      string
	start   string
}

// sacctKeys reads the job rows of the sacct input: it calls fn with
// each row's line and JobID, and a function that returns the row's Start
// field and elapsed time (-1 when unreadable: the main pass reports it),
// valid during the call. Without full, rows are not split (only the JobID
// is cut out, quickly) and run must not be called.
func sacctKeys(s *Stream, full bool, fn func(line int, id []byte, run func() (start []byte, elapsed workload.Time))) error {
	p, err := s.openPass()
	if err != nil {
		return err
	}
	defer p.done()
	sr, err := newSacctReader(p.br, s.name, s.opts.Sacct, s.lim, nil)
	if err != nil {
		return err
	}
	cols := [...]int{sr.col[roleStart], sr.col[roleElapsed], sr.col[roleElapsedRaw], sr.col[roleEnd]}
	var f [][]byte
	get := func(c int) []byte {
		if c < 0 {
			return nil
		}
		return f[c]
	}
	run := func() ([]byte, workload.Time) {
		start := get(cols[0])
		elapsed, err := parseDuration(get(cols[1]))
		if err != nil {
			return start, -1
		}
		if elapsed == workload.Unknown {
			if raw := get(cols[2]); raw != nil {
				if elapsed, err = parseSeconds(raw); err != nil {
					return start, -1
				}
			}
		}
		if elapsed == workload.Unknown {
			st, err1 := parseTimestamp(start)
			en, err2 := parseTimestamp(get(cols[3]))
			elapsed = -1
			if err1 == nil && err2 == nil && st != workload.Unknown && en != workload.Unknown && en >= st {
				elapsed = en - st
			}
		}
		return start, elapsed
	}
	for {
		var line []byte
		var lineNo int
		if sr.pending != nil {
			line, lineNo = sr.pending, sr.pendLine
			sr.pending = nil
		} else {
			if line, err = sr.lr.next(); err == io.EOF {
				return nil
			} else if err != nil {
				return nil // the main pass reports it
			}
			lineNo = sr.lr.line
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var idf []byte
		if full {
			var perr *ParseError
			if f, perr = sr.split(line, lineNo); perr != nil {
				continue // a header row of another dump, or an error the main pass reports
			}
			idf = f[sr.idCol]
		} else {
			idf = nthField(line, sr.delim, sr.idCol)
		}
		if len(idf) > 0 && (idf[0] < '0' || idf[0] > '9') {
			continue // a header row, or a bad id
		}
		id, isStep, _ := splitStep(idf, nil)
		if isStep {
			continue
		}
		fn(lineNo, id, run)
	}
}

// nthField returns field n (0-based) of line, split at delim.
func nthField(line, delim []byte, n int) []byte {
	for ; n > 0; n-- {
		i := bytes.Index(line, delim)
		if i < 0 {
			return nil
		}
		line = line[i+len(delim):]
	}
	if i := bytes.Index(line, delim); i >= 0 {
		return line[:i]
	}
	return line
}

func idHash(id []byte) uint64 {
	h := fnv.New64a()
	h.Write(id)
	return h.Sum64()
}

// sacctDuplicates finds the records of the sacct input to drop (see
// above); nil when there are none.
func (s *Stream) sacctDuplicates() (*dupSet, error) {
	var hashes []uint64
	if err := sacctKeys(s, false, func(_ int, id []byte, _ func() ([]byte, workload.Time)) {
		hashes = append(hashes, idHash(id))
	}); err != nil {
		return nil, err
	}
	slices.Sort(hashes)
	var rep []uint64
	for i := 1; i < len(hashes); i++ {
		if hashes[i] == hashes[i-1] && (len(rep) == 0 || rep[len(rep)-1] != hashes[i]) {
			rep = append(rep, hashes[i])
		}
	}
	hashes = nil
	if len(rep) == 0 {
		return nil, nil
	}
	var rows []dupRow
	if err := sacctKeys(s, true, func(line int, id []byte, run func() ([]byte, workload.Time)) {
		if _, ok := slices.BinarySearch(rep, idHash(id)); ok {
			start, elapsed := run()
			st, err := parseTimestamp(start)
			rows = append(rows, dupRow{line: line, elapsed: elapsed, started: err == nil && st != workload.Unknown,
				id: string(id), start: string(start)})
		}
	}); err != nil {
		return nil, err
	}
	// Group by JobID, in input order within a group.
	slices.SortFunc(rows, func(a, b dupRow) int {
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.line, b.line))
	})
	d := &dupSet{}
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j].id == rows[i].id {
			j++
		}
		d.lines = append(d.lines, dropRepeats(rows[i:j])...)
		i = j
	}
	if len(d.lines) == 0 {
		return nil, nil
	}
	sort.Ints(d.lines)
	return d, nil
}

// dropRepeats returns the lines to drop of the records of one JobID, in
// input order: of the records with one Start all but the one with the
// longest Elapsed (the first of equals), and the records without a
// Start that a started record follows.
func dropRepeats(g []dupRow) []int {
	var drop []int
	lastStarted := -1
	for k, r := range g {
		if r.started {
			lastStarted = k
		}
	}
	best := map[string]int{} // Start -> index of the kept record
	for k, r := range g {
		if !r.started && k < lastStarted {
			drop = append(drop, r.line)
			continue
		}
		b, ok := best[r.start]
		switch {
		case !ok:
			best[r.start] = k
		case r.elapsed > g[b].elapsed:
			drop = append(drop, g[b].line)
			best[r.start] = k
		default:
			drop = append(drop, r.line)
		}
	}
	return drop
}

// submitCache remembers the SubmitLines read lately: every task of an
// array, and every job a script submits in a loop, repeats one.
type submitCache struct {
	m map[string]submitResult
}

type submitResult struct {
	sl  submitLine
	err error
}

// submitCacheSize bounds the SubmitLines remembered.
const submitCacheSize = 1024

func newSubmitCache() *submitCache { return &submitCache{m: map[string]submitResult{}} }

func (c *submitCache) parse(line []byte) (submitLine, error) {
	if r, ok := c.m[string(line)]; ok {
		return r.sl, r.err
	}
	sl, err := parseSubmitLine(string(line))
	if len(c.m) >= submitCacheSize {
		clear(c.m)
	}
	if len(line) <= maxInterned*4 {
		c.m[string(line)] = submitResult{sl, err}
	}
	return sl, err
}
