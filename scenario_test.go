package schedsim

import (
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"unknown key", "version: 1\ncluster: {builtin: example}\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: easy}\nsed: 4\n",
			`s.yaml:5: unknown key "sed"`},
		{"nested unknown key", "version: 1\ncluster:\n  builtin: example\n  flie: x\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: easy}\n",
			`s.yaml:4: cluster: unknown key "flie" (want file, builtin, inline, calibration)`},
		{"version", "version: 2\ncluster: {builtin: example}\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: easy}\n",
			"s.yaml:1: version: must be 1, got 2"},
		{"no cluster", "version: 1\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: easy}\n",
			"s.yaml:1: cluster: give one of file, builtin or inline"},
		{"two clusters", "version: 1\ncluster:\n  builtin: example\n  file: c.yaml\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: easy}\n",
			"s.yaml:2: cluster: give only one of file, builtin or inline"},
		{"bad builtin", "version: 1\ncluster:\n  builtin: big\ntrace: {builtin: llnl-thunder-slice}\npolicy: {name: easy}\n",
			`s.yaml:3: cluster.builtin: unknown builtin "big" (want example, swf-header)`},
		{"bad format", "version: 1\ncluster: {builtin: example}\ntrace:\n  file: x\n  format: xml\npolicy: {name: easy}\n",
			`s.yaml:5: trace.format: unknown format "xml" (want sacct, swf, csv, eagle, helios, alibaba, philly, arrow, parquet, or leave empty to detect)`},
		{"negative", "version: 1\ncluster: {builtin: example}\ntrace:\n  file: x\n  swf:\n    procs_per_gpu: -4\npolicy: {name: easy}\n",
			"s.yaml:6: trace.swf.procs_per_gpu: must be >= 0, got -4"},
		{"type", "version: one\n", `s.yaml:1: version: want an integer, got "one"`},
		{"no policy", "version: 1\ncluster: {builtin: example}\ntrace: {builtin: llnl-thunder-slice}\n",
			"s.yaml:1: policy.name: missing (want a policy name such as easy or fifo)"},
		{"syntax", "version: 1\ncluster: [\n", "s.yaml:2: did not find expected node content"},
		{"empty", "", "s.yaml: empty scenario (want at least version: 1)"},
		{"repeated key", "version: 1\nseed: 1\nseed: 2\n", "s.yaml:3: seed: key given twice (first at line 2)"},
		{"two documents", "version: 1\n---\nversion: 1\n", "s.yaml:2: a second YAML document (want one document)"},
		{"list for a mapping", "version: 1\ncluster: [example]\n", "s.yaml:2: cluster: want a mapping, got a list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "s.yaml")
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFragmentKeepsLines(t *testing.T) {
	src := "version: 1\nname: x\ncluster:\n  inline:\n    version: 1\n    name: tiny\ntrace: {file: t.swf}\npolicy:\n  name: easy\n  args: {foo: 3}\n"
	s, err := Parse([]byte(src), "dir/s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	frag := string(s.Fragment(&s.Cluster.Inline))
	want := "\n\n\n\n    version: 1\n    name: tiny\n"
	if frag != want {
		t.Errorf("cluster fragment %q, want %q", frag, want)
	}
	args := string(s.Fragment(&s.Policy.Args))
	if want := strings.Repeat("\n", 9) + "        {foo: 3}\n"; args != want {
		t.Errorf("args fragment %q, want %q", args, want)
	}
	var v struct {
		Foo int `yaml:"foo"`
	}
	if err := DecodeStrict([]byte(args), s.Path, &v); err != nil || v.Foo != 3 {
		t.Errorf("decode args: %v, foo=%d", err, v.Foo)
	}
	var w struct {
		Bar int `yaml:"bar"`
	}
	if err := DecodeStrict([]byte(args), s.Path, &w); err == nil || err.Error() != `dir/s.yaml:10: unknown key "foo" (want bar)` {
		t.Errorf("strict decode error = %v", err)
	}
	if got := s.Resolve("t.swf"); got != "dir/t.swf" {
		t.Errorf("Resolve = %q", got)
	}
}

// TestSavedNullSections: a saved scenario of an older build, with
// "inline: null" and "args: null", reads as no inline cluster and no
// arguments.
func TestSavedNullSections(t *testing.T) {
	src := "version: 1\ncluster:\n  file: \"\"\n  builtin: example\n  inline: null\ntrace: {builtin: llnl-thunder-slice}\npolicy:\n  name: easy\n  args: null\n"
	s, err := Parse([]byte(src), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Cluster.Inline.IsZero() || s.Fragment(&s.Policy.Args) != nil {
		t.Errorf("inline %v, args %v", s.Cluster.Inline, s.Policy.Args)
	}
}
