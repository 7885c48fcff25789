package calibrate

import (
	"errors"
	"fmt"
	"math"
	"os"

	yaml "go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/hwmodels/strictyaml"
)

// ErrCalibration marks a bad calibration file; the message says where.
var ErrCalibration = errors.New("bad calibration")

// YAML returns c as YAML, the form Parse reads.
func (c *Calibration) YAML() ([]byte, error) { return yaml.Marshal(c) }

// Load reads and checks a calibration file.
func Load(path string) (*Calibration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse reads a calibration strictly (unknown keys, a second document and
// out-of-range values are errors naming path, line and field).
func Parse(data []byte, path string) (*Calibration, error) {
	var c Calibration
	root, err := strictyaml.Parse(data)
	if err == nil && root != nil {
		err = strictyaml.DecodeNode(root, &c)
	}
	if err != nil {
		return nil, strictyaml.FileError(path, ErrCalibration, err)
	}
	bad := func(line int, field, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s: %w: %s", path, max(line, 1), field, ErrCalibration, fmt.Sprintf(format, args...))
	}
	if c.Version != Version {
		return nil, bad(strictyaml.Line(root, "version"), "version", "must be %d, got %d", Version, c.Version)
	}
	for i, r := range c.Runtime.Ratios {
		f := fmt.Sprintf("runtime.ratios[%d]", i)
		line := strictyaml.Line(root, "runtime", "ratios", i)
		switch {
		case r.From == "" || r.To == "":
			return nil, bad(line, f, "from and to must name GPU models")
		case r.From == r.To:
			return nil, bad(line, f, "from and to are both %q", r.From)
		case r.Class == "":
			return nil, bad(line, f+".class", "missing (a job class)")
		case !(r.Ratio >= 1e-3 && r.Ratio <= 1e3):
			return nil, bad(line, f+".ratio", "must be 0.001 to 1000, got %v", r.Ratio)
		}
	}
	for i, p := range c.GPUPower {
		f := fmt.Sprintf("gpu_power[%d]", i)
		line := strictyaml.Line(root, "gpu_power", i)
		switch {
		case p.Model == "":
			return nil, bad(line, f+".model", "missing (a GPU model name)")
		case !(p.IdleW >= 0 && p.IdleW <= 1e5):
			return nil, bad(line, f+".idle_w", "must be 0 to 100000, got %v", p.IdleW)
		case !(p.BusyW >= 0 && p.BusyW <= 1e5):
			return nil, bad(line, f+".busy_w", "must be 0 to 100000, got %v", p.BusyW)
		case !(p.FullUtilW >= -1e5 && p.FullUtilW <= 1e5) || math.IsNaN(p.FullUtilW):
			return nil, bad(line, f+".full_util_w", "must be at most 100000, got %v", p.FullUtilW)
		}
	}
	if m := c.Comm; m != nil {
		for _, v := range []struct {
			name string
			v    float64
		}{{"intra_gbs", m.IntraGBs}, {"inter_gbs", m.InterGBs}, {"latency_us", m.LatencyUS}, {"intra_latency_us", m.IntraLatencyUS}} {
			if !(v.v >= 0 && v.v <= 1e5) {
				return nil, bad(strictyaml.Line(root, "comm", v.name), "comm."+v.name, "must be 0 to 100000, got %v", v.v)
			}
		}
	}
	return &c, nil
}

// Apply puts c into cluster cl: its communication fit (Comm) sets the
// fabric's IntraGBs and InterGBs (the communication model's bus
// bandwidths per GPU, in place of the catalog's NVLink and the link
// speed); its speed ratios go first in
// cl.Runtime.Ratios (replacing entries for the same pair and class, in
// either direction), so they take precedence over the spec's and over
// datasheet ratios; its power replaces IdleW and BusyW of the GPU models
// it names, in cl.GPUModels and in every node group using them (each
// group gets its own copy). It errors, changing nothing, when a ratio
// names a GPU model the cluster does not know (catalog or gpu_models) or
// a job class its runtime model lacks. Power for GPU models the cluster
// does not use is skipped and listed in the returned notes.
func Apply(cl *hwmodels.Cluster, c *Calibration) (notes []string, err error) {
	for i, r := range c.Runtime.Ratios {
		for _, m := range []string{r.From, r.To} {
			if _, ok := cl.GPU(m); !ok {
				return nil, fmt.Errorf("calibration runtime.ratios[%d]: unknown GPU model %q (the cluster's catalog and gpu_models do not have it)", i, m)
			}
		}
		if _, ok := cl.Runtime.Class(r.Class); !ok {
			return nil, fmt.Errorf("calibration runtime.ratios[%d]: unknown job class %q (add it to the cluster spec's runtime.classes)", i, r.Class)
		}
	}
	var ratios []hwmodels.SpeedRatio
	for _, r := range c.Runtime.Ratios {
		ratios = append(ratios, hwmodels.SpeedRatio{From: r.From, To: r.To, Class: r.Class, Ratio: r.Ratio})
	}
	for _, old := range cl.Runtime.Ratios {
		replaced := false
		for _, r := range ratios {
			if r.Class == old.Class && (r.From == old.From && r.To == old.To || r.From == old.To && r.To == old.From) {
				replaced = true
			}
		}
		if !replaced {
			ratios = append(ratios, old)
		}
	}
	cl.Runtime.Ratios = ratios
	if m := c.Comm; m != nil {
		if cl.Fabric == nil {
			notes = append(notes, "comm: the cluster has no fabric; the fitted bandwidths are not used")
		} else {
			f := *cl.Fabric // shared: change a copy
			f.IntraGBs, f.InterGBs = m.IntraGBs, m.InterGBs
			cl.Fabric = &f
		}
	}
	watts := func(v float64) int32 { return int32(math.Round(v)) }
	for _, p := range c.GPUPower {
		used := false
		for i := range cl.GPUModels {
			if cl.GPUModels[i].Name == p.Model {
				cl.GPUModels[i].IdleW, cl.GPUModels[i].BusyW = watts(p.IdleW), watts(p.BusyW)
			}
		}
		for i := range cl.Groups {
			g := &cl.Groups[i]
			if g.GPU == nil || g.GPU.Name != p.Model {
				continue
			}
			spec := *g.GPU
			spec.IdleW, spec.BusyW = watts(p.IdleW), watts(p.BusyW)
			g.GPU = &spec
			used = true
		}
		if !used {
			notes = append(notes, fmt.Sprintf("gpu_power: no node of the cluster has %s GPUs", p.Model))
		}
	}
	return notes, nil
}
