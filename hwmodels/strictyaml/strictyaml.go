// Package strictyaml decodes the project's YAML files (scenarios, sweep
// files, cluster specs, calibrations, job profiles) strictly, with the
// position of every error taken from yaml.Node: a key the Go type does not
// know, a key given twice, a value that does not fit its field, each at
// its line and with its field path ("trace.swf.procs_per_gpu",
// "node_groups[2].gpu"). It is the one place that reads a position out of
// go-yaml's messages: syntax errors (a bad indent, an unclosed bracket)
// exist only as text ("yaml: line N: ..."), and Parse reads the line
// from it; every other position comes from the node tree.
//
// It sits under hwmodels because hwmodels, which imports nothing of
// ours, reads YAML itself (the cluster spec) and so do its sub-packages
// (calibrate, nvml): the lowest place every reader may import.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The kinds of Error, for errors.Is.
var (
	// ErrSyntax: the text is not YAML.
	ErrSyntax = errors.New("malformed YAML")
	// ErrDocuments: the text holds a second YAML document.
	ErrDocuments = errors.New("a second YAML document")
	// ErrSchema: the document does not fit the Go type (an unknown key,
	// a value of the wrong kind).
	ErrSchema = errors.New("does not fit the schema")
	// ErrRepeated: a mapping gives a key twice.
	ErrRepeated = errors.New("key given twice")
)

// Error is a YAML error at a position.
type Error struct {
	Line  int    // 1-based; 0 when unknown
	Field string // dotted path of the field ("" for the document)
	Msg   string // what is wrong, and what was expected
	Kind  error  // ErrSyntax, ErrDocuments, ErrSchema or ErrRepeated
}

// Detail is the error without its line: "field: msg", or msg.
func (e *Error) Detail() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Detail())
	}
	return e.Detail()
}

func (e *Error) Unwrap() error { return e.Kind }

// Errorf returns a schema *Error at n, for an UnmarshalYAML method or a
// validation that knows the node; Decode keeps its line and adds the
// field path.
func Errorf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...), Kind: ErrSchema}
}

// syntaxLine reads go-yaml's syntax errors, which carry their position
// only in the text.
var syntaxLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// Parse parses data, which must hold at most one YAML document, and
// returns its root node: nil for an empty document (nothing, or comments
// only). A panic inside the YAML library is an error too.
func Parse(data []byte) (root *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, &Error{Msg: fmt.Sprintf("the YAML decoder failed: %v", r), Kind: ErrSyntax}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case err == io.EOF:
		return nil, nil
	case err != nil:
		return nil, syntaxError(err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		return nil, syntaxError(err)
	default:
		return nil, &Error{Line: extra.Line, Msg: "a second YAML document (want one document)", Kind: ErrDocuments}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &Error{Line: doc.Line, Msg: "malformed YAML document", Kind: ErrSyntax}
	}
	return doc.Content[0], nil
}

func syntaxError(err error) error {
	msg := err.Error()
	if m := syntaxLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{Line: n, Msg: m[2], Kind: ErrSyntax}
	}
	return &Error{Msg: strings.TrimPrefix(msg, "yaml: "), Kind: ErrSyntax}
}

// Decode parses data (one document) and decodes it into v strictly (see
// DecodeNode). An empty document leaves v as it is.
func Decode(data []byte, v any) error {
	root, err := Parse(data)
	if err != nil || root == nil {
		return err
	}
	return DecodeNode(root, v)
}

// maxNodes bounds the nodes a check visits, aliases expanded, as
// go-yaml bounds its own decoding of aliases.
const maxNodes = 1 << 20

// DecodeNode decodes n into v, a non-nil pointer, after checking it
// against v's type: every mapping key must name a field (by its yaml
// tag, or lower-cased name) and appear once, every value must decode
// into its field, and the first that does not is an *Error at its node
// with the field's path. yaml.Node and interface fields take anything; a
// type with an UnmarshalYAML method checks itself (its *Error keeps its
// line).
func DecodeNode(n *yaml.Node, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("strictyaml: decode into %T, want a non-nil pointer", v)
	}
	c := checker{}
	if err := c.check(n, rv.Type().Elem(), ""); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		// The check above accepts only what decodes; keep go-yaml's words
		// should they differ.
		return &Error{Line: n.Line, Msg: strings.TrimPrefix(err.Error(), "yaml: "), Kind: ErrSchema}
	}
	return nil
}

type checker struct{ visited int }

var (
	nodeType        = reflect.TypeFor[yaml.Node]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
)

func (c *checker) check(n *yaml.Node, t reflect.Type, field string) error {
	n = deref(n)
	if c.visited++; c.visited > maxNodes {
		return &Error{Line: n.Line, Field: field, Msg: "document contains excessive aliasing", Kind: ErrSchema}
	}
	if t == nodeType || t.Kind() == reflect.Interface {
		return nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			var e *Error
			if errors.As(err, &e) {
				out := *e
				out.Field = join(field, e.Field)
				if out.Line == 0 {
					out.Line = n.Line
				}
				return &out
			}
			return &Error{Line: n.Line, Field: field, Msg: strings.TrimPrefix(err.Error(), "yaml: "), Kind: ErrSchema}
		}
		return nil
	}
	if isNull(n) {
		return nil // the zero value
	}
	switch t.Kind() {
	case reflect.Pointer:
		return c.check(n, t.Elem(), field)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return mismatch(n, field, "a mapping")
		}
		return c.mapping(n, field, func(k *yaml.Node, v *yaml.Node) error {
			f, ok := fieldByKey(t, k.Value)
			if !ok {
				return &Error{Line: k.Line, Field: field, Msg: fmt.Sprintf("unknown key %q (want %s)", k.Value, strings.Join(Keys(t), ", ")), Kind: ErrSchema}
			}
			return c.check(v, f.Type, join(field, k.Value))
		})
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return mismatch(n, field, "a mapping")
		}
		return c.mapping(n, field, func(k *yaml.Node, v *yaml.Node) error {
			if err := c.check(k, t.Key(), join(field, k.Value)); err != nil {
				return err
			}
			return c.check(v, t.Elem(), join(field, k.Value))
		})
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return mismatch(n, field, "a list")
		}
		for i, e := range n.Content {
			if err := c.check(e, t.Elem(), fmt.Sprintf("%s[%d]", field, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return mismatch(n, field, want(t))
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil {
		return mismatch(n, field, want(t))
	}
	return nil
}

// mapping calls f on each entry of n (Entries).
func (c *checker) mapping(n *yaml.Node, field string, f func(k, v *yaml.Node) error) error {
	entries, err := Entries(n, field)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := f(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// Entry is one key and value of a mapping.
type Entry struct{ Key, Value *yaml.Node }

// maxMergeDepth bounds merges of merges.
const maxMergeDepth = 16

// Entries returns the entries of mapping n in order, merge keys (<<:
// *anchor, or a list of them) expanded after n's own: a key n sets
// itself, or an earlier merge set, is not taken again. A key n gives
// twice is an *Error (ErrRepeated) at the second; a merge of anything but
// mappings, or merges nested more than 16 deep, are errors too. field is
// n's path, for the errors.
func Entries(n *yaml.Node, field string) ([]Entry, error) {
	var out []Entry
	seen := map[string]*yaml.Node{}
	var collect func(n *yaml.Node, depth int) error
	collect = func(n *yaml.Node, depth int) error {
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := deref(n.Content[i]), n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return &Error{Line: k.Line, Field: field, Msg: "want a key, got " + Describe(k), Kind: ErrSyntax}
			}
			if k.ShortTag() == "!!merge" {
				merges = append(merges, v)
				continue
			}
			if first, dup := seen[k.Value]; dup {
				if depth > 0 {
					continue // set by the mapping that merges, or an earlier merge
				}
				return &Error{Line: k.Line, Field: join(field, k.Value), Msg: fmt.Sprintf("key given twice (first at line %d)", first.Line), Kind: ErrRepeated}
			}
			seen[k.Value] = k
			out = append(out, Entry{Key: k, Value: v})
		}
		for _, m := range merges {
			m = deref(m)
			srcs := []*yaml.Node{m}
			if m.Kind == yaml.SequenceNode {
				srcs = m.Content
			}
			for _, src := range srcs {
				if src = deref(src); src.Kind != yaml.MappingNode {
					return &Error{Line: src.Line, Field: join(field, "<<"), Msg: "want a mapping or a list of mappings to merge, got " + Describe(src), Kind: ErrSyntax}
				}
				if depth >= maxMergeDepth {
					return &Error{Line: src.Line, Field: join(field, "<<"), Msg: fmt.Sprintf("merges nested more than %d deep", maxMergeDepth), Kind: ErrSchema}
				}
				if err := collect(src, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := collect(n, 0); err != nil {
		return nil, err
	}
	return out, nil
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func mismatch(n *yaml.Node, field, wanted string) error {
	return &Error{Line: n.Line, Field: field, Msg: fmt.Sprintf("want %s, got %s", wanted, Describe(n)), Kind: ErrSchema}
}

func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer >= 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return t.String()
}

// Describe says what a node is, for "want X, got Y" messages: a
// mapping, a list, null, or the quoted scalar.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return strconv.Quote(n.Value)
	}
	return "an unresolved alias"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func join(field, key string) string {
	switch {
	case field == "":
		return key
	case key == "":
		return field
	}
	return field + "." + key
}

// fieldByKey finds the field of struct type t that key k decodes into.
func fieldByKey(t reflect.Type, k string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name, ok := keyOf(f); ok && name == k {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// Keys lists the YAML keys of struct type t, in field order.
func Keys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if name, ok := keyOf(t.Field(i)); ok {
			out = append(out, name)
		}
	}
	return out
}

// Field returns the field of struct type t that YAML key k decodes into.
func Field(t reflect.Type, k string) (reflect.StructField, bool) { return fieldByKey(t, k) }

func keyOf(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return "", false
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name, true
}

// Line returns the line of the node at path under n: mapping keys
// (string) and sequence indices (int), aliases followed; the line of the
// deepest part found when the path goes further than the document, 0
// for a nil n.
func Line(n *yaml.Node, path ...any) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		switch k := p.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return line
			}
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					line, next = n.Content[i].Line, n.Content[i+1]
					break
				}
			}
			if next == nil {
				return line
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode || k < 0 || k >= len(n.Content) {
				return line
			}
			n = n.Content[k]
			line = n.Line
		}
	}
	return line
}

// FileError returns err, an error of this package, as the one-line error
// of file path: "path:line: field: kind: msg" (line and field where
// known), with errors.Is(·, kind) true: the form of the readers whose
// errors carry a sentinel of their own (calibrate.ErrCalibration,
// nvml.ErrProfile).
func FileError(path string, kind, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return fmt.Errorf("%s: %w: %v", path, kind, err)
	}
	pos := path
	if e.Line > 0 {
		pos = fmt.Sprintf("%s:%d", path, e.Line)
	}
	if e.Field != "" {
		pos += ": " + e.Field
	}
	return fmt.Errorf("%s: %w: %s", pos, kind, e.Msg)
}
