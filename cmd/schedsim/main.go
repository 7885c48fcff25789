// Command schedsim replays job traces on modeled GPU clusters under the
// scheduling policies being compared, and reports what would have happened.
// It holds flags and wiring only; the logic lives in the library packages.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// exitBadInput is the exit code for bad input: a flag, a file, a value.
const exitBadInput = 2

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

func main() {
	governMemory()
	root := newRootCmd()
	err := execute(root)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "schedsim: "+err.Error())
	var ie inputError
	if errors.As(err, &ie) {
		os.Exit(exitBadInput)
	}
	os.Exit(1)
}

// execute runs the command, turning a panic that escaped a command's own
// recovery into an error, so a bug prints one line (exit 1) rather than a
// stack trace. Runs recover earlier, where they can name the seed.
func execute(root *cobra.Command) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v (please report it with the command line and inputs)", p)
		}
	}()
	return root.Execute()
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "schedsim",
		Short: "Deterministic simulator of Slurm-managed GPU clusters",
		Long: `schedsim replays real job traces (Slurm sacct output, SWF logs) against a
modeled cluster under a scheduling policy, and reports what would have
happened: queue waits, utilization, slowdown, per-partition figures.

The same inputs and seed always give byte-identical outputs.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return badInput(err) })
	root.AddCommand(newRunCmd(), newVersionCmd())
	root.AddCommand(newTraceCmd())
	root.AddCommand(newHWCmd(), newClusterCmd())
	root.AddCommand(newCompareCmd(), newPlotCmd())
	root.AddCommand(newValidateCmd(), newConformanceCmd())
	root.AddCommand(newSweepCmd())
	root.AddCommand(newProbeCmd(), newCalibrateCmd())
	return root
}
