package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runSplit runs schedsim in-process with separate stdout and stderr.
func runSplit(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

const seedDir = "../../hwmodels/testdata/seeds"

// confLines returns the logical lines of a Slurm config file: comments
// dropped, continuations joined, blanks collapsed.
func confLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur string
	for _, l := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSpace(l)
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		if l = strings.Join(strings.Fields(cur+l), " "); l != "" {
			out = append(out, l)
		}
		cur = ""
	}
	return out
}

// TestClusterImportShowSeeds imports the seed snippets (hwmodels/testdata/
// seeds, copied from ../shared/seeds/000_48ac19395f05d47b.txt) and checks
// that cluster show gives back every one of their lines: each
// PartitionName line's keys (Priority=N shown as PriorityTier=N
// PriorityJobFactor=N, as Slurm reads the pre-16.05 key), the NodeName
// line, each gres.conf line's node, type and count, GresTypes, and the
// topology's switches.
func TestClusterImportShowSeeds(t *testing.T) {
	slurmConf := filepath.Join(seedDir, "mevasis-slurm.conf")
	for _, gres := range []string{"mevasis-gres.conf", "mevasis-gres-mig.conf"} {
		t.Run(gres, func(t *testing.T) {
			path, show, shown, warns := importShow(t, "--slurm-conf", slurmConf,
				"--gres-conf", filepath.Join(seedDir, gres), "--topology-conf", filepath.Join(seedDir, "mevasis-topology.conf"))
			if gres == "mevasis-gres-mig.conf" && !strings.Contains(warns, "Type=h100_1g.20gb Count=56 on 8 GPUs cannot be configured (h100-80gb: 7 × 1g.20gb: at most 4 per GPU)") {
				t.Errorf("want the seed's impossible MIG count warned about, got:\n%s", warns)
			}
			has := func(line string) {
				t.Helper()
				if !shown[line] {
					t.Errorf("cluster show lacks the line\n  %s\nin:\n%s", line, show)
				}
			}
			priority := regexp.MustCompile(`Priority=(\d+)`)
			for _, l := range confLines(t, slurmConf) {
				switch {
				case strings.HasPrefix(l, "PartitionName="):
					// The show line holds the seed line's keys, in Slurm's
					// order: name, nodes, limits, flags, then kept keys.
					want := priority.ReplaceAllString(l, "PriorityTier=$1 PriorityJobFactor=$1")
					fields := strings.Fields(want)
					var line string
					for s := range shown {
						if strings.HasPrefix(s, fields[0]+" ") {
							line = s
						}
					}
					for _, f := range fields {
						if !slices.Contains(strings.Fields(line), f) {
							t.Errorf("partition line %q: shown as %q, lacks %s", l, line, f)
						}
					}
				case strings.HasPrefix(l, "NodeName="):
					has(l)
				case strings.HasPrefix(l, "GresTypes="):
					has(l)
				default:
					t.Fatalf("unexpected seed line %q", l)
				}
			}
			for _, l := range confLines(t, filepath.Join(seedDir, gres)) {
				// NodeName=gpu01 Name=gpu Type=h100 File=… Count=8: the node's
				// group line shows Gres=gpu:h100:8.
				kv := map[string]string{}
				for _, f := range strings.Fields(l) {
					k, v, _ := strings.Cut(f, "=")
					kv[k] = v
				}
				typ := kv["Type"]
				if strings.Contains(typ, "_") {
					continue // the MIG line: warned about above, GPUs stay whole
				}
				has("NodeName=gpu[01-04] CPUs=112 RealMemory=2000000 Gres=gpu:" + typ + ":" + kv["Count"])
			}
			has("tree: 3 switches (2 leaves, 2 levels), 4 of 4 nodes attached, max oversubscription 1:1")
			has("h100  32")

			js, _, err := runSplit(t, "cluster", "show", "--json", path)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Nodes      int                        `json:"nodes"`
				GPUs       int                        `json:"gpus"`
				Partitions map[string]json.RawMessage `json:"partitions"`
			}
			if err := json.Unmarshal([]byte(js), &got); err != nil {
				t.Fatal(err)
			}
			if got.Nodes != 4 || got.GPUs != 32 || len(got.Partitions) != 3 || got.Partitions["gpu-interactive"] == nil {
				t.Errorf("json: %+v", got)
			}
		})
	}
}

func TestClusterImportErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	// The seed's partitions without any NodeName line: Slurm would refuse.
	noNodes := write("nonodes.conf", "GresTypes=gpu\nPartitionName=gpu-short Nodes=gpu[01-04] MaxTime=04:00:00\n")
	_, _, err := runSplit(t, "cluster", "import", "--slurm-conf", noNodes)
	if err == nil || !strings.Contains(err.Error(), "no NodeName lines") {
		t.Errorf("no nodes: %v", err)
	}
	undefined := write("undef.conf", "NodeName=gpu[01-02] CPUs=8 RealMemory=1000\nPartitionName=p Nodes=gpu[01-04]\n")
	_, _, err = runSplit(t, "cluster", "import", "--slurm-conf", undefined)
	if err == nil || err.Error() != filepath.Join(dir, "undef.conf")+":2: Nodes: partition p names node gpu03, which no NodeName line defines" {
		t.Errorf("undefined node: %v", err)
	}
	if _, _, code := runHW(t, "cluster", "import", "--slurm-conf", undefined); code != exitBadInput {
		t.Errorf("exit %d, want %d", code, exitBadInput)
	}
	_, _, err = runSplit(t, "cluster", "show", write("bad.yaml", "version: 1\nname: x\nnode_groups: []\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:3: node_groups: must list at least one node group") {
		t.Errorf("show bad spec: %v", err)
	}
}

// TestClusterImportWrongFile: a gres.conf or topology.conf given as
// --slurm-conf exits 2 with one line naming the file, the line that gave
// it away and the flag it belongs to; no spec is printed.
func TestClusterImportWrongFile(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		// examples/gres.conf line 5 is its first NodeName line.
		{"../../examples/gres.conf", "schedsim: --slurm-conf ../../examples/gres.conf:5: a NodeName line with Name=, Type=, File=, Count= is a gres.conf line, not a slurm.conf one: give this file as --gres-conf\n"},
		// examples/topology.conf line 3 is its first SwitchName line.
		{"../../examples/topology.conf", "schedsim: --slurm-conf ../../examples/topology.conf:3: SwitchName= begins a topology.conf line, not a slurm.conf one: give this file as --topology-conf\n"},
	} {
		code, stderr := exitCode(t, "cluster", "import", "--slurm-conf", tc.file)
		if code != 2 || stderr != tc.want {
			t.Errorf("cluster import --slurm-conf %s: exit %d, stderr %q; want exit 2, %q", tc.file, code, stderr, tc.want)
		}
	}
}

// TestNotSlurmConfAcceptsSlurmConfs: no slurm.conf of the repository
// (the seeds, the conformance records, the examples) is taken for a
// gres.conf or topology.conf.
func TestNotSlurmConfAcceptsSlurmConfs(t *testing.T) {
	var n int
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasPrefix(d.Name(), "slurm") || !strings.HasSuffix(d.Name(), ".conf") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if err := notSlurmConf(path, data); err != nil {
			t.Error(err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("read %d slurm*.conf files; the repository has more", n)
	}
}

// importShow runs cluster import with args, writes the spec and runs
// cluster show on it: the spec's path, the output, its lines trimmed, and
// the import's warnings.
func importShow(t *testing.T, args ...string) (path, show string, shown map[string]bool, warns string) {
	t.Helper()
	spec, warns, err := runSplit(t, append([]string{"cluster", "import"}, args...)...)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, warns)
	}
	path = filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	show, _, err = runSplit(t, "cluster", "show", path)
	if err != nil {
		t.Fatalf("show: %v", err)
	}
	shown = map[string]bool{}
	for _, l := range strings.Split(show, "\n") {
		shown[strings.TrimSpace(l)] = true
	}
	return path, show, shown, warns
}

// TestClusterShowBlocks: a topology/block cluster shows its blocks and
// BlockSizes as topology.conf lines: every line of examples/nvl's
// topology.conf is in cluster show's output, and --json lists the blocks.
func TestClusterShowBlocks(t *testing.T) {
	path, show, shown, _ := importShow(t, "--slurm-conf", filepath.Join("..", "..", "examples", "nvl", "slurm.conf"))
	for _, l := range confLines(t, filepath.Join("..", "..", "examples", "nvl", "topology.conf")) {
		if !shown[l] {
			t.Errorf("cluster show lacks the line\n  %s\nin:\n%s", l, show)
		}
	}
	js, _, err := runSplit(t, "cluster", "show", "--json", path)
	if err != nil {
		t.Fatalf("show --json: %v", err)
	}
	if !strings.Contains(js, `"block_sizes": [`) || !strings.Contains(js, `"name": "rack4"`) {
		t.Errorf("show --json lacks the blocks:\n%s", js)
	}
}
