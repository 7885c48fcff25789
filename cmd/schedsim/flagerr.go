package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	scenario "github.com/schedsim/schedsim"
)

// Errors name what the user gave: the flag and its value, or the file,
// never a Go function or type, nor a line of the embedded scenario.

// pathError says which flag or argument named a file that could not be
// opened or written: "--trace nope.sacct: no such file or directory". The
// cause stays wrapped (a full disk still exits 3).
func pathError(what, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %w", what, path, pe.Err)
	}
	return fmt.Errorf("%s %s: %w", what, path, err)
}

// makeParent makes the directory a file is written into, as run --out
// makes its directory: "--out results/model.yaml" on a fresh checkout.
func makeParent(what, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return pathError(what, path, err)
	}
	return nil
}

// parseNoise matches what strconv and time add to a bad flag value's
// message: `strconv.ParseUint: parsing "-1": invalid syntax`.
var parseNoise = regexp.MustCompile(`strconv\.Parse(Uint|Int|Float|Bool): parsing "[^"]*": (invalid syntax|value out of range)|time: (?:invalid|unknown unit [^ ]* in|missing unit in) duration "[^"]*"`)

// flagWants is what a value of each pflag type should look like.
var flagWants = map[string]string{
	"Uint": "want a whole number >= 0", "Int": "want a whole number", "Float": "want a number",
	"Bool": "want true or false", "duration": "want a duration such as 30s, 5m or 2h",
}

// cleanFlagError rewrites a flag parse error of pflag without the Go
// parser's name: `invalid argument "-1" for "--seed" flag: want a whole
// number >= 0`.
func cleanFlagError(err error) error {
	msg := err.Error()
	clean := parseNoise.ReplaceAllStringFunc(msg, func(s string) string {
		m := parseNoise.FindStringSubmatch(s)
		switch {
		case m[1] == "":
			return flagWants["duration"]
		case m[2] == "value out of range":
			return "value out of range"
		}
		return flagWants[m[1]]
	})
	if clean == msg {
		return err
	}
	return errors.New(clean)
}

// flagForKey returns the flag (or --set) of cmd that set the scenario key
// an error names, and its value: the error is the flag's, not a line of
// the scenario it changed. field is the error's dotted key.
func flagForKey(cmd *cobra.Command, set []string, field string) (flag, value string) {
	related := func(key string) bool {
		return key == field || strings.HasPrefix(key, field+".") || strings.HasPrefix(field, key+".")
	}
	for _, kv := range set {
		if k, _, ok := strings.Cut(kv, "="); ok && related(strings.TrimSpace(k)) {
			flag, value = "--set", kv
		}
	}
	if flag != "" {
		return flag, value
	}
	for _, o := range runOverrides {
		if f := cmd.Flags().Lookup(o.flag); f != nil && f.Changed && related(o.key) {
			flag, value = "--"+o.flag, f.Value.String()
		}
	}
	return flag, value
}

// scenarioFlagError rewrites a scenario validation error that a flag
// caused so that it names the flag and its value.
func scenarioFlagError(cmd *cobra.Command, set []string, err error) error {
	var se *scenario.Error
	if !errors.As(err, &se) || se.Field == "" {
		return err
	}
	flag, value := flagForKey(cmd, set, se.Field)
	switch {
	case flag == "":
		return err
	case flag == "--set":
		return fmt.Errorf("--set %s: %s: %s", value, se.Field, se.Msg)
	}
	return fmt.Errorf("%s %q: %s", flag, value, strings.TrimPrefix(se.Msg, strconv.Quote(value)+": "))
}
