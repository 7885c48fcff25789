package schedsim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels/strictyaml"
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
	return fromRoot(src, path, root)
}

// fromRoot decodes, completes and validates the scenario at root, a node
// of src, the text of file path.
func fromRoot(src []byte, path string, root *yaml.Node) (*Scenario, error) {
	s := &Scenario{}
	if err := strictyaml.DecodeNode(root, s); err != nil {
		return nil, yamlError(path, err)
	}
	s.Path, s.src, s.root = path, src, root
	s.builtinTraceDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// CheckKeys checks n, a node decoded on its own, against the YAML
// decoding of type t as Parse checks a file (strictyaml.DecodeNode: keys,
// repeats, values), without keeping the value; field prefixes the field
// path in the error.
func CheckKeys(path string, n *yaml.Node, t reflect.Type, field string) error {
	err := strictyaml.DecodeNode(n, reflect.New(t).Interface())
	var e *strictyaml.Error
	if errors.As(err, &e) {
		f := field
		if e.Field != "" {
			f = strings.TrimPrefix(field+"."+e.Field, ".")
		}
		return &Error{Path: path, Line: e.Line, Field: f, Msg: e.Msg}
	}
	return yamlError(path, err)
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
	if _, err := reg.New(s.Policy.Name, s.policyArgs); err != nil {
		var se *Error
		if errors.As(err, &se) {
			return err
		}
		return &Error{Path: s.pathOr("scenario"), Line: lineOf(s.root, "policy", "name"), Field: "policy", Msg: err.Error()}
	}
	return nil
}

// policyArgs decodes policy.args into into strictly, the errors at the
// scenario's own lines (the node's); no args leave into as it is.
func (s *Scenario) policyArgs(into any) error {
	if s.Policy.Args.IsZero() {
		return nil
	}
	return yamlError(s.pathOr("scenario"), strictyaml.DecodeNode(&s.Policy.Args, into))
}
