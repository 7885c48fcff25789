// Command schedsim replays job traces on modeled GPU clusters under the
// scheduling policies being compared, and reports what would have happened.
// It holds flags and wiring only; the logic lives in the library packages.
//
// default.pgo is a CPU profile that go build uses for profile-guided
// optimization (-pgo=auto): it inlines the hot calls of the small-end run
// (EASY on the HPC2N 20,000-job log, BENCHMARKS.md) and changes no
// output. It was made with
//
//	go test -c -o /tmp/cmd.test ./cmd/schedsim && cd cmd/schedsim
//	GOMAXPROCS=1 /tmp/cmd.test -test.run '^$' -test.bench 'BenchmarkSmallRun/plain' \
//	    -test.benchtime 120x -test.cpuprofile default.pgo
//
// and may be made again so after the code changes; build with -pgo=off
// to leave it out.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses (README, "Exit codes").
const (
	// exitGate: the command ran and a check it was asked to make failed:
	// a compare gate broke, hw mig-layout cannot place the profiles.
	exitGate = 1
	// exitBadInput: usage or input error (a command, argument, flag, file
	// or value), the default for any error not classified otherwise.
	exitBadInput = 2
	// exitFailed: the command could not finish for a reason its input
	// does not explain: an internal error (a bug), an I/O error (disk
	// full), a sweep whose scenarios or tasks failed or are missing, a
	// measured command that failed.
	exitFailed = 3
)

// inputError marks an error caused by the user's input.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

func badInput(err error) error {
	if err == nil {
		return nil
	}
	return inputError{err}
}

// gateError marks a broken gate or threshold (exit 1).
type gateError struct{ err error }

func (e gateError) Error() string { return e.err.Error() }
func (e gateError) Unwrap() error { return e.err }

func gateBroken(err error) error { return gateError{err} }

// failure marks an error that is not the input's (exit 3).
type failure struct{ err error }

func (e failure) Error() string { return e.err.Error() }
func (e failure) Unwrap() error { return e.err }

func failed(err error) error {
	if err == nil {
		return nil
	}
	return failure{err}
}

// exitStatus is the exit status of a command that returned err, by the
// first of: a broken gate (1); an I/O error of the machine (no space,
// quota, EIO), wherever it happened (3); an error marked as the input's
// (2); one marked as a failure (3); any other error (2: what a command
// reports unmarked is its input's fault: a file it cannot read, a value).
func exitStatus(err error) int {
	var g gateError
	var in inputError
	var f failure
	switch {
	case err == nil:
		return 0
	case errors.As(err, &g):
		return exitGate
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EIO):
		return exitFailed
	case errors.As(err, &in):
		return exitBadInput
	case errors.As(err, &f):
		return exitFailed
	}
	return exitBadInput
}

func main() {
	governMemory()
	root := newRootCmd()
	err := execute(root)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "schedsim: "+oneLine(err.Error()))
	os.Exit(exitStatus(err))
}

// oneLine joins a message's lines with "; ": every error is one line.
func oneLine(msg string) string {
	msg = strings.TrimSpace(msg)
	if !strings.Contains(msg, "\n") {
		return msg
	}
	var parts []string
	for l := range strings.SplitSeq(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// execute runs the command, turning a panic that escaped a command's own
// recovery into an error, so a bug prints one line (exit 1) rather than a
// stack trace. Runs recover earlier, where they can name the seed.
func execute(root *cobra.Command) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = failed(fmt.Errorf("internal error: %v (please report it with the command line and inputs)", p))
		}
	}()
	return root.Execute()
}

// checkUsage makes cobra's usage errors exit 2 with one line naming the
// command, on the finished tree. A command group (subcommands, nothing to
// run of its own) alone prints its help (exit 0), and refuses an unknown
// subcommand with the valid ones, where cobra printed its help and exited
// 0 (or, at the root, printed "Did you mean" on three lines). Any other
// argument validator's error gets the command and its usage line.
func checkUsage(c *cobra.Command) {
	for _, sub := range c.Commands() {
		checkUsage(sub)
	}
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.NoArgs // refused below, as a group refuses
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	if c.Args == nil {
		return
	}
	validate := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		err := validate(cmd, args)
		if err == nil {
			return nil
		}
		if _, ok := err.(inputError); ok {
			return err
		}
		if strings.HasPrefix(err.Error(), "unknown command") && len(args) > 0 {
			if cmd.HasSubCommands() {
				return badInput(unknownCommand(cmd, args[0]))
			}
			err = fmt.Errorf("unexpected argument %q", args[0]) // cobra.NoArgs
		}
		return badInput(fmt.Errorf("%s: %w (usage: %s)", cmd.CommandPath(), err, cmd.UseLine()))
	}
}

// unknownCommand is the error for an unknown subcommand name of group,
// with the names it has or the ones name is close to.
func unknownCommand(group *cobra.Command, name string) error {
	if group.SuggestionsMinimumDistance <= 0 {
		group.SuggestionsMinimumDistance = 2 // cobra's default, set only where it prints them
	}
	if s := group.SuggestionsFor(name); len(s) > 0 {
		return fmt.Errorf("unknown command %q for %q (did you mean %s?)", name, group.CommandPath(), strings.Join(s, " or "))
	}
	return fmt.Errorf("unknown command %q for %q (want one of %s)", name, group.CommandPath(), subcommandNames(group))
}

func subcommandNames(c *cobra.Command) string {
	var names []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return strings.Join(names, ", ")
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "schedsim",
		Short: "Deterministic simulator of Slurm-managed GPU clusters",
		Long: `schedsim replays real job traces (Slurm sacct output, SWF logs) against a
modeled cluster under a scheduling policy, and reports what would have
happened: queue waits, utilization, slowdown, per-partition figures.

The same inputs and seed always give byte-identical outputs.`,
		Example: `  schedsim run
  schedsim run --scenario examples/scenario.yaml --out results/slurm
  schedsim compare examples/baseline.yaml examples/candidate.yaml
  schedsim run --help`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return badInput(fmt.Errorf("%s: %w (see '%s --help')", c.CommandPath(), cleanFlagError(err), c.CommandPath()))
	})
	root.AddCommand(newRunCmd(), newVersionCmd())
	root.AddCommand(newTraceCmd())
	root.AddCommand(newHWCmd(), newClusterCmd())
	root.AddCommand(newCompareCmd(), newPlotCmd())
	root.AddCommand(newValidateCmd(), newConformanceCmd())
	root.AddCommand(newSweepCmd())
	root.AddCommand(newProbeCmd(), newCalibrateCmd())
	// cobra adds these when it runs; added now, checkUsage sees them too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	addBuiltinExamples(root)
	registerCompletions(root)
	checkHelpTopics(root)
	checkUsage(root)
	return root
}

// builtinExamples are the examples of the commands cobra adds (help,
// completion), by command path.
var builtinExamples = map[string]string{
	"schedsim help": `  schedsim help run
  schedsim help trace fit`,
	"schedsim completion": `  source <(schedsim completion bash)
  schedsim completion zsh > "${fpath[1]}/_schedsim"`,
	"schedsim completion bash":       `  source <(schedsim completion bash)`,
	"schedsim completion zsh":        `  schedsim completion zsh > "${fpath[1]}/_schedsim"`,
	"schedsim completion fish":       `  schedsim completion fish > ~/.config/fish/completions/schedsim.fish`,
	"schedsim completion powershell": `  schedsim completion powershell | Out-String | Invoke-Expression`,
}

func addBuiltinExamples(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if ex, ok := builtinExamples[c.CommandPath()]; ok && c.Example == "" {
			c.Example = ex
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// checkHelpTopics makes "schedsim help NAME" of an unknown NAME a usage
// error; cobra printed "Unknown help topic" and the usage, and exited 0.
func checkHelpTopics(root *cobra.Command) {
	for _, h := range root.Commands() {
		if h.Name() != "help" || h.Run == nil {
			continue
		}
		show := h.Run
		h.Run = nil
		h.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				found, rest, err := root.Find(args)
				if err != nil {
					return badInput(err)
				}
				if len(rest) > 0 {
					return badInput(unknownCommand(found, rest[0]))
				}
			}
			show(cmd, args)
			return nil
		}
	}
}
