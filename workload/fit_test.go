package workload_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/schedsim/schedsim/traces"
	"github.com/schedsim/schedsim/workload"
)

// synthTrace is a trace with known distributions, for when ../shared is
// absent: 4,000 jobs over four weeks with a daily cycle, GPU sizes 1, 2,
// 4, 8 and log-normal runtimes.
func synthTrace() *workload.Trace {
	r := rand.New(rand.NewPCG(7, 7))
	t := &workload.Trace{Epoch: 1700000000}
	now := 0.0
	for i := range 4000 {
		hour := math.Mod(now/3600, 24)
		rate := 4 + 3*math.Sin(hour/24*2*math.Pi) // jobs per hour
		now += r.ExpFloat64() / rate * 3600
		j := workload.NewJob(strconv.Itoa(i + 1))
		j.Submit = workload.Time(now)
		j.Request.GPUs = int32(1 << r.IntN(4))
		j.Request.Nodes = 1
		j.Runtime = workload.Time(math.Max(1, math.Round(math.Exp(7+1.2*r.NormFloat64()))))
		j.TimeLimit = workload.Time(3600 * (1 + r.IntN(24)))
		j.User = "u" + strconv.Itoa(r.IntN(20))
		t.Jobs = append(t.Jobs, j)
	}
	return t
}

func cdfDistance(a, b workload.Fit) float64 {
	da, db := a.Dist(rand.NewPCG(0, 0)), b.Dist(rand.NewPCG(0, 0))
	d := 0.0
	for x := 1.0; x < 1e8; x *= 1.05 {
		d = max(d, math.Abs(da.CDF(x)-db.CDF(x)))
	}
	return d
}

// TestFitSynthFit fits a model to a real trace, synthesizes as many jobs,
// fits again and checks, with the tolerances stated here:
//
//   - each size class fitted on its own data in both fits (not pooled)
//     has runtime CDFs within max(0.06, 1.63/sqrt(n)) of each other (the
//     99% two-sample KS critical value for the class's n jobs);
//   - the synthetic runtimes are within 0.05 + the real fit's own KS
//     statistic of the real runtimes (two-sample KS);
//   - inspect figures: the same job count, the share of GPU jobs within
//     0.02, every hour of the day's share of arrivals within 0.02, the
//     span within 25%.
func TestFitSynthFit(t *testing.T) {
	type src struct {
		name  string
		trace func(t *testing.T) *workload.Trace
	}
	srcs := []src{{"synthetic", func(*testing.T) *workload.Trace { return synthTrace() }}}
	shared := filepath.Join("..", "..", "shared", "traces")
	if _, err := os.Stat(shared); err == nil {
		for _, name := range []string{"alibaba-gpu2023_openb_pod_list_default.csv", "KTH-SP2-1996-2.1-cln.swf.gz"} {
			srcs = append(srcs, src{name, func(t *testing.T) *workload.Trace {
				res, err := traces.Open(filepath.Join(shared, name), traces.Options{})
				if err != nil {
					t.Fatal(err)
				}
				return res.Trace
			}})
		}
	} else {
		t.Log("../shared/traces absent: fitting a generated trace only")
	}
	for _, s := range srcs {
		t.Run(s.name, func(t *testing.T) {
			real := s.trace(t)
			m1, err := workload.FitModel(real)
			if err != nil {
				t.Fatal(err)
			}
			syn, err := workload.Synthesize(m1, len(real.Jobs), 1)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := workload.FitModel(syn)
			if err != nil {
				t.Fatal(err)
			}
			c2 := map[string]workload.SizeClass{}
			for _, c := range m2.Classes {
				c2[c.Name] = c
			}
			for _, c := range m1.Classes {
				d, ok := c2[c.Name]
				if !ok || c.Runtime.Pooled || d.Runtime.Pooled {
					continue
				}
				tol := max(0.06, 1.63/math.Sqrt(float64(min(c.Runtime.N, d.Runtime.N))))
				if dist := cdfDistance(c.Runtime, d.Runtime); dist > tol {
					t.Errorf("class %s: runtime fits %s(%.3g,%.3g) and %s(%.3g,%.3g) differ by %.3f > %.3f",
						c.Name, c.Runtime.Family, c.Runtime.P1, c.Runtime.P2, d.Runtime.Family, d.Runtime.P1, d.Runtime.P2, dist, tol)
				}
			}
			var rr, sr []float64
			for _, j := range real.Jobs {
				if j.TraceState != "RUNNING" && j.TraceState != "PENDING" && !j.CancelledPending() {
					rr = append(rr, float64(max(j.Runtime, 1)))
				}
			}
			for _, j := range syn.Jobs {
				sr = append(sr, float64(j.Runtime))
			}
			all := workload.FitBest(rr)
			if ks := workload.KS(rr, sr); ks > all.KS+0.05 {
				t.Errorf("runtimes: two-sample KS %.3f > fit KS %.3f + 0.05", ks, all.KS)
			}
			a, b := workload.Summarize(real), workload.Summarize(syn)
			if a.Jobs != b.Jobs {
				t.Errorf("jobs %d, synthetic %d", a.Jobs, b.Jobs)
			}
			if d := math.Abs(float64(a.GPUJobs)/float64(a.Jobs) - float64(b.GPUJobs)/float64(b.Jobs)); d > 0.02 {
				t.Errorf("GPU job share differs by %.3f", d)
			}
			for h := range 24 {
				d := math.Abs(float64(a.ArrivalsByHour[h])/float64(a.Jobs) - float64(b.ArrivalsByHour[h])/float64(b.Jobs))
				if d > 0.02 {
					t.Errorf("hour %d: arrival share differs by %.3f", h, d)
				}
			}
			if r := float64(b.SpanS) / float64(a.SpanS); r < 0.75 || r > 1.25 {
				t.Errorf("span %d s, synthetic %d s", a.SpanS, b.SpanS)
			}
		})
	}
}

// TestSynthesizeDeterministic: the same seed gives the same jobs, another
// seed other jobs.
func TestSynthesizeDeterministic(t *testing.T) {
	m, err := workload.FitModel(synthTrace())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := workload.Synthesize(m, 500, 9)
	b, _ := workload.Synthesize(m, 500, 9)
	c, _ := workload.Synthesize(m, 500, 10)
	for i := range a.Jobs {
		if a.Jobs[i].Submit != b.Jobs[i].Submit || a.Jobs[i].Runtime != b.Jobs[i].Runtime || a.Jobs[i].User != b.Jobs[i].User {
			t.Fatalf("job %d differs between runs with one seed", i)
		}
	}
	same := 0
	for i := range a.Jobs {
		if a.Jobs[i].Runtime == c.Jobs[i].Runtime {
			same++
		}
	}
	if same > len(a.Jobs)/2 {
		t.Errorf("seeds 9 and 10 share %d of %d runtimes", same, len(a.Jobs))
	}
}
