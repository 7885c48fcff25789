package schedsim

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/schedsim/schedsim/hwmodels/strictyaml"
)

// OverrideError is an error of Override: the key, the value and what was
// wrong with it.
type OverrideError struct {
	Key, Value string
	Err        error
}

func (e *OverrideError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *OverrideError) Unwrap() error { return e.Err }

// clusterNames are the names Override("cluster", name) takes for a
// builtin cluster instead of a file, with the builtin each stands for.
var clusterNames = map[string]string{"example": "example", "header": "swf-header", "swf-header": "swf-header"}

// ClusterNames returns the names Override takes for "cluster" other than
// a file (the builtin clusters, "header" for swf-header), sorted.
func ClusterNames() []string {
	return slices.Sorted(maps.Keys(clusterNames))
}

// pathKeys are the keys whose values are file paths: Override makes them
// absolute, since a value given on a command line or in Go is relative to
// the working directory, not to the scenario file.
var pathKeys = []string{"trace.file", "cluster.file", "output.dir"}

// Override sets one scenario value, as a command-line flag does: key is a
// dotted path of the file's keys ("seed", "trace.transforms.scale_load",
// "controller.kill_wait") and value its text. Numbers, booleans
// (strconv.ParseBool) and durations are written as in the file; a list
// is comma-separated ("alice,bob"), a map is from=to pairs
// ("1=gpu,2=gpu"). Three keys replace a whole section:
//
//	trace    a trace file; the trace's options tuned for the old trace
//	         (processor mapping, partition map, transforms) are dropped
//	cluster  "example", "header" (or "swf-header": the machine an SWF
//	         trace's header describes) or a cluster spec file, which must
//	         exist
//	policy   a policy name; the old policy's args are dropped
//
// File paths (trace, trace.file, cluster, cluster.file,
// cluster.calibration, output.dir) are relative to the working directory
// and made absolute. Sections that are YAML themselves (cluster.inline,
// policy.args) and lists of sections (node_events, reservations,
// job_rules) are set in the file. Override
// does not validate the scenario as a whole: call Validate after the
// last one (Build and Run do).
func (s *Scenario) Override(key, value string) error {
	bad := func(format string, args ...any) error {
		return &OverrideError{Key: key, Value: value, Err: fmt.Errorf(format, args...)}
	}
	switch key {
	case "trace":
		s.Trace = Trace{File: absPath(value)}
		return nil
	case "cluster":
		s.Cluster = Cluster{Calibration: s.Cluster.Calibration}
		if b, ok := clusterNames[value]; ok {
			s.Cluster.Builtin = b
			return nil
		}
		if _, err := os.Stat(value); err != nil {
			return &OverrideError{Key: key, Value: value, Err: err}
		}
		s.Cluster.File = absPath(value)
		return nil
	case "policy":
		s.Policy = Policy{Name: value}
		return nil
	case "cluster.calibration":
		if _, err := os.Stat(value); err != nil {
			return &OverrideError{Key: key, Value: value, Err: err}
		}
		s.Cluster.Calibration = absPath(value)
		return nil
	}
	v := reflect.ValueOf(s).Elem()
	parts := strings.Split(key, ".")
	for i, p := range parts {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		if v.Type() == reflect.TypeFor[yaml.Node]() {
			return bad("%s is not a section: it is YAML of its own, set in the scenario file", strings.Join(parts[:i], "."))
		}
		if v.Kind() != reflect.Struct {
			return bad("%s is not a section", strings.Join(parts[:i], "."))
		}
		f, ok := strictyaml.Field(v.Type(), p)
		if !ok {
			return bad("unknown key %q (want %s)", p, strings.Join(strictyaml.Keys(v.Type()), ", "))
		}
		v = v.FieldByIndex(f.Index)
	}
	if slices.Contains(pathKeys, key) {
		value = absPath(value)
	}
	if err := setValue(v, value); err != nil {
		return &OverrideError{Key: key, Value: value, Err: err}
	}
	return nil
}

// setValue sets v from text.
func setValue(v reflect.Value, text string) error {
	if v.Kind() == reflect.Pointer && v.Type().Elem().Kind() != reflect.Struct {
		p := reflect.New(v.Type().Elem())
		if err := setValue(p.Elem(), text); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(text)
	case reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("%q: want true or false", text)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(text, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q: want an integer", text)
		}
		v.SetInt(n)
	case reflect.Uint64:
		n, err := strconv.ParseUint(text, 10, 64)
		if err != nil {
			return fmt.Errorf("%q: want an integer >= 0", text)
		}
		v.SetUint(n)
	case reflect.Float64:
		x, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return fmt.Errorf("%q: want a number", text)
		}
		v.SetFloat(x)
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("a list of sections: set it in the scenario file")
		}
		v.Set(reflect.ValueOf(SplitList(text)))
	case reflect.Map:
		m, err := ParseMap(text)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(m))
	default:
		return fmt.Errorf("a section: set one of its keys, or set it in the scenario file")
	}
	return nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil && p != "" {
		return a
	}
	return p
}

// splitList splits a comma-separated list, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseMap reads from=to pairs, comma-separated.
func ParseMap(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range SplitList(s) {
		from, to, ok := strings.Cut(kv, "=")
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("%q: want from=to", kv)
		}
		m[from] = to
	}
	return m, nil
}
