package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/schedsim/schedsim/reports"
)

// build is this binary's build, as summary.json records it
// (reports.ReadBuild).
func build() reports.Build { return reports.ReadBuild() }

func versionString() string { return build().Version }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the schedsim module version and the commit it was built from",
		Long: `Print the module version ("(devel)" when built from a checkout, or the
pseudo-version Go stamps from its commit), the git commit (vcs.revision),
whether the checkout had uncommitted changes (vcs.modified) and its time,
and the Go version. summary.json records the same under "schedsim".
go build in a git checkout stamps the commit; go run, and builds with
-buildvcs=false, do not.`,
		Example: `  schedsim version
  go build -o bin/schedsim ./cmd/schedsim && bin/schedsim version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd.OutOrStdout(), build())
		},
	}
}

func printVersion(w io.Writer, b reports.Build) error {
	rev, modified, when := b.Revision, "no", b.Time
	if rev == "" {
		rev, modified, when = "unknown (no VCS stamp: go run, -buildvcs=false, or not built in a git checkout)", "unknown", "unknown"
	} else if b.Modified {
		modified = "yes (uncommitted changes)"
	}
	_, err := fmt.Fprintf(w, "schedsim %s\nmodule    %s\nrevision  %s\nmodified  %s\ntime      %s\ngo        %s\n",
		b.Version, reports.Module, rev, modified, when, runtime.Version())
	return err
}
