package policytest

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/schedsim/schedsim/sim"
)

// JobTable renders a run's decisions as a golden a reviewer can read and
// diff (STYLE.md §5): a summary of exact figures, then one row per job —
// every job when every <= 1, else every every-th job by JobRef and the
// last — with its submit, start, end, state, partition, requeues, nodes
// (name:GPUs, in allocation order) and the last pending reason it had
// before it started (or its final one). Times are the record's seconds;
// "-" stands for none. Rows are in JobRef order, so the output is
// byte-stable for one record.
func JobTable(rec *sim.Record, every int) string {
	var b strings.Builder
	b.WriteString(Summary(rec))
	b.WriteByte('\n')
	last := lastReasons(rec)
	fmt.Fprintf(&b, "%-8s %8s %8s %8s %-10s %-6s %3s %-9s %s\n", "job", "submit", "start", "end", "state", "part", "rq", "reason", "nodes")
	n := len(rec.Jobs)
	for i := range rec.Jobs {
		if every > 1 && i%every != 0 && i != n-1 {
			continue
		}
		j := &rec.Jobs[i]
		id := fmt.Sprint(i)
		if rec.Trace != nil && i < len(rec.Trace.Jobs) {
			id = rec.Trace.Jobs[i].ID
		}
		part := "-"
		if j.Part >= 0 && rec.Cluster != nil && int(j.Part) < len(rec.Cluster.Partitions) {
			part = rec.Cluster.Partitions[j.Part].Name
		}
		reason := "-"
		if r, ok := last[sim.JobRef(i)]; ok {
			reason = r.String()
		}
		fmt.Fprintf(&b, "%-8s %8d %8s %8s %-10s %-6s %3d %-9s %s\n", id, j.Submit, tm(j.Start), tm(j.End), j.State, part, j.Requeues, reason, nodeList(rec, j.Alloc.Append(nil)))
	}
	return b.String()
}

// Summary is JobTable's first line: jobs, how many started, the count of
// each final state, the total and largest wait (start − submit of the
// final run, over the jobs that started) and the mean, the earlier runs
// of requeued jobs, the pending-reason changes and the run's end.
func Summary(rec *sim.Record) string {
	var started, total, most int64
	states := map[sim.State]int{}
	for i := range rec.Jobs {
		j := &rec.Jobs[i]
		states[j.State]++
		if j.Start < 0 {
			continue
		}
		started++
		w := int64(j.Start - j.Submit)
		total += w
		most = max(most, w)
	}
	var st []string
	for s := sim.Completed; s <= sim.NodeFail; s++ {
		if states[s] > 0 {
			st = append(st, fmt.Sprintf("%s %d", s, states[s]))
		}
	}
	mean := 0.0
	if started > 0 {
		mean = float64(total) / float64(started)
	}
	return fmt.Sprintf("jobs %d, started %d (%s); wait total %d s, mean %.1f s, max %d s; earlier runs %d; reason changes %d; end %d",
		len(rec.Jobs), started, strings.Join(st, ", "), total, mean, most, len(rec.Runs), rec.Reasons.Len(), rec.End)
}

// DiffDecisions describes the first difference between the decisions of
// two records of one workload — a job's record (start, end, state,
// partition, requeues, allocation, reason), the earlier runs, the
// pending-reason changes, the end — or returns "" when they agree.
func DiffDecisions(a, b *sim.Record) string {
	if len(a.Jobs) != len(b.Jobs) {
		return fmt.Sprintf("%d jobs, %d jobs", len(a.Jobs), len(b.Jobs))
	}
	for i := range a.Jobs {
		if !reflect.DeepEqual(a.Jobs[i], b.Jobs[i]) {
			id := fmt.Sprint(i)
			if a.Trace != nil && i < len(a.Trace.Jobs) {
				id = a.Trace.Jobs[i].ID
			}
			return fmt.Sprintf("job %s: %+v, %+v", id, a.Jobs[i], b.Jobs[i])
		}
	}
	if !reflect.DeepEqual(a.Runs, b.Runs) {
		return fmt.Sprintf("earlier runs %+v, %+v", a.Runs, b.Runs)
	}
	ra, rb := a.Reasons.Changes(), b.Reasons.Changes()
	for i := range min(len(ra), len(rb)) {
		if ra[i] != rb[i] {
			return fmt.Sprintf("reason change %d: %+v, %+v", i, ra[i], rb[i])
		}
	}
	if len(ra) != len(rb) {
		return fmt.Sprintf("%d reason changes, %d", len(ra), len(rb))
	}
	if a.End != b.End {
		return fmt.Sprintf("end %d, %d", a.End, b.End)
	}
	return ""
}

// lastReasons returns each job's last pending reason recorded at or
// before its start (any time for a job that never started).
func lastReasons(rec *sim.Record) map[sim.JobRef]sim.PendingReason {
	out := map[sim.JobRef]sim.PendingReason{}
	for c := range rec.Reasons.All() {
		if int(c.Job) >= len(rec.Jobs) || c.Reason == sim.ReasonNone {
			continue
		}
		if st := rec.Jobs[c.Job].Start; st >= 0 && c.At > st {
			continue
		}
		out[c.Job] = c.Reason
	}
	return out
}

func tm(t sim.Time) string {
	if t < 0 {
		return "-"
	}
	return fmt.Sprint(t)
}

// nodeList renders an allocation as name:GPUs (name alone for a node
// holding no whole GPU), comma separated.
func nodeList(rec *sim.Record, alloc []sim.NodeAlloc) string {
	if len(alloc) == 0 {
		return "-"
	}
	parts := make([]string, len(alloc))
	for k, a := range alloc {
		name := fmt.Sprint(a.Node)
		if rec.Cluster != nil && int(a.Node) < len(rec.Cluster.Nodes) {
			name = rec.Cluster.Nodes[a.Node].Name
		}
		if a.GPUs > 0 {
			name += fmt.Sprintf(":%d", a.GPUs)
		}
		parts[k] = name
	}
	return strings.Join(parts, ",")
}
