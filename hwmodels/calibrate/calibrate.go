package calibrate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/schedsim/schedsim/hwmodels/nvml"
)

// Version is the calibration file format version.
const Version = 1

// Calibration is a fit: what Apply puts into a cluster, and how well the
// profiles support it.
type Calibration struct {
	Version int `yaml:"version" json:"version"`
	// Profiles is the number of profiles fitted; Robust whether the Huber
	// fit was used.
	Profiles int  `yaml:"profiles" json:"profiles"`
	Robust   bool `yaml:"robust" json:"robust"`
	// Runtime has the keys of the cluster spec's runtime section, so it can
	// be pasted there too.
	Runtime Runtime `yaml:"runtime" json:"runtime"`
	// GPUPower is idle and busy power per GPU model.
	GPUPower []GPUPower `yaml:"gpu_power,omitempty" json:"gpu_power,omitempty"`
	// Comm is the communication model's bus bandwidths and latency fitted
	// from nccl-tests output (schedsim calibrate --nccl), nil without.
	Comm *CommFit `yaml:"comm,omitempty" json:"comm,omitempty"`
	// Fit is the goodness of fit.
	Fit Fit `yaml:"fit" json:"fit"`
	// Notes say what could not be fitted and why.
	Notes []string `yaml:"notes,omitempty" json:"notes,omitempty"`
}

// Runtime is the runtime model's part.
type Runtime struct {
	Ratios []Ratio `yaml:"ratios" json:"ratios"`
}

// Ratio is a speed ratio: jobs of Class run Ratio times as fast on To as
// on From (hwmodels.SpeedRatio).
type Ratio struct {
	From  string  `yaml:"from" json:"from"`
	To    string  `yaml:"to" json:"to"`
	Class string  `yaml:"class" json:"class"`
	Ratio float64 `yaml:"ratio" json:"ratio"`
}

// GPUPower is a GPU model's fitted power, in watts.
type GPUPower struct {
	Model string  `yaml:"model" json:"model"`
	IdleW float64 `yaml:"idle_w" json:"idle_w"`
	BusyW float64 `yaml:"busy_w" json:"busy_w"`
	// FullUtilW is the fitted draw at 100 % utilization, 0 when
	// utilization did not vary enough to fit it.
	FullUtilW float64 `yaml:"full_util_w,omitempty" json:"full_util_w,omitempty"`
}

// Fit is the goodness of fit of each part.
type Fit struct {
	Runtime []ClassFit `yaml:"runtime,omitempty" json:"runtime,omitempty"`
	Power   []PowerFit `yaml:"power,omitempty" json:"power,omitempty"`
}

// ClassFit is the speed-ratio fit of one job class.
type ClassFit struct {
	Class string `yaml:"class" json:"class"`
	// Reference is the GPU model whose speed is 1; Speeds every model's
	// speed relative to it.
	Reference string             `yaml:"reference" json:"reference"`
	Speeds    map[string]float64 `yaml:"speeds" json:"speeds"`
	// N profiles, Params parameters (workloads + models − 1).
	N      int `yaml:"n" json:"n"`
	Params int `yaml:"params" json:"params"`
	// RMSLog is the residual RMS of ln T (≈ the typical relative error of
	// a predicted runtime); MaxRelErr the largest |T_fit / T − 1|; R2 the
	// R² of ln T.
	RMSLog    float64 `yaml:"rms_log" json:"rms_log"`
	MaxRelErr float64 `yaml:"max_rel_err" json:"max_rel_err"`
	R2        float64 `yaml:"r2" json:"r2"`
	// RatioRelSE is each ratio's relative standard error ("from>to"), empty
	// when N = Params.
	RatioRelSE map[string]float64 `yaml:"ratio_rel_se,omitempty" json:"ratio_rel_se,omitempty"`
}

// PowerFit is the power fit of one GPU model.
type PowerFit struct {
	Model string `yaml:"model" json:"model"`
	// N points (job means and idle baselines); R2 and RMSW of the line
	// (zero when only idle_w and busy_w were averaged).
	N    int     `yaml:"n" json:"n"`
	R2   float64 `yaml:"r2" json:"r2"`
	RMSW float64 `yaml:"rms_w" json:"rms_w"`
}

// Options control the fit.
type Options struct {
	// Robust uses Huber IRLS instead of plain least squares.
	Robust bool
}

// ErrNoData is returned when no part could be fitted.
var ErrNoData = errors.New("nothing to fit: speed ratios need one workload measured on two or more GPU models; power needs mean_power_w")

// FitProfiles fits the profiles (see the package comment).
func FitProfiles(profiles []nvml.Profile, o Options) (*Calibration, error) {
	c := &Calibration{Version: Version, Profiles: len(profiles), Robust: o.Robust, Runtime: Runtime{Ratios: []Ratio{}}}
	classes := map[string][]nvml.Profile{}
	models := map[string][]nvml.Profile{}
	for _, p := range profiles {
		if p.Class == "" {
			p.Class = "training"
		}
		classes[p.Class] = append(classes[p.Class], p)
		models[p.GPUModel] = append(models[p.GPUModel], p)
	}
	for _, k := range sortedKeys(classes) {
		fit, ratios, notes, err := fitClass(k, classes[k], o)
		if err != nil {
			return nil, err
		}
		c.Notes = append(c.Notes, notes...)
		if fit != nil {
			c.Fit.Runtime = append(c.Fit.Runtime, *fit)
			c.Runtime.Ratios = append(c.Runtime.Ratios, ratios...)
		}
	}
	for _, m := range sortedKeys(models) {
		gp, pf, ok := fitPower(m, models[m], o)
		if ok {
			c.GPUPower = append(c.GPUPower, gp)
			c.Fit.Power = append(c.Fit.Power, pf)
		} else {
			c.Notes = append(c.Notes, fmt.Sprintf("power: %s: no profile has mean_power_w", m))
		}
	}
	if len(c.Runtime.Ratios) == 0 && len(c.GPUPower) == 0 {
		return nil, ErrNoData
	}
	return c, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fitClass fits the speed ratios of one class.
func fitClass(class string, ps []nvml.Profile, o Options) (*ClassFit, []Ratio, []string, error) {
	var notes []string
	gpus := map[string]bool{}
	for _, p := range ps {
		gpus[p.GPUModel] = true
	}
	if len(gpus) < 2 {
		return nil, nil, []string{fmt.Sprintf("runtime: class %s: measured on %d GPU model only, no ratio", class, len(gpus))}, nil
	}
	// Keep the connected group of GPU models with the most models (ties:
	// the one holding the first model by name).
	comp := components(ps)
	keep := comp[0]
	for _, c := range comp[1:] {
		if len(c) > len(keep) {
			keep = c
		}
	}
	for _, c := range comp {
		if !slices.Equal(c, keep) {
			notes = append(notes, fmt.Sprintf("runtime: class %s: %v share no workload with %v: not compared", class, c, keep))
		}
	}
	if len(keep) < 2 {
		return nil, nil, append(notes, fmt.Sprintf("runtime: class %s: no workload measured on two GPU models", class)), nil
	}
	in := map[string]bool{}
	for _, g := range keep {
		in[g] = true
	}
	var rows []nvml.Profile
	wl := map[string]int{}
	for _, p := range ps {
		if in[p.GPUModel] {
			rows = append(rows, p)
			wl[p.Workload] = 0
		}
	}
	wnames := sortedKeys(wl)
	for i, w := range wnames {
		wl[w] = i
	}
	gcol := map[string]int{} // column of θ_g; the reference has none
	for i, g := range keep[1:] {
		gcol[g] = len(wnames) + i
	}
	params := len(wnames) + len(keep) - 1
	x := mat.NewDense(len(rows), params, nil)
	y := make([]float64, len(rows))
	for i, p := range rows {
		x.Set(i, wl[p.Workload], 1)
		if j, ok := gcol[p.GPUModel]; ok {
			x.Set(i, j, -1)
		}
		y[i] = math.Log(p.WallS)
	}
	beta, cov, resid, err := solve(x, y, o.Robust)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("runtime: class %s: %w", class, err)
	}
	theta := func(g string) float64 {
		if j, ok := gcol[g]; ok {
			return beta[j]
		}
		return 0
	}
	fit := &ClassFit{Class: class, Reference: keep[0], Speeds: map[string]float64{}, N: len(rows), Params: params}
	for _, g := range keep {
		fit.Speeds[g] = round6(math.Exp(theta(g)))
	}
	var ss, sst, mean float64
	for _, v := range y {
		mean += v / float64(len(y))
	}
	for i, r := range resid {
		ss += r * r
		sst += (y[i] - mean) * (y[i] - mean)
		fit.MaxRelErr = max(fit.MaxRelErr, math.Abs(math.Exp(-r)-1))
	}
	fit.RMSLog = round6(math.Sqrt(ss / float64(len(rows))))
	fit.MaxRelErr = round6(fit.MaxRelErr)
	fit.R2 = 1
	if sst > 0 {
		fit.R2 = round6(1 - ss/sst)
	}
	dof := len(rows) - params
	var ratios []Ratio
	for i, a := range keep {
		for _, b := range keep[i+1:] {
			ratios = append(ratios, Ratio{From: a, To: b, Class: class, Ratio: round6(math.Exp(theta(b) - theta(a)))})
			if dof > 0 {
				if fit.RatioRelSE == nil {
					fit.RatioRelSE = map[string]float64{}
				}
				s2 := ss / float64(dof)
				v := 0.0
				ja, oka := gcol[a]
				jb, okb := gcol[b]
				if oka {
					v += cov.At(ja, ja)
				}
				if okb {
					v += cov.At(jb, jb)
				}
				if oka && okb {
					v -= 2 * cov.At(ja, jb)
				}
				fit.RatioRelSE[a+">"+b] = round6(math.Sqrt(max(v, 0) * s2))
			}
		}
	}
	return fit, ratios, notes, nil
}

// components returns the groups of GPU models joined by shared workloads,
// each sorted, in order of their first model.
func components(ps []nvml.Profile) [][]string {
	parent := map[string]string{}
	var find func(string) string
	find = func(a string) string {
		if parent[a] == a {
			return a
		}
		r := find(parent[a])
		parent[a] = r
		return r
	}
	union := func(a, b string) {
		ra, rb := find(a), find(b)
		if ra != rb {
			if ra < rb {
				parent[rb] = ra
			} else {
				parent[ra] = rb
			}
		}
	}
	for _, p := range ps {
		for _, k := range []string{"g:" + p.GPUModel, "w:" + p.Workload} {
			if _, ok := parent[k]; !ok {
				parent[k] = k
			}
		}
		union("g:"+p.GPUModel, "w:"+p.Workload)
	}
	groups := map[string][]string{}
	for k := range parent {
		if k[:2] == "g:" {
			r := find(k)
			groups[r] = append(groups[r], k[2:])
		}
	}
	var out [][]string
	for _, g := range groups {
		sort.Strings(g)
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// fitPower fits one GPU model's power.
func fitPower(model string, ps []nvml.Profile, o Options) (GPUPower, PowerFit, bool) {
	gp := GPUPower{Model: model}
	pf := PowerFit{Model: model}
	var us, ws []float64
	var idleSum, busyJ, busyS float64
	idleN := 0
	for _, p := range ps {
		if p.MeanPowerW > 0 {
			busyJ += p.MeanPowerW * p.WallS
			busyS += p.WallS
			if p.MeanUtilPct >= 0 {
				us, ws = append(us, p.MeanUtilPct/100), append(ws, p.MeanPowerW)
			}
		}
		if p.IdlePowerW > 0 {
			us, ws = append(us, 0), append(ws, p.IdlePowerW)
			idleSum += p.IdlePowerW
			idleN++
		}
	}
	if busyS == 0 {
		return gp, pf, false
	}
	gp.BusyW = round6(busyJ / busyS)
	pf.N = len(us)
	distinct := false
	for _, u := range us {
		distinct = distinct || u != us[0]
	}
	if distinct {
		x := mat.NewDense(len(us), 2, nil)
		for i, u := range us {
			x.Set(i, 0, 1)
			x.Set(i, 1, u)
		}
		if beta, _, resid, err := solve(x, ws, o.Robust); err == nil {
			gp.IdleW = round6(max(beta[0], 0))
			gp.FullUtilW = round6(beta[0] + beta[1])
			var ss, sst, mean float64
			for _, w := range ws {
				mean += w / float64(len(ws))
			}
			for i, r := range resid {
				ss += r * r
				sst += (ws[i] - mean) * (ws[i] - mean)
			}
			pf.RMSW = round6(math.Sqrt(ss / float64(len(ws))))
			pf.R2 = 1
			if sst > 0 {
				pf.R2 = round6(1 - ss/sst)
			}
			return gp, pf, true
		}
	}
	if idleN > 0 {
		gp.IdleW = round6(idleSum / float64(idleN))
	}
	return gp, pf, true
}

// solve returns the (robust) least-squares β of y ≈ Xβ, the unscaled
// covariance (XᵀWX)⁻¹ at the final weights, and the residuals y − Xβ.
func solve(x *mat.Dense, y []float64, robust bool) ([]float64, *mat.Dense, []float64, error) {
	n, p := x.Dims()
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	var beta []float64
	var resid []float64
	var cov mat.Dense
	for iter := 0; ; iter++ {
		a := mat.NewDense(n, p, nil)
		b := mat.NewVecDense(n, nil)
		for i := range n {
			s := math.Sqrt(w[i])
			for j := range p {
				a.Set(i, j, s*x.At(i, j))
			}
			b.SetVec(i, s*y[i])
		}
		var qr mat.QR
		qr.Factorize(a)
		if qr.Cond() > 1e12 {
			return nil, nil, nil, errors.New("the profiles do not determine the fit (singular design)")
		}
		var sol mat.VecDense
		if err := qr.SolveVecTo(&sol, false, b); err != nil {
			return nil, nil, nil, err
		}
		next := make([]float64, p)
		for j := range p {
			next[j] = sol.AtVec(j)
		}
		resid = make([]float64, n)
		for i := range n {
			f := 0.0
			for j := range p {
				f += x.At(i, j) * next[j]
			}
			resid[i] = y[i] - f
		}
		done := beta != nil && maxDiff(beta, next) < 1e-12
		beta = next
		var ata mat.Dense
		ata.Mul(a.T(), a)
		if err := cov.Inverse(&ata); err != nil {
			return nil, nil, nil, errors.New("the profiles do not determine the fit (singular design)")
		}
		if !robust || done || iter == 50 || n <= p {
			return beta, &cov, resid, nil
		}
		scale := mad(resid) / 0.6745
		if scale < 1e-12 {
			return beta, &cov, resid, nil // an exact fit
		}
		k := 1.345 * scale
		for i, r := range resid {
			w[i] = 1
			if math.Abs(r) > k {
				w[i] = k / math.Abs(r)
			}
		}
	}
}

func maxDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// mad is the median absolute deviation from the median.
func mad(v []float64) float64 {
	med := median(v)
	d := make([]float64, len(v))
	for i, x := range v {
		d[i] = math.Abs(x - med)
	}
	return median(d)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// round6 rounds to 6 significant digits, so written files are stable.
func round6(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	e := math.Pow(10, 5-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*e) / e
}
