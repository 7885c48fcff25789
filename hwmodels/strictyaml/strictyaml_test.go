package strictyaml

import (
	"errors"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

type seeds []int

// UnmarshalYAML accepts a list or a count, and says where it fails.
func (s *seeds) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return Errorf(n, "want a list of seeds, got %q", n.Value)
	}
	var l []int
	if err := n.Decode(&l); err != nil {
		return err
	}
	*s = l
	return nil
}

type doc struct {
	Version int               `yaml:"version"`
	Name    string            `yaml:"name"`
	Ratio   float64           `yaml:"ratio"`
	On      *bool             `yaml:"on"`
	Groups  []group           `yaml:"groups"`
	Labels  map[string]string `yaml:"labels"`
	Args    yaml.Node         `yaml:"args"`
	Any     any               `yaml:"any"`
	Seeds   seeds             `yaml:"seeds"`
	Skip    string            `yaml:"-"`
	Plain   int
}

type group struct {
	Name  string `yaml:"name"`
	Count int    `yaml:"count"`
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
		kind            error
	}{
		{"syntax", "version: 1\nname: [a\n", "line 1: did not find expected ',' or ']'", ErrSyntax},
		{"tab", "version: 1\n\tname: c\n", "line 2: found a tab character that violates indentation", ErrSyntax},
		{"two documents", "version: 1\n---\nversion: 2\n", "line 2: a second YAML document (want one document)", ErrDocuments},
		{"unknown key", "version: 1\nnmae: x\n", `line 2: unknown key "nmae" (want version, name, ratio, on, groups, labels, args, any, seeds, plain)`, ErrSchema},
		{"a yaml:\"-\" field is no key", "skip: x\n", `line 1: unknown key "skip" (want version, name, ratio, on, groups, labels, args, any, seeds, plain)`, ErrSchema},
		{"nested unknown key", "groups:\n  - name: a\n  - name: b\n    cnt: 3\n", `line 4: groups[1]: unknown key "cnt" (want name, count)`, ErrSchema},
		{"repeated key", "name: a\nversion: 1\nname: b\n", "line 3: name: key given twice (first at line 1)", ErrRepeated},
		{"bad merge", "groups:\n  - <<: 3\n", `line 2: groups[0].<<: want a mapping or a list of mappings to merge, got "3"`, ErrSyntax},
		{"null", "groups: [{name: {}}]\n", "line 1: groups[0].name: want a string, got a mapping", ErrSchema},
		{"integer", "version: one\n", `line 1: version: want an integer, got "one"`, ErrSchema},
		{"float", "ratio: fast\n", `line 1: ratio: want a number, got "fast"`, ErrSchema},
		{"bool", "on: maybe\n", `line 1: on: want true or false, got "maybe"`, ErrSchema},
		{"list for a mapping", "groups: [[1]]\n", "line 1: groups[0]: want a mapping, got a list", ErrSchema},
		{"mapping for a scalar", "name: {a: 1}\n", "line 1: name: want a string, got a mapping", ErrSchema},
		{"scalar for a list", "groups: 3\n", `line 1: groups: want a list, got "3"`, ErrSchema},
		{"map value", "labels:\n  a: [1]\n", "line 2: labels.a: want a string, got a list", ErrSchema},
		{"unmarshaler keeps its line", "version: 1\nseeds: many\n", `line 2: seeds: want a list of seeds, got "many"`, ErrSchema},
		{"through an alias", "groups:\n  - &g {name: a, size: 1}\n  - *g\n", `line 2: groups[0]: unknown key "size" (want name, count)`, ErrSchema},
		{"merged keys are checked", "base: &b {name: a}\n", `line 1: unknown key "base" (want version, name, ratio, on, groups, labels, args, any, seeds, plain)`, ErrSchema},
		{"merge of a merged key", "groups:\n  - &g {name: a}\n  - <<: *g\n    cont: 2\n", `line 4: groups[1]: unknown key "cont" (want name, count)`, ErrSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d doc
			err := Decode([]byte(tt.src), &d)
			var e *Error
			if !errors.As(err, &e) || err.Error() != tt.want || !errors.Is(err, tt.kind) {
				t.Errorf("Decode(%q) = %v, want *Error %q (%v)", tt.src, err, tt.want, tt.kind)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	src := `version: 1
name: x
ratio: 2.5
on: true
groups:
  - &g {name: a, count: 2}
  - <<: *g
    name: b
labels: {k: v}
args: {anything: [1, 2]}
any: [1, {a: b}]
seeds: [1, 2]
plain: 3
`
	var d doc
	if err := Decode([]byte(src), &d); err != nil {
		t.Fatal(err)
	}
	if d.Version != 1 || d.Name != "x" || d.Ratio != 2.5 || d.On == nil || !*d.On || len(d.Groups) != 2 ||
		d.Groups[1] != (group{Name: "b", Count: 2}) || d.Labels["k"] != "v" || d.Args.Kind != yaml.MappingNode ||
		len(d.Seeds) != 2 || d.Plain != 3 {
		t.Errorf("decoded %+v", d)
	}
	// An empty document leaves the value as it is.
	d = doc{Name: "kept"}
	if err := Decode([]byte("# nothing\n"), &d); err != nil || d.Name != "kept" {
		t.Errorf("empty document: %v, %+v", err, d)
	}
}

// tree is a list of lists, so that the check walks every alias.
type tree []tree

// TestAliasBomb: the check is bounded as go-yaml's own decoding is: nine
// levels of ten aliases would be 10^9 nodes.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a: &a [[], [], [], [], [], [], [], [], [], []]\n")
	prev := "a"
	for _, k := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(k + ": &" + k + " [")
		for i := range 10 {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = k
	}
	var v map[string]tree
	err := Decode([]byte(b.String()), &v)
	if err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Fatalf("a billion laughs: %v", err)
	}
}

func TestLine(t *testing.T) {
	root, err := Parse([]byte("a:\n  b:\n    - x\n    - y: 1\n      z: 2\nc: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path []any
		want int
	}{
		{nil, 1},
		{[]any{"a"}, 1},
		{[]any{"a", "b"}, 2},
		{[]any{"a", "b", 1}, 4},
		{[]any{"a", "b", 1, "z"}, 5},
		{[]any{"a", "b", 7}, 2},   // no such index: the deepest found
		{[]any{"a", "nope"}, 1},   // no such key
		{[]any{"c", "deeper"}, 6}, // under a scalar
	} {
		if got := Line(root, tt.path...); got != tt.want {
			t.Errorf("Line(%v) = %d, want %d", tt.path, got, tt.want)
		}
	}
	if Line(nil, "a") != 0 {
		t.Error("Line(nil) != 0")
	}
}

func TestFileError(t *testing.T) {
	kind := errors.New("bad thing")
	err := FileError("f.yaml", kind, Decode([]byte("version: x\n"), &doc{}))
	if err.Error() != `f.yaml:1: version: bad thing: want an integer, got "x"` || !errors.Is(err, kind) {
		t.Errorf("FileError = %v", err)
	}
}

// FuzzDecode: any input decodes or gives an *Error; nothing panics.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"version: 1\nname: x\ngroups: [{name: a, count: 1}]\n",
		"groups:\n  - &g {name: a}\n  - <<: *g\n",
		"a: [\n", "version: 1\n---\n", "seeds: x\n", "\t", "&a [*a]", "<<: [1]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d doc
		err := Decode(data, &d)
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("Decode: %T %v, want *Error", err, err)
		}
	})
}
