package traces

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/workload"
)

// twoDumps is one sacct -D dump appended to another taken later: job 10
// was running (30 min) in the first and done (1 h 59 min) in the second;
// 11 was pending, then ran; 12 was requeued once (two runs, sacct -D)
// and both dumps list both runs; 13 is in the second dump only and is
// pending, after a requeued first run.
const twoDumps = `JobID|Submit|Start|End|Elapsed|State
10|2024-01-01T00:00:00|2024-01-01T00:01:00|Unknown|00:30:00|RUNNING
10.batch|2024-01-01T00:01:00|2024-01-01T00:01:00|Unknown|00:30:00|RUNNING
11|2024-01-01T00:00:05|Unknown|Unknown|00:00:00|PENDING
12|2024-01-01T00:00:10|2024-01-01T00:02:00|2024-01-01T00:10:00|00:08:00|REQUEUED
12|2024-01-01T00:00:10|2024-01-01T00:20:00|2024-01-01T01:00:00|00:40:00|COMPLETED
JobID|Submit|Start|End|Elapsed|State
10|2024-01-01T00:00:00|2024-01-01T00:01:00|2024-01-01T02:00:00|01:59:00|COMPLETED
10.batch|2024-01-01T00:01:00|2024-01-01T00:01:00|2024-01-01T02:00:00|01:59:00|COMPLETED
11|2024-01-01T00:00:05|2024-01-01T00:30:00|2024-01-01T00:40:00|00:10:00|COMPLETED
12|2024-01-01T00:00:10|2024-01-01T00:02:00|2024-01-01T00:10:00|00:08:00|REQUEUED
12|2024-01-01T00:00:10|2024-01-01T00:20:00|2024-01-01T01:00:00|00:40:00|COMPLETED
13|2024-01-01T00:00:20|2024-01-01T00:03:00|2024-01-01T00:04:00|00:01:00|REQUEUED
13|2024-01-01T00:00:20|Unknown|Unknown|00:00:00|PENDING
`

// TestSacctRepeatedDumps: the runs of twoDumps, each once. Lines 2 (10,
// running, 30 min: the second dump's record of the same run is longer),
// 4 (11 pending: a started record of 11 follows), 11 and 12 (12's runs
// again) are dropped: 4 repeats, 1 step of a repeat, 1 repeated header.
// Kept: 10 (1:59), 11 (10 min), 12's two runs, 13's requeued run and its
// pending record (nothing started follows it).
func TestSacctRepeatedDumps(t *testing.T) {
	res, err := Read(strings.NewReader(twoDumps), "two.sacct", Options{})
	if err != nil {
		t.Fatal(err)
	}
	type run struct {
		ID, State string
		Runtime   workload.Time
	}
	var got []run
	for _, j := range res.Trace.Jobs {
		got = append(got, run{j.ID, j.TraceState, j.Runtime})
	}
	want := []run{{"10", "COMPLETED", 7140}, {"11", "COMPLETED", 600}, {"12", "REQUEUED", 480}, {"12", "COMPLETED", 2400},
		{"13", "REQUEUED", 60}, {"13", "PENDING", 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	if res.SkippedBy["repeated record (same run listed again)"] != 4 || res.SkippedBy["step of a repeated record"] != 1 ||
		res.SkippedBy["repeated header row"] != 1 {
		t.Errorf("skipped %v", res.SkippedBy)
	}
	if notes := strings.Join(res.Trace.Notes, "\n"); !strings.Contains(notes, "dropped 4 repeated records") {
		t.Errorf("notes:\n%s", notes)
	}
	// One dump alone, as sacct -D writes it: every run kept.
	one := strings.Join(strings.Split(twoDumps, "\n")[6:], "\n")
	res, err = Read(strings.NewReader(one), "one.sacct", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Trace.Jobs); n != 6 || res.Skipped != 0 {
		t.Errorf("one dump: %d jobs, %d skipped; want 6 and 0", n, res.Skipped)
	}
}

// TestSacctRepeatedColumn: a header naming a column twice is an error
// that names both positions, whatever the case.
func TestSacctRepeatedColumn(t *testing.T) {
	_, err := Read(strings.NewReader("JobID|Submit|jobid\n1|2024-01-01T00:00:00|1\n"), "dup.sacct", Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1 || !strings.Contains(err.Error(), "positions 1 and 3") {
		t.Fatalf("got %v", err)
	}
	_, err = NewSacctReader(strings.NewReader("1|2024-01-01T00:00:00\n"), "x", SacctOptions{Fields: []string{"JobID,Submit,Submit"}})
	if err == nil || !strings.Contains(err.Error(), "positions 2 and 3") {
		t.Errorf("field list: %v", err)
	}
	_, err = Read(strings.NewReader("a,b,a\n1,2,3\n"), "dup.csv", Options{Format: FormatCSV, CSV: CSVMap{Name: "x", Fields: map[string]CSVColumn{"submit": {Column: "b", Unit: "unix"}}}})
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "positions 1 and 3") {
		t.Errorf("csv: %v", err)
	}
}

// TestSacctArrayBudget: a pending array record's tasks count against the
// read's MaxArrayTasks before any is made; the error names the flag.
func TestSacctArrayBudget(t *testing.T) {
	in := "JobID|Submit|State\n1_[0-4000000]|2024-01-01T00:00:00|PENDING\n"
	_, err := Read(strings.NewReader(in), "bomb.sacct", Options{})
	var le *LimitError
	var pe *ParseError
	if !errors.As(err, &le) || le.Flag != "max-array-tasks" || !errors.As(err, &pe) || pe.Line != 2 || pe.Field != "JobID" {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "4,000,001 jobs") || !strings.Contains(err.Error(), "--max-array-tasks") {
		t.Errorf("message %q", err)
	}
	// Two records of 600 tasks against a budget of 1,000: the second is
	// refused, naming what came before it; lenient reading does not skip
	// a limit.
	in = "JobID|Submit|State\n1_[0-599]|2024-01-01T00:00:00|PENDING\n2_[0-599]|2024-01-01T00:00:00|PENDING\n"
	_, err = Read(strings.NewReader(in), "two.sacct", Options{Lenient: true, Limits: Limits{MaxArrayTasks: 1000}})
	if !errors.As(err, &le) || !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(err.Error(), "600 expanded before it") {
		t.Fatalf("got %v", err)
	}
	res, err := Read(strings.NewReader(in), "two.sacct", Options{Limits: Limits{MaxArrayTasks: 1200}})
	if err != nil || len(res.Trace.Jobs) != 1200 {
		t.Fatalf("within the budget: %v", err)
	}
	// MaxJobs bounds the jobs whatever makes them.
	_, err = Read(strings.NewReader(in), "two.sacct", Options{Limits: Limits{MaxArrayTasks: 1200, MaxJobs: 1000}})
	if !errors.As(err, &le) || le.Flag != "max-jobs" {
		t.Fatalf("max jobs: %v", err)
	}
}

// TestSacctSplitBounded: a line of delimiters is cut into no more fields
// than the header has columns plus one, and the error counts them all.
func TestSacctSplitBounded(t *testing.T) {
	in := "JobID|Submit|State\n" + strings.Repeat("|", 200000) + "\n"
	_, err := Read(strings.NewReader(in), "d.sacct", Options{})
	if err == nil || !strings.Contains(err.Error(), "200001 fields, want 3") {
		t.Fatalf("got %v", err)
	}
	sr, _ := NewSacctReader(strings.NewReader("JobID|Submit\n"), "x", SacctOptions{})
	if _, perr := sr.split([]byte(strings.Repeat("|", 1000)), 2); perr == nil || cap(sr.fields) > 8 {
		t.Errorf("split of 1001 fields: %v, buffer cap %d", perr, cap(sr.fields))
	}
}
