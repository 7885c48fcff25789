package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestTutorialCommands replays the tutorials that run scenario files
// (../../testdata/scenarios/tutorial-first-run.txt, which
// docs/tutorial-first-run.md is made from) through the command line, as
// the tutorial says a reader can: each run is `schedsim run --scenario
// scenario.yaml --seed S` with the overrides as --set flags, and the
// summary table it prints must be the file's `show metrics` output. The
// scenario layer's own test (TestScenarioFiles in the module root) checks
// the other outputs.
func TestTutorialCommands(t *testing.T) {
	dir := t.TempDir()
	var sets []string
	var table string
	datadriven.RunTest(t, "../../testdata/scenarios/tutorial-first-run.txt", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "file", "scenario":
			name := "scenario.yaml"
			if d.Cmd == "file" {
				d.ScanArgs(t, "name", &name)
			} else {
				sets = nil
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(d.Input), 0o644); err != nil {
				t.Fatal(err)
			}
		case "override":
			for line := range strings.SplitSeq(strings.TrimSpace(d.Input), "\n") {
				sets = append(sets, "--set", strings.TrimSpace(line))
			}
		case "run":
			var seed uint64
			d.ScanArgs(t, "seed", &seed)
			args := append([]string{"run", "--scenario", filepath.Join(dir, "scenario.yaml"), "--seed", strconv.FormatUint(seed, 10), "--quiet"}, sets...)
			out, err := schedsim(t, args...)
			if err != nil {
				t.Fatalf("schedsim %s: %v", strings.Join(args, " "), err)
			}
			// The table follows the header line and a blank line.
			_, table, _ = strings.Cut(out, "\n\n")
		case "show":
			if d.CmdArgs[0].Key == "metrics" {
				return table
			}
		default:
			t.Fatalf("%s: the command line has no equivalent of %q", d.Pos, d.Cmd)
		}
		return d.Expected // what the command line does not print: checked by TestScenarioFiles
	})
}
