package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/bundle"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/sim"
)

// bundleExclusive are the flags that name what a records bundle holds.
var bundleExclusive = []string{"scenario", "trace", "cluster", "format", "fields", "delimiter", "partition-map",
	"window-from", "window-to", "scale-load", "remap-gpu", "speedup", "filter-user", "filter-partition", "filter-state", "map", "map-preset", "jobs"}

// loadBundle reads the records bundle f.bundle and returns the scenario
// it replays as, keeping the replay in f.replay for validate's
// breakdown.
func loadBundle(cmd *cobra.Command, f *runFlags) (*scenario.Scenario, error) {
	for _, name := range bundleExclusive {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return nil, fmt.Errorf("--%s: a records bundle names the trace, cluster and settings; give it without --%s", name, name)
		}
	}
	b, err := bundle.Open(f.bundle)
	if err != nil {
		return nil, err
	}
	rp, err := b.Build()
	if err != nil {
		return nil, err
	}
	s, err := scenario.Parse(rp.Scenario, b.Where("(scenario made from the bundle)"))
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, rp.Scenario)
	}
	s.Trace.Jobs = rp.Trace
	f.replay = rp
	return s, nil
}

// analyzeBundle breaks validate's bundle replay error down.
func analyzeBundle(f *validateFlags, run *scenario.Run, rec *sim.Record) (*bundle.Breakdown, error) {
	worst := f.worst
	if worst == 0 {
		worst = -1
	}
	bd, err := bundle.Analyze(f.replay, rec, run.Cluster, bundle.BreakdownOptions{Worst: worst})
	if err != nil {
		return nil, failed(err)
	}
	bd.Bundle = f.bundle
	return bd, nil
}

// writeBundleValidation writes validate's breakdown of a bundle replay.
func writeBundleValidation(out io.Writer, f *validateFlags, run *scenario.Run, rec *sim.Record, bd *bundle.Breakdown) error {
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(bd)
	}
	fmt.Fprintf(out, "schedsim %s, validate: records bundle %s, policy %s, cluster from its slurm.conf: %d nodes, %d GPUs\n\n",
		versionString(), f.bundle, rec.Policy, len(run.Cluster.Nodes), run.Cluster.TotalGPUs())
	return bundle.WriteText(out, bd)
}

// pageBreakdown is what validate.html shows of a bundle's breakdown.
func pageBreakdown(bd *bundle.Breakdown) *reports.PageBreakdown {
	pb := &reports.PageBreakdown{Headline: bd.Headline(), Meaning: bd.Meaning(), Notes: bd.Notes}
	for _, t := range bd.Tables() {
		if t.ID == "bundle-worst" {
			// The text form titles the table in its first column.
			t.Header = append([]string{"job"}, t.Header[1:]...)
		}
		pb.Tables = append(pb.Tables, reports.PageTable(t))
	}
	return pb
}

// simulateReplay builds a bundle replay's run through the scenario
// package, as loadBundle does for the commands, and runs it (where names
// the generated scenario in messages).
func simulateReplay(rp *bundle.Replay, where string) (*scenario.Run, *sim.Record, error) {
	s, err := scenario.Parse(rp.Scenario, where)
	if err != nil {
		return nil, nil, err
	}
	s.Trace.Jobs = rp.Trace
	run, err := s.Build(catalog.Builtin())
	if err != nil {
		return nil, nil, err
	}
	rec, err := run.Simulate()
	return run, rec, err
}
