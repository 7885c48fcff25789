package calibrate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// nccl-tests calibration: `schedsim calibrate --nccl` reads the output of
// nccl-tests' all_reduce_perf (github.com/NVIDIA/nccl-tests, its table
// "size count type redop root time algbw busbw #wrong", out-of-place then
// in-place) and fits the alpha-beta model of a ring all-reduce
//
//	t(S) = α + S × 2(p − 1)/p / B
//
// (S bytes, p ranks, B the bus bandwidth per GPU, nccl-tests' busbw
// definition) by weighted least squares (gonum/stat.LinearRegression,
// weights 1/t², so every size counts by its relative error) on both the
// out-of-place and the in-place times. A run on one node measures the
// intra-node bus bandwidth (NVLink/NVSwitch); a run on N nodes the
// inter-node one (the ring's node-to-node hops, over the NICs), whose α
// is the latency the model reports.

// MaxNCCLRows bounds the table rows read from one file.
const MaxNCCLRows = 1 << 16

// NCCLRun is one all_reduce_perf output.
type NCCLRun struct {
	Path string
	// Ranks is the number of GPUs (the "#  Rank" lines), Nodes the
	// distinct hosts among them.
	Ranks, Nodes int
	Rows         []NCCLRow
}

// NCCLRow is one table row: message size in bytes and the out-of-place
// and in-place times in microseconds.
type NCCLRow struct {
	Size          int64
	OOPUS, InPlUS float64
}

// ErrNCCL marks unreadable nccl-tests output; the message names the file,
// line and field.
var ErrNCCL = errors.New("bad nccl-tests output")

// ParseNCCL reads all_reduce_perf output.
func ParseNCCL(data []byte, path string) (*NCCLRun, error) {
	run := &NCCLRun{Path: path}
	hosts := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s: %w: %s", path, line, field, ErrNCCL, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "#") {
			// "#  Rank  0 Group  0 Pid  1234 on     host1 device  0 [0x18] NVIDIA H100 80GB HBM3"
			f := strings.Fields(strings.TrimPrefix(text, "#"))
			if len(f) >= 8 && f[0] == "Rank" && f[6] == "on" {
				run.Ranks++
				hosts[f[7]] = true
			}
			continue
		}
		f := strings.Fields(text)
		if len(f) < 13 {
			if len(f) > 0 && (f[0] == "Avg" || !isDigit(f[0][0])) {
				continue // a footer or a log line
			}
			return nil, bad("row", "%d fields, want 13 (size count type redop root time algbw busbw #wrong time algbw busbw #wrong)", len(f))
		}
		size, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || size <= 0 {
			return nil, bad("size", "%q: want a positive byte count", f[0])
		}
		num := func(i int, name string) (float64, error) {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil || !(v > 0 && v < 1e12) {
				return 0, bad(name, "%q: want a positive number of microseconds", f[i])
			}
			return v, nil
		}
		oop, err := num(5, "time (out-of-place)")
		if err != nil {
			return nil, err
		}
		inp, err := num(9, "time (in-place)")
		if err != nil {
			return nil, err
		}
		if len(run.Rows) >= MaxNCCLRows {
			return nil, bad("row", "more than %d rows", MaxNCCLRows)
		}
		run.Rows = append(run.Rows, NCCLRow{Size: size, OOPUS: oop, InPlUS: inp})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w: %v", path, line+1, ErrNCCL, err)
	}
	if run.Ranks < 2 {
		return nil, fmt.Errorf("%s:%d: ranks: %w: found %d \"#  Rank N ... on HOST\" lines, want 2 or more (all_reduce_perf's header)", path, max(line, 1), ErrNCCL, run.Ranks)
	}
	if len(run.Rows) < 3 {
		return nil, fmt.Errorf("%s:%d: rows: %w: %d table rows, want 3 or more sizes", path, max(line, 1), ErrNCCL, len(run.Rows))
	}
	run.Nodes = len(hosts)
	return run, nil
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// CommFit is the fitted communication model: bus bandwidths per GPU in
// GB/s (1e9 bytes/s), and latencies in microseconds.
type CommFit struct {
	// IntraGBs and IntraLatencyUS from one-node runs (0: none given).
	IntraGBs       float64 `yaml:"intra_gbs" json:"intra_gbs"`
	IntraLatencyUS float64 `yaml:"intra_latency_us" json:"intra_latency_us"`
	// InterGBs and LatencyUS from multi-node runs (0: none given).
	InterGBs  float64 `yaml:"inter_gbs" json:"inter_gbs"`
	LatencyUS float64 `yaml:"latency_us" json:"latency_us"`
	// Runs and their fits, in input order.
	Runs []NCCLFit `yaml:"runs" json:"runs"`
}

// NCCLFit is the fit of one file.
type NCCLFit struct {
	Path      string  `yaml:"path" json:"path"`
	Ranks     int     `yaml:"ranks" json:"ranks"`
	Nodes     int     `yaml:"nodes" json:"nodes"`
	BusGBs    float64 `yaml:"bus_gbs" json:"bus_gbs"`
	LatencyUS float64 `yaml:"latency_us" json:"latency_us"`
	// MaxRelErr is the largest |t_fit / t − 1| over the rows.
	MaxRelErr float64 `yaml:"max_rel_err" json:"max_rel_err"`
}

// FitNCCL fits each run and combines them: one-node runs give the
// intra-node figures, multi-node runs the inter-node ones (the mean over
// runs of each kind, in input order).
func FitNCCL(runs []*NCCLRun) (*CommFit, error) {
	out := &CommFit{}
	runs = slices.Clone(runs)
	sortRuns(runs)
	var intra, inter []NCCLFit
	for _, r := range runs {
		f, err := fitNCCLRun(r)
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, f)
		if r.Nodes <= 1 {
			intra = append(intra, f)
		} else {
			inter = append(inter, f)
		}
	}
	mean := func(fs []NCCLFit) (bw, lat float64) {
		for _, f := range fs {
			bw += f.BusGBs
			lat += f.LatencyUS
		}
		return round6(bw / float64(len(fs))), round6(lat / float64(len(fs)))
	}
	if len(intra) > 0 {
		out.IntraGBs, out.IntraLatencyUS = mean(intra)
	}
	if len(inter) > 0 {
		out.InterGBs, out.LatencyUS = mean(inter)
	}
	return out, nil
}

// fitNCCLRun fits t = α + x / B, x = S × 2(p − 1)/p, weights 1/t².
func fitNCCLRun(r *NCCLRun) (NCCLFit, error) {
	p := float64(r.Ranks)
	factor := 2 * (p - 1) / p
	var x, y, w []float64
	for _, row := range r.Rows {
		for _, t := range []float64{row.OOPUS, row.InPlUS} {
			x = append(x, float64(row.Size)*factor/1e3) // kB: t in µs → slope in µs/kB = 1/(GB/s)
			y = append(y, t)
			w = append(w, 1/(t*t))
		}
	}
	alpha, beta := stat.LinearRegression(x, y, w, false)
	if !(beta > 0) || math.IsNaN(alpha) {
		return NCCLFit{}, fmt.Errorf("%s: %w: time does not grow with size (slope %v): not an all_reduce_perf sweep", r.Path, ErrNCCL, beta)
	}
	f := NCCLFit{Path: r.Path, Ranks: r.Ranks, Nodes: r.Nodes, BusGBs: round6(1 / beta), LatencyUS: round6(max(alpha, 0))}
	for i := range x {
		f.MaxRelErr = max(f.MaxRelErr, math.Abs((alpha+beta*x[i])/y[i]-1))
	}
	f.MaxRelErr = round6(f.MaxRelErr)
	return f, nil
}

// NCCLDefault is a published all_reduce_perf bus bandwidth at large
// messages, per GPU, in GB/s, for a node type and fabric.
type NCCLDefault struct {
	Node     string
	IntraGBs float64
	// InterGBs is the multi-node figure; 0 where no published figure was
	// found (the model then uses the fabric's link speed).
	InterGBs float64
	Source   string
}

// srcAlaya is the source of the intra-node figures.
const srcAlaya = "docs.alayanew.com/en/docs/tech-blog/2026-05-06-nccl-tests, \"NCCL-tests in practice\": " +
	"8×H100 SXM5 NVLink-only 460–480 GB/s busbw at large sizes, 8×A100 SXM4 230–250 (midpoints used)"

// NCCLDefaults returns the built-in figures, by node type. H200 has the
// H100's NVLink 4 and NVSwitch, so the H100 figure stands for it (an
// inference, not a measurement). No multi-node busbw figure was found in
// a citable source, so InterGBs is 0 (the fabric's link speed / 8 per
// GPU, one NIC per GPU: NDR 50 GB/s, HDR 25 GB/s) until a calibration
// replaces it.
func NCCLDefaults() []NCCLDefault {
	return []NCCLDefault{
		{Node: "hgx-a100-8gpu", IntraGBs: 240, Source: srcAlaya},
		{Node: "hgx-h100-8gpu", IntraGBs: 470, Source: srcAlaya},
		{Node: "hgx-h200-8gpu", IntraGBs: 470, Source: srcAlaya + "; H200 taken as H100 (same NVLink 4)"},
	}
}

// sortRuns orders runs by nodes, then path, so a fit does not depend on
// argument order.
func sortRuns(runs []*NCCLRun) {
	slices.SortStableFunc(runs, func(a, b *NCCLRun) int {
		if a.Nodes != b.Nodes {
			return a.Nodes - b.Nodes
		}
		return strings.Compare(a.Path, b.Path)
	})
}
