package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	scenario "github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/traces"
)

// walk calls fn on every available command of root's tree.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	if !c.IsAvailableCommand() && c.HasParent() {
		return // hidden (cobra's __complete) or deprecated
	}
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// TestHelpExamples: every command's --help has an Example section whose
// lines run schedsim commands that exist, with the shipped example files
// that exist.
func TestHelpExamples(t *testing.T) {
	root := newRootCmd()
	fileRe := regexp.MustCompile(`\bexamples/[A-Za-z0-9._/-]+`)
	n := 0
	walk(root, func(c *cobra.Command) {
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no Example in its help", c.CommandPath())
			return
		}
		for l := range strings.SplitSeq(c.Example, "\n") {
			if !strings.HasPrefix(l, "  ") {
				t.Errorf("%s: example line %q is not indented by two spaces", c.CommandPath(), l)
			}
			for _, f := range fileRe.FindAllString(l, -1) {
				if _, err := os.Stat(filepath.Join("..", "..", f)); err != nil {
					t.Errorf("%s: example names %s, which is not shipped: %v", c.CommandPath(), f, err)
				}
			}
			// Each "schedsim A B ..." of the line names a command.
			for _, part := range strings.Split(l, "schedsim ")[1:] {
				var words []string
				for _, w := range strings.Fields(part) {
					if strings.HasPrefix(w, "-") || strings.ContainsAny(w, "/.=<>|&'\"") {
						break
					}
					words = append(words, w)
				}
				if len(words) == 0 {
					continue
				}
				found, rest, err := root.Find(words)
				if err != nil || found == root && len(rest) > 0 && !strings.Contains(l, "completion") {
					t.Errorf("%s: example %q: no command %q (%v)", c.CommandPath(), l, strings.Join(words, " "), err)
				}
			}
		}
		out, err := schedsim(t, append(strings.Fields(strings.TrimPrefix(c.CommandPath(), "schedsim")), "--help")...)
		if err != nil || !strings.Contains(out, "Examples:\n"+c.Example) {
			t.Errorf("%s --help does not show its examples (%v):\n%s", c.CommandPath(), err, out)
		}
	})
	if n < 30 {
		t.Errorf("walked %d commands; the tree has more", n)
	}
}

// complete returns what shell completion offers for args, the last one
// being the word under the cursor.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := schedsim(t, append([]string{"__complete"}, args...)...)
	if err != nil {
		t.Fatalf("__complete %v: %v", args, err)
	}
	var got []string
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, ":") || strings.HasPrefix(l, "Completion ended") {
			continue
		}
		name, _, _ := strings.Cut(l, "\t") // a description follows a tab
		got = append(got, name)
	}
	return got
}

// TestCompletion: flag values complete from the lists the commands
// check them against.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--policy", ""}, catalog.Builtin().Names()},
		{[]string{"validate", "--policy", ""}, catalog.Builtin().Names()},
		{[]string{"run", "--format", ""}, traces.ReadFormats()},
		{[]string{"trace", "inspect", "--format", ""}, traces.ReadFormats()},
		{[]string{"trace", "convert", "--out-format", ""}, traces.WriteFormats()},
		{[]string{"trace", "inspect", "--map-preset", ""}, traces.CSVPresets()},
		{[]string{"run", "--fields", ""}, traces.SacctFieldPresets()},
		{[]string{"compare", "a", "b", "--format", ""}, compareFormats},
	} {
		if got := complete(t, tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("complete %q: %q, want %q", tc.args, got, tc.want)
		}
	}
	// --cluster: the builtin names and the YAML files and directories.
	got := complete(t, "run", "--cluster", "")
	for _, want := range scenario.ClusterNames() {
		if !slices.Contains(got, want) {
			t.Errorf("complete run --cluster: %q lacks %q", got, want)
		}
	}
	if got := complete(t, "run", "--cluster", "ex"); !slices.Equal(got, []string{"example"}) {
		t.Errorf("complete run --cluster ex: %q, want [example] (no YAML here starts with ex)", got)
	}
	// --gpu: the MIG-capable models, each one mig-layout takes.
	gpus := complete(t, "hw", "mig-layout", "--gpu", "")
	for _, g := range gpus {
		if _, ok := hwmodels.LookupMIG(g); !ok {
			t.Errorf("complete mig-layout --gpu offers %q, which it refuses", g)
		}
	}
	if !slices.Contains(gpus, "h100-sxm-80gb") || slices.Contains(gpus, "v100-sxm-16gb") {
		t.Errorf("complete mig-layout --gpu: %q, want the MIG-capable models only", gpus)
	}
	gates := complete(t, "compare", "a", "b", "--gate", "")
	if len(gates) != len(reports.Metrics) || !slices.Contains(gates, "p95_wait:") {
		t.Errorf("complete compare --gate: %q, want every metric with a colon", gates)
	}
	if len(catalog.Builtin().Names()) < 4 || len(traces.SacctFieldPresets()) == 0 {
		t.Error("the registries the completions come from are empty")
	}
}

// goNames are what an error shown to a user must not contain: Go
// packages, types and functions, or a line of the embedded scenario.
var goNames = regexp.MustCompile(`\b(strconv|traces|workload|hwmodels|reports|scenario|yaml|time)\.[A-Z]|Options\.|\bRead[A-Z][a-z]+[A-Z]|\bscenario:\d+:|not found in type|\[[a-z]+ [a-z]+\]`)

// TestBadFlagsNameTheFlag: an error caused by a flag, a file or an
// argument names it as given, on one line, with exit status 2.
func TestBadFlagsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	headerless := filepath.Join(dir, "jobinfo.txt")
	if err := os.WriteFile(headerless, []byte("1☃x☃u☃p☃n1☃1☃1☃☃COMPLETED☃2024-01-01T00:00:00☃2024-01-01T00:00:00☃2024-01-01T00:01:00☃00:10:00☃00:01:00☃\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scen := filepath.Join("..", "..", "examples", "scenario.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--policy", "frob"}, `--policy "frob": unknown policy "frob" (want one of conservative, easy, fifo, slurm)`},
		{[]string{"run", "--format", "frob"}, `--format "frob": unknown format "frob"`},
		{[]string{"run", "--scale-load", "-1"}, `--scale-load "-1": must be in [0, 1000], got -1`},
		{[]string{"run", "--window-from", "xyz"}, `--window-from "xyz": want Unix seconds`},
		{[]string{"run", "--procs-per-gpu", "-3"}, `--procs-per-gpu "-3": must be >= 0`},
		{[]string{"run", "--map-preset", "frob"}, `--map-preset "frob": unknown preset "frob" (want one of eagle, helios)`},
		{[]string{"run", "--time-zone", "Mars/Base"}, `--time-zone "Mars/Base": unknown time zone`},
		{[]string{"run", "--set", "trace.transforms.scale_load=-3"}, `--set trace.transforms.scale_load=-3: trace.transforms.scale_load: must be in [0, 1000]`},
		{[]string{"run", "--scenario", scen, "--policy", "frob"}, `--policy "frob": unknown policy`},
		{[]string{"run", "--scenario", filepath.Join(dir, "nope.yaml")}, "--scenario " + filepath.Join(dir, "nope.yaml") + ": no such file or directory"},
		{[]string{"run", "--trace", "nope.sacct"}, "--trace nope.sacct: no such file or directory"},
		{[]string{"run", "--cluster", "nope.yaml"}, "--cluster nope.yaml: no such file or directory (want a cluster spec file or one of example, header, swf-header)"},
		{[]string{"run", "--out", "/proc/nope/run"}, "--out /proc/nope/run: "},
		{[]string{"run", "--seed", "-1"}, `invalid argument "-1" for "--seed" flag: want a whole number >= 0`},
		{[]string{"probe", "--sample", "abc"}, `invalid argument "abc" for "--sample" flag: want a duration such as 30s`},
		{[]string{"sweep", "x.yaml", "--workers", "two"}, `invalid argument "two" for "--workers" flag: want a whole number`},
		{[]string{"run", "--trace", headerless}, "no header row (no JobID column) and no field list given: name the columns of this sacct -n output (--fields, or trace.sacct.fields; preset: jobinfo)"},
		{[]string{"trace", "inspect", headerless, "--fields", "JobName,User"}, "sacct field list (--fields, trace.sacct.fields): no JobID or JobIDRaw column"},
		{[]string{"trace", "inspect", headerless, "--format", "frob"}, `--format "frob": want one of sacct, swf`},
		{[]string{"trace", "inspect", headerless, "--time-zone", "frob"}, `--time-zone "frob": unknown time zone`},
		{[]string{"trace", "synth", scen}, `scenario.yaml:6: unknown key "name" (not a workload model: make one with schedsim trace fit)`},
		{[]string{"trace", "fit", filepath.Join("..", "..", "examples", "jobs.sacct"), "--out", "/proc/nope/model.yaml"}, "--out /proc/nope/model.yaml: "},
		{[]string{"trace", "convert", filepath.Join("..", "..", "examples", "jobs.sacct"), "/proc/nope/x.swf"}, "cannot write /proc/nope/x.swf: "},
		{[]string{"run", "--set", "policy.args.bf_window=1"}, "--set: policy.args.bf_window: policy.args is not a section: it is YAML of its own, set in the scenario file"},
		{[]string{"sweep", filepath.Join("..", "..", "examples", "sweep.yaml"), "--slurm-array", "/proc/nope/array"}, "--slurm-array /proc/nope/array: "},
		{[]string{"compare", "nope-a", "nope-b"}, "A nope-a: no such file or directory"},
		{[]string{"compare", filepath.Join("..", "..", "examples"), scen}, filepath.Join("..", "..", "examples") + ": no manifest.json"},
		{[]string{"compare", scen, scen, "--format", "frob"}, `--format "frob": want one of table, markdown, json`},
		{[]string{"cluster", "import", "--slurm-conf", "nope.conf"}, "--slurm-conf nope.conf: no such file or directory"},
		{[]string{"validate", "--policy", "frob"}, `--policy "frob": unknown policy`},
	} {
		code, stderr := exitCode(t, tc.args...)
		line := strings.TrimSuffix(stderr, "\n")
		if code != 2 || !strings.HasPrefix(line, "schedsim: ") || strings.Contains(line, "\n") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line", tc.args, code, stderr)
		}
		if !strings.Contains(line, tc.want) {
			t.Errorf("%q:\n got %s\nwant it to contain %s", tc.args, line, tc.want)
		}
		if m := goNames.FindString(line); m != "" {
			t.Errorf("%q: error names %q, not what the user gave: %s", tc.args, m, line)
		}
	}
}

// TestVersionFields: version prints the module version and VCS fields,
// and summary.json records the same version.
func TestVersionFields(t *testing.T) {
	out, err := schedsim(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	b := reports.ReadBuild()
	for _, want := range []string{"schedsim " + b.Version + "\n", "module    github.com/schedsim/schedsim\n", "revision  ", "modified  ", "go        go"} {
		if !strings.Contains(out, want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}
	// A build stamped from a checkout (as go build in a git clone stamps it).
	var sb strings.Builder
	stamped := reports.BuildOf(&debug.BuildInfo{Main: debug.Module{Path: reports.Module, Version: "v0.0.0-20261202101743-b5ae6ab09463+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "b5ae6ab09463a475ec1590031cca914792c52dc6"},
			{Key: "vcs.time", Value: "2026-12-02T10:17:43Z"}, {Key: "vcs.modified", Value: "true"}}})
	if err := printVersion(&sb, stamped); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"schedsim v0.0.0-20261202101743-b5ae6ab09463+dirty\n", "revision  b5ae6ab09463a475ec1590031cca914792c52dc6\n",
		"modified  yes (uncommitted changes)\n", "time      2026-12-02T10:17:43Z\n"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("version of a stamped build lacks %q:\n%s", want, sb.String())
		}
	}

	dir := filepath.Join(t.TempDir(), "run")
	if _, err := schedsim(t, "run", "--jobs", "50", "--quiet", "--out", dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Schedsim *struct {
			Version  *string `json:"version"`
			Revision *string `json:"revision"`
			Modified *bool   `json:"modified"`
		} `json:"schedsim"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Schedsim == nil || s.Schedsim.Version == nil || s.Schedsim.Revision == nil || s.Schedsim.Modified == nil {
		t.Fatalf("summary.json lacks schedsim.version, .revision or .modified:\n%.400s", data)
	}
	if *s.Schedsim.Version != b.Version || *s.Schedsim.Revision != b.Revision || *s.Schedsim.Modified != b.Modified {
		t.Errorf("summary.json schedsim = %q %q %v, version prints %q %q %v", *s.Schedsim.Version, *s.Schedsim.Revision, *s.Schedsim.Modified, b.Version, b.Revision, b.Modified)
	}
}
