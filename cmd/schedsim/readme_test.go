package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// tourCommands returns the command lines of the README's "A tour"
// section: every line of its ```sh blocks that is not blank or a comment.
func tourCommands(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n## A tour\n")
	if start < 0 {
		t.Fatal(`README.md has no "## A tour" section`)
	}
	text = text[start+1:]
	if end := strings.Index(text[3:], "\n## "); end >= 0 {
		text = text[:end+3]
	}
	var lines []string
	in := false
	for l := range strings.SplitSeq(text, "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in && strings.TrimPrefix(l, "```") == "sh"
		case in && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#"):
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) < 10 {
		t.Fatalf("the tour has %d command lines; the section or its ```sh blocks moved", len(lines))
	}
	return lines
}

// exitsRe finds a line's expected exit status in its comment ("# exits 1: ...").
var exitsRe = regexp.MustCompile(`#\s*exits (\d+)`)

// tourClaims are figures the tour's comments state, checked in the output
// of the line that contains the key.
var tourClaims = map[string][]string{
	"bin/schedsim trace inspect examples/jobs.sacct #": {"jobs                    103", "users                   6", "partitions              3"},
	"--gate 'p95_wait:+5%'":                            {"-30.7 %  better"},
	"--gate 'gpu_util:-1pp'":                           {"-13.78 pp", "1 gate(s) broken: gpu_util:-1pp"},
}

// TestReadmeTour runs every command of the README's tour as written, in
// order, with sh, from a copy of a checkout (examples/ and, when it is
// there, ../shared beside it), with bin/schedsim the real main of this
// test binary: the go build line is the one line not run (it would build
// the same main), and "go run ./cmd/schedsim" runs bin/schedsim. Each
// line must exit as its comment says ("# exits 1"), else 0. Lines that
// read ../shared skip, with the reason, when it is absent.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the whole README tour (about 30 s)")
	}
	lines := tourCommands(t)
	repo, env, haveShared := checkout(t)
	shared, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared"))

	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "go build -o bin/schedsim ./cmd/schedsim"):
			t.Logf("not run (bin/schedsim is this test's main): %s", line)
			continue
		case strings.HasPrefix(line, "go run ./cmd/schedsim"):
			line = "bin/schedsim" + strings.TrimPrefix(line, "go run ./cmd/schedsim")
		case strings.HasPrefix(line, "bin/schedsim"), strings.HasPrefix(line, "schedsim "):
		default:
			t.Fatalf("tour line is not a schedsim command: %s", line)
		}
		if strings.Contains(line, "../shared") && !haveShared {
			t.Logf("skipped: %s needs the real traces, and %s is absent", line, shared)
			continue
		}
		want := 0
		if m := exitsRe.FindStringSubmatch(line); m != nil {
			want, _ = strconv.Atoi(m[1])
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir, cmd.Env = repo, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		got := exitOf(t, line, err)
		if got != want {
			t.Errorf("%s\nexit %d, want %d; stderr:\n%s", line, got, want, stderr.String())
			continue
		}
		for key, claims := range tourClaims {
			if !strings.Contains(line, key) {
				continue
			}
			for _, c := range claims {
				if !strings.Contains(stdout.String()+stderr.String(), c) {
					t.Errorf("%s\noutput lacks %q, which the README states:\n%s%s", line, c, stdout.String(), stderr.String())
				}
			}
		}
	}
	// The tour's import is the shipped spec, byte for byte.
	got, err := os.ReadFile(filepath.Join(repo, "results", "cluster.yaml"))
	if err != nil {
		t.Fatalf("the tour's cluster import wrote no results/cluster.yaml: %v", err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "examples", "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("cluster import of examples/*.conf differs from examples/cluster.yaml; rerun it:\n%s", got)
	}
}

// checkout makes a copy of what a fresh checkout holds for the examples
// to run in: examples/, conformance/ (linked) and CONFORMANCE.md, with
// ../shared beside it (linked) when the real traces are there, and
// bin/schedsim, also on PATH as schedsim, running this test binary's
// main (TestMain).
func checkout(t *testing.T) (repo string, env []string, haveShared bool) {
	t.Helper()
	root := t.TempDir()
	repo = filepath.Join(root, "checkout")
	copyDir(t, filepath.Join("..", "..", "examples"), filepath.Join(repo, "examples"))
	conf, _ := filepath.Abs(filepath.Join("..", "..", "conformance"))
	if err := os.Symlink(conf, filepath.Join(repo, "conformance")); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join("..", "..", "CONFORMANCE.md")); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(repo, "CONFORMANCE.md"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	shared, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared"))
	if st, err := os.Stat(filepath.Join(shared, "traces")); err == nil && st.IsDir() {
		if err := os.Symlink(shared, filepath.Join(root, "shared")); err != nil {
			t.Fatal(err)
		}
		haveShared = true
	}
	bin := filepath.Join(repo, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\nSCHEDSIM_RUN_MAIN=1 exec " + strconv.Quote(os.Args[0]) + ` "$@"` + "\n"
	if err := os.WriteFile(filepath.Join(bin, "schedsim"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return repo, env, haveShared
}

// exitOf is the exit status of a finished command.
func exitOf(t *testing.T, line string, err error) int {
	t.Helper()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return 0
}

// notRunHere are example lines the test cannot run, by a part of the
// line, with the reason.
var notRunHere = []struct{ part, why string }{
	{"/etc/slurm", "reads this machine's own Slurm configuration"},
	{"/scratch", "a Slurm job array's directory on a cluster"},
	{"schedsim probe", "reads NVIDIA GPUs through NVML"},
	{"profiles/", "needs job profiles measured on GPU nodes (schedsim probe --run)"},
	{"calibration.yaml", "needs the calibration calibrate fits from measured profiles"},
	{"completion", "installs shell completion into the shell"},
	{"go build", "builds the binary this test's main stands in for"},
}

// TestHelpExamplesRun runs the Example lines of every command's --help,
// in the order of the command tree, as written with sh in a copied
// checkout (see checkout), except those notRunHere names and those that
// need ../shared or jq where it is absent. Each must exit 0.
func TestHelpExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs every help example (about a minute)")
	}
	repo, env, haveShared := checkout(t)
	_, jqErr := exec.LookPath("jq")
	ran := 0
	walk(newRootCmd(), func(c *cobra.Command) {
	lines:
		for l := range strings.SplitSeq(c.Example, "\n") {
			line := strings.TrimSpace(l)
			if line == "" {
				continue
			}
			for _, n := range notRunHere {
				if strings.Contains(line, n.part) {
					t.Logf("not run (%s): %s", n.why, line)
					continue lines
				}
			}
			if strings.Contains(line, "../shared") && !haveShared {
				t.Logf("not run (needs ../shared/traces, absent): %s", line)
				continue
			}
			if strings.Contains(line, "| jq") && jqErr != nil {
				t.Logf("not run (jq not installed): %s", line)
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			cmd := exec.CommandContext(ctx, "sh", "-c", line)
			cmd.Dir, cmd.Env = repo, env
			out, err := cmd.CombinedOutput()
			cancel()
			if got := exitOf(t, line, err); got != 0 {
				t.Errorf("%s example %s\nexit %d:\n%s", c.CommandPath(), line, got, out)
			}
			ran++
		}
	})
	if ran < 40 {
		t.Errorf("ran %d example lines; the help has more", ran)
	}
}

// TestExampleSacctGenerated: examples/jobs.sacct is what its generator
// writes (python3 scripts/make-example-sacct.py).
func TestExampleSacctGenerated(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: cannot rerun scripts/make-example-sacct.py")
	}
	out, err := exec.Command(py, filepath.Join("..", "..", "scripts", "make-example-sacct.py")).Output()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "examples", "jobs.sacct"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("examples/jobs.sacct differs from the output of scripts/make-example-sacct.py; regenerate it")
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
