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
	cmd := &cobra.Command{
		Use:   "calibrate PROFILES... --out calibration.yaml",
		Short: "Fit speed ratios and GPU power to job profiles measured on two or more GPU models",
		Long: `Fit the hardware models to job profiles (schedsim probe --run): the runtime
model's speed ratio between GPU models per job class (profiles of the same
workload on different models, least squares on log runtime, Huber-robust
unless --ols) and each GPU model's idle and busy power (mean power against
utilization). It prints the goodness of fit and writes calibration.yaml,
which schedsim run --calibration uses in place of the datasheet defaults.

PROFILES are profile files (.yaml, .json) or directories of them.`,
		Example: `  schedsim calibrate profiles/ --out calibration.yaml
  schedsim run --scenario examples/scenario.yaml --calibration calibration.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			w := cmd.OutOrStdout()
			printCalibration(w, c)
			if out == "" {
				return nil
			}
			data, err := c.YAML()
			if err != nil {
				return err
			}
			head := fmt.Sprintf("# schedsim calibrate: %d profiles (%s fit). Use with schedsim run --calibration;\n"+
				"# the runtime section can also be pasted into a cluster spec.\n", len(ps), map[bool]string{true: "Huber-robust", false: "least-squares"}[!ols])
			if err := traces.WriteFileAtomic(out, func(f io.Writer) error {
				_, err := io.WriteString(f, head+string(data))
				return err
			}); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the calibration here (YAML)")
	cmd.Flags().BoolVar(&ols, "ols", false, "plain least squares instead of the Huber-robust fit")
	return cmd
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
	fmt.Fprintf(e, "calibration %s: %d speed ratios, power of %d GPU models\n", run.CalibrationFile, len(c.Runtime.Ratios), len(c.GPUPower)-len(run.CalibrationNotes))
	for _, n := range run.CalibrationNotes {
		fmt.Fprintln(e, "calibration: "+n)
	}
}
