package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/hwmodels/calibrate"
	"github.com/schedsim/schedsim/hwmodels/nvml"
	"github.com/schedsim/schedsim/traces"
)

func newCalibrateCmd() *cobra.Command {
	var out string
	var ols bool
	var ncclFiles []string
	cmd := &cobra.Command{
		Use:   "calibrate [PROFILES...] [--nccl FILE...] --out calibration.yaml",
		Short: "Fit speed ratios, GPU power and fabric bandwidths to measurements",
		Long: `Fit the hardware models to job profiles (schedsim probe --run): the runtime
model's speed ratio between GPU models per job class (profiles of the same
workload on different models, least squares on log runtime, Huber-robust
unless --ols) and each GPU model's idle and busy power (mean power against
utilization). It prints the goodness of fit and writes calibration.yaml,
which schedsim run --calibration uses in place of the datasheet defaults.

PROFILES are profile files (.yaml, .json) or directories of them.

--nccl reads nccl-tests all_reduce_perf outputs (one node and N nodes)
and fits the communication model's bus bandwidths per GPU inside a node
and between nodes, and the latency, t = alpha + size * 2(p-1)/p / B
(docs/hardware.md, "Calibration from nccl-tests"). Files of one-node
runs give the intra-node figures, multi-node runs the inter-node ones.`,
		Example: `  schedsim calibrate profiles/ --out calibration.yaml
  schedsim calibrate --nccl ar-1node.txt --nccl ar-4nodes.txt --out calibration.yaml
  schedsim run --scenario examples/scenario.yaml --calibration calibration.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && len(ncclFiles) == 0 {
				return errors.New("requires profiles or --nccl files")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var comm *calibrate.CommFit
			if len(ncclFiles) > 0 {
				var runs []*calibrate.NCCLRun
				for _, f := range ncclFiles {
					data, err := readBounded(f, 64<<20)
					if err != nil {
						return badInput(err)
					}
					r, err := calibrate.ParseNCCL(data, f)
					if err != nil {
						return badInput(err)
					}
					runs = append(runs, r)
				}
				var err error
				if comm, err = calibrate.FitNCCL(runs); err != nil {
					return badInput(err)
				}
			}
			if len(args) == 0 {
				c := &calibrate.Calibration{Version: calibrate.Version, Runtime: calibrate.Runtime{Ratios: []calibrate.Ratio{}}, Comm: comm}
				return writeCalibration(cmd, c, out, "# schedsim calibrate --nccl: "+strings.Join(ncclFiles, " ")+". Use with schedsim run --calibration.\n")
			}
			files, err := profileFiles(args)
			if err != nil {
				return badInput(err)
			}
			var ps []nvml.Profile
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return badInput(err)
				}
				p, err := nvml.ParseProfile(data, f)
				if err != nil {
					return badInput(err)
				}
				ps = append(ps, p)
			}
			c, err := calibrate.FitProfiles(ps, calibrate.Options{Robust: !ols})
			if err != nil {
				return badInput(err)
			}
			c.Comm = comm
			head := fmt.Sprintf("# schedsim calibrate: %d profiles (%s fit). Use with schedsim run --calibration;\n"+
				"# the runtime section can also be pasted into a cluster spec.\n", len(ps), map[bool]string{true: "Huber-robust", false: "least-squares"}[!ols])
			return writeCalibration(cmd, c, out, head)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the calibration here (YAML)")
	cmd.Flags().StringArrayVar(&ncclFiles, "nccl", nil, "an nccl-tests all_reduce_perf output (repeat for one node and N nodes)")
	cmd.Flags().BoolVar(&ols, "ols", false, "plain least squares instead of the Huber-robust fit")
	return cmd
}

// writeCalibration prints c and writes it to out (when set) after head.
func writeCalibration(cmd *cobra.Command, c *calibrate.Calibration, out, head string) error {
	w := cmd.OutOrStdout()
	printCalibration(w, c)
	if out == "" {
		return nil
	}
	data, err := c.YAML()
	if err != nil {
		return err
	}
	if err := traces.WriteFileAtomic(out, func(f io.Writer) error {
		_, err := io.WriteString(f, head+string(data))
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s\n", out)
	return nil
}

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, limit>>20)
	}
	return data, nil
}

// profileFiles expands directories into their .yaml, .yml and .json files,
// sorted.
func profileFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		var in []string
		for _, e := range ents {
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".yaml", ".yml", ".json":
				if !e.IsDir() {
					in = append(in, filepath.Join(a, e.Name()))
				}
			}
		}
		if len(in) == 0 {
			return nil, fmt.Errorf("%s: no .yaml, .yml or .json profiles", a)
		}
		sort.Strings(in)
		files = append(files, in...)
	}
	if len(files) == 0 {
		return nil, errors.New("no profiles")
	}
	return files, nil
}

// printCalibration prints the fit as tables.
func printCalibration(w io.Writer, c *calibrate.Calibration) {
	if len(c.Fit.Runtime) > 0 {
		fmt.Fprintln(w, "speed ratios (how many times faster on TO than on FROM)")
		fmt.Fprintf(w, "%-10s %-16s %-16s %8s %8s\n", "CLASS", "FROM", "TO", "RATIO", "REL.SE")
		for _, r := range c.Runtime.Ratios {
			se := "-"
			for _, f := range c.Fit.Runtime {
				if v, ok := f.RatioRelSE[r.From+">"+r.To]; ok && f.Class == r.Class {
					se = fmt.Sprintf("%.1f%%", 100*v)
				}
			}
			fmt.Fprintf(w, "%-10s %-16s %-16s %8.3f %8s\n", r.Class, r.From, r.To, r.Ratio, se)
		}
		fmt.Fprintln(w, "\nruntime fit per class (errors of log runtime)")
		fmt.Fprintf(w, "%-10s %4s %6s %8s %9s %7s\n", "CLASS", "N", "PARAMS", "RMS", "MAX.ERR", "R2")
		for _, f := range c.Fit.Runtime {
			fmt.Fprintf(w, "%-10s %4d %6d %7.1f%% %8.1f%% %7.4f\n", f.Class, f.N, f.Params, 100*f.RMSLog, 100*f.MaxRelErr, f.R2)
		}
		fmt.Fprintln(w)
	}
	if len(c.GPUPower) > 0 {
		fmt.Fprintln(w, "GPU power per GPU (W)")
		fmt.Fprintf(w, "%-16s %7s %7s %9s %4s %7s %7s\n", "MODEL", "IDLE", "BUSY", "FULL.UTIL", "N", "R2", "RMS.W")
		for i, p := range c.GPUPower {
			f := c.Fit.Power[i]
			full := "-"
			if p.FullUtilW != 0 {
				full = fmt.Sprintf("%.1f", p.FullUtilW)
			}
			fmt.Fprintf(w, "%-16s %7.1f %7.1f %9s %4d %7.4f %7.1f\n", p.Model, p.IdleW, p.BusyW, full, f.N, f.R2, f.RMSW)
		}
		fmt.Fprintln(w)
	}
	if m := c.Comm; m != nil {
		fmt.Fprintln(w, "all-reduce bus bandwidth per GPU (nccl-tests, t = alpha + S*2(p-1)/p / B)")
		fmt.Fprintf(w, "%-40s %5s %5s %10s %10s %8s\n", "FILE", "RANKS", "NODES", "B.GB/S", "ALPHA.US", "MAX.ERR")
		for _, r := range m.Runs {
			fmt.Fprintf(w, "%-40s %5d %5d %10.2f %10.2f %7.2f%%\n", r.Path, r.Ranks, r.Nodes, r.BusGBs, r.LatencyUS, 100*r.MaxRelErr)
		}
		fmt.Fprintf(w, "intra-node %.2f GB/s (%.2f us), inter-node %.2f GB/s, latency %.2f us\n\n", m.IntraGBs, m.IntraLatencyUS, m.InterGBs, m.LatencyUS)
	}
	for _, n := range c.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
}

// reportCalibration says on stderr what the run's calibration
// (--calibration, cluster.calibration) applied and what it could not.
func reportCalibration(cmd *cobra.Command, run *scenario.Run) {
	c := run.Calibration
	if c == nil {
		return
	}
	e := cmd.ErrOrStderr()
	comm := ""
	if m := c.Comm; m != nil {
		comm = fmt.Sprintf(", bus bandwidth %.2f GB/s intra-node and %.2f GB/s inter-node", m.IntraGBs, m.InterGBs)
	}
	unused := 0
	for _, n := range run.CalibrationNotes {
		if strings.HasPrefix(n, "gpu_power:") {
			unused++
		}
	}
	fmt.Fprintf(e, "calibration %s: %d speed ratios, power of %d GPU models%s\n", run.CalibrationFile, len(c.Runtime.Ratios), len(c.GPUPower)-unused, comm)
	for _, n := range run.CalibrationNotes {
		fmt.Fprintln(e, "calibration: "+n)
	}
}
