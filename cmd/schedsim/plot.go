package main

import (
	"fmt"
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
timeline.parquet, scenario.yaml), without running the simulation again.`,
		Example: "  schedsim plot results/",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			rd, err := reports.ReadRunDir(dir)
			if err != nil {
				return badInput(err)
			}
			if err := reports.WritePlotsAndReport(dir, rd.Summary, rd.Jobs, rd.Timeline, rd.Scenario); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s\n", filepath.Join(dir, reports.PlotsDir), filepath.Join(dir, reports.ReportFile))
			return nil
		},
	}
}
