package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/schedsim/schedsim/hwmodels"
)

func newClusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Cluster specs: import from Slurm config files, show",
		Example: `  schedsim cluster import --slurm-conf examples/slurm.conf > results/cluster.yaml
  schedsim cluster show examples/cluster.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newClusterImportCmd(), newClusterShowCmd())
	return cmd
}

func newClusterImportCmd() *cobra.Command {
	var slurmConf, gresConf, topoConf string
	var maxNodes int
	cmd := &cobra.Command{
		Use:   "import --slurm-conf slurm.conf [--gres-conf gres.conf] [--topology-conf topology.conf]",
		Short: "Write a cluster spec (YAML) from slurm.conf, gres.conf and topology.conf",
		Long: `Read a cluster's Slurm configuration and print a cluster spec describing
it: NodeName lines become node groups (GPUs from Gres= and gres.conf, MIG
types checked by geometry), PartitionName lines partitions with their
limits (MaxTime, MaxNodes, DefaultTime, PriorityTier, PriorityJobFactor,
DefCpuPerGPU, DefMemPerCPU, DefMemPerGPU), power saving (SuspendTime,
ResumeTimeout, SuspendTimeout, SuspendExcNodes, SuspendExcParts) the
power section, topology.conf a switch tree and NVLink blocks
(BlockName, BlockSizes). Include lines are followed (relative to the
including file, globs allowed). gres.conf, and under
TopologyPlugin=topology/tree or topology/block topology.conf, are read
from slurm.conf's directory when not given, as Slurm does. Settings the slurm policy and
the scenario read (SchedulerParameters, Priority*, Preempt*, JobRequeue,
EnforcePartLimits, ...) are kept in the spec's slurm section. Every key
read but not modeled is warned about once, on standard error.`,
		Example: `  schedsim cluster import --slurm-conf /etc/slurm/slurm.conf > cluster.yaml
  schedsim cluster import --slurm-conf examples/slurm.conf --gres-conf examples/gres.conf --topology-conf examples/topology.conf > results/cluster.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if slurmConf == "" {
				return badInput(errors.New("cluster import: --slurm-conf is required"))
			}
			if maxNodes < 1 || maxNodes > hwmodels.MaxClusterNodes {
				return badInput(fmt.Errorf("cluster import: --max-nodes must be 1 to %d, got %d", hwmodels.MaxClusterNodes, maxNodes))
			}
			f := hwmodels.SlurmFiles{SlurmPath: slurmConf, GresPath: gresConf, TopologyPath: topoConf,
				Files: hwmodels.OSConfFiles(), MaxNodes: maxNodes}
			var err error
			if f.SlurmConf, err = f.Files.ReadFile(slurmConf); err != nil {
				return badInput(pathError("--slurm-conf", slurmConf, err))
			}
			if err := notSlurmConf(slurmConf, f.SlurmConf); err != nil {
				return badInput(err)
			}
			if gresConf != "" {
				if f.GresConf, err = f.Files.ReadFile(gresConf); err != nil {
					return badInput(pathError("--gres-conf", gresConf, err))
				}
			}
			if topoConf != "" {
				if f.TopologyConf, err = f.Files.ReadFile(topoConf); err != nil {
					return badInput(pathError("--topology-conf", topoConf, err))
				}
			}
			spec, warns, err := hwmodels.ImportSlurm(f)
			for _, w := range warns {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+w.String())
			}
			if err != nil {
				return badInput(err)
			}
			_, err = cmd.OutOrStdout().Write(spec)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&slurmConf, "slurm-conf", "", "slurm.conf to read (required)")
	fl.StringVar(&gresConf, "gres-conf", "", "gres.conf to read (default: gres.conf beside slurm.conf, if there is one)")
	fl.StringVar(&topoConf, "topology-conf", "", "topology.conf (topology/tree or topology/block) to read (default: beside slurm.conf under either plugin)")
	fl.IntVar(&maxNodes, "max-nodes", hwmodels.MaxClusterNodes, "most nodes the NodeName lines may define, counted before expanding them")
	return cmd
}

func newClusterShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show CLUSTER.yaml",
		Short: "Print a cluster spec's nodes, GPUs by type, partitions, fabric and peak power",
		Long: `Load a cluster spec and print what it describes: node groups (as slurm.conf
NodeName lines, with their GPU model, MIG layout and power), GPUs by GRES
type, partitions (as PartitionName lines), the fabric, peak power and the
kept Slurm settings. "example" shows the embedded example cluster. --json
prints the same as JSON with top-level nodes and gpus totals and
partitions by name.`,
		Example: `  schedsim cluster show examples/cluster.yaml
  schedsim cluster show example
  schedsim cluster show --json examples/cluster.yaml | jq .partitions`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var c *hwmodels.Cluster
			var err error
			if args[0] == "example" {
				c = hwmodels.ExampleCluster()
			} else if c, err = hwmodels.LoadCluster(args[0]); err != nil {
				return badInput(err)
			}
			s := hwmodels.Summarize(c)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			return printClusterSummary(cmd.OutOrStdout(), &s)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printClusterSummary(w io.Writer, s *hwmodels.ClusterSummary) error {
	fmt.Fprintf(w, "cluster %s: %d nodes, %d GPUs, %d CPUs, %d MiB memory\n", s.Name, s.Nodes, s.GPUs, s.CPUs, s.MemMB)
	fmt.Fprintln(w, "\nnodes:")
	for _, g := range s.NodeGroups {
		fmt.Fprintf(w, "  %s\n", g.SlurmLine)
		var hw []string
		hw = append(hw, fmt.Sprintf("%d node(s)", g.Count))
		if g.NodeModel != "" {
			hw = append(hw, "model "+g.NodeModel)
		}
		if g.GPUModel != "" {
			hw = append(hw, "GPU "+g.GPUModel)
		}
		if g.MIG != "" {
			hw = append(hw, "MIG "+g.MIG)
		}
		if g.MPS > 0 {
			hw = append(hw, fmt.Sprintf("MPS up to %d clients per GPU", g.MPS))
		}
		hw = append(hw, fmt.Sprintf("peak %s", kw(g.PeakPowerW)))
		fmt.Fprintf(w, "    # %s\n", strings.Join(hw, ", "))
	}
	fmt.Fprintln(w, "\nGPUs by type:")
	types := make([]string, 0, len(s.GPUsByType))
	for t := range s.GPUsByType {
		types = append(types, t)
	}
	slices.Sort(types)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range types {
		fmt.Fprintf(tw, "  %s\t%d\n", t, s.GPUsByType[t])
	}
	if len(types) == 0 {
		fmt.Fprintln(tw, "  none")
	}
	tw.Flush()
	fmt.Fprintln(w, "\npartitions:")
	for _, name := range s.PartitionOrder {
		p := s.Partitions[name]
		fmt.Fprintf(w, "  %s\n    # %d node(s), %d GPUs\n", p.SlurmLine, p.NodeCount, p.GPUs)
	}
	fmt.Fprintln(w, "\nfabric:")
	if f := s.Fabric; f == nil {
		fmt.Fprintln(w, "  none")
	} else {
		fmt.Fprintf(w, "  %s: %d switches (%d leaves, %d levels), %d of %d nodes attached, max oversubscription %g:1",
			f.Kind, f.Switches, f.Leaves, f.Levels, f.Attached, s.Nodes, f.MaxOversub)
		if f.LinkGbps > 0 {
			fmt.Fprintf(w, ", %d Gb/s links", f.LinkGbps)
		}
		if f.Rails > 0 {
			fmt.Fprintf(w, ", %d rails", f.Rails)
		}
		fmt.Fprintln(w)
		if len(f.Blocks) > 0 {
			// As topology.conf lines, the way nodes and partitions show.
			fmt.Fprintf(w, "  blocks: %d NVLink domains\n", len(f.Blocks))
			for _, b := range f.Blocks {
				fmt.Fprintf(w, "  BlockName=%s Nodes=%s\n", b.Name, b.Nodes)
			}
			sizes := make([]string, len(f.BlockSizes))
			for i, n := range f.BlockSizes {
				sizes[i] = strconv.Itoa(int(n))
			}
			fmt.Fprintf(w, "  BlockSizes=%s\n", strings.Join(sizes, ","))
		}
	}
	fmt.Fprintln(w, "\npower:")
	fmt.Fprintf(w, "  peak %s IT, PUE %.2f, %s at the facility", kw(s.Power.PeakITW), s.Power.PUE, kw(s.Power.PeakFacilityW))
	if s.Power.PricePerKWh > 0 {
		fmt.Fprintf(w, ", %.2f %s per hour at peak", s.Power.PeakFacilityW/1000*s.Power.PricePerKWh, s.Power.Currency)
	}
	fmt.Fprintln(w)
	if p := s.Power; p.SuspendTime > 0 {
		fmt.Fprintf(w, "  power saving: SuspendTime=%d ResumeTimeout=%d SuspendTimeout=%d (seconds), %d node(s) never suspended\n",
			p.SuspendTime, p.ResumeTimeout, p.SuspendTimeout, p.SuspendExempt)
	}
	if s.Power.Unpowered > 0 {
		fmt.Fprintf(w, "  %d node(s) without power figures (GPU model without datasheet figures, no base power)\n", s.Power.Unpowered)
	}
	if len(s.Slurm) > 0 {
		fmt.Fprintln(w, "\nslurm settings:")
		for _, kv := range s.Slurm {
			fmt.Fprintf(w, "  %s=%s\n", kv.Key, kv.Value)
		}
	}
	return nil
}

// kw formats watts as kW with one decimal.
func kw(w float64) string { return fmt.Sprintf("%.1f kW", w/1000) }

// otherConfKeys are the keys that begin a line of gres.conf or
// topology.conf and never one of slurm.conf (slurm.conf(5), gres.conf(5),
// topology.conf(5) of Slurm 22.05), with the flag that reads that file.
var otherConfKeys = map[string][2]string{
	"name": {"gres.conf", "--gres-conf"}, "autodetect": {"gres.conf", "--gres-conf"},
	"switchname": {"topology.conf", "--topology-conf"}, "blockname": {"topology.conf", "--topology-conf"},
	"blocksizes": {"topology.conf", "--topology-conf"},
}

// gresNodeKeys are gres.conf's keys on a NodeName line, which slurm.conf's
// NodeName lines never have.
var gresNodeKeys = map[string]bool{"name": true, "type": true, "file": true, "count": true, "multiplefiles": true, "autodetect": true}

// notSlurmConf says where the file given as --slurm-conf is a gres.conf or
// a topology.conf instead: its first line that only those files have,
// with the flag the file belongs to. Reading it as slurm.conf would warn
// about every key and print a spec of 1-CPU, 1-MiB nodes.
func notSlurmConf(path string, data []byte) error {
	for n, line := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		key := func(f string) string { k, _, _ := strings.Cut(f, "="); return strings.ToLower(k) }
		first := key(fields[0])
		if o, ok := otherConfKeys[first]; ok {
			return fmt.Errorf("--slurm-conf %s:%d: %s= begins a %s line, not a slurm.conf one: give this file as %s", path, n+1, strings.SplitN(fields[0], "=", 2)[0], o[0], o[1])
		}
		if first != "nodename" {
			continue
		}
		var gres []string
		for _, f := range fields[1:] {
			if gresNodeKeys[key(f)] {
				gres = append(gres, strings.SplitN(f, "=", 2)[0]+"=")
			}
		}
		if len(gres) > 0 {
			return fmt.Errorf("--slurm-conf %s:%d: a NodeName line with %s is a gres.conf line, not a slurm.conf one: give this file as --gres-conf", path, n+1, strings.Join(gres, ", "))
		}
	}
	return nil
}
