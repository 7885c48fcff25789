package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	yaml "go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels/nvml"
	"github.com/schedsim/schedsim/traces"
)

// Hooks the tests replace: the NVML source, the clock, the host and the
// measured command.
var (
	openNVML   = nvml.Open
	probeClock = nvml.Real
	probeHost  = readHost
	newProcess = func(args []string, stdout, stderr io.Writer) nvml.Process {
		return &execProcess{args: args, stdout: stdout, stderr: stderr}
	}
)

type probeFlags struct {
	raw, asJSON       bool
	name              string
	sample            time.Duration
	interval          time.Duration
	out               string
	run               bool
	workload, class   string
	gpuModel, gpuList string
	series            string
}

func newProbeCmd() *cobra.Command {
	var f probeFlags
	cmd := &cobra.Command{
		Use:   "probe [--raw] | --sample 30s --out FILE | --run -- CMD ARGS...",
		Short: "Read the local NVIDIA GPUs through NVML: node model, time series, job profile",
		Long: `Read the local NVIDIA GPUs through NVML (read-only: nothing on the GPUs is
changed) and print a node model in the cluster spec's YAML: gpu_models and
node_models entries (and a node group of this host) that a cluster.yaml can
use directly. --raw prints the readings themselves.

--sample samples utilization, memory used, power and clocks of every GPU
every --interval for the given duration and writes a time series (--out,
.parquet or .csv).

--run runs a command while sampling and writes its job profile (wall time,
mean and peak power per GPU, energy, mean utilization, peak memory; --out,
.yaml or .json, default stdout), the input of schedsim calibrate. Name the
workload the same on every GPU model it is measured on.

Without the NVIDIA driver (libnvidia-ml.so.1) probe says so and exits 2.`,
		Example: `  schedsim probe > node.yaml
  schedsim probe --raw
  schedsim probe --sample 30s --interval 1s --out gpus.parquet
  schedsim probe --run --workload llama-8b-sft --out llama-h100.yaml -- torchrun --nproc-per-node=8 train.py`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.run && len(args) == 0 {
				return badInput(errors.New("--run needs a command after --"))
			}
			if !f.run && len(args) > 0 {
				return badInput(fmt.Errorf("unexpected arguments %q (a command to measure goes after --run --)", args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runProbe(cmd, &f, args) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.raw, "raw", false, "print the raw NVML readings instead of a node model")
	fl.BoolVar(&f.asJSON, "json", false, "with --raw: JSON instead of YAML")
	fl.StringVar(&f.name, "name", "", "node model name (default: the host name)")
	fl.DurationVar(&f.sample, "sample", 0, "sample the GPUs for this long and write a time series (--out)")
	fl.DurationVar(&f.interval, "interval", time.Second, "sampling interval for --sample and --run")
	fl.StringVar(&f.out, "out", "", "--sample: series file (.parquet or .csv); --run: profile file (.yaml or .json; default stdout)")
	fl.BoolVar(&f.run, "run", false, "run the command after -- while sampling and write its job profile")
	fl.StringVar(&f.workload, "workload", "", "--run: workload name matched across GPU models by calibrate (default: the command's base name)")
	fl.StringVar(&f.class, "class", "training", "--run: runtime-model job class (training, inference, hpc or your spec's)")
	fl.StringVar(&f.gpuModel, "gpu-model", "", "--run: GPU model name for the profile (default: the catalog match of GPU 0)")
	fl.StringVar(&f.gpuList, "gpus", "", "--run: indices of the GPUs the job uses, comma separated (default: all)")
	fl.StringVar(&f.series, "series", "", "--run: also write the time series here (.parquet or .csv)")
	return cmd
}

// notAvailable turns Open's errors into the messages the issue fixes.
func notAvailable(err error) error {
	switch {
	case errors.Is(err, nvml.ErrLibraryNotFound):
		return badInput(errors.New("NVML not available: libnvidia-ml.so.1 not found; run this on a GPU node"))
	case errors.Is(err, nvml.ErrNoCgo):
		return badInput(errors.New("NVML not available: this schedsim was built without NVML support (CGO_ENABLED=0); rebuild with cgo on Linux"))
	}
	return badInput(fmt.Errorf("NVML not available: %w", err))
}

func runProbe(cmd *cobra.Command, f *probeFlags, args []string) error {
	modes := 0
	for _, on := range []bool{f.raw, f.sample > 0, f.run} {
		if on {
			modes++
		}
	}
	switch {
	case modes > 1:
		return badInput(errors.New("--raw, --sample and --run exclude each other"))
	case f.interval <= 0:
		return badInput(fmt.Errorf("--interval must be > 0, got %v", f.interval))
	case f.sample > 0 && f.out == "":
		return badInput(errors.New("--sample needs --out FILE (.parquet or .csv)"))
	case f.sample < 0:
		return badInput(fmt.Errorf("--sample must be > 0, got %v", f.sample))
	}
	if f.sample > 0 {
		if err := seriesExt(f.out, "--out"); err != nil {
			return err
		}
	}
	if f.series != "" {
		if err := seriesExt(f.series, "--series"); err != nil {
			return err
		}
	}
	if f.run && f.out != "" && !slicesHas([]string{".yaml", ".yml", ".json"}, strings.ToLower(filepath.Ext(f.out))) {
		return badInput(fmt.Errorf("--out %s: want a .yaml, .yml or .json profile file", f.out))
	}
	src, err := openNVML()
	if err != nil {
		return notAvailable(err)
	}
	defer src.Close()
	out := cmd.OutOrStdout()
	switch {
	case f.sample > 0:
		s := &nvml.Sampler{Source: src, Clock: probeClock, Interval: f.interval}
		ser, err := s.Run(f.sample, nil)
		if err != nil {
			return err
		}
		if err := writeSeries(f.out, ser); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%d GPUs, %d samples each)\n", f.out, ser.GPUs, len(ser.Points)/max(ser.GPUs, 1))
		return nil
	case f.run:
		return probeRun(cmd, f, src, args)
	}
	r, err := nvml.Probe(src)
	if err != nil {
		return err
	}
	if f.raw {
		if f.asJSON {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(r)
		}
		data, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = out.Write(data)
		return err
	}
	h := probeHost()
	name := f.name
	if name == "" {
		name = h.Name
	}
	data, err := nvml.NodeSpec(r, h, name)
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return err
}

func slicesHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func seriesExt(path, flag string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".csv":
		return nil
	}
	return badInput(fmt.Errorf("%s %s: want a .parquet or .csv file", flag, path))
}

func writeSeries(path string, ser *nvml.Series) error {
	return traces.WriteFileAtomic(path, func(w io.Writer) error {
		if strings.EqualFold(filepath.Ext(path), ".csv") {
			return ser.WriteCSV(w)
		}
		// Hide the file's Close from the Parquet writer: WriteFileAtomic closes it.
		return ser.WriteParquet(struct{ io.Writer }{w})
	})
}

// probeRun measures the command in args and writes its profile.
func probeRun(cmd *cobra.Command, f *probeFlags, src nvml.Source, args []string) error {
	n, err := src.DeviceCount()
	if err != nil {
		return err
	}
	var gpus []int
	if f.gpuList != "" {
		for _, s := range splitList(f.gpuList) {
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= n {
				return badInput(fmt.Errorf("--gpus: %q is not a GPU index (0 to %d)", s, n-1))
			}
			gpus = append(gpus, i)
		}
	}
	first := 0
	if len(gpus) > 0 {
		first = gpus[0]
	}
	g, err := src.Device(first)
	if err != nil {
		return err
	}
	model := f.gpuModel
	if model == "" {
		var ok bool
		if model, ok = nvml.MatchGPU(g.Name, g.MemoryMiB); !ok {
			return badInput(fmt.Errorf("%q is not in the GPU catalog: name its model with --gpu-model (a gpu_models name of your cluster spec)", g.Name))
		}
	}
	workload := f.workload
	if workload == "" {
		workload = filepath.Base(args[0])
	}
	p := newProcess(args, cmd.OutOrStdout(), cmd.ErrOrStderr())
	s := &nvml.Sampler{Source: src, Clock: probeClock, Interval: f.interval}
	ser, idle, wall, code, err := s.Measure(p)
	if err != nil {
		return fmt.Errorf("--run %s: %w", args[0], err)
	}
	prof := nvml.ProfileOf(ser, idle, gpus, wall)
	prof.Workload, prof.Class, prof.GPUModel, prof.GPUName = workload, f.class, model, g.Name
	prof.Command, prof.ExitCode = args, code
	if f.series != "" {
		if err := writeSeries(f.series, ser); err != nil {
			return err
		}
	}
	var data []byte
	if strings.EqualFold(filepath.Ext(f.out), ".json") {
		if data, err = json.MarshalIndent(&prof, "", "  "); err == nil {
			data = append(data, '\n')
		}
	} else {
		data, err = prof.YAML()
	}
	if err != nil {
		return err
	}
	if f.out == "" {
		_, err = cmd.OutOrStdout().Write(data)
	} else {
		err = traces.WriteFileAtomic(f.out, func(w io.Writer) error { _, err := w.Write(data); return err })
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: %.1f s, %.0f W mean per GPU, %.0f J, exit %d\n", workload, prof.WallS, prof.MeanPowerW, prof.EnergyJ, code)
	if code != 0 {
		return failed(fmt.Errorf("the measured command exited with status %d (profile written)", code))
	}
	return nil
}

// execProcess runs a command as nvml.Process.
type execProcess struct {
	args           []string
	stdout, stderr io.Writer
	cmd            *exec.Cmd
	done           chan struct{}
	err            error
}

func (p *execProcess) Start() error {
	p.cmd = exec.Command(p.args[0], p.args[1:]...)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = os.Stdin, p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		return err
	}
	p.done = make(chan struct{})
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return nil
}

func (p *execProcess) Done() <-chan struct{} { return p.done }

func (p *execProcess) Wait() (int, error) {
	<-p.done
	var ee *exec.ExitError
	if p.err == nil || errors.As(p.err, &ee) {
		return p.cmd.ProcessState.ExitCode(), nil
	}
	return -1, p.err
}

// readHost reads the host name, logical CPUs and MemTotal.
func readHost() nvml.Host {
	h := nvml.Host{CPUs: runtime.NumCPU()}
	h.Name, _ = os.Hostname()
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				h.MemoryMiB = kb / 1024
			}
		}
	}
	return h
}
