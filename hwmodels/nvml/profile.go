package nvml

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels/strictyaml"
)

// ProfileVersion is the version of the job profile format.
const ProfileVersion = 1

// Profile is a job profile: what one run of a command on one GPU model
// took and drew, measured by `schedsim probe --run` or written by hand.
// Calibration (package hwmodels/calibrate) compares profiles of the same
// Workload across GPU models.
//
// Power figures are per GPU, over the GPUs the job used; utilization is
// NVML's GPU utilization (the share of time a kernel ran).
type Profile struct {
	Version int `yaml:"version" json:"version"`
	// Workload names what ran (the same name on every GPU model it was
	// measured on); Class is its runtime-model job class ("training",
	// "inference", "hpc" or one of the spec's runtime.classes).
	Workload string `yaml:"workload" json:"workload"`
	Class    string `yaml:"class" json:"class"`
	// GPUModel is the GPU model name (catalog or gpu_models) the job ran
	// on; GPUName NVML's name for it.
	GPUModel string `yaml:"gpu_model" json:"gpu_model"`
	GPUName  string `yaml:"gpu_name,omitempty" json:"gpu_name,omitempty"`
	// GPUs is the number of GPUs the job used.
	GPUs int `yaml:"gpus" json:"gpus"`
	// Command is the command line that ran; ExitCode its exit status.
	Command  []string `yaml:"command,omitempty" json:"command,omitempty"`
	ExitCode int      `yaml:"exit_code" json:"exit_code"`
	// WallS is the wall time in seconds; Samples and IntervalS the
	// samples taken per GPU and their period.
	WallS     float64 `yaml:"wall_s" json:"wall_s"`
	Samples   int     `yaml:"samples" json:"samples"`
	IntervalS float64 `yaml:"interval_s" json:"interval_s"`
	// IdlePowerW is the mean draw per GPU just before the command started
	// (0: not measured, or the GPUs were not idle).
	IdlePowerW float64 `yaml:"idle_power_w" json:"idle_power_w"`
	// MeanPowerW is the mean draw per GPU while the command ran, PeakPowerW
	// the highest single reading of any of its GPUs.
	MeanPowerW float64 `yaml:"mean_power_w" json:"mean_power_w"`
	PeakPowerW float64 `yaml:"peak_power_w" json:"peak_power_w"`
	// EnergyJ is the energy of all its GPUs, in joules: the difference of
	// NVML's energy counters when every GPU has one, else power integrated
	// over the samples (trapezoids).
	EnergyJ float64 `yaml:"energy_j" json:"energy_j"`
	// MeanUtilPct is the mean GPU utilization, -1 when NVML gave none
	// (MIG mode); PeakMemoryMiB the most memory any of its GPUs had in use.
	MeanUtilPct   float64 `yaml:"mean_util_pct" json:"mean_util_pct"`
	PeakMemoryMiB int64   `yaml:"peak_memory_mib" json:"peak_memory_mib"`
	// Source says where the numbers come from (a fixture's provenance).
	Source string `yaml:"source,omitempty" json:"source,omitempty"`
}

// ProfileOf summarizes series ser of a job that ran for wall over the
// GPUs in gpus (nil: every GPU of the series). idle holds one reading per
// GPU taken before the job started (nil: none); IdlePowerW is their mean
// power when every one of the job's GPUs read 0 % utilization.
func ProfileOf(ser *Series, idle []Sample, gpus []int, wall time.Duration) Profile {
	use := map[int]bool{}
	if gpus == nil {
		for i := range ser.GPUs {
			use[i] = true
		}
	} else {
		for _, g := range gpus {
			use[g] = true
		}
	}
	p := Profile{Version: ProfileVersion, GPUs: len(use), WallS: wall.Seconds(), IntervalS: ser.Interval.Seconds(), MeanUtilPct: -1}
	var idleSum float64
	idleN, allIdle := 0, true
	for i, s := range idle {
		if !use[i] {
			continue
		}
		allIdle = allIdle && s.UtilizationPct == 0 && s.PowerW > 0
		idleSum += s.PowerW
		idleN++
	}
	if idleN > 0 && allIdle {
		p.IdlePowerW = idleSum / float64(idleN)
	}
	var powSum, utilSum float64
	n, utilN := 0, 0
	first := map[int]Point{}
	last := map[int]Point{}
	counters := true
	var trapJ float64
	for _, pt := range ser.Points {
		if !use[pt.GPU] {
			continue
		}
		n++
		powSum += pt.PowerW
		p.PeakPowerW = max(p.PeakPowerW, pt.PowerW)
		p.PeakMemoryMiB = max(p.PeakMemoryMiB, pt.MemoryUsedMiB)
		if pt.UtilizationPct >= 0 {
			utilSum += float64(pt.UtilizationPct)
			utilN++
		}
		if pt.EnergyMJ == 0 {
			counters = false
		}
		if prev, ok := last[pt.GPU]; ok {
			trapJ += (prev.PowerW + pt.PowerW) / 2 * (pt.At - prev.At).Seconds()
		} else {
			first[pt.GPU] = pt
		}
		last[pt.GPU] = pt
	}
	if n > 0 {
		p.MeanPowerW = powSum / float64(n)
		p.Samples = n / len(use)
	}
	if utilN > 0 {
		p.MeanUtilPct = utilSum / float64(utilN)
	}
	p.EnergyJ = trapJ
	if counters && len(first) > 0 {
		var mj uint64
		ok := true
		for g, f := range first {
			l := last[g]
			if l.EnergyMJ < f.EnergyMJ {
				ok = false // counter reset (driver reload)
				break
			}
			mj += l.EnergyMJ - f.EnergyMJ
		}
		if ok {
			p.EnergyJ = float64(mj) / 1000
		}
	}
	return p
}

// Process is a command whose run is measured.
type Process interface {
	// Start starts it.
	Start() error
	// Done is closed once it has exited.
	Done() <-chan struct{}
	// Wait returns its exit code once Done is closed (-1 when it could not
	// be told) and the error that ended it, if not an exit status.
	Wait() (int, error)
}

// Measure reads every GPU once (the idle baseline), starts p, samples
// until p exits, and returns the series, the baseline and the wall time
// from start to exit. The clock is read once per instant, so a fake clock
// gives a deterministic series.
func (s *Sampler) Measure(p Process) (ser *Series, idle []Sample, wall time.Duration, code int, err error) {
	n, err := s.Source.DeviceCount()
	if err != nil {
		return nil, nil, 0, -1, err
	}
	for i := range n {
		x, err := s.Source.Sample(i)
		if err != nil {
			return nil, nil, 0, -1, err
		}
		idle = append(idle, x)
	}
	start := s.Clock.Now()
	if err := p.Start(); err != nil {
		return nil, nil, 0, -1, err
	}
	ser, err = s.Run(0, p.Done())
	if err != nil {
		<-p.Done()
		return nil, nil, 0, -1, err
	}
	wall = s.Clock.Now().Sub(start)
	code, err = p.Wait()
	return ser, idle, wall, code, err
}

// ErrProfile marks a bad profile file; the message says where.
var ErrProfile = errors.New("bad job profile")

// ParseProfile reads a profile from YAML (or JSON, which YAML reads),
// strictly: unknown keys, a second document and out-of-range values are
// errors naming path, line and field.
func ParseProfile(data []byte, path string) (Profile, error) {
	var p Profile
	root, err := strictyaml.Parse(data)
	if err == nil && root != nil {
		err = strictyaml.DecodeNode(root, &p)
	}
	if err != nil {
		return Profile{}, strictyaml.FileError(path, ErrProfile, err)
	}
	if len(p.Command) == 0 {
		// "command: []" is no command, as the omitted key is: the saved
		// profile omits it, and must parse back to the same value.
		p.Command = nil
	}
	line := func(key string) int { return max(strictyaml.Line(root, key), 1) }
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s: %w: %s", path, line(key), key, ErrProfile, fmt.Sprintf(format, args...))
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case p.Version != ProfileVersion:
		return Profile{}, bad("version", "must be %d, got %d", ProfileVersion, p.Version)
	case strings.TrimSpace(p.Workload) == "":
		return Profile{}, bad("workload", "missing (the name that matches runs of the same job on other GPU models)")
	case strings.TrimSpace(p.GPUModel) == "":
		return Profile{}, bad("gpu_model", "missing (a catalog or gpu_models name, h100-sxm-80gb)")
	case !(p.GPUs >= 1 && p.GPUs <= 1<<16):
		return Profile{}, bad("gpus", "must be 1 to 65536, got %d", p.GPUs)
	case !(p.WallS > 0 && finite(p.WallS)):
		return Profile{}, bad("wall_s", "must be > 0, got %v", p.WallS)
	case !(p.IntervalS >= 0 && finite(p.IntervalS)):
		return Profile{}, bad("interval_s", "must be >= 0, got %v", p.IntervalS)
	case p.Samples < 0:
		return Profile{}, bad("samples", "must be >= 0, got %d", p.Samples)
	}
	for _, x := range []struct {
		key string
		v   float64
	}{{"idle_power_w", p.IdlePowerW}, {"mean_power_w", p.MeanPowerW}, {"peak_power_w", p.PeakPowerW}, {"energy_j", p.EnergyJ}} {
		if !(x.v >= 0 && x.v <= 1e15) {
			return Profile{}, bad(x.key, "must be 0 to 1e15, got %v", x.v)
		}
	}
	if !(p.MeanUtilPct == -1 || p.MeanUtilPct >= 0 && p.MeanUtilPct <= 100) {
		return Profile{}, bad("mean_util_pct", "must be 0 to 100, or -1 (not measured), got %v", p.MeanUtilPct)
	}
	if p.PeakMemoryMiB < 0 {
		return Profile{}, bad("peak_memory_mib", "must be >= 0, got %d", p.PeakMemoryMiB)
	}
	if p.Class == "" {
		p.Class = "training"
	}
	return p, nil
}

// YAML returns p as YAML, the form ParseProfile reads.
func (p *Profile) YAML() ([]byte, error) { return yaml.Marshal(p) }
