package workload

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// ModelVersion is the version of the model file schema.
const ModelVersion = 1

// Model is a workload model fitted from a trace by Fit and sampled by
// Synthesize. It is written as YAML (WriteModel, ReadModel).
//
// Arrivals are a non-homogeneous Poisson process whose rate is constant
// within each hour of the week (Monday 00:00-01:00 local time is hour 0).
// A job's size (nodes, GPUs, CPUs, memory, GPU type) is drawn from the
// empirical joint distribution of the trace; its runtime and requested time
// from continuous distributions fitted per size class; its user and
// partition from their empirical frequencies, independently of the size.
type Model struct {
	Version  int    `yaml:"version"`
	Source   string `yaml:"source"`
	Jobs     int    `yaml:"jobs"`      // jobs in the fitted trace
	SpanS    int64  `yaml:"span_s"`    // its first to last submit
	Start    int64  `yaml:"start"`     // its first submit, Unix seconds
	TimeZone string `yaml:"time_zone"` // zone of the hours of the week ("" = UTC)
	// HourlyRate is the arrival rate in jobs per hour for each hour of the
	// week (168 values, Monday 00:00 first).
	HourlyRate []float64    `yaml:"hourly_rate"`
	Sizes      []SizeBin    `yaml:"sizes"`
	Classes    []SizeClass  `yaml:"classes"`
	Users      []NamedShare `yaml:"users"`
	Partitions []NamedShare `yaml:"partitions"`
}

// SizeBin is one distinct request shape and how many jobs had it.
type SizeBin struct {
	Nodes   int32  `yaml:"nodes"`
	GPUs    int32  `yaml:"gpus"`
	CPUs    int32  `yaml:"cpus"`
	MemMB   int64  `yaml:"mem_mb"`
	GPUType string `yaml:"gpu_type,omitempty"`
	Count   int    `yaml:"count"`
}

// SizeClass groups sizes by GPU count (or, for CPU jobs, CPU count) for
// the runtime and requested-time fits.
type SizeClass struct {
	Name string `yaml:"name"` // "gpus=1", "gpus=5-8", "cpus=2-4", ...
	Jobs int    `yaml:"jobs"`
	// Runtime is fitted to the runtimes (s, at least 1) of jobs that ran
	// to an end (not RUNNING or PENDING); Limit to the known requested
	// times (s). LimitKnown is the share of jobs with a known limit.
	Runtime    Fit     `yaml:"runtime"`
	Limit      Fit     `yaml:"limit"`
	LimitKnown float64 `yaml:"limit_known"`
}

// Fit is a fitted distribution: Family is "lognormal" (P1 = mu, P2 =
// sigma), "weibull" (P1 = k, P2 = lambda) or "gamma" (P1 = alpha, P2 =
// beta, the rate); "" when there was nothing to fit. N is the sample
// size, LogLik the log-likelihood, KS the Kolmogorov-Smirnov statistic of
// the sample against the fit. Pooled says the class had too few samples
// and the fit of all jobs is used.
type Fit struct {
	Family string  `yaml:"family"`
	P1     float64 `yaml:"p1"`
	P2     float64 `yaml:"p2"`
	N      int     `yaml:"n"`
	LogLik float64 `yaml:"loglik"`
	KS     float64 `yaml:"ks"`
	Pooled bool    `yaml:"pooled,omitempty"`
}

// NamedShare is a name and how many jobs had it.
type NamedShare struct {
	Name  string `yaml:"name"`
	Count int    `yaml:"count"`
}

// minFitSamples is the fewest samples a class is fitted on; smaller
// classes use the fit of all jobs.
const minFitSamples = 30

// className names the size class of a request.
func className(r Request) string {
	if r.GPUs > 0 {
		return "gpus=" + bucket(int64(r.GPUs))
	}
	return "cpus=" + bucket(int64(max(r.CPUs, 1)))
}

func bucket(n int64) string {
	switch {
	case n <= 2:
		return strconv.FormatInt(n, 10)
	}
	lo := int64(3)
	for hi := int64(4); ; hi *= 2 {
		if n <= hi {
			return strconv.FormatInt(lo, 10) + "-" + strconv.FormatInt(hi, 10)
		}
		lo = hi + 1
	}
}

// FitModel fits a Model to t. Jobs still running or pending when the trace
// ended (TraceState RUNNING, PENDING) count for arrivals and sizes but not
// for runtimes, which they do not know.
func FitModel(t *Trace) (*Model, error) {
	if len(t.Jobs) < 2 {
		return nil, errors.New("workload: fit needs at least 2 jobs")
	}
	loc, err := zone(t.TimeZone)
	if err != nil {
		return nil, err
	}
	m := &Model{Version: ModelVersion, Source: t.Source, Jobs: len(t.Jobs), TimeZone: t.TimeZone, HourlyRate: make([]float64, 168)}
	first, last := t.Epoch+int64(t.Jobs[0].Submit), t.Epoch+int64(t.Jobs[0].Submit)
	for i := range t.Jobs {
		s := t.Epoch + int64(t.Jobs[i].Submit)
		first, last = min(first, s), max(last, s)
	}
	m.Start, m.SpanS = first, last-first

	// Arrivals: count per hour of week over the hours the span covers.
	var counts, exposure [168]float64
	for i := range t.Jobs {
		counts[hourOfWeek(t.Epoch+int64(t.Jobs[i].Submit), loc)]++
	}
	for h := first - first%3600; h <= last; h += 3600 {
		exposure[hourOfWeek(h, loc)]++
	}
	for h := range 168 {
		if exposure[h] > 0 {
			m.HourlyRate[h] = counts[h] / exposure[h]
		}
	}

	// Sizes, users, partitions.
	sizes := map[SizeBin]int{}
	users, parts := map[string]int{}, map[string]int{}
	type samples struct {
		run, limit       []float64
		jobs, limitKnown int
	}
	classes := map[string]*samples{}
	all := &samples{}
	for i := range t.Jobs {
		j := &t.Jobs[i]
		r := j.Request
		sizes[SizeBin{Nodes: r.Nodes, GPUs: r.GPUs, CPUs: r.CPUs, MemMB: r.MemMB, GPUType: r.GPUType}]++
		users[j.User]++
		parts[j.Partition]++
		c := classes[className(r)]
		if c == nil {
			c = &samples{}
			classes[className(r)] = c
		}
		c.jobs++
		all.jobs++
		if j.TraceState != "RUNNING" && j.TraceState != "PENDING" && !j.CancelledPending() {
			x := float64(max(j.Runtime, 1))
			c.run = append(c.run, x)
			all.run = append(all.run, x)
		}
		if j.TimeLimit > 0 {
			c.limit = append(c.limit, float64(j.TimeLimit))
			all.limit = append(all.limit, float64(j.TimeLimit))
			c.limitKnown++
			all.limitKnown++
		}
	}
	for b, n := range sizes {
		b.Count = n
		m.Sizes = append(m.Sizes, b)
	}
	slices.SortFunc(m.Sizes, func(a, b SizeBin) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.GPUs, b.GPUs), cmp.Compare(a.Nodes, b.Nodes),
			cmp.Compare(a.CPUs, b.CPUs), cmp.Compare(a.MemMB, b.MemMB), cmp.Compare(a.GPUType, b.GPUType))
	})
	m.Users, m.Partitions = shares(users), shares(parts)
	allRun, allLimit := FitBest(all.run), FitBest(all.limit)
	names := make([]string, 0, len(classes))
	for k := range classes {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		c := classes[name]
		sc := SizeClass{Name: name, Jobs: c.jobs, LimitKnown: float64(c.limitKnown) / float64(c.jobs)}
		if len(c.run) >= minFitSamples {
			sc.Runtime = FitBest(c.run)
		} else {
			sc.Runtime = allRun
			sc.Runtime.Pooled = true
		}
		if len(c.limit) >= minFitSamples {
			sc.Limit = FitBest(c.limit)
		} else {
			sc.Limit = allLimit
			sc.Limit.Pooled = true
		}
		m.Classes = append(m.Classes, sc)
	}
	return m, nil
}

func shares(m map[string]int) []NamedShare {
	out := make([]NamedShare, 0, len(m))
	for k, v := range m {
		out = append(out, NamedShare{Name: k, Count: v})
	}
	slices.SortFunc(out, func(a, b NamedShare) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name)) })
	return out
}

func zone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("workload: time zone %q: %w", name, err)
	}
	return loc, nil
}

// hourOfWeek returns the local hour of the week of Unix time s, Monday
// 00:00 being 0.
func hourOfWeek(s int64, loc *time.Location) int {
	t := time.Unix(s, 0).In(loc)
	return ((int(t.Weekday())+6)%7)*24 + t.Hour()
}

// FitBest fits log-normal, Weibull and gamma distributions to x (all > 0)
// by maximum likelihood and returns the one with the largest
// log-likelihood (ties: that order), with its KS statistic. It returns the
// zero Fit for fewer than 2 samples or no spread.
func FitBest(x []float64) Fit {
	if len(x) < 2 {
		return Fit{N: len(x)}
	}
	xs := slices.Clone(x)
	slices.Sort(xs)
	if xs[0] == xs[len(xs)-1] {
		// A point mass: a very narrow log-normal.
		f := Fit{Family: "lognormal", P1: math.Log(xs[0]), P2: 1e-6, N: len(xs)}
		f.LogLik, f.KS = score(f, xs)
		return f
	}
	var best Fit
	for _, f := range []Fit{fitLogNormal(xs), fitWeibull(xs), fitGamma(xs)} {
		if f.Family == "" {
			continue
		}
		f.N = len(xs)
		f.LogLik, f.KS = score(f, xs)
		if best.Family == "" || f.LogLik > best.LogLik {
			best = f
		}
	}
	return best
}

// Dist returns the distribution of f drawing from src.
func (f Fit) Dist(src rand.Source) interface {
	Rand() float64
	CDF(float64) float64
	LogProb(float64) float64
} {
	switch f.Family {
	case "lognormal":
		return distuv.LogNormal{Mu: f.P1, Sigma: f.P2, Src: src}
	case "weibull":
		return distuv.Weibull{K: f.P1, Lambda: f.P2, Src: src}
	case "gamma":
		return distuv.Gamma{Alpha: f.P1, Beta: f.P2, Src: src}
	}
	return nil
}

// score returns the log-likelihood and KS statistic of sorted xs under f.
func score(f Fit, xs []float64) (ll, ks float64) {
	d := f.Dist(rand.NewPCG(0, 0)) // not sampled from
	n := float64(len(xs))
	for i, x := range xs {
		ll += d.LogProb(x)
		c := d.CDF(x)
		ks = max(ks, math.Abs(float64(i+1)/n-c), math.Abs(c-float64(i)/n))
	}
	return ll, ks
}

func fitLogNormal(xs []float64) Fit {
	var s, s2 float64
	for _, x := range xs {
		l := math.Log(x)
		s += l
		s2 += l * l
	}
	n := float64(len(xs))
	mu := s / n
	v := s2/n - mu*mu
	if !(v > 0) {
		return Fit{}
	}
	return Fit{Family: "lognormal", P1: mu, P2: math.Sqrt(v)}
}

// fitWeibull solves the MLE equation for the shape k by Newton's method
// on the log scale of the data (scaled by its maximum for stability).
func fitWeibull(xs []float64) Fit {
	n := float64(len(xs))
	scale := xs[len(xs)-1]
	ls := make([]float64, len(xs))
	var mean float64
	for i, x := range xs {
		ls[i] = math.Log(x / scale)
		mean += ls[i]
	}
	mean /= n
	k := 1.0
	for range 100 {
		var a, b, c float64
		for _, l := range ls {
			p := math.Exp(k * l)
			a += p
			b += p * l
			c += p * l * l
		}
		g := b/a - 1/k - mean
		dg := (c*a-b*b)/(a*a) + 1/(k*k)
		step := g / dg
		next := k - step
		if next <= 0 {
			next = k / 2
		}
		if math.Abs(next-k) < 1e-10*k {
			k = next
			break
		}
		k = next
	}
	var a float64
	for _, l := range ls {
		a += math.Exp(k * l)
	}
	lambda := scale * math.Pow(a/n, 1/k)
	if !(k > 0) || math.IsNaN(lambda) || math.IsInf(lambda, 0) {
		return Fit{}
	}
	return Fit{Family: "weibull", P1: k, P2: lambda}
}

// fitGamma finds the shape by Newton's method on the MLE equation
// log(a) - digamma(a) = log(mean) - mean(log x) (Minka 2002), and the
// rate as a / mean.
func fitGamma(xs []float64) Fit {
	n := float64(len(xs))
	var s, sl float64
	for _, x := range xs {
		s += x
		sl += math.Log(x)
	}
	mean := s / n
	r := math.Log(mean) - sl/n
	if !(r > 0) {
		return Fit{}
	}
	a := (3 - r + math.Sqrt((r-3)*(r-3)+24*r)) / (12 * r)
	for range 50 {
		g := math.Log(a) - mathext.Digamma(a) - r
		dg := 1/a - trigamma(a)
		next := a - g/dg
		if next <= 0 {
			next = a / 2
		}
		if math.Abs(next-a) < 1e-10*a {
			a = next
			break
		}
		a = next
	}
	if !(a > 0) {
		return Fit{}
	}
	return Fit{Family: "gamma", P1: a, P2: a / mean}
}

// trigamma approximates the derivative of the digamma function.
func trigamma(x float64) float64 {
	var r float64
	for x < 6 {
		r += 1 / (x * x)
		x++
	}
	x2 := 1 / (x * x)
	return r + 1/x + x2/2 + x2/x*(1.0/6-x2*(1.0/30-x2/42))
}

// Synthesize draws n jobs from m, deterministically for a seed: arrivals,
// sizes, runtimes, limits, users and partitions each come from their own
// stream rand.NewPCG(seed, Stream*). Jobs start at m.Start. A limit drawn
// below the job's runtime is drawn again, up to limitRedraws times; a
// runtime still above it is cut to the limit and the job marked TIMEOUT
// (the scheduler would kill it there); other jobs are COMPLETED. IDs are
// 1..n.
func Synthesize(m *Model, n int, seed uint64) (*Trace, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("workload: synthesize %d jobs: must be >= 0", n)
	}
	loc, err := zone(m.TimeZone)
	if err != nil {
		return nil, err
	}
	src := func(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }
	arr, szr, usr, ptr := src(StreamArrivals), src(StreamSizes), src(StreamUsers), src(StreamParts)
	runSrc, limSrc := rand.NewPCG(seed, StreamRuntime), rand.NewPCG(seed, StreamLimit)
	limRng := rand.New(rand.NewPCG(seed, StreamLimit^0xff))
	sizeCum := cumulative(len(m.Sizes), func(i int) int { return m.Sizes[i].Count })
	userCum := cumulative(len(m.Users), func(i int) int { return m.Users[i].Count })
	partCum := cumulative(len(m.Partitions), func(i int) int { return m.Partitions[i].Count })
	classIdx := map[string]int{}
	for i, c := range m.Classes {
		classIdx[c.Name] = i
	}
	t := &Trace{Epoch: m.Start, TimeZone: m.TimeZone, Source: fmt.Sprintf("synthetic, %d jobs, seed %d, from a model of %s", n, seed, m.Source)}
	t.Jobs = make([]Job, 0, n)
	now := float64(m.Start) // seconds
	for i := range n {
		// Next arrival: consume an Exp(1) amount of the cumulative rate,
		// hour by hour.
		e := arr.ExpFloat64()
		for {
			h := int64(now)
			end := float64(h - ((h%3600)+3600)%3600 + 3600)
			rate := m.HourlyRate[hourOfWeek(h, loc)] / 3600
			if rate*(end-now) >= e {
				now += e / rate
				break
			}
			e -= rate * (end - now)
			now = end
		}
		j := NewJob(strconv.Itoa(i + 1))
		j.Submit = Time(int64(now) - m.Start)
		b := m.Sizes[pick(szr, sizeCum)]
		j.Request = Request{Nodes: b.Nodes, GPUs: b.GPUs, CPUs: b.CPUs, MemMB: b.MemMB, GPUType: b.GPUType}
		if len(m.Users) > 0 {
			j.User = m.Users[pick(usr, userCum)].Name
		}
		if len(m.Partitions) > 0 {
			j.Partition = m.Partitions[pick(ptr, partCum)].Name
		}
		ci, ok := classIdx[className(j.Request)]
		if !ok {
			return nil, fmt.Errorf("workload: model has no class %s for size %+v", className(j.Request), b)
		}
		c := m.Classes[ci]
		j.Runtime = 1
		if d := c.Runtime.Dist(runSrc); d != nil {
			j.Runtime = Time(max(math.Round(d.Rand()), 1))
		}
		j.TraceState = "COMPLETED"
		if limRng.Float64() < c.LimitKnown {
			if d := c.Limit.Dist(limSrc); d != nil {
				// Users ask for more than they need: a limit below the
				// runtime is drawn again (up to limitRedraws times), and
				// only then does the job hit its limit.
				for k := 0; k <= limitRedraws; k++ {
					j.TimeLimit = Time(max(math.Round(d.Rand()), 60))
					if j.Runtime <= j.TimeLimit {
						break
					}
				}
				if j.Runtime > j.TimeLimit {
					j.Runtime = j.TimeLimit
					j.TraceState = "TIMEOUT"
				}
			}
		}
		t.Jobs = append(t.Jobs, j)
	}
	t.Rebase(m.Start)
	return t, nil
}

// limitRedraws is how often Synthesize draws a limit again when it falls
// below the job's runtime.
const limitRedraws = 20

func cumulative(n int, w func(int) int) []int {
	c := make([]int, n)
	s := 0
	for i := range n {
		s += w(i)
		c[i] = s
	}
	return c
}

// pick draws an index with probability proportional to its weight.
func pick(r *rand.Rand, cum []int) int {
	x := r.IntN(cum[len(cum)-1])
	i, _ := slices.BinarySearch(cum, x+1)
	return i
}

// Validate checks a model read from a file.
func (m *Model) Validate() error {
	if m.Version != ModelVersion {
		return fmt.Errorf("workload: model version %d, want %d", m.Version, ModelVersion)
	}
	if len(m.HourlyRate) != 168 {
		return fmt.Errorf("workload: model hourly_rate has %d values, want 168", len(m.HourlyRate))
	}
	total := 0.0
	for i, r := range m.HourlyRate {
		if !(r >= 0) || math.IsInf(r, 0) {
			return fmt.Errorf("workload: model hourly_rate[%d] = %v: must be >= 0", i, r)
		}
		total += r
	}
	if total == 0 {
		return errors.New("workload: model hourly_rate is all zero")
	}
	if len(m.Sizes) == 0 {
		return errors.New("workload: model has no sizes")
	}
	for i, s := range m.Sizes {
		if s.Count <= 0 || s.Nodes < 0 || s.GPUs < 0 || s.CPUs < 0 || s.MemMB < 0 {
			return fmt.Errorf("workload: model sizes[%d]: counts must be >= 0 and count > 0", i)
		}
	}
	for _, l := range [][]NamedShare{m.Users, m.Partitions} {
		for i, s := range l {
			if s.Count <= 0 {
				return fmt.Errorf("workload: model share %d (%q): count must be > 0", i, s.Name)
			}
		}
	}
	for i, c := range m.Classes {
		for _, f := range []Fit{c.Runtime, c.Limit} {
			switch f.Family {
			case "":
			case "lognormal", "weibull", "gamma":
				if !(f.P2 > 0) || math.IsNaN(f.P1) || math.IsInf(f.P1, 0) || math.IsInf(f.P2, 0) || (f.Family != "lognormal" && !(f.P1 > 0)) {
					return fmt.Errorf("workload: model classes[%d] (%s): %s parameters %v, %v out of range", i, c.Name, f.Family, f.P1, f.P2)
				}
			default:
				return fmt.Errorf("workload: model classes[%d] (%s): unknown family %q (want lognormal, weibull, gamma)", i, c.Name, f.Family)
			}
		}
		if !(c.LimitKnown >= 0 && c.LimitKnown <= 1) {
			return fmt.Errorf("workload: model classes[%d] (%s): limit_known %v must be in [0, 1]", i, c.Name, c.LimitKnown)
		}
	}
	return nil
}

// WriteModel writes m as YAML.
func WriteModel(w io.Writer, m *Model) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return err
	}
	return enc.Close()
}

// ReadModel reads a YAML model, rejecting unknown keys, and validates it.
// path names the input in errors.
func ReadModel(r io.Reader, path string) (*Model, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m Model
	if err := dec.Decode(&m); err != nil {
		return nil, modelDecodeError(path, err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// unknownField matches the YAML decoder's message for a key the model
// lacks ("line 6: field name not found in type workload.Model").
var unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type \S+$`)

// modelDecodeError is a decoding error as one line naming the file, the
// line and the key, without the decoder's Go type names.
func modelDecodeError(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if m := unknownField.FindStringSubmatch(msg); m != nil {
			return fmt.Errorf("%s:%s: unknown key %q (not a workload model: make one with schedsim trace fit)", path, m[1], m[2])
		}
		if line, rest, ok := strings.Cut(strings.TrimPrefix(msg, "line "), ": "); ok {
			return fmt.Errorf("%s:%s: %s", path, line, rest)
		}
		return fmt.Errorf("%s: %s", path, msg)
	}
	return fmt.Errorf("%s: %w", path, err)
}
