package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportGraph enforces the package table of DESIGN.md on every
// package of the module: each top-level package may import only the
// packages of ours listed for it (its own sub-packages aside), and a
// package outside the table is an error. sim never imports policies;
// the module's root package (the scenario layer) may import every
// package below it and only cmd imports it; cmd may import everything.
func TestImportGraph(t *testing.T) {
	const mod = "github.com/schedsim/schedsim"
	allowed := map[string][]string{
		"workload": {},
		"hwmodels": {},
		"traces":   {"workload"},
		"sim":      {"workload", "hwmodels"},
		"policies": {"sim", "workload", "hwmodels"},
		// reports writes results in trace formats (jobs.sacct through
		// traces.SacctWriter); traces is a leaf that imports only workload.
		"reports": {"sim", "workload", "hwmodels", "traces"},
		// bundle turns a records bundle into scenario text and a trace,
		// and compares the simulated record with it.
		"bundle": {"sim", "workload", "hwmodels", "traces"},
		// The root package composes the packages above into a run.
		"":    {"sim", "workload", "policies", "hwmodels", "traces", "reports"},
		"cmd": {"", "sim", "workload", "policies", "hwmodels", "traces", "reports", "bundle"},
	}
	cmd := exec.Command("go", "list", "-json", mod+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	// rel is an import path of ours relative to the module ("" for the
	// root); ok is false for a package not of ours.
	rel := func(path string) (string, bool) {
		// With profile-guided optimization (cmd/schedsim/default.pgo) go
		// list names the packages built for a main package as
		// "path [main package]".
		path, _, _ = strings.Cut(path, " [")
		if path == mod {
			return "", true
		}
		r, ok := strings.CutPrefix(path, mod+"/")
		return r, ok
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := map[string]bool{}
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		r, _ := rel(p.ImportPath)
		top := topLevel(r)
		ok, listed := allowed[top]
		if !listed {
			t.Errorf("%s: top-level package %q is not in DESIGN.md's table", p.ImportPath, top)
			continue
		}
		seen[top] = true
		for _, imp := range p.Imports {
			r, ours := rel(imp)
			if !ours {
				continue
			}
			dep := topLevel(r)
			if dep == top || slices.Contains(ok, dep) {
				continue
			}
			t.Errorf("%s imports %s: DESIGN.md allows %s to import only %v", p.ImportPath, imp, orRoot(top), ok)
		}
	}
	for top := range allowed {
		if !seen[top] {
			t.Errorf("go list returned no package of %s", orRoot(top))
		}
	}
}

func topLevel(rel string) string {
	top, _, _ := strings.Cut(rel, "/")
	return top
}

func orRoot(top string) string {
	if top == "" {
		return "the root package"
	}
	return top
}
