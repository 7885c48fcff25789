package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/policies"
)

// FromNode builds a scenario from root, a mapping node taken from a larger
// YAML document (a sweep file, say) whose text is src and whose file is
// path. Errors, relative paths and the inline sections (cluster.inline,
// policy.args) refer to that file and its lines, so root may be assembled
// from nodes of several places in src. Unknown keys are errors, as in
// Parse, and the scenario is validated.
func FromNode(src []byte, path string, root *yaml.Node) (*Scenario, error) {
	if root == nil || root.Kind != yaml.MappingNode {
		line := 0
		if root != nil {
			line = root.Line
		}
		return nil, &Error{Path: path, Line: line, Msg: "want a mapping (a scenario)"}
	}
	if err := CheckKeys(path, root, reflect.TypeFor[Scenario](), ""); err != nil {
		return nil, err
	}
	s := &Scenario{}
	if err := root.Decode(s); err != nil {
		return nil, yamlError(path, err)
	}
	s.Path, s.src, s.root = path, src, root
	s.builtinTraceDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// CheckKeys reports the first mapping key under n that the YAML decoding
// of type t does not know, with its line: the check yaml's KnownFields does,
// for a node that is decoded on its own. field prefixes the key path in the
// error. yaml.Node values (inline sections) are not checked.
func CheckKeys(path string, n *yaml.Node, t reflect.Type, field string) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[yaml.Node]() {
		return nil
	}
	join := func(k string) string {
		if field == "" {
			return k
		}
		return field + "." + k
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder reports the type mismatch
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			f, ok := fieldByTag(t, k)
			if !ok {
				return &Error{Path: path, Line: n.Content[i].Line, Field: field, Msg: fmt.Sprintf("unknown key %q", k)}
			}
			if err := CheckKeys(path, n.Content[i+1], f.Type, join(k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if err := CheckKeys(path, c, t.Elem(), fmt.Sprintf("%s[%d]", field, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := CheckKeys(path, n.Content[i+1], t.Elem(), join(n.Content[i].Value)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldByTag finds the struct field that YAML key k decodes into.
func fieldByTag(t reflect.Type, k string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == k {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// Effective returns the scenario as the YAML text a run records
// (scenario.yaml) and its config hash ("sha256:" and the hex SHA-256 of
// the text). Where the outputs go is not part of the configuration, so
// output.dir is left out.
func (s *Scenario) Effective() (text []byte, hash string, err error) {
	eff := *s
	eff.Output.Dir = ""
	text, err = yaml.Marshal(&eff)
	if err != nil {
		return nil, "", fmt.Errorf("scenario: %w", err)
	}
	sum := sha256.Sum256(text)
	return text, "sha256:" + hex.EncodeToString(sum[:]), nil
}

// CheckPolicy constructs the scenario's policy from reg, as Build does,
// without loading the cluster or the trace, so that a bad policy name or
// bad policy arguments are reported with their line before anything runs.
func (s *Scenario) CheckPolicy(reg policies.Registry) error {
	decode := func(into any) error {
		frag := s.Fragment(&s.Policy.Args)
		if frag == nil {
			return nil
		}
		return DecodeStrict(frag, s.pathOr("scenario"), into)
	}
	if _, err := reg.New(s.Policy.Name, decode); err != nil {
		var se *Error
		if errors.As(err, &se) {
			return err
		}
		return &Error{Path: s.pathOr("scenario"), Line: lineOf(s.root, "policy", "name"), Field: "policy", Msg: err.Error()}
	}
	return nil
}
