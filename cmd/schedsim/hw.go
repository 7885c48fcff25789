package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/schedsim/schedsim/hwmodels"
)

func newHWCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hw",
		Short: "Hardware models: GPU and node catalog, MIG layouts",
		Example: `  schedsim hw catalog
  schedsim hw mig-layout --gpu a100-40gb 4g.20gb,2g.10gb,1g.5gb`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newMIGLayoutCmd(), newCatalogCmd())
	return cmd
}

func newMIGLayoutCmd() *cobra.Command {
	var gpu string
	cmd := &cobra.Command{
		Use:   "mig-layout --gpu MODEL PROFILE[,PROFILE...]",
		Short: "Check a MIG layout of one GPU and print where each instance starts",
		Long: `Check whether a set of MIG GPU instances can be configured on one GPU, as
an operator would with nvidia-smi mig -cgi, by the MIG geometry (8 memory
slices, 7 compute slices, each profile's allowed start slices), not by
counting slices.

Exit status: 0 and the placement (start memory slice of each instance) when
the layout can be configured; 1 and the reason when it cannot; 2 for an
unknown GPU model or profile name.`,
		Example: `  schedsim hw mig-layout --gpu a100-40gb 4g.20gb,2g.10gb,1g.5gb
  schedsim hw mig-layout --gpu h100-sxm-80gb 3g.40gb 2g.20gb 1g.10gb 1g.10gb`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMIGLayout(cmd.OutOrStdout(), gpu, args)
		},
	}
	cmd.Flags().StringVar(&gpu, "gpu", "", "GPU model: a MIG geometry ("+hwmodels.MIGGeometryChoices()+")")
	return cmd
}

func runMIGLayout(w io.Writer, gpu string, args []string) error {
	if gpu == "" {
		return badInput(errors.New("mig-layout: --gpu is required (want " + hwmodels.MIGGeometryChoices() + ")"))
	}
	g, ok := hwmodels.LookupMIG(gpu)
	if !ok {
		return badInput(fmt.Errorf("mig-layout: unknown GPU model %q (want one with a MIG table: %s)", gpu, hwmodels.MIGGeometryChoices()))
	}
	var names []string
	for _, a := range args {
		for _, n := range strings.Split(a, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return badInput(errors.New("mig-layout: no profiles given (want " + g.ProfileNames() + ")"))
	}
	profiles, err := g.ParseLayout(names)
	if err != nil {
		return badInput(fmt.Errorf("mig-layout: %w", err))
	}
	layout, err := g.Layout(profiles)
	if err != nil {
		return gateBroken(fmt.Errorf("mig-layout: cannot configure %s: %w", strings.Join(names, ","), err))
	}
	var mem, compute int32
	for _, in := range layout {
		p := &g.Profiles[in.Profile]
		mem += p.MemSlices
		compute += p.ComputeSlices
	}
	fmt.Fprintf(w, "%s: %d instances, %d of %d compute slices, %d of %d memory slices\n",
		g.Name, len(layout), compute, hwmodels.MIGComputeSlices, mem, hwmodels.MIGMemSlices)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tID\tSTART\tMEMORY SLICES\tCOMPUTE SLICES")
	for _, in := range layout {
		p := &g.Profiles[in.Profile]
		slices := fmt.Sprint(in.Start)
		if p.MemSlices > 1 {
			slices = fmt.Sprintf("%d-%d", in.Start, in.Start+p.MemSlices-1)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\n", p.Name, p.ID, in.Start, slices, p.ComputeSlices)
	}
	return tw.Flush()
}

func newCatalogCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "catalog",
		Short:   "List the built-in GPU and node models with their datasheet figures",
		Example: `  schedsim hw catalog`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printCatalog(cmd.OutOrStdout())
		},
	}
}

func printCatalog(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU MODEL\tTYPE\tMEMORY\tBANDWIDTH\tBF16 DENSE\tTDP\tIDLE\tNVLINK\tMIG")
	dash := func(v int32, unit string) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%d %s", v, unit)
	}
	for _, g := range hwmodels.GPUCatalog() {
		nv := "-"
		if g.NVLinkGen > 0 {
			nv = fmt.Sprintf("gen%d %d GB/s %s", g.NVLinkGen, g.NVLinkGBs, g.NVLinkTopo)
		}
		mig := g.MIG
		if mig == "" {
			mig = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.Name, g.DefaultType,
			dash(g.MemGB, "GB"), dash(g.MemBWGBs, "GB/s"), dash(g.BF16TFLOPS, "TFLOPS"),
			dash(g.TDPW, "W"), dash(g.IdleW, "W"), nv, mig)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "NODE MODEL\tGPUS\tINTERCONNECT\tCPUS\tMEMORY\tHCAS\tMAX POWER\tBASE POWER")
	for _, m := range hwmodels.NodeCatalog() {
		fmt.Fprintf(tw, "%s\t%d × %s\t%s\t%d\t%d GiB\t%d × %d Gb/s\t%s\t%d W\n", m.Name, m.GPUs, m.GPUModel,
			m.Interconnect, m.CPUs, m.MemMB>>10, m.HCAs, m.HCAGbps, dash(m.MaxPowerW, "W"), m.BasePowerW)
	}
	return tw.Flush()
}
