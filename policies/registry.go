package policies

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/schedsim/schedsim/sim"
)

// Factory builds a policy from its arguments. decode strictly decodes the
// policy's arguments (the YAML under the policy's name in a scenario) into
// the value into points to, erroring on unknown fields; a nil decode means
// there are no arguments. A Factory validates what it decoded and returns
// an error, not a half-built policy, when it is bad. Each call returns a
// new policy value, so runs never share scratch state.
type Factory func(decode func(into any) error) (sim.Policy, error)

// Registry maps policy names to their factories. Register new policies
// explicitly; nothing registers itself.
type Registry map[string]Factory

// Register adds f under name. It errors, and changes nothing, when name is
// empty, f is nil or name is already registered. r must not be nil.
func (r Registry) Register(name string, f Factory) error {
	switch {
	case name == "":
		return errors.New("register policy: empty name")
	case f == nil:
		return fmt.Errorf("register policy %q: nil factory", name)
	}
	if _, dup := r[name]; dup {
		return fmt.Errorf("register policy %q: already registered", name)
	}
	r[name] = f
	return nil
}

// Names returns the registered names, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// New builds the policy registered as name, passing decode to its factory.
// An unknown name's error lists the valid names, sorted.
func (r Registry) New(name string, decode func(into any) error) (sim.Policy, error) {
	f, ok := r[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (want one of %s)", name, strings.Join(r.Names(), ", "))
	}
	p, err := f(decode)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", name, err)
	}
	return p, nil
}

// Standard returns a new Registry holding the policies of this package:
// "fifo" (FIFO) and "easy" (EASY), both placing with FirstFit and taking
// no arguments but placement, and "conservative" (Conservative, no
// arguments). The slurm policy lives in package policies/slurm, which
// builds on this one; package policies/catalog adds it to these.
func Standard() Registry {
	return Registry{
		"fifo":         FIFOFactory,
		"easy":         EASYFactory,
		"conservative": ConservativeFactory,
	}
}

// FIFOFactory is the Factory of "fifo". Its one argument, placement,
// names the placement strategy (NewPlacer: first-fit, the default,
// best-fit, topology-tree).
func FIFOFactory(decode func(into any) error) (sim.Policy, error) {
	p, err := placementArg(decode)
	if err != nil {
		return nil, err
	}
	return NewFIFO(p), nil
}

// EASYFactory is the Factory of "easy". Its one argument, placement,
// names the placement strategy (NewPlacer: first-fit, the default,
// best-fit, topology-tree).
func EASYFactory(decode func(into any) error) (sim.Policy, error) {
	p, err := placementArg(decode)
	if err != nil {
		return nil, err
	}
	return NewEASY(p), nil
}

// noArgs decodes into an empty struct, so that a strict decoder rejects
// any argument given.
func noArgs(decode func(into any) error) error {
	if decode == nil {
		return nil
	}
	var args struct{}
	if err := decode(&args); err != nil {
		return fmt.Errorf("args: %w", err)
	}
	return nil
}
