package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// docsCommands returns the commands of the ```sh blocks of a Markdown
// file, in order: a command runs on over lines that end in a backslash
// or leave a quote open; blank lines and comment lines are left out.
func docsCommands(text string) []string {
	var out []string
	in := false
	var cur strings.Builder
	open := func(s string) bool { return strings.Count(s, "'")%2 == 1 }
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in && strings.TrimPrefix(l, "```") == "sh"
			cur.Reset()
			continue
		}
		if !in {
			continue
		}
		if cur.Len() == 0 && (strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#")) {
			continue
		}
		cur.WriteString(l + "\n")
		if s := cur.String(); !strings.HasSuffix(strings.TrimRight(l, " "), `\`) && !open(s) {
			out = append(out, strings.TrimSpace(s))
			cur.Reset()
		}
	}
	return out
}

// docsNotRun are the command lines of docs/ that need what a fresh
// checkout on a machine without Slurm lacks, by a part of the line, with
// the reason; notRunHere (the help examples') applies as well.
var docsNotRun = []struct{ part, why string }{
	{"scripts/collect-slurm-records.sh", "runs sacct, scontrol and sacctmgr on a Slurm login node"},
	{"site-week", "reads the records bundle collected on a production cluster"},
	{"sudo ", "runs as root"},
	{"prometheus --", "starts a Prometheus server"},
	{"sbatch", "submits a Slurm job array"},
	{"sweep merge", "joins the shards of a finished Slurm job array"},
	{"bench/year", "the year benchmark: a minute or more a run, and bench/ is not in the copied checkout"},
	{"go test", "a test of this module, not a schedsim command"},
	{"GOMAXPROCS=", "benchmark measurement"},
	{" [", "a synopsis ([optional] arguments), not a command"},
	{"conformance/record-gen.sh", "records on a real Slurm (root)"},
}

// TestDocsCommands runs every command of the ```sh blocks of docs/*.md,
// in file order and within a file in order, with sh in a copied checkout
// (see checkout: examples/, the conformance records, bin/schedsim on
// PATH as schedsim), except those docsNotRun and notRunHere name, those
// that need ../shared where it is absent and the promtool ones where
// promtool is not installed. Each must exit 0, so a command reads only
// files that ship or that an earlier command of its page writes.
func TestDocsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs every docs/ command (two to four minutes: three sweeps, two promtool runs)")
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	sort.Strings(files)
	_, promErr := exec.LookPath("promtool")
	ran := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cmds := docsCommands(string(data))
		if len(cmds) == 0 {
			continue
		}
		// Each page starts from a fresh checkout: its commands may read
		// what an earlier command of the same page wrote, nothing else.
		repo, env, haveShared := checkout(t)
	cmds:
		for _, c := range cmds {
			where := filepath.Base(f) + ": " + c
			for _, n := range append(docsNotRun, notRunHere...) {
				if strings.Contains(c, n.part) {
					t.Logf("not run (%s): %s", n.why, where)
					continue cmds
				}
			}
			switch {
			case strings.HasPrefix(c, "make "):
				t.Logf("not run (a Makefile target of the source tree, which the copied checkout is not): %s", where)
				continue
			case strings.Contains(c, "../shared") && !haveShared:
				t.Logf("not run (needs ../shared/traces, absent): %s", where)
				continue
			case strings.HasPrefix(c, "promtool") && promErr != nil:
				t.Logf("not run (promtool not installed; Debian: apt-get install prometheus): %s", where)
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			cmd := exec.CommandContext(ctx, "sh", "-c", c)
			cmd.Dir, cmd.Env = repo, env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			cancel()
			if got := exitOf(t, c, err); got != 0 {
				t.Errorf("%s\nexit %d:\n%s", where, got, out.String())
			}
			ran++
		}
	}
	t.Logf("ran %d docs commands", ran)
	if ran < 8 {
		t.Errorf("ran %d docs commands; the pages have more", ran)
	}
}

// TestDocsCommandsParse checks how docsCommands splits a block.
func TestDocsCommandsParse(t *testing.T) {
	text := "x\n```sh\n# a comment\nschedsim run --out a   # trailing comment\n\nawk '/^#/ { print }\n     { print }' in > out\nschedsim b \\\n  --c d\n```\n```yaml\nschedsim not: sh\n```\n"
	got := docsCommands(text)
	want := []string{"schedsim run --out a   # trailing comment", "awk '/^#/ { print }\n     { print }' in > out", "schedsim b \\\n  --c d"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
