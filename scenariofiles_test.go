package schedsim_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/reports"
	"github.com/schedsim/schedsim/workload"
)

var updateFiles = flag.Bool("update-scenarios", false, "rewrite testdata/scenarios and the tutorials in docs/ from the current code (as datadriven's -rewrite)")

// TestScenarioFiles runs the scenario files testdata/scenarios/*.txt
// (cockroachdb/datadriven) through the scenario layer as a library user
// would: Load or a Scenario built in Go, Override, Build, Simulate and
// Analyze. Each file is a sequence of hand-worked schedules: a cluster,
// jobs, a policy, a run with its seed, and the expected per-job table and
// metrics, the arithmetic in the file's comments. Rewrite the expected
// output (only for an intended change, checking every figure against the
// comments) with
//
//	go test . -run ScenarioFiles -rewrite
//
// which also regenerates the tutorials in docs/ made from the files
// named tutorial-*.txt (see TestTutorials).
//
// The commands; the cluster and jobs lines are policytest's
// (policytest.ClusterDirective, JobsDirective), the vocabulary of the
// policies' own scenario files:
//
//	file name=NAME
//	<text>
//	    writes NAME into the run's directory: a trace, a cluster spec.
//	scenario
//	<a scenario file, YAML>
//	    docs/scenario.md's file, written as scenario.yaml into the run's
//	    directory (its relative paths are taken from there) and loaded
//	    with schedsim.Load; it replaces the cluster, jobs, policy and
//	    overrides given before.
//	cluster [parts=P1,P2] [tiers=T1,T2]
//	<one node per line: NAME gpus=G [type=T] [cpus=C] [mem=MiB] [parts=P1,P2]>
//	    the cluster, built in Go (Cluster.Spec).
//	jobs
//	<one job per line: ID submit=S limit=L run=R [gpus=G] [nodes=N] [cpus=C] [type=T] [part=P] [user=U]>
//	    the workload, built in Go (Trace.Jobs).
//	policy name=P
//	[<the policy's args, YAML>]
//	    the policy section: fifo, easy, conservative or slurm.
//	override
//	<one KEY=VALUE per line>
//	    Scenario.Override, what a flag (or --set KEY=VALUE) does.
//	run seed=S
//	    builds, simulates and analyzes the scenario with seed S (every
//	    run pins its seed) and prints policytest.Summary: jobs, states,
//	    waits, end. An error is the output, as "error: ...".
//	show jobs [every=K]
//	    the last run's per-job table (policytest.JobTable): submit,
//	    start, end, state, partition, requeues, last pending reason and
//	    nodes (name:GPUs) of every job, or every K-th.
//	show metrics
//	    the last run's summary table, as `schedsim run` prints it
//	    (reports.WriteTable).
//
// Example:
//
//	file name=jobs.swf
//	1 0 -1 100 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1
//	----
//
//	scenario
//	version: 1
//	cluster: {builtin: example}
//	trace: {file: jobs.swf, swf: {procs_per_gpu: 1}}
//	policy: {name: easy}
//	----
//
//	cluster
//	n0 gpus=8
//	----
//
//	jobs
//	A submit=0 limit=100 run=100 gpus=8
//	----
//
//	policy name=slurm
//	bf_interval: 10
//	----
//
//	override
//	trace.transforms.scale_load=1.5
//	----
//
//	run seed=1
//	----
//	jobs 1, started 1 (COMPLETED 1); wait total 0 s, mean 0.0 s, max 0 s; earlier runs 0; reason changes 0; end 100
//
//	show jobs
//	----
//	job        submit    start      end state      part    rq reason    nodes
//	A               0        0      100 COMPLETED  main     0 -         n0:8
//
//	show metrics
//	----
//	cluster     test: 1 nodes, 8 GPUs, 64 CPUs, 1 partitions
//	...
func TestScenarioFiles(t *testing.T) {
	rewriteFiles(t)
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files (%v)", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			st := &fileState{dir: t.TempDir()}
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				return st.do(t, d)
			})
		})
	}
}

// rewriteFiles makes -update-scenarios rewrite as -rewrite does.
func rewriteFiles(t *testing.T) {
	t.Helper()
	if *updateFiles {
		if err := flag.Set("rewrite", "true"); err != nil {
			t.Fatal(err)
		}
	}
}

// fileState is what the commands of one file have set up.
type fileState struct {
	dir       string // the run's directory
	scenario  string // the scenario command's text; "" for none
	cluster   *hwmodels.Cluster
	jobs      []workload.Job
	policy    *schedsim.Policy
	overrides [][2]string
	last      *schedsim.Result
}

func (st *fileState) do(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "file":
		var name string
		d.ScanArgs(t, "name", &name)
		if name != filepath.Base(name) {
			d.Fatalf(t, "name=%s: want a file name, no directory", name)
		}
		if err := os.WriteFile(filepath.Join(st.dir, name), []byte(d.Input), 0o644); err != nil {
			d.Fatalf(t, "%v", err)
		}
		return ""
	case "scenario":
		*st = fileState{dir: st.dir, scenario: d.Input}
		return ""
	case "cluster":
		st.cluster = policytest.ClusterDirective(t, d)
		return ""
	case "jobs":
		st.jobs = policytest.JobsDirective(t, d)
		return ""
	case "policy":
		p := &schedsim.Policy{}
		d.ScanArgs(t, "name", &p.Name)
		if strings.TrimSpace(d.Input) != "" {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(d.Input), &doc); err != nil {
				d.Fatalf(t, "policy args: %v", err)
			}
			p.Args = *doc.Content[0]
		}
		st.policy = p
		return ""
	case "override":
		for line := range strings.SplitSeq(strings.TrimSpace(d.Input), "\n") {
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				d.Fatalf(t, "%q: want KEY=VALUE", line)
			}
			st.overrides = append(st.overrides, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
		}
		return ""
	case "run":
		var seed uint64
		d.ScanArgs(t, "seed", &seed)
		res, err := st.run(seed)
		if err != nil {
			st.last = nil
			return "error: " + strings.ReplaceAll(err.Error(), st.dir+string(filepath.Separator), "") + "\n"
		}
		st.last = res
		return policytest.Summary(res.Record) + "\n"
	case "show":
		if st.last == nil {
			d.Fatalf(t, "show without a successful run before it")
		}
		if len(d.CmdArgs) != 1 {
			d.Fatalf(t, "want show jobs or show metrics")
		}
		switch d.CmdArgs[0].Key {
		case "jobs":
			every := 1
			d.MaybeScanArgs(t, "every", &every)
			_, table, _ := strings.Cut(policytest.JobTable(st.last.Record, every), "\n")
			return table
		case "metrics":
			var b bytes.Buffer
			if err := reports.WriteTable(&b, st.last.Analysis.Summary); err != nil {
				d.Fatalf(t, "%v", err)
			}
			return b.String()
		}
		d.Fatalf(t, "show %s: want jobs or metrics", d.CmdArgs[0].Key)
	}
	d.Fatalf(t, "unknown command %q", d.Cmd)
	return ""
}

// run assembles the scenario and runs it through the library.
func (st *fileState) run(seed uint64) (*schedsim.Result, error) {
	s := &schedsim.Scenario{Version: schedsim.Version}
	if st.scenario != "" {
		path := filepath.Join(st.dir, "scenario.yaml")
		if err := os.WriteFile(path, []byte(st.scenario), 0o644); err != nil {
			return nil, err
		}
		var err error
		if s, err = schedsim.Load(path); err != nil {
			return nil, err
		}
	}
	if st.cluster != nil {
		s.Cluster = schedsim.Cluster{Spec: st.cluster}
	}
	if st.jobs != nil {
		s.Trace = schedsim.Trace{Jobs: &workload.Trace{Source: "jobs command", Jobs: st.jobs}}
	}
	if st.policy != nil {
		s.Policy = *st.policy
	}
	s.Seed = seed
	for _, o := range st.overrides {
		// Paths are relative to the run's directory, as a shell's would be
		// there.
		if o[0] == "trace" || o[0] == "cluster" || strings.HasSuffix(o[0], ".file") {
			if _, err := os.Stat(filepath.Join(st.dir, o[1])); err == nil {
				o[1] = filepath.Join(st.dir, o[1])
			}
		}
		if err := s.Override(o[0], o[1]); err != nil {
			return nil, err
		}
	}
	return s.Run()
}

// TestTutorials checks that each tutorial docs/tutorial-NAME.md is the
// rendering of its scenario file testdata/scenarios/tutorial-NAME.txt,
// whose output TestScenarioFiles checks against the runs: a tutorial
// cannot show output the code does not print. -rewrite (or
// -update-scenarios) writes them.
func TestTutorials(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/tutorial-*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no tutorial scenario files (%v)", err)
	}
	rewrite := *updateFiles || flag.Lookup("rewrite").Value.String() == "true"
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		md, err := renderTutorial(filepath.ToSlash(path), string(src))
		if err != nil {
			t.Fatal(err)
		}
		doc := filepath.Join("docs", strings.TrimSuffix(filepath.Base(path), ".txt")+".md")
		if rewrite {
			if err := os.WriteFile(doc, []byte(md), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(doc)
		if err != nil {
			t.Fatalf("%v (go test . -run 'ScenarioFiles|Tutorials' -rewrite writes it)", err)
		}
		if d := cmp.Diff(string(want), md); d != "" {
			t.Errorf("%s is not the rendering of %s; edit the scenario file and rewrite (-want +got):\n%s", doc, path, d)
		}
	}
}

// renderTutorial turns a scenario file into Markdown: its comment lines
// (# text) become the prose, a comment line "# ## Title" a heading, and
// each command a fenced block with the command, its input and, after
// "----", what it printed. file and scenario commands show their input as
// the file it is.
func renderTutorial(path, src string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Generated from %s by TestTutorials (go test . -run 'ScenarioFiles|Tutorials' -rewrite); edit that file, not this one. -->\n\n", path)
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	prose := false // the last thing written was prose
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "#"):
			text := strings.TrimPrefix(strings.TrimPrefix(l, "#"), " ")
			if text == "" {
				b.WriteString("\n")
			} else {
				b.WriteString(text + "\n")
			}
			prose = true
			i++
			continue
		case strings.TrimSpace(l) == "":
			i++
			continue
		}
		if prose {
			b.WriteString("\n")
			prose = false
		}
		// A command: its line, input up to "----", output up to a blank
		// line (or, for output with blank lines, between "----\n----"
		// pairs).
		cmdLine := l
		i++
		var input []string
		for i < len(lines) && lines[i] != "----" {
			input = append(input, lines[i])
			i++
		}
		if i == len(lines) {
			return "", fmt.Errorf("%s: %q has no ----", path, cmdLine)
		}
		i++
		var output []string
		if i < len(lines) && lines[i] == "----" {
			i++
			for i+1 < len(lines) && (lines[i] != "----" || lines[i+1] != "----") {
				output = append(output, lines[i])
				i++
			}
			i += 2
		} else {
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				output = append(output, lines[i])
				i++
			}
		}
		cmd, args, _ := strings.Cut(cmdLine, " ")
		switch cmd {
		case "file", "scenario":
			name := "scenario.yaml"
			if cmd == "file" {
				name = strings.TrimPrefix(args, "name=")
			}
			lang := "text"
			if strings.HasSuffix(name, ".yaml") {
				lang = "yaml"
			}
			fmt.Fprintf(&b, "`%s`:\n\n```%s\n%s\n```\n\n", name, lang, strings.Join(input, "\n"))
		default:
			fmt.Fprintf(&b, "```\n%s\n", cmdLine)
			if len(input) > 0 {
				b.WriteString(strings.Join(input, "\n") + "\n")
			}
			if len(output) > 0 {
				b.WriteString("----\n" + strings.Join(output, "\n") + "\n")
			}
			b.WriteString("```\n\n")
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}
