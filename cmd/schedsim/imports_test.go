package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestImportGraph enforces the package table of DESIGN.md: each top-level
// package may import only the packages of ours listed for it (its own
// sub-packages aside). sim never imports policies; cmd may import
// everything.
func TestImportGraph(t *testing.T) {
	const mod = "github.com/schedsim/schedsim/"
	allowed := map[string][]string{
		"workload": {},
		"hwmodels": {},
		"traces":   {"workload"},
		"sim":      {"workload", "hwmodels"},
		"policies": {"sim", "workload", "hwmodels"},
		// reports writes results in trace formats (jobs.sacct through
		// traces.SacctWriter); traces is a leaf that imports only workload.
		"reports": {"sim", "workload", "hwmodels", "traces"},
	}
	cmd := exec.Command("go", "list", "-json", mod+"...")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
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
		top := topLevel(strings.TrimPrefix(p.ImportPath, mod))
		ok, listed := allowed[top]
		if !listed {
			continue // cmd and anything outside the table
		}
		checked++
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			dep := topLevel(strings.TrimPrefix(imp, mod))
			if dep == top || contains(ok, dep) {
				continue
			}
			t.Errorf("%s imports %s: DESIGN.md allows %s to import only %v", p.ImportPath, imp, top, ok)
		}
	}
	if checked == 0 {
		t.Fatal("go list returned none of the packages in the table")
	}
}

func topLevel(rel string) string {
	top, _, _ := strings.Cut(rel, "/")
	return top
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
