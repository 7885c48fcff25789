package priority

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TRES names the trackable resources the simulator knows, in Slurm's
// spelling (case does not matter on input).
const (
	TRESCPU  = "cpu"
	TRESMem  = "mem"
	TRESNode = "node"
	TRESGPU  = "gres/gpu"
)

// TRES is an amount of each trackable resource.
type TRES struct {
	CPU   float64
	MemMB float64
	Nodes float64
	GPUs  float64
}

// Get returns the amount of the named resource (one of the TRES* names).
func (t *TRES) Get(name string) float64 {
	switch name {
	case TRESCPU:
		return t.CPU
	case TRESMem:
		return t.MemMB
	case TRESNode:
		return t.Nodes
	case TRESGPU:
		return t.GPUs
	}
	return 0
}

// TRESWeight is one entry of a weight list such as PriorityWeightTRES or
// TRESBillingWeights.
type TRESWeight struct {
	Name   string // one of the TRES* names
	Weight float64
}

// ParseTRESWeights parses "CPU=1000,Mem=2000,GRES/gpu=3000". A memory
// weight may carry a unit suffix K, M, G or T: the weight is per that many
// bytes (per MiB without one), as slurm.conf's TRESBillingWeights reads it.
// Weights may be negative; names are cpu, mem, node and gres/gpu.
func ParseTRESWeights(s string) ([]TRESWeight, error) {
	var out []TRESWeight
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	seen := map[string]bool{}
	for item := range strings.SplitSeq(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want NAME=WEIGHT", item)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		switch name {
		case TRESCPU, TRESMem, TRESNode, TRESGPU:
		default:
			return nil, fmt.Errorf("%q: unknown TRES %q (want CPU, Mem, Node or GRES/gpu)", item, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("%q: TRES %s given twice", item, name)
		}
		seen[name] = true
		scale := 1.0
		if name == TRESMem && val != "" {
			switch val[len(val)-1] {
			case 'K', 'k':
				scale, val = 1024, val[:len(val)-1]
			case 'M', 'm':
				val = val[:len(val)-1]
			case 'G', 'g':
				scale, val = 1.0/1024, val[:len(val)-1]
			case 'T', 't':
				scale, val = 1.0/(1024*1024), val[:len(val)-1]
			}
		}
		w, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("%q: weight %q is not a number", item, val)
		}
		out = append(out, TRESWeight{Name: name, Weight: w * scale})
	}
	return out, nil
}

// Billable returns Σ weight·amount over ws, or the CPU count when ws is
// empty (Slurm's default billing is the allocated CPUs).
func Billable(ws []TRESWeight, t *TRES) float64 {
	if len(ws) == 0 {
		return t.CPU
	}
	var b float64
	for _, w := range ws {
		b += w.Weight * t.Get(w.Name)
	}
	return b
}

// Weights are the PriorityWeight* parameters and the flags that change how
// factors are normalized.
type Weights struct {
	Age, Fairshare, JobSize, Partition, QOS, Assoc float64
	// TRES are PriorityWeightTRES's entries; the job's TRES factor for each
	// is its request over its partition's total (NO_NORMAL_TRES: the raw
	// count).
	TRES []TRESWeight
}

// Factors are a job's priority factors, each in [0, 1] unless a NO_NORMAL
// flag made it raw. TRES is aligned with Weights.TRES.
type Factors struct {
	Age, Fairshare, JobSize, Partition, QOS, Assoc float64
	TRES                                           []float64
}

// MaxPriority is the largest job priority (2^32-1).
const MaxPriority = math.MaxUint32

// Priority returns the job priority of f under w, as
// _get_priority_internal computes it: the weighted sum (minus nice)
// truncated to an integer, at least 1 and at most MaxPriority.
func (w *Weights) Priority(f *Factors, nice float64) uint32 {
	return Clamp(w.Sum(f) - nice)
}

// AgeFactor returns min(1, (now-eligible)/maxAge); 1 when maxAge is 0 and
// the job has waited, 0 before it is eligible.
func AgeFactor(now, eligible, maxAge Time) float64 {
	waited := now - eligible
	switch {
	case waited <= 0:
		return 0
	case maxAge <= 0 || waited >= maxAge:
		return 1
	}
	return float64(waited) / float64(maxAge)
}

// JobSize says how PriorityFavorSmall and SMALL_RELATIVE_TO_TIME shape the
// job-size factor.
type JobSize struct {
	FavorSmall          bool
	SmallRelativeToTime bool
}

// Factor returns the job-size factor of a job of nodes nodes (its
// minimum node count, >= 1) and cpus CPUs with a time limit of limit
// seconds, on a cluster of clusterNodes nodes and clusterCPUs CPUs, as
// set_priority_factors (priority_multifactor.c) computes it:
//
//	favor large (default): (nodes/N + cpus/C)/2
//	PriorityFavorSmall:    ((N-nodes)/N + (C-cpus)/C)/2
//	SMALL_RELATIVE_TO_TIME: max(nodes·C/N, cpus) / limit_minutes / C,
//	                        then 1-x with FavorSmall
//
// clamped to [0, 1]. Without a CPU count (cpus = 0, or a cluster of no
// CPUs) the first two are the node term alone, not halved: nodes/N and
// (N-nodes)/N. Which CPU count to give is the caller's: Slurm counts the
// CPUs asked for until the job has been tested against the nodes, and
// from then on the CPUs it would be allocated (job_ptr->total_cpus).
func (j JobSize) Factor(nodes, cpus float64, limit Time, clusterNodes, clusterCPUs float64) float64 {
	if clusterNodes <= 0 {
		return 0
	}
	N, C := clusterNodes, clusterCPUs
	if C <= 0 {
		cpus = 0
	}
	var f float64
	switch {
	case j.SmallRelativeToTime:
		mins := max(float64(limit)/60, 1)
		if C <= 0 {
			C, cpus = N, nodes // CPUs as nodes
		}
		f = max(nodes*C/N, cpus) / mins / C
		if j.FavorSmall {
			f = 1 - f
		}
	case j.FavorSmall:
		f = (N - nodes) / N
		if cpus > 0 {
			f = (f + (C-cpus)/C) / 2
		}
	default:
		f = nodes / N
		if cpus > 0 {
			f = (f + cpus/C) / 2
		}
	}
	return clamp01(f)
}

func clamp01(f float64) float64 {
	switch {
	case !(f >= 0):
		return 0
	case f > 1:
		return 1
	}
	return f
}

// Normalized returns v/max clamped to [0, 1] (0 when max is 0), or v
// itself when raw (a NO_NORMAL_* flag).
func Normalized(v, maxv float64, raw bool) float64 {
	if raw {
		return v
	}
	if maxv <= 0 {
		return 0
	}
	return clamp01(v / maxv)
}

// Sum returns the weighted sum of f under w, before nice, clamping and
// truncation.
func (w *Weights) Sum(f *Factors) float64 {
	p := w.Age*f.Age + w.Fairshare*f.Fairshare + w.JobSize*f.JobSize +
		w.Partition*f.Partition + w.QOS*f.QOS + w.Assoc*f.Assoc
	for i, t := range w.TRES {
		if i < len(f.TRES) {
			p += t.Weight * f.TRES[i]
		}
	}
	return p
}

// Clamp turns a weighted sum into a job priority: truncated to an integer,
// at least 1 (0 is reserved for held jobs) and at most MaxPriority.
func Clamp(p float64) uint32 {
	switch {
	case !(p >= 1):
		return 1
	case p >= MaxPriority:
		return MaxPriority
	}
	return uint32(p)
}
