package reports

import (
	"runtime/debug"
	"testing"
)

// TestBuildOf: the version and commit of schedsim as the main module, as
// a dependency of another program, and without a VCS stamp.
func TestBuildOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want Build
	}{
		{"checkout without VCS stamp (go run, -buildvcs=false)",
			debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}},
			Build{Version: "(devel)"}},
		{"empty main version", debug.BuildInfo{Main: debug.Module{Path: Module}}, Build{Version: "(devel)"}},
		{"go build in a git clone",
			debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v0.0.0-20261202101743-b5ae6ab09463"},
				Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "b5ae6ab09463a475ec1590031cca914792c52dc6"},
					{Key: "vcs.time", Value: "2026-12-02T10:17:43Z"}, {Key: "vcs.modified", Value: "false"}}},
			Build{Version: "v0.0.0-20261202101743-b5ae6ab09463", Revision: "b5ae6ab09463a475ec1590031cca914792c52dc6", Time: "2026-12-02T10:17:43Z"}},
		{"modified checkout",
			debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"},
				Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			Build{Version: "(devel)", Revision: "abc", Modified: true}},
		{"a program importing schedsim v1.2.0",
			debug.BuildInfo{Main: debug.Module{Path: "example.com/tool", Version: "v0.3.0"},
				Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "theirs"}},
				Deps:     []*debug.Module{{Path: "gonum.org/v1/gonum", Version: "v0.15.0"}, {Path: Module, Version: "v1.2.0"}}},
			Build{Version: "v1.2.0"}},
		{"a replaced dependency",
			debug.BuildInfo{Main: debug.Module{Path: "example.com/tool"},
				Deps: []*debug.Module{{Path: Module, Version: "v1.2.0", Replace: &debug.Module{Path: "../schedsim", Version: "(devel)"}}}},
			Build{Version: "(devel)"}},
	} {
		if got := BuildOf(&tc.bi); got != tc.want {
			t.Errorf("%s: BuildOf = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
