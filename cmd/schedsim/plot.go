package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/schedsim/schedsim/reports"
)

func newPlotCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "plot DIR",
		Short: "Re-draw the plots and report.html of a run directory from its saved outputs",
		Long: `Re-draw DIR/plots/*.png, DIR/plots/*.svg and DIR/report.html from the
outputs schedsim run --out wrote there (summary.json, jobs.parquet,
timeline.parquet, scenario.yaml), without running the simulation again.
DIR must pass its manifest.json (every file complete and of one run); it
is replaced whole, as run --out replaces it, under the same lock.`,
		Example: "  schedsim run --out results/run && schedsim plot results/run",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if st, err := os.Stat(dir); err != nil {
				return badInput(err)
			} else if !st.IsDir() {
				return badInput(fmt.Errorf("%s is not a directory (want a run directory written by schedsim run --out)", dir))
			}
			// plot rewrites the directory: it takes the writer's lock and
			// replaces the directory whole, like run.
			o, err := reports.CreateOutDir(dir)
			if err != nil {
				return badInput(err)
			}
			defer o.Close()
			if _, err := o.Redraw(); err != nil {
				return badInput(err)
			}
			if err := o.Close(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s\n", filepath.Join(dir, reports.PlotsDir), filepath.Join(dir, reports.ReportFile))
			return nil
		},
	}
}
