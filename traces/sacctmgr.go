package traces

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/workload"
)

// sacctmgr -P (--parsable2) prints one table: a header row of field names
// and one row per record, fields joined by "|" with no trailing one (-p
// adds one, which is accepted). scripts/collect-slurm-records.sh runs it
// with -n and writes the header back, so each file names its columns.
// The readers below take columns by header name, case-insensitively, in
// any order; a column they need and the header lacks is an error naming
// it.

// MaxSacctmgrRows bounds the rows of one sacctmgr table (associations,
// QOS, events, reservations), checked as each row is read.
const MaxSacctmgrRows = 1 << 20

// SacctmgrTable is a sacctmgr -P table.
type SacctmgrTable struct {
	Path    string
	Columns []string // header names as written
	Rows    []SacctmgrRow
	col     map[string]int
}

// SacctmgrRow is one record: its 1-based line and fields, one per column.
type SacctmgrRow struct {
	Line   int
	Fields []string
}

// Get returns the field of row under column name ("" when the table has
// no such column).
func (t *SacctmgrTable) Get(row *SacctmgrRow, name string) string {
	if i, ok := t.col[strings.ToLower(name)]; ok {
		return row.Fields[i]
	}
	return ""
}

// Has reports whether the table has column name.
func (t *SacctmgrTable) Has(name string) bool {
	_, ok := t.col[strings.ToLower(name)]
	return ok
}

func (t *SacctmgrTable) bad(row *SacctmgrRow, field, value string, kind error, format string, args ...any) *ParseError {
	return &ParseError{Path: t.Path, Line: row.Line, Field: field, Value: value, Err: errKind(kind, fmt.Sprintf(format, args...))}
}

// ReadSacctmgr reads a sacctmgr -P table from r (path names it in
// errors). required are the columns the caller reads; an empty input is
// a table with no columns and no rows (the command printed nothing).
func ReadSacctmgr(r io.Reader, path string, required []string) (*SacctmgrTable, error) {
	lr := newLineReader(r)
	t := &SacctmgrTable{Path: path, col: map[string]int{}}
	withPath := func(err error) error {
		if pe, ok := err.(*ParseError); ok && pe.Path == "" {
			pe.Path = path
		}
		return err
	}
	trailing := false
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, withPath(err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		fields := strings.Split(string(line), "|")
		if t.Columns == nil {
			if len(fields) > 1 && fields[len(fields)-1] == "" {
				trailing = true
				fields = fields[:len(fields)-1]
			}
			for i, f := range fields {
				name := strings.TrimSpace(f)
				k := strings.ToLower(name)
				if name == "" {
					return nil, &ParseError{Path: path, Line: lr.line, Field: "header", noValue: true, Err: errKind(ErrSyntax, fmt.Sprintf("column %d has no name (want sacctmgr -P output with its header row)", i+1))}
				}
				if j, dup := t.col[k]; dup {
					return nil, &ParseError{Path: path, Line: lr.line, Field: name, noValue: true, Err: errKind(ErrSyntax, fmt.Sprintf("column named twice (columns %d and %d)", j+1, i+1))}
				}
				t.col[k] = i
				t.Columns = append(t.Columns, name)
			}
			for _, c := range required {
				if _, ok := t.col[strings.ToLower(c)]; !ok {
					return nil, &ParseError{Path: path, Line: lr.line, Field: c, noValue: true, Err: errKind(ErrMissingColumn, fmt.Sprintf("the header lacks it (want sacctmgr -P with %s)", strings.Join(required, ",")))}
				}
			}
			continue
		}
		if trailing && len(fields) == len(t.Columns)+1 && fields[len(fields)-1] == "" {
			fields = fields[:len(fields)-1]
		}
		if len(fields) != len(t.Columns) {
			return nil, &ParseError{Path: path, Line: lr.line, Err: errKind(ErrFieldCount, fmt.Sprintf("%d fields, the header has %d", len(fields), len(t.Columns)))}
		}
		if len(t.Rows) >= MaxSacctmgrRows {
			return nil, &ParseError{Path: path, Line: lr.line, Err: &LimitError{Flag: "max-jobs", Limit: MaxSacctmgrRows, Msg: "sacctmgr table has too many rows"}}
		}
		t.Rows = append(t.Rows, SacctmgrRow{Line: lr.line, Fields: fields})
	}
	return t, nil
}

// Assoc is one association of sacctmgr show assoc: an account (User
// empty) or a user in an account, on a cluster, optionally for one
// partition.
type Assoc struct {
	Cluster, Account, User, Partition string
	// Parent is the parent account (ParentName; empty for user
	// associations, whose parent is Account, and for root).
	Parent string
	// Shares is the raw fair-share (sacctmgr Fairshare), or -1 for
	// "parent" (the association uses its parent's).
	Shares float64
	// Priority is the association's priority (-1 when not set).
	Priority int64
	// QOS are the QOS the association may use; DefaultQOS its default.
	QOS        []string
	DefaultQOS string
	// GrpTRES, MaxTRES as sacctmgr prints them ("cpu=64,gres/gpu=8").
	GrpTRES, MaxTRES string
	// MaxJobs is the per-association running job limit (-1 none).
	MaxJobs int64
	Line    int
}

// AssocColumns are the columns ParseAssoc needs.
var AssocColumns = []string{"Account", "User", "Share"}

// ParseAssoc reads the associations of a sacctmgr show assoc -P table.
func ParseAssoc(t *SacctmgrTable) ([]Assoc, error) {
	if err := t.need(AssocColumns); err != nil {
		return nil, err
	}
	var out []Assoc
	for i := range t.Rows {
		r := &t.Rows[i]
		a := Assoc{Cluster: t.Get(r, "Cluster"), Account: t.Get(r, "Account"), User: t.Get(r, "User"),
			Partition: t.Get(r, "Partition"), Parent: t.Get(r, "ParentName"), DefaultQOS: t.Get(r, "DefaultQOS"),
			GrpTRES: t.Get(r, "GrpTRES"), MaxTRES: t.Get(r, "MaxTRES"), Line: r.Line}
		if a.Account == "" {
			return nil, t.bad(r, "Account", "", ErrSyntax, "an association needs an account")
		}
		switch s := t.Get(r, "Share"); {
		case strings.EqualFold(s, "parent"):
			a.Shares = -1
		case s == "":
			a.Shares = 1
		default:
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v >= 0) || math.IsInf(v, 0) {
				return nil, t.bad(r, "Share", s, ErrSyntax, "want shares >= 0 or \"parent\"")
			}
			a.Shares = v
		}
		var err error
		if a.Priority, err = t.optInt(r, "Priority"); err != nil {
			return nil, err
		}
		if a.MaxJobs, err = t.optInt(r, "MaxJobs"); err != nil {
			return nil, err
		}
		if q := t.Get(r, "QOS"); q != "" {
			a.QOS = strings.Split(q, ",")
		}
		out = append(out, a)
	}
	return out, nil
}

// QOS is one QOS of sacctmgr show qos.
type QOS struct {
	Name     string
	Priority int64 // 0 when not set
	Flags    string
	// Preempt lists the QOS this one may preempt; PreemptMode its mode
	// ("cluster" or empty: the cluster's).
	Preempt     []string
	PreemptMode string
	// GraceTime is seconds; UsageFactor the multiplier of charged usage
	// (1 when not set).
	GraceTime   workload.Time
	UsageFactor float64
	// Limits as sacctmgr prints them.
	GrpTRES, MaxTRES, MaxTRESPU, MinTRES string
	MaxJobsPU, MaxSubmitPU               int64 // -1 none
	MaxWall                              workload.Time
	Line                                 int
}

// QOSColumns are the columns ParseQOS needs.
var QOSColumns = []string{"Name", "Priority"}

// ParseQOS reads the QOS of a sacctmgr show qos -P table.
func ParseQOS(t *SacctmgrTable) ([]QOS, error) {
	if err := t.need(QOSColumns); err != nil {
		return nil, err
	}
	var out []QOS
	seen := map[string]int{}
	for i := range t.Rows {
		r := &t.Rows[i]
		q := QOS{Name: t.Get(r, "Name"), Flags: t.Get(r, "Flags"), PreemptMode: t.Get(r, "PreemptMode"),
			GrpTRES: t.Get(r, "GrpTRES"), MaxTRES: t.Get(r, "MaxTRES"), MaxTRESPU: t.Get(r, "MaxTRESPU"),
			MinTRES: t.Get(r, "MinTRES"), UsageFactor: 1, Line: r.Line}
		if q.Name == "" {
			return nil, t.bad(r, "Name", "", ErrSyntax, "a QOS needs a name")
		}
		if l, dup := seen[q.Name]; dup {
			return nil, t.bad(r, "Name", q.Name, ErrSyntax, "QOS listed twice (also line %d)", l)
		}
		seen[q.Name] = r.Line
		var err error
		if q.Priority, err = t.optInt(r, "Priority"); err != nil {
			return nil, err
		}
		q.Priority = max(q.Priority, 0)
		if q.MaxJobsPU, err = t.optInt(r, "MaxJobsPU"); err != nil {
			return nil, err
		}
		if q.MaxSubmitPU, err = t.optInt(r, "MaxSubmitPU"); err != nil {
			return nil, err
		}
		if p := t.Get(r, "Preempt"); p != "" {
			q.Preempt = strings.Split(p, ",")
		}
		if s := t.Get(r, "UsageFactor"); s != "" {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v >= 0) || math.IsInf(v, 0) {
				return nil, t.bad(r, "UsageFactor", s, ErrSyntax, "want a factor >= 0")
			}
			q.UsageFactor = v
		}
		for _, c := range []struct {
			name string
			dst  *workload.Time
		}{{"GraceTime", &q.GraceTime}, {"MaxWall", &q.MaxWall}} {
			s := t.Get(r, c.name)
			d, err := parseDuration([]byte(s))
			if err != nil {
				return nil, t.bad(r, c.name, s, ErrSyntax, "want a Slurm duration [D-]HH:MM:SS")
			}
			*c.dst = d
		}
		if q.GraceTime == workload.Unknown {
			q.GraceTime = 0
		}
		out = append(out, q)
	}
	return out, nil
}

// NodeEvent is one event of sacctmgr show event: a node's state from
// Start to End (Unix seconds; End is workload.Unknown while it lasts), or
// with Node empty a cluster event (ClusterNodes says which nodes the
// cluster had), which a replay does not apply.
type NodeEvent struct {
	Cluster, ClusterNodes, Node string
	Start, End                  workload.Time
	State, Reason, User         string
	Line                        int
}

// EventColumns are the columns ParseEvents needs.
var EventColumns = []string{"NodeName", "TimeStart", "TimeEnd", "State"}

// ParseEvents reads the events of a sacctmgr show event -P table; times
// are read as UTC wall-clock readings, as the sacct reader reads them.
func ParseEvents(t *SacctmgrTable) ([]NodeEvent, error) {
	if err := t.need(EventColumns); err != nil {
		return nil, err
	}
	var out []NodeEvent
	for i := range t.Rows {
		r := &t.Rows[i]
		e := NodeEvent{Cluster: t.Get(r, "Cluster"), ClusterNodes: t.Get(r, "ClusterNodes"), Node: t.Get(r, "NodeName"),
			State: t.Get(r, "State"), Reason: t.Get(r, "Reason"), User: t.Get(r, "User"), Line: r.Line}
		var err error
		if e.Start, e.End, err = t.span(r, "TimeStart", "TimeEnd"); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Reservation is one reservation of sacctmgr show reservation.
type Reservation struct {
	Cluster, Name, Nodes, Flags string
	Start, End                  workload.Time
	Line                        int
}

// ReservationColumns are the columns ParseReservations needs.
var ReservationColumns = []string{"Name", "NodeName", "TimeStart", "TimeEnd"}

// ParseReservations reads a sacctmgr show reservation -P table
// (format=Cluster,Name,NodeNames,TimeStart,TimeEnd,Flags: sacctmgr heads
// NodeNames "NodeName").
func ParseReservations(t *SacctmgrTable) ([]Reservation, error) {
	if err := t.need(ReservationColumns); err != nil {
		return nil, err
	}
	var out []Reservation
	for i := range t.Rows {
		r := &t.Rows[i]
		v := Reservation{Cluster: t.Get(r, "Cluster"), Name: t.Get(r, "Name"), Nodes: t.Get(r, "NodeName"), Flags: t.Get(r, "Flags"), Line: r.Line}
		if v.Name == "" {
			return nil, t.bad(r, "Name", "", ErrSyntax, "a reservation needs a name")
		}
		var err error
		if v.Start, v.End, err = t.span(r, "TimeStart", "TimeEnd"); err != nil {
			return nil, err
		}
		if v.End == workload.Unknown {
			return nil, t.bad(r, "TimeEnd", t.Get(r, "TimeEnd"), ErrSyntax, "a reservation needs an end time")
		}
		out = append(out, v)
	}
	return out, nil
}

// span reads a start (required) and an end (Unknown allowed) column.
func (t *SacctmgrTable) span(r *SacctmgrRow, sc, ec string) (start, end workload.Time, err error) {
	s := t.Get(r, sc)
	start, perr := parseTimestamp([]byte(s))
	if perr != nil || start == workload.Unknown {
		return 0, 0, t.bad(r, sc, s, ErrSyntax, "want a time YYYY-MM-DDTHH:MM:SS")
	}
	e := t.Get(r, ec)
	end, perr = parseTimestamp([]byte(e))
	if perr != nil {
		return 0, 0, t.bad(r, ec, e, ErrSyntax, "want a time YYYY-MM-DDTHH:MM:SS or Unknown")
	}
	if end != workload.Unknown && end < start {
		return 0, 0, t.bad(r, ec, e, ErrRange, "before %s %s", sc, s)
	}
	return start, end, nil
}

// optInt reads an optional whole number column: -1 when empty.
func (t *SacctmgrTable) optInt(r *SacctmgrRow, name string) (int64, error) {
	s := t.Get(r, name)
	if s == "" {
		return -1, nil
	}
	n, ok := parseUint([]byte(s), math.MaxInt64/2)
	if !ok {
		return 0, t.bad(r, name, s, ErrSyntax, "want a whole number >= 0")
	}
	return n, nil
}

// need checks a non-empty table for columns.
func (t *SacctmgrTable) need(cols []string) error {
	if len(t.Columns) == 0 {
		return nil
	}
	for _, c := range cols {
		if !t.Has(c) {
			return &ParseError{Path: t.Path, Line: 1, Field: c, noValue: true, Err: errKind(ErrMissingColumn, "the header lacks it")}
		}
	}
	return nil
}

// ParseSlurmTime reads a time as sacct and sacctmgr print it
// (YYYY-MM-DDTHH:MM:SS, a UTC wall-clock reading, or Unix seconds) into
// Unix seconds; "Unknown", "None", "N/A" and "" give workload.Unknown.
func ParseSlurmTime(s string) (workload.Time, error) {
	t, err := parseTimestamp([]byte(s))
	if err != nil {
		return 0, fmt.Errorf("%q: want a time YYYY-MM-DDTHH:MM:SS", s)
	}
	return t, nil
}
