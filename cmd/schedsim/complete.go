package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/traces"
)

// Shell completion of flag values (schedsim completion bash|zsh|fish|
// powershell), from the same lists the commands check the values against.

// completer offers the values of one flag of one command.
type completer func(cmd *cobra.Command, toComplete string) ([]string, cobra.ShellCompDirective)

// fixed offers the values list returns, and no files.
func fixed(list func() []string) completer {
	return func(*cobra.Command, string) ([]string, cobra.ShellCompDirective) {
		return list(), cobra.ShellCompDirectiveNoFileComp
	}
}

// yamlOr offers names (builtins) and the YAML files and directories
// that match what was typed so far.
func yamlOr(names func() []string) completer {
	return func(_ *cobra.Command, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		if names != nil {
			for _, n := range names() {
				if strings.HasPrefix(n, toComplete) {
					out = append(out, n)
				}
			}
		}
		dir, base := filepath.Split(toComplete)
		entries, _ := os.ReadDir(orDefault(dir, "."))
		for _, e := range entries {
			name := e.Name()
			if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
				continue
			}
			switch ext := strings.ToLower(filepath.Ext(name)); {
			case e.IsDir():
				out = append(out, dir+name+"/")
			case ext == ".yaml" || ext == ".yml":
				out = append(out, dir+name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

func gateMetrics() []string {
	var out []string
	for _, m := range reports.Metrics {
		out = append(out, m.Name+":")
	}
	return out
}

func migGPUs() []string { return splitList(hwmodels.MIGGeometryChoices()) }

// flagCompleters maps a flag name to how its values complete; byCommand
// overrides it for a flag whose values differ on one command.
var (
	flagCompleters = map[string]completer{
		"policy":     fixed(catalog.Builtin().Names),
		"format":     fixed(traces.ReadFormats),
		"out-format": fixed(traces.WriteFormats),
		"map-preset": fixed(traces.CSVPresets),
		"fields":     fixed(traces.SacctFieldPresets),
		"cluster":    yamlOr(scenario.ClusterNames),
		"scenario":   yamlOr(nil),
		"gpu":        fixed(migGPUs),
	}
	byCommand = map[string]map[string]completer{
		"schedsim compare": {"format": fixed(func() []string { return compareFormats }), "gate": fixed(gateMetrics)},
	}
)

// registerCompletions registers the value completion of every flag of
// root's tree that flagCompleters or byCommand name.
func registerCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			fn, ok := byCommand[c.CommandPath()][f.Name]
			if !ok {
				fn, ok = flagCompleters[f.Name]
			}
			if !ok {
				return
			}
			// The flag exists and is registered once: no error to handle.
			_ = c.RegisterFlagCompletionFunc(f.Name, func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return fn(cmd, toComplete)
			})
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
