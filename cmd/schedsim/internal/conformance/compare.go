package conformance

import (
	"fmt"
	"math"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Start is one compared start: a job's first run, or a requeued job's
// final run. Waits are start − the job's original submit, in seconds;
// -1 when that side never started it.
type Start struct {
	Job   string // job id and, for a final run after a requeue, "(rerun)"
	Name  string
	Want  int64 // the reference (real Slurm, or run A of two real runs)
	Got   int64 // schedsim, or run B
	Rerun bool
}

// Delta is Got − Want, or nil when one side never started.
func (s Start) Delta() (int64, bool) {
	if s.Want < 0 || s.Got < 0 {
		return 0, false
	}
	return s.Got - s.Want, true
}

// Figures are the agreement of two sets of waits.
type Figures struct {
	// N counts compared starts (jobs, plus the reruns of requeued jobs).
	N int
	// Within2 and Within5 count starts within ±2 s and ±5 s (a start
	// that one side never made is never within).
	Within2, Within5 int
	// MeanWant and MeanGot are the mean waits (over starts both sides
	// made), MeanErr is MeanGot − MeanWant in seconds.
	MeanWant, MeanGot, MeanErr float64
	// KS is the two-sample Kolmogorov–Smirnov distance of the two wait
	// distributions (over the starts each side made).
	KS float64
}

// Share2 and Share5 are the shares within ±2 s and ±5 s.
func (f Figures) Share2() float64 { return share(f.Within2, f.N) }
func (f Figures) Share5() float64 { return share(f.Within5, f.N) }

// RelMeanErr is MeanErr relative to MeanWant (0 when both are 0).
func (f Figures) RelMeanErr() float64 {
	if f.MeanWant == 0 {
		if f.MeanGot == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return f.MeanErr / f.MeanWant
}

func share(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

// Figure computes the figures of a set of compared starts.
func Figure(starts []Start) Figures {
	f := Figures{N: len(starts)}
	var a, b []float64
	var sumW, sumG float64
	both := 0
	for _, s := range starts {
		if s.Want >= 0 {
			a = append(a, float64(s.Want))
		}
		if s.Got >= 0 {
			b = append(b, float64(s.Got))
		}
		d, ok := s.Delta()
		if !ok {
			continue
		}
		both++
		sumW += float64(s.Want)
		sumG += float64(s.Got)
		if d >= -2 && d <= 2 {
			f.Within2++
		}
		if d >= -5 && d <= 5 {
			f.Within5++
		}
	}
	if both > 0 {
		f.MeanWant, f.MeanGot = sumW/float64(both), sumG/float64(both)
		f.MeanErr = f.MeanGot - f.MeanWant
	}
	f.KS = workload.KS(a, b)
	return f
}

// Add pools two sets of figures (counts add; means and KS are weighted by
// the starts compared).
func (f Figures) Add(g Figures) Figures {
	if f.N == 0 {
		return g
	}
	if g.N == 0 {
		return f
	}
	n := float64(f.N + g.N)
	w := func(x, y float64) float64 { return (x*float64(f.N) + y*float64(g.N)) / n }
	return Figures{N: f.N + g.N, Within2: f.Within2 + g.Within2, Within5: f.Within5 + g.Within5,
		MeanWant: w(f.MeanWant, g.MeanWant), MeanGot: w(f.MeanGot, g.MeanGot), MeanErr: w(f.MeanErr, g.MeanErr), KS: w(f.KS, g.KS)}
}

// realWaits returns a record job's first and final wait (-1 when it never
// started; final == first without a requeue).
func (r *Record) realWaits(j *Job) (first, final int64, requeued bool) {
	if len(j.Runs) == 0 {
		return -1, -1, false
	}
	first = j.Runs[0].Start - j.Submit
	final = j.Runs[len(j.Runs)-1].Start - j.Submit
	return first, final, len(j.Runs) > 1
}

// simWaits returns the simulated first and final wait of job i, from its
// sbatch second sub (the replay may have let it arrive later: arrival).
func simWaits(rec *sim.Record, i int, firstRun map[sim.JobRef]sim.Time, sub int64) (first, final int64) {
	jr := &rec.Jobs[i]
	final = -1
	if jr.Start != workload.Unknown {
		final = int64(jr.Start) - sub
	}
	first = final
	if st, ok := firstRun[sim.JobRef(i)]; ok {
		first = int64(st) - sub
	}
	return first, final
}

// CompareSim compares the simulated record with the real one, job by job:
// every job's first start, and a requeued job's final start as well (when
// either side requeued it).
func (r *Record) CompareSim(rec *sim.Record) ([]Start, error) {
	if len(rec.Jobs) != len(r.Jobs) {
		return nil, fmt.Errorf("%s: simulated %d jobs, the record has %d", r.Dir, len(rec.Jobs), len(r.Jobs))
	}
	firstRun := map[sim.JobRef]sim.Time{}
	for _, seg := range rec.Runs {
		if _, ok := firstRun[seg.Job]; !ok {
			firstRun[seg.Job] = seg.Start
		}
	}
	var out []Start
	for i := range r.Jobs {
		j := &r.Jobs[i]
		if rec.Trace != nil && rec.Trace.Jobs[i].ID != j.ID {
			return nil, fmt.Errorf("%s: simulated job %d is %s, the record's is %s", r.Dir, i, rec.Trace.Jobs[i].ID, j.ID)
		}
		rf, rl, rq := r.realWaits(j)
		sf, sl := simWaits(rec, i, firstRun, j.Submit-r.T0)
		_, sq := firstRun[sim.JobRef(i)]
		out = append(out, Start{Job: j.ID, Name: j.Name, Want: rf, Got: sf})
		if rq || sq {
			out = append(out, Start{Job: j.ID + " (rerun)", Name: j.Name, Want: rl, Got: sl, Rerun: true})
		}
	}
	return out, nil
}

// CompareReal compares two real runs of one scenario: jobs matched by job
// id (ids restart at 1 in every run), else by name and array index in
// submit order.
func CompareReal(a, b *Record) []Start {
	byID := map[string]*Job{}
	type nk struct {
		name string
		task int32
	}
	byName := map[nk][]*Job{}
	for i := range b.Jobs {
		j := &b.Jobs[i]
		byID[j.ID] = j
		k := nk{j.Name, j.ArrayTask}
		byName[k] = append(byName[k], j)
	}
	used := map[*Job]bool{}
	var out []Start
	for i := range a.Jobs {
		ja := &a.Jobs[i]
		jb := byID[ja.ID]
		if jb == nil || jb.Name != ja.Name || used[jb] {
			jb = nil
			for _, c := range byName[nk{ja.Name, ja.ArrayTask}] {
				if !used[c] {
					jb = c
					break
				}
			}
		}
		af, al, aq := a.realWaits(ja)
		bf, bl, bq := int64(-1), int64(-1), false
		if jb != nil {
			used[jb] = true
			bf, bl, bq = b.realWaits(jb)
		}
		out = append(out, Start{Job: ja.ID, Name: ja.Name, Want: af, Got: bf})
		if aq || bq {
			out = append(out, Start{Job: ja.ID + " (rerun)", Name: ja.Name, Want: al, Got: bl, Rerun: true})
		}
	}
	return out
}

// Detail lists the starts off by more than tol seconds, for messages.
func Detail(starts []Start, tol int64) string {
	var parts []string
	for _, s := range starts {
		d, ok := s.Delta()
		switch {
		case !ok && (s.Want >= 0 || s.Got >= 0):
			parts = append(parts, fmt.Sprintf("%s(%s): started on one side only (%d vs %d)", s.Job, s.Name, s.Want, s.Got))
		case ok && (d > tol || d < -tol):
			parts = append(parts, fmt.Sprintf("%s(%s):%+ds", s.Job, s.Name, d))
		}
	}
	return strings.Join(parts, " ")
}

// RunLines lists every job's runs, real and simulated, as seconds from
// the replay's time 0 with their state and nodes: "job name: real a-b
// STATE nodes, ...; schedsim a-b STATE nodes, ...". It is for reading a
// divergence (schedsim conformance show --runs), not for comparing.
func (r *Record) RunLines(rec *sim.Record) []string {
	nodes := func(alloc sim.Allocs) string {
		names := make([]string, alloc.Len())
		for k, a := range alloc.All() {
			names[k] = rec.Cluster.Nodes[a.Node].Name
		}
		return hwmodels.CompressHostlist(names)
	}
	var segs [][]sim.RunSegment
	if len(rec.Runs) > 0 {
		segs = make([][]sim.RunSegment, len(rec.Jobs))
		for _, seg := range rec.Runs {
			if int(seg.Job) < len(segs) {
				segs[seg.Job] = append(segs[seg.Job], seg)
			}
		}
	}
	out := make([]string, 0, len(r.Jobs))
	for i := range r.Jobs {
		j := &r.Jobs[i]
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s: real", j.ID, j.Name)
		for k, run := range j.Runs {
			fmt.Fprintf(&b, "%s %d-%d %s %s", sep(k), run.Start-r.T0, run.End-r.T0, run.State, run.Nodes)
		}
		b.WriteString("; schedsim")
		k := 0
		if segs != nil {
			for _, seg := range segs[i] {
				fmt.Fprintf(&b, "%s %d-%d %s %s", sep(k), seg.Start, seg.End, seg.State, nodes(seg.Alloc))
				k++
			}
		}
		if i < len(rec.Jobs) {
			if jr := &rec.Jobs[i]; jr.Start != workload.Unknown {
				fmt.Fprintf(&b, "%s %d-%d %s %s", sep(k), jr.Start, jr.End, jr.State, nodes(jr.Alloc))
			}
		}
		out = append(out, b.String())
	}
	return out
}

func sep(k int) string {
	if k == 0 {
		return ""
	}
	return ","
}
