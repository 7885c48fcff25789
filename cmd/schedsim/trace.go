package main

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/schedsim/schedsim/traces"
	"github.com/schedsim/schedsim/workload"
)

// traceReadFlags are the flags that say how to read a trace; run and every
// trace command share them.
type traceReadFlags struct {
	format       string
	delimiter    string
	fields       string
	procsPerNode int
	procsPerGPU  int
	lenient      bool
	mapSpec      string
	mapPreset    string
	timeZone     string
	limits       limitFlags
}

func (f *traceReadFlags) register(fl *pflag.FlagSet, withLenient bool) {
	fl.StringVar(&f.format, "format", "", "trace format: "+strings.Join(traces.ReadFormats(), ", ")+" (default: detected from content)")
	fl.StringVar(&f.delimiter, "delimiter", "", `sacct field delimiter (default: detected, "|" or "☃")`)
	fl.StringVar(&f.fields, "fields", "", "comma-separated column names of headerless sacct output (sacct -n)")
	fl.IntVar(&f.procsPerNode, "procs-per-node", 0, "SWF: map processors to whole nodes, this many per node")
	fl.IntVar(&f.procsPerGPU, "procs-per-gpu", 0, "SWF: map processors to GPUs, ceil(procs/N) GPUs per job")
	if withLenient {
		fl.BoolVar(&f.lenient, "skip-bad-rows", false, "skip and count bad trace rows instead of failing (alias --lenient)")
		fl.BoolVar(&f.lenient, "lenient", false, "same as --skip-bad-rows")
	}
	fl.StringVar(&f.mapSpec, "map", "", "CSV column map: target=column[:unit],... (targets: "+strings.Join(traces.CSVTargets(), ", ")+")")
	fl.StringVar(&f.mapPreset, "map-preset", "", "CSV column map preset: "+strings.Join(traces.CSVPresets(), ", ")+" (--map adds to it)")
	fl.StringVar(&f.timeZone, "time-zone", "", "IANA zone the trace's wall-clock times were written in (sacct, CSV); default UTC")
	f.limits.register(fl)
}

// options turns the flags into reader options.
func (f *traceReadFlags) options() (traces.Options, error) {
	o := traces.Options{Format: f.format, Lenient: f.lenient, Limits: f.limits.l}
	if f.format != "" && !slices.Contains(traces.ReadFormats(), f.format) {
		return o, fmt.Errorf("--format %q: want one of %s (or leave it out to detect the format)", f.format, strings.Join(traces.ReadFormats(), ", "))
	}
	if _, err := time.LoadLocation(f.timeZone); err != nil {
		return o, fmt.Errorf("--time-zone %q: unknown time zone (want an IANA name such as Europe/Amsterdam or UTC)", f.timeZone)
	}
	o.Sacct.Delimiter = f.delimiter
	o.Sacct.Fields = splitList(f.fields)
	o.Sacct.TimeZone = f.timeZone
	o.SWF.ProcsPerNode = f.procsPerNode
	o.SWF.ProcsPerGPU = f.procsPerGPU
	m, err := csvMap(f.mapPreset, f.mapSpec)
	if err != nil {
		return o, err
	}
	m.TimeZone = f.timeZone
	o.CSV = m
	if len(m.Fields) > 0 && o.Format == "" && f.mapPreset != "" && f.mapSpec == "" {
		o.Format = f.mapPreset
	}
	return o, nil
}

// csvMap builds a column map from a preset name and a --map spec.
func csvMap(preset, spec string) (traces.CSVMap, error) {
	var base traces.CSVMap
	if preset != "" {
		p, ok := traces.CSVPreset(preset)
		if !ok {
			return base, fmt.Errorf("--map-preset %q: want one of %s", preset, strings.Join(traces.CSVPresets(), ", "))
		}
		base = p
	}
	if spec == "" {
		return base, nil
	}
	m, err := traces.ParseCSVMap(spec, base)
	if err != nil {
		return base, fmt.Errorf("--map: %w", err)
	}
	return m, nil
}

// stream opens the trace at path for reading one job at a time.
func (f *traceReadFlags) stream(path string) (*traces.Stream, error) {
	o, err := f.options()
	if err != nil {
		return nil, badInput(err)
	}
	s, err := traces.OpenStream(path, o)
	if err != nil {
		return nil, badInput(err)
	}
	return s, nil
}

func (f *traceReadFlags) read(path string) (*traces.Result, error) {
	o, err := f.options()
	if err != nil {
		return nil, badInput(err)
	}
	res, err := traces.Open(path, o)
	if err != nil {
		return nil, badInput(err)
	}
	return res, nil
}

func newTraceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Inspect, convert, transform, fit and synthesize workload traces",
		Example: `  schedsim trace inspect examples/jobs.sacct
  schedsim trace convert examples/jobs.sacct results/jobs.parquet
  schedsim trace fit examples/jobs.sacct --out results/model.yaml`,
		Long: `Work with workload traces: sacct -p/-P output, SWF, CSV exports (with a
column map or the eagle and helios presets), the Alibaba GPU pod list, the
Philly JSON job log, and the Arrow IPC and Parquet job tables schedsim
writes. Formats are detected from the content; --format overrides.`,
	}
	cmd.AddCommand(newTraceInspectCmd(), newTraceConvertCmd(), newTraceWindowCmd(), newTraceScaleCmd(),
		newTraceRemapCmd(), newTraceFilterCmd(), newTraceFitCmd(), newTraceSynthCmd())
	return cmd
}

// inspectReport is what inspect --json prints.
type inspectReport struct {
	File    string         `json:"file"`
	Format  string         `json:"format"`
	Source  string         `json:"source"`
	Skipped map[string]int `json:"skipped"`
	Bad     int            `json:"bad_rows"`
	// Sentinels counts CSV values that stood for "no value".
	Sentinels map[string]int `json:"sentinels"`
	workload.Summary
	Quantiles []float64 `json:"quantile_levels"`
	Notes     []string  `json:"notes"`
}

func newTraceInspectCmd() *cobra.Command {
	var rf traceReadFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Print a trace's figures: jobs, span, users, sizes, runtimes, arrivals, limits",
		Example: `  schedsim trace inspect examples/jobs.sacct
  schedsim trace inspect --json examples/jobs.sacct
  schedsim trace inspect ../shared/traces/sacct-parsable_habrok-rug.txt --fields jobinfo`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// One job at a time: the figures need no more memory for a
			// longer trace (workload.Summarizer).
			s, err := rf.stream(args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			sm := workload.NewSummarizer(s.Result().Trace.TimeZone)
			for {
				j, err := s.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return badInput(err)
				}
				sm.Add(&j, 0)
			}
			res := s.Result()
			rep := inspectReport{File: args[0], Format: res.Format, Source: res.Trace.Source, Skipped: res.SkippedBy,
				Bad: res.Bad, Sentinels: res.Sentinels, Summary: sm.Summary(), Quantiles: workload.Quantiles, Notes: res.Trace.Notes}
			if rep.Skipped == nil {
				rep.Skipped = map[string]int{}
			}
			if rep.Sentinels == nil {
				rep.Sentinels = map[string]int{}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return printInspect(out, &rep)
		},
	}
	rf.register(cmd.Flags(), true)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func printInspect(w io.Writer, r *inspectReport) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	p := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	s := &r.Summary
	p("file", "%s", r.File)
	p("format", "%s", r.Format)
	p("source", "%s", r.Source)
	p("jobs", "%d", s.Jobs)
	keys := sortedKeys(r.Skipped)
	for _, k := range keys {
		p("skipped", "%d %s", r.Skipped[k], k)
	}
	for _, k := range sortedKeys(r.Sentinels) {
		p("sentinel", "%d %s", r.Sentinels[k], k)
	}
	zone := s.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	p("first submit", "%s", time.Unix(s.First, 0).UTC().Format(time.RFC3339))
	p("last submit", "%s", time.Unix(s.Last, 0).UTC().Format(time.RFC3339))
	p("span", "%s (%.1f days)", time.Duration(s.SpanS)*time.Second, float64(s.SpanS)/86400)
	p("users", "%d", s.Users)
	p("partitions", "%d", s.Partitions)
	p("GPU jobs", "%d", s.GPUJobs)
	p("GPU-hours (runtime)", "%.1f", s.GPUHours)
	p("GPU-hours (limit)", "%.1f", s.GPUHoursLimit)
	fmt.Fprintf(tw, "quantile\t%s\n", joinF(workload.Quantiles, "%g"))
	if len(s.Approximate) > 0 {
		p("approximate", "%s (more distinct values than counted exactly: quantiles within 0.5%%)", strings.Join(s.Approximate, ", "))
	}
	fmt.Fprintf(tw, "GPUs\t%s\n", joinF(s.GPUs, "%g"))
	fmt.Fprintf(tw, "nodes\t%s\n", joinF(s.Nodes, "%g"))
	fmt.Fprintf(tw, "CPUs\t%s\n", joinF(s.CPUs, "%g"))
	fmt.Fprintf(tw, "runtime (s)\t%s\n", joinF(s.Runtime, "%g"))
	fmt.Fprintf(tw, "runtime/limit\t%s\n", joinF(s.Accuracy, "%.3f"))
	p("runtime/limit mean", "%.3f", s.AccuracyMean)
	p("jobs with a limit", "%d", s.WithLimit)
	p("hitting the limit", "%d (%.1f%%)", s.HitLimit, 100*s.FracHitLimit)
	hours := make([]string, 24)
	for i, n := range s.ArrivalsByHour {
		hours[i] = strconv.Itoa(n)
	}
	p("arrivals by hour ("+zone+")", "%s", strings.Join(hours, " "))
	days := make([]string, 7)
	for i, n := range s.ArrivalsByWeekday {
		days[i] = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}[i] + " " + strconv.Itoa(n)
	}
	p("arrivals by weekday", "%s", strings.Join(days, ", "))
	for _, k := range sortedKeys(s.States) {
		name := k
		if name == "" {
			name = "(none)"
		}
		p("state", "%s %d", name, s.States[k])
	}
	for _, n := range r.Notes {
		p("note", "%s", n)
	}
	return tw.Flush()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func joinF(v []float64, format string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(s, "  ")
}

// outFlags say how a transformed trace is written.
type outFlags struct {
	format   string
	sacctUTC bool
}

func (o *outFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&o.format, "out-format", "", "output format: "+strings.Join(traces.WriteFormats(), ", ")+" (default: from OUT's name)")
	fl.BoolVar(&o.sacctUTC, "sacct-utc", false, "sacct output: write times as UTC readings instead of in the trace's zone")
}

func (o *outFlags) write(cmd *cobra.Command, path string, res *traces.Result) error {
	wo := traces.WriteOptions{SacctUTC: o.sacctUTC}
	if err := makeParent("cannot write", path); err != nil {
		return badInput(err)
	}
	if res != nil {
		wo.SWF = res.SWF
	}
	if err := traces.WriteFile(path, o.format, res.Trace, wo); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pathError("cannot write", path, err)
		}
		return badInput(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d jobs)\n", path, len(res.Trace.Jobs))
	return nil
}

// convert streams the trace in to out (traces.Convert).
func (o *outFlags) convert(cmd *cobra.Command, rf *traceReadFlags, in, out string) error {
	format := o.format
	if format == "" {
		f, ok := traces.FormatForPath(out)
		if !ok {
			return badInput(fmt.Errorf("cannot tell the output format of %s from its name (want .swf, .sacct, .arrow or .parquet, optionally .gz; or --out-format)", out))
		}
		format = f
	}
	if !slices.Contains(traces.WriteFormats(), format) {
		return badInput(fmt.Errorf("--out-format %q: want one of %s", format, strings.Join(traces.WriteFormats(), ", ")))
	}
	s, err := rf.stream(in)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := makeParent("cannot write", out); err != nil {
		return badInput(err)
	}
	var n int64
	err = traces.WriteFileAtomic(out, func(w io.Writer) error {
		// Hide the file's Close: the Parquet writer closes a sink that has one.
		w = struct{ io.Writer }{w}
		var zw *gzip.Writer
		if strings.HasSuffix(strings.ToLower(out), ".gz") {
			zw = gzip.NewWriter(w)
			w = zw
		}
		var err error
		if n, err = traces.Convert(s, w, format, traces.WriteOptions{SacctUTC: o.sacctUTC}); err != nil {
			return err
		}
		if zw != nil {
			return zw.Close()
		}
		return nil
	})
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pathError("cannot write", out, err)
	}
	if err != nil {
		return badInput(err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d jobs)\n", out, n)
	return nil
}

func newTraceConvertCmd() *cobra.Command {
	var rf traceReadFlags
	var of outFlags
	cmd := &cobra.Command{
		Use:   "convert IN OUT",
		Short: "Convert a trace between formats (OUT: .sacct, .swf, .arrow, .parquet, optionally .gz)",
		Example: `  schedsim trace convert examples/jobs.sacct results/jobs.parquet
  schedsim trace convert examples/jobs.sacct results/jobs.swf.gz
  schedsim trace convert ../shared/traces/LLNL-Thunder-2007-1.1-cln.swf.gz results/thunder.sacct`,
		Long: `Convert a trace between formats. The jobs are streamed: a first pass plans
the output, a second writes it, so memory does not grow with the trace (an
input not in submit order is sorted through temporary files). The output is
in submit order, as every reader gives it.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return of.convert(cmd, &rf, args[0], args[1])
		},
	}
	rf.register(cmd.Flags(), true)
	of.register(cmd.Flags())
	return cmd
}

// parseWhen parses a time bound: Unix seconds, 2006-01-02, or
// 2006-01-02T15:04:05 (UTC).
func parseWhen(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02", time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Unix(), nil
		}
	}
	return 0, fmt.Errorf("%q: want Unix seconds, 2006-01-02 or 2006-01-02T15:04:05", s)
}

func newTraceWindowCmd() *cobra.Command {
	var rf traceReadFlags
	var of outFlags
	var from, to string
	cmd := &cobra.Command{
		Use:     "window IN OUT --from T [--to T]",
		Short:   "Keep the jobs submitted in [from, to)",
		Example: `  schedsim trace window examples/jobs.sacct results/day2.sacct --from 2026-06-02 --to 2026-06-03`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := parseWhen(from)
			if err != nil {
				return badInput(fmt.Errorf("--from %w", err))
			}
			t, err := parseWhen(to)
			if err != nil {
				return badInput(fmt.Errorf("--to %w", err))
			}
			res, err := rf.read(args[0])
			if err != nil {
				return err
			}
			workload.Window(res.Trace, f, t)
			return of.write(cmd, args[1], res)
		},
	}
	rf.register(cmd.Flags(), true)
	of.register(cmd.Flags())
	cmd.Flags().StringVar(&from, "from", "", "first submit kept (Unix seconds or 2006-01-02[T15:04:05], UTC)")
	cmd.Flags().StringVar(&to, "to", "", "submits from here on are dropped (default: none)")
	return cmd
}

func newTraceScaleCmd() *cobra.Command {
	var rf traceReadFlags
	var of outFlags
	var seed uint64
	cmd := &cobra.Command{
		Use:   "scale-load FACTOR IN OUT",
		Short: "Scale the arrival rate by FACTOR, keeping the span and the daily and weekly cycle",
		Example: `  schedsim trace scale-load 1.5 examples/jobs.sacct results/busier.sacct
  schedsim trace scale-load 0.8 examples/jobs.sacct results/quieter.parquet --seed 2`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			factor, err := strconv.ParseFloat(args[0], 64)
			if err != nil {
				return badInput(fmt.Errorf("trace scale-load: FACTOR %q: want a number in (0, 1000]", args[0]))
			}
			if !(factor > 0 && factor <= 1000) {
				return badInput(fmt.Errorf("trace scale-load: FACTOR %s: must be in (0, 1000] (0.5 halves the arrivals, 2 doubles them)", args[0]))
			}
			res, err := rf.read(args[1])
			if err != nil {
				return err
			}
			if err := workload.ScaleLoad(res.Trace, factor, seed); err != nil {
				return badInput(err)
			}
			return of.write(cmd, args[2], res)
		},
	}
	// A negative FACTOR ("-1") reaches pflag as a shorthand flag; say
	// what it is instead of "unknown shorthand flag: '1' in -1".
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if m := negativeArg.FindStringSubmatch(err.Error()); m != nil {
			return badInput(fmt.Errorf("trace scale-load: FACTOR %s: must be in (0, 1000] (0.5 halves the arrivals, 2 doubles them)", m[1]))
		}
		return c.Root().FlagErrorFunc()(c, err)
	})
	rf.register(cmd.Flags(), true)
	of.register(cmd.Flags())
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the draws that pick which jobs are copied or dropped")
	return cmd
}

// negativeArg matches pflag's error for a negative number given where an
// argument was meant ("unknown shorthand flag: '1' in -1.5").
var negativeArg = regexp.MustCompile(`^unknown shorthand flag: '[0-9.]' in (-[0-9.]+(?:[eE][-+]?[0-9]+)?)$`)

func newTraceRemapCmd() *cobra.Command {
	var rf traceReadFlags
	var of outFlags
	var speedup float64
	cmd := &cobra.Command{
		Use:     "remap-gpu FROM=TO[,FROM=TO] IN OUT --speedup X",
		Short:   "Move jobs to another GPU type, dividing their runtimes by --speedup",
		Example: `  schedsim trace remap-gpu 'h100=h200' examples/jobs.sacct results/on-h200.sacct --speedup 1.4`,
		Long: `Move the jobs of one GPU type onto another ("*" matches GPU jobs of any or
no type) and divide their runtimes by --speedup, the new GPU's speed
relative to the old one. To scale runtimes by the hardware catalog's speed
ratios instead, replay the trace with a scenario's trace.recorded_gpu
(docs/hardware.md, "Runtime model").`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := parseMap(args[0])
			if err != nil {
				return badInput(fmt.Errorf("remap %w", err))
			}
			res, err := rf.read(args[1])
			if err != nil {
				return err
			}
			if _, err := workload.RemapGPU(res.Trace, m, speedup); err != nil {
				return badInput(err)
			}
			return of.write(cmd, args[2], res)
		},
	}
	rf.register(cmd.Flags(), true)
	of.register(cmd.Flags())
	cmd.Flags().Float64Var(&speedup, "speedup", 1, "runtime divisor: the new GPU type's speed relative to the old")
	return cmd
}

func newTraceFilterCmd() *cobra.Command {
	var rf traceReadFlags
	var of outFlags
	var users, parts, states, from, to string
	cmd := &cobra.Command{
		Use:   "filter IN OUT",
		Short: "Keep the jobs of some users, partitions, states or times",
		Example: `  schedsim trace filter examples/jobs.sacct results/long.sacct --partition gpu-long
  schedsim trace filter examples/jobs.sacct results/done.sacct --state COMPLETED,TIMEOUT --user aydin,elif`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			flt, err := buildFilter(users, parts, states, from, to)
			if err != nil {
				return badInput(err)
			}
			res, err := rf.read(args[0])
			if err != nil {
				return err
			}
			flt.Apply(res.Trace)
			return of.write(cmd, args[1], res)
		},
	}
	rf.register(cmd.Flags(), true)
	of.register(cmd.Flags())
	fl := cmd.Flags()
	fl.StringVar(&users, "user", "", "comma-separated users to keep")
	fl.StringVar(&parts, "partition", "", "comma-separated partitions to keep")
	fl.StringVar(&states, "state", "", "comma-separated trace states to keep (COMPLETED, TIMEOUT, ...)")
	fl.StringVar(&from, "from", "", "first submit kept (Unix seconds or 2006-01-02[T15:04:05], UTC)")
	fl.StringVar(&to, "to", "", "submits from here on are dropped")
	return cmd
}

func buildFilter(users, parts, states, from, to string) (workload.Filter, error) {
	f := workload.Filter{Users: splitList(users), Partitions: splitList(parts), States: splitList(states)}
	var err error
	if f.From, err = parseWhen(from); err != nil {
		return f, fmt.Errorf("--from %w", err)
	}
	if f.To, err = parseWhen(to); err != nil {
		return f, fmt.Errorf("--to %w", err)
	}
	return f, nil
}

func newTraceFitCmd() *cobra.Command {
	var rf traceReadFlags
	var out string
	cmd := &cobra.Command{
		Use:     "fit FILE --out model.yaml",
		Short:   "Fit a workload model: hour-of-week arrival rates, sizes, runtime and limit distributions, user and partition mix",
		Example: `  schedsim trace fit examples/jobs.sacct --out results/model.yaml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := rf.read(args[0])
			if err != nil {
				return err
			}
			m, err := workload.FitModel(res.Trace)
			if err != nil {
				return badInput(err)
			}
			if err := makeParent("--out", out); err != nil {
				return badInput(err)
			}
			if err := traces.WriteFileAtomic(out, func(w io.Writer) error { return workload.WriteModel(w, m) }); err != nil {
				return pathError("--out", out, err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "fitted %d jobs; wrote %s\n", m.Jobs, out)
			tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "class\tjobs\truntime fit\tKS\tlimit fit\tKS")
			for _, c := range m.Classes {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%.3f\t%s\t%.3f\n", c.Name, c.Jobs, fitName(c.Runtime), c.Runtime.KS, fitName(c.Limit), c.Limit.KS)
			}
			return tw.Flush()
		},
	}
	rf.register(cmd.Flags(), true)
	cmd.Flags().StringVar(&out, "out", "model.yaml", "model file to write")
	return cmd
}

func fitName(f workload.Fit) string {
	if f.Family == "" {
		return "-"
	}
	s := fmt.Sprintf("%s(%.4g, %.4g)", f.Family, f.P1, f.P2)
	if f.Pooled {
		s += " pooled"
	}
	return s
}

func newTraceSynthCmd() *cobra.Command {
	var jobs int
	var seed uint64
	var out string
	var of outFlags
	cmd := &cobra.Command{
		Use:   "synth MODEL --jobs N --seed S --out FILE",
		Short: "Generate a synthetic trace from a fitted model (the same seed gives the same trace)",
		Example: `  schedsim trace fit examples/jobs.sacct --out results/model.yaml
  schedsim trace synth results/model.yaml --jobs 10000 --seed 1 --out results/next-month.sacct`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return badInput(pathError("MODEL", args[0], err))
			}
			defer f.Close()
			m, err := workload.ReadModel(f, args[0])
			if err != nil {
				return badInput(err)
			}
			t, err := workload.Synthesize(m, jobs, seed)
			if err != nil {
				return badInput(err)
			}
			return of.write(cmd, out, &traces.Result{Trace: t})
		},
	}
	cmd.Flags().IntVar(&jobs, "jobs", 10000, "number of jobs")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed")
	cmd.Flags().StringVar(&out, "out", "synthetic.swf", "output file (.sacct, .swf, .arrow, .parquet, optionally .gz)")
	of.register(cmd.Flags())
	return cmd
}
