package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MapPartitions renames the partitions of every job by m (trace name →
// cluster name), element-wise for multi-partition submissions ("a,b"), and
// appends a note counting the jobs changed. Names m does not list are kept.
func MapPartitions(t *Trace, m map[string]string) {
	if len(m) == 0 {
		return
	}
	type mapped struct {
		to  string
		hit bool
	}
	// A trace has few distinct partition strings: map each once, so that
	// its jobs share the result instead of holding a copy each.
	seen := map[string]mapped{}
	changed := 0
	t.Edit(func(j *Job) bool {
		if j.Partition == "" {
			return true
		}
		r, ok := seen[j.Partition]
		if !ok {
			parts := strings.Split(j.Partition, ",")
			for k, p := range parts {
				if to, ok := m[p]; ok {
					parts[k] = to
					r.hit = true
				}
			}
			r.to = strings.Join(parts, ",")
			seen[j.Partition] = r
		}
		if r.hit {
			j.Partition = r.to
			changed++
		}
		return true
	})
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var pairs []string
	for _, k := range keys {
		pairs = append(pairs, k+"→"+m[k])
	}
	t.Notes = append(t.Notes, fmt.Sprintf("partitions mapped (%s): %d jobs", strings.Join(pairs, ", "), changed))
}

// Window keeps the jobs submitted in [from, to) (Unix seconds; to <= 0
// means no upper bound) and rebases the trace on the first kept submit.
func Window(t *Trace, from, to int64) {
	n := t.Len()
	epoch := t.Epoch
	t.Edit(func(j *Job) bool {
		sub := epoch + int64(j.Submit)
		shift(j, Time(epoch))
		return sub >= from && (to <= 0 || sub < to)
	})
	t.Rebase(0)
	if t.Len() == 0 {
		t.Epoch = from
	}
	t.Notes = append(t.Notes, fmt.Sprintf("window [%s, %s): kept %d of %d jobs", unixString(from), unixString(to), t.Len(), n))
}

func unixString(s int64) string {
	if s <= 0 {
		return "∞"
	}
	return time.Unix(s, 0).UTC().Format("2006-01-02T15:04:05Z")
}

// shift adds d to every known time of j.
func shift(j *Job, d Time) {
	j.Submit += d
	if j.TraceStart != Unknown {
		j.TraceStart += d
	}
	if j.TraceEnd != Unknown {
		j.TraceEnd += d
	}
}

// ScaleLoad multiplies the arrival rate by factor (> 0) while keeping the
// trace's span and its hour-of-day and day-of-week profile: every job is
// kept floor(factor) times, and once more with probability
// frac(factor), so that factor 0.5 keeps about half the jobs and factor
// 1.5 adds a copy of about half of them. Inter-arrival times shrink (or
// grow) by about 1/factor on average, and because each copy is submitted
// within the same clock hour as its original (at a uniformly drawn second
// of the hour, after the original's submit when it can be), the daily and
// weekly cycles stay as they were. A copy's ID is the original's followed
// by "~k" (k = 1, 2, ...); its dependencies are the original's. Draws come
// from rand.NewPCG(seed, StreamScaleLoad), one job after another in trace
// order, so the result is a function of (trace, factor, seed).
func ScaleLoad(t *Trace, factor float64, seed uint64) error {
	if !(factor > 0 && factor <= 1000) {
		return fmt.Errorf("workload: load factor %v: must be in (0, 1000]", factor)
	}
	rng := rand.New(rand.NewPCG(seed, StreamScaleLoad))
	whole := math.Floor(factor)
	frac := factor - whole
	n0 := t.Len()
	var out []Job
	var pk *Packed
	if t.Packed != nil {
		pk = t.Packed.emptyLike()
	} else {
		out = make([]Job, 0, int(float64(n0)*factor)+1)
	}
	for _, jp := range t.All() {
		j := *jp
		copies := int(whole)
		if rng.Float64() < frac {
			copies++
		}
		for k := 0; k < copies; k++ {
			c := j
			if k > 0 {
				c.ID = j.ID + "~" + strconv.Itoa(k)
				c.Extra = slices.Clone(j.Extra)
				c.Deps = slices.Clone(j.Deps)
				abs := t.Epoch + int64(j.Submit)
				hour := abs - ((abs%3600)+3600)%3600
				lo := abs
				if lo >= hour+3599 {
					lo = hour
				}
				off := lo + rng.Int64N(hour+3600-lo) - abs
				shift(&c, Time(off))
			}
			shift(&c, Time(t.Epoch))
			if pk != nil {
				pk.Append(&c)
			} else {
				out = append(out, c)
			}
		}
	}
	if pk != nil {
		t.Packed = pk
	} else {
		t.Jobs = out
	}
	t.Rebase(0)
	t.Notes = append(t.Notes, fmt.Sprintf("load scaled by %g (seed %d): %d jobs from %d, each copy within its original's clock hour", factor, seed, t.Len(), n0))
	return nil
}

// Random stream numbers of the workload package (rand.NewPCG(seed, stream)).
const (
	StreamScaleLoad uint64 = 0x5ca1e
	StreamArrivals  uint64 = 1
	StreamSizes     uint64 = 2
	StreamRuntime   uint64 = 3
	StreamLimit     uint64 = 4
	StreamUsers     uint64 = 5
	StreamParts     uint64 = 6
)

// RemapGPU moves jobs from one GPU type to another: every job whose
// Request.GPUType equals a key of m (case-insensitively; the key "*" also
// matches GPU jobs of any or no type) gets the mapped type, and its
// runtime divided by speedup (> 0; 2 means the new GPU runs the job twice
// as fast), rounded up. Time limits stay as requested. TraceEnd follows
// the new runtime when TraceStart is known. It returns the number of jobs
// changed.
func RemapGPU(t *Trace, m map[string]string, speedup float64) (int, error) {
	if !(speedup > 0 && speedup < 1e6) {
		return 0, fmt.Errorf("workload: speedup %v: must be > 0", speedup)
	}
	lower := map[string]string{}
	for k, v := range m {
		lower[strings.ToLower(k)] = v
	}
	n := 0
	t.Edit(func(j *Job) bool {
		if j.Request.GPUs == 0 {
			return true
		}
		to, ok := lower[strings.ToLower(j.Request.GPUType)]
		if !ok {
			if to, ok = lower["*"]; !ok {
				return true
			}
		}
		j.Request.GPUType = to
		j.Runtime = Time(math.Ceil(float64(j.Runtime) / speedup))
		if j.TraceStart != Unknown && !j.CancelledPending() {
			j.TraceEnd = j.TraceStart + j.Runtime
		}
		n++
		return true
	})
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k+"→"+m[k])
	}
	slices.Sort(keys)
	t.Notes = append(t.Notes, fmt.Sprintf("GPU types remapped (%s), runtimes divided by %g: %d jobs", strings.Join(keys, ", "), speedup, n))
	return n, nil
}

// Filter says which jobs Apply keeps: each non-empty list must contain
// the job's value (States compares TraceState); From and To bound the
// submit time (Unix seconds, [From, To), 0 for no bound).
type Filter struct {
	Users      []string
	Partitions []string
	States     []string
	From, To   int64
}

// Apply keeps the jobs f accepts (a multi-partition job matches when any
// of its partitions is listed) and rebases the trace.
func (f Filter) Apply(t *Trace) {
	n := t.Len()
	epoch := t.Epoch
	t.Edit(func(j *Job) bool {
		sub := epoch + int64(j.Submit)
		shift(j, Time(epoch))
		if f.From != 0 && sub < f.From || f.To != 0 && sub >= f.To {
			return false
		}
		if len(f.Users) > 0 && !slices.Contains(f.Users, j.User) {
			return false
		}
		if len(f.States) > 0 && !slices.Contains(f.States, j.TraceState) {
			return false
		}
		if len(f.Partitions) > 0 {
			hit := false
			for p := range strings.SplitSeq(j.Partition, ",") {
				if slices.Contains(f.Partitions, p) {
					hit = true
				}
			}
			if !hit {
				return false
			}
		}
		return true
	})
	t.Rebase(0)
	if t.Len() == 0 {
		t.Epoch = epoch
	}
	t.Notes = append(t.Notes, fmt.Sprintf("filtered: kept %d of %d jobs", t.Len(), n))
}
