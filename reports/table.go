package reports

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/schedsim/schedsim/workload"
)

// WriteTable writes s as the aligned plain-text summary schedsim run
// prints: run identity, job counts by state, the window and makespan,
// utilization, wait statistics (seconds and human form), bounded
// slowdown, and a per-partition table. Equal Summaries give
// byte-identical output; lines end in "\n" and carry no trailing blanks.
func WriteTable(w io.Writer, s Summary) error {
	bw := bufio.NewWriter(w)
	var t textTable

	// Run identity.
	t.row("cluster", fmt.Sprintf("%s (%d nodes, %d GPUs, %d CPUs, %d partitions)",
		orNone(s.Cluster.Name), s.Cluster.Nodes, s.Cluster.GPUs, s.Cluster.CPUs, s.Cluster.Partitions))
	t.row("policy", fmt.Sprintf("%s (seed %d)", orNone(s.Policy), s.Seed))
	t.row("trace", fmt.Sprintf("%s (%d jobs)", orNone(s.Trace.Source), s.Trace.Jobs))
	t.row("epoch", fmt.Sprintf("%s (%d)", time.Unix(s.Trace.Epoch, 0).UTC().Format(time.RFC3339), s.Trace.Epoch))
	t.row("run", fmt.Sprintf("stopped at %d s after %d events", s.RunEnd, s.Events))
	for _, n := range s.Trace.Notes {
		t.row("trace note", n)
	}
	for _, n := range s.Notes {
		t.row("note", n)
	}
	t.flush(bw, "", "ll")
	bw.WriteByte('\n')

	// Jobs.
	t.row("Jobs", strconv.Itoa(s.Jobs), "")
	t.row("  started", strconv.Itoa(s.Started), "")
	t.row("  COMPLETED", strconv.Itoa(s.States.Completed), "")
	t.row("  TIMEOUT", strconv.Itoa(s.States.Timeout), "")
	t.row("  CANCELLED", strconv.Itoa(s.States.Cancelled), "before start")
	t.row("  REJECTED", strconv.Itoa(s.States.Rejected), "")
	t.row("  UNFINISHED", strconv.Itoa(s.States.Unfinished), fmt.Sprintf("%d still pending", s.NotStarted.Pending))
	if len(s.TraceStates) > 0 {
		t.row("Trace states", "", "")
		for _, ts := range s.TraceStates {
			t.row("  "+orNone(ts.State), strconv.Itoa(ts.Count), "")
		}
	}
	t.flush(bw, "", "lrl")
	bw.WriteByte('\n')

	// Window and utilization.
	window := "none (no job started)"
	if s.LastEnd != workload.Unknown {
		window = fmt.Sprintf("%d s .. %d s", s.FirstSubmit, s.LastEnd)
	}
	t.row("Window", window, "", "first submit to last end")
	t.row("Makespan", FormatSeconds(float64(s.Makespan)), strconv.FormatInt(int64(s.Makespan), 10)+" s", "")
	t.row("Utilization", "", "", "allocated / available")
	t.row("  GPU", percent(s.GPU.Fraction), "", resourceHours(s.GPU, "GPU-h"))
	t.row("  node", percent(s.Node.Fraction), "", resourceHours(s.Node, "node-h"))
	t.row("  CPU", percent(s.CPU.Fraction), "", resourceHours(s.CPU, "CPU-h"))
	t.flush(bw, "", "lrrl")
	bw.WriteByte('\n')

	// Waits and slowdown.
	t.row(fmt.Sprintf("Wait (%d started jobs)", s.Wait.Count), "seconds", "")
	waitRows(&t, "  ", s.Wait)
	fmt.Fprintf(bw, "")
	t.row(fmt.Sprintf("Bounded slowdown (tau %d s, %d finished jobs)", s.Slowdown.Tau, s.Slowdown.Count), "", "")
	t.row("  mean", strconv.FormatFloat(s.Slowdown.Mean, 'f', 3, 64), "")
	t.row("  max", strconv.FormatFloat(s.Slowdown.Max, 'f', 3, 64), "")
	t.flush(bw, "", "lrr")
	fmt.Fprintf(bw, "Not in waits: %d cancelled before start, %d rejected, %d pending at the end\n\n",
		s.NotStarted.Cancelled, s.NotStarted.Rejected, s.NotStarted.Pending)

	// Partitions.
	t.row("Partition", "Jobs", "Started", "Wait mean", "p50", "p95", "")
	for _, p := range s.Partitions {
		note := ""
		if !p.InCluster {
			note = "not in cluster"
		}
		t.row(orNone(p.Name), strconv.Itoa(p.Jobs), strconv.Itoa(p.Started),
			FormatSeconds(p.Wait.Mean), FormatSeconds(p.Wait.P50), FormatSeconds(p.Wait.P95), note)
	}
	t.flush(bw, "", "lrrrrrl")
	return bw.Flush()
}

func waitRows(t *textTable, indent string, st Stats) {
	for _, r := range []struct {
		name string
		v    float64
	}{{"mean", st.Mean}, {"p50", st.P50}, {"p95", st.P95}, {"p99", st.P99}, {"max", st.Max}} {
		t.row(indent+r.name, strconv.FormatFloat(r.v, 'f', 1, 64), FormatSeconds(r.v))
	}
}

// FormatSeconds formats a number of seconds, rounded to the nearest second
// (halves away from zero), as "HH:MM:SS", or "Nd HH:MM:SS" from one day
// on: 93784.4 gives "1d 02:03:04". Negative values get a leading "-".
func FormatSeconds(seconds float64) string {
	r := math.Round(seconds)
	sign := ""
	if r < 0 {
		sign, r = "-", -r
	}
	if r > math.MaxInt64/2 || math.IsNaN(r) {
		return "overflow"
	}
	n := int64(r)
	d, h, m, sec := n/86400, n/3600%24, n/60%60, n%60
	if d > 0 {
		return fmt.Sprintf("%s%dd %02d:%02d:%02d", sign, d, h, m, sec)
	}
	return fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, sec)
}

func percent(f float64) string {
	return strconv.FormatFloat(100*f, 'f', 2, 64) + " %"
}

func resourceHours(u Utilization, unit string) string {
	return fmt.Sprintf("%s of %s %s",
		strconv.FormatFloat(float64(u.Allocated)/3600, 'f', 1, 64),
		strconv.FormatFloat(float64(u.Available)/3600, 'f', 1, 64), unit)
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// textTable collects rows of cells and writes them with every column
// padded to its widest cell, two spaces between columns.
type textTable struct {
	rows [][]string
}

func (t *textTable) row(cells ...string) { t.rows = append(t.rows, cells) }

// flush writes the collected rows and clears them. align has one byte per
// column, 'l' or 'r'. Trailing blanks are trimmed from every line.
func (t *textTable) flush(w *bufio.Writer, indent string, align string) {
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var line strings.Builder
	for _, r := range t.rows {
		line.Reset()
		line.WriteString(indent)
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i < len(align) && align[i] == 'r' {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		w.WriteString(strings.TrimRight(line.String(), " "))
		w.WriteByte('\n')
	}
	t.rows = t.rows[:0]
}
