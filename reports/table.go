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
// prints: run identity, job counts by state, makespan, utilization, wait
// statistics (seconds and human form), bounded slowdown, and a
// per-partition table. Equal Summaries give byte-identical output; lines
// end in "\n" and carry no trailing blanks. It returns the first write
// error.
func WriteTable(w io.Writer, s Summary) error {
	bw := bufio.NewWriter(w)
	var t textTable
	count := strconv.Itoa

	// Run identity.
	t.row("cluster", fmt.Sprintf("%s: %d nodes, %d GPUs, %d CPUs, %d partitions",
		orNone(s.Cluster.Name), s.Cluster.Nodes, s.Cluster.GPUs, s.Cluster.CPUs, s.Cluster.Partitions))
	t.row("policy", fmt.Sprintf("%s, seed %d", orNone(s.Policy), s.Seed))
	t.row("trace", fmt.Sprintf("%s: %d jobs", orNone(s.Trace.Source), s.Trace.Jobs))
	t.row("epoch", fmt.Sprintf("%s (%d)", time.Unix(s.Trace.Epoch, 0).UTC().Format(time.RFC3339), s.Trace.Epoch))
	t.row("run", fmt.Sprintf("stopped at %d s after %d events", s.RunEnd, s.Events))
	for _, n := range s.Trace.Notes {
		t.row("trace note", n)
	}
	for _, n := range s.Notes {
		t.row("note", n)
	}
	t.row()
	t.flush(bw, "ll")

	// Columns: label, value, value in human form, note.
	t.row("Jobs", count(s.Jobs), "", "")
	t.row("  started", count(s.Started), "", "")
	t.row("  COMPLETED", count(s.States.Completed), "", "")
	t.row("  TIMEOUT", count(s.States.Timeout), "", "")
	cancelled := "before start"
	if n := s.States.Cancelled - s.NotStarted.Cancelled; n > 0 {
		cancelled = fmt.Sprintf("%d before start, %d while running (as recorded)", s.NotStarted.Cancelled, n)
	}
	t.row("  CANCELLED", count(s.States.Cancelled), "", cancelled)
	t.row("  REJECTED", count(s.States.Rejected), "", "")
	t.row("  UNFINISHED", count(s.States.Unfinished), "", fmt.Sprintf("%d never started", s.NotStarted.Pending))
	// The other states, only when some job ended in them.
	for _, st := range []struct {
		name string
		n    int
		note string
	}{
		{"PREEMPTED", s.States.Preempted, ""},
		{"NODE_FAIL", s.States.NodeFail, ""},
		{"FAILED", s.States.Failed, "as recorded"},
		{"OUT_OF_MEMORY", s.States.OutOfMemory, "as recorded"},
		{"BOOT_FAIL", s.States.BootFail, "as recorded"},
		{"DEADLINE", s.States.Deadline, "as recorded"},
	} {
		if st.n > 0 {
			t.row("  "+st.name, count(st.n), "", st.note)
		}
	}
	if len(s.TraceStates) > 0 {
		t.row("Trace states")
		for _, ts := range s.TraceStates {
			t.row("  "+orNone(ts.State), count(ts.Count), "", "")
		}
	}
	t.row()

	window := "no job started"
	if s.LastEnd != workload.Unknown {
		window = fmt.Sprintf("first submit (%d s) to last end (%d s)", s.FirstSubmit, s.LastEnd)
	}
	t.row("Makespan", fmt.Sprintf("%d s", s.Makespan), FormatSeconds(float64(s.Makespan)), window)
	t.row("Utilization", "", "", "allocated / available over the makespan")
	t.row("  GPU", percent(s.GPU.Fraction), "", resourceHours(s.GPU, "GPU-h"))
	if e := s.GPUEffective; e.StretchedRuns > 0 {
		t.row("  GPU effective", percent(e.Fraction), "", fmt.Sprintf("%s GPU-h; %s GPU-h lost to communication stretch in %d runs",
			strconv.FormatFloat(float64(e.Effective)/3600, 'f', 1, 64), strconv.FormatFloat(float64(e.LostToStretch)/3600, 'f', 1, 64), e.StretchedRuns))
	}
	t.row("  node", percent(s.Node.Fraction), "", resourceHours(s.Node, "node-h"))
	t.row("  CPU", percent(s.CPU.Fraction), "", resourceHours(s.CPU, "CPU-h"))
	t.row()

	t.row("Wait", "", "", fmt.Sprintf("%d started jobs; left out: %d cancelled before start, %d rejected, %d pending",
		s.Wait.Count, s.NotStarted.Cancelled, s.NotStarted.Rejected, s.NotStarted.Pending))
	if s.WaitDefinition != "" {
		t.row("", "", "", "wait: "+s.WaitDefinition)
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"mean", s.Wait.Mean}, {"p50", s.Wait.P50}, {"p95", s.Wait.P95}, {"p99", s.Wait.P99}, {"max", s.Wait.Max}} {
		if s.Wait.Count == 0 {
			t.row("  "+r.name, "-", "-", "")
			continue
		}
		t.row("  "+r.name, strconv.FormatFloat(r.v, 'f', 1, 64)+" s", FormatSeconds(r.v), "")
	}
	t.row("Bounded slowdown", "", "", fmt.Sprintf("tau %d s, %d finished jobs", s.Slowdown.Tau, s.Slowdown.Count))
	sld := func(v float64) string {
		if s.Slowdown.Count == 0 {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	t.row("  mean", sld(s.Slowdown.Mean), "", "")
	t.row("  max", sld(s.Slowdown.Max), "", "")
	t.row()
	t.flush(bw, "lrrl")

	// MIG fragmentation, when the cluster has MIG GPUs: its own block.
	if f := s.Fragmentation; f.MIG {
		t.row("MIG unusable", strconv.FormatFloat(f.MeanUnusableMIGSlices, 'f', 1, 64)+" slices",
			fmt.Sprintf("mean of %.1f free MIG compute slices; %.1f%% of free slice time no queued MIG job can use", f.MeanFreeMIGSlices, 100*f.MIGUnusableFraction))
		t.row()
		t.flush(bw, "lrl")
	}
	// Energy, when the cluster has a power model: its own block, so the
	// columns above keep their widths.
	if e := s.Energy; e.Modeled {
		note := fmt.Sprintf("IT %.1f kWh × PUE %.2f; jobs %.1f kWh, idle nodes %.1f kWh; mean %.1f kW", e.ITKWh, e.PUE, e.JobsKWh, e.IdleKWh, e.MeanPowerKW)
		if e.PricePerKWh > 0 {
			note += fmt.Sprintf("; cost %.2f %s", e.Cost, e.Currency)
		}
		t.row("Energy", strconv.FormatFloat(e.FacilityKWh, 'f', 1, 64)+" kWh", note)
		t.row()
		t.flush(bw, "lrl")
	}

	// Partitions; waits in human form.
	t.row("Partition", "Jobs", "Started", "Wait mean", "p50", "p95", "")
	for _, p := range s.Partitions {
		note := ""
		if !p.InCluster {
			note = "not in cluster"
		}
		mean, p50, p95 := "-", "-", "-"
		if p.Wait.Count > 0 {
			mean, p50, p95 = FormatSeconds(p.Wait.Mean), FormatSeconds(p.Wait.P50), FormatSeconds(p.Wait.P95)
		}
		t.row(orNone(p.Name), count(p.Jobs), count(p.Started), mean, p50, p95, note)
	}
	t.flush(bw, "lrrrrrl")
	return bw.Flush()
}

// FormatSeconds formats a number of seconds, rounded to the nearest
// second (halves away from zero), as "HH:MM:SS", or as "Nd HH:MM:SS" from
// one day on: 93784.4 gives "1d 02:03:04", 59.5 gives "00:01:00".
// Negative values get a leading "-"; NaN and values beyond ±2^62 give
// "invalid".
func FormatSeconds(seconds float64) string {
	r := math.Round(seconds)
	sign := ""
	if r < 0 {
		sign, r = "-", -r
	}
	if !(r <= 1<<62) {
		return "invalid"
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
	return fmt.Sprintf("%s / %s %s",
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
// padded to its widest cell, two spaces between columns. A row of one
// cell is a heading: it is written as is and does not widen the first
// column. A row of no cells is a blank line.
type textTable struct {
	rows [][]string
}

func (t *textTable) row(cells ...string) { t.rows = append(t.rows, cells) }

// flush writes the collected rows and clears them. align has one byte per
// column, 'l' or 'r' (default 'l'). Trailing blanks are trimmed from
// every line.
func (t *textTable) flush(w *bufio.Writer, align string) {
	var width []int
	for _, r := range t.rows {
		if len(r) < 2 {
			continue
		}
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
		switch len(r) {
		case 0:
		case 1:
			line.WriteString(r[0])
		default:
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
		}
		w.WriteString(strings.TrimRight(line.String(), " "))
		w.WriteByte('\n')
	}
	t.rows = t.rows[:0]
}
