// Package catalog owns the list of built-in policies: the standard ones of
// package policies and the slurm policy of package policies/slurm. It sits
// above both so that policies/slurm can build on policies without a cycle.
package catalog

import (
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/slurm"
)

// Builtin returns a new Registry holding every built-in policy: "fifo",
// "easy" and "conservative" (policies.Standard) and "slurm"
// (slurm.Factory, arguments slurm.Args).
func Builtin() policies.Registry {
	r := policies.Standard()
	r["slurm"] = slurm.Factory
	return r
}
