package reports

import (
	"runtime/debug"
	"strconv"
)

// Module is the module path of schedsim, whose version a build records.
const Module = "github.com/schedsim/schedsim"

// Build identifies the schedsim build that wrote an output: the module
// version ("(devel)" when built from a checkout, or the pseudo-version Go
// stamps from the checkout's commit, "v0.0.0-20261202100000-48340a2c1d2e")
// and, when Go stamped it (go build in a git checkout, unless
// -buildvcs=false), the commit and whether the tree had uncommitted
// changes. summary.json records it under "schedsim", and schedsim version
// prints it.
type Build struct {
	Version  string
	Revision string // vcs.revision; "" when not stamped
	Time     string // vcs.time, RFC 3339; "" when not stamped
	Modified bool   // vcs.modified
}

// version, when set at link time (-ldflags "-X
// github.com/schedsim/schedsim/reports.version=v1.2.3"), replaces the
// module version.
var version = ""

// ReadBuild returns the running binary's Build.
func ReadBuild() Build {
	b := Build{Version: "(unknown)"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b = BuildOf(bi)
	}
	if version != "" {
		b.Version = version
	}
	return b
}

// BuildOf returns the Build that bi describes: schedsim's own when it is
// the main module (with the VCS settings), else the version of schedsim
// among bi's dependencies (a program that imports the library).
func BuildOf(bi *debug.BuildInfo) Build {
	if bi.Main.Path != Module {
		for _, d := range bi.Deps {
			if d.Path == Module {
				if d.Replace != nil {
					d = d.Replace
				}
				return Build{Version: orDevel(d.Version)}
			}
		}
	}
	b := Build{Version: orDevel(bi.Main.Version)}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified, _ = strconv.ParseBool(s.Value)
		}
	}
	return b
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}
