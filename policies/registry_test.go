package policies_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/sim"
)

type nopPolicy struct{ policies.Base }

func (nopPolicy) Name() string                                        { return "nop" }
func (nopPolicy) Schedule(sim.PassSet, sim.View, *rand.Rand) sim.Plan { return sim.Plan{} }

func nopFactory(func(any) error) (sim.Policy, error) { return nopPolicy{}, nil }

func TestBuiltin(t *testing.T) {
	reg := catalog.Builtin()
	if diff := cmp.Diff([]string{"conservative", "easy", "fifo", "slurm"}, reg.Names()); diff != "" {
		t.Errorf("Builtin names (-want +got):\n%s", diff)
	}
	for _, name := range reg.Names() {
		p, err := reg.New(name, nil)
		if err != nil {
			t.Fatalf("New(%q, nil): %v", name, err)
		}
		if p.Name() != name {
			t.Errorf("New(%q).Name() = %q", name, p.Name())
		}
		want := policies.OnEvents()
		if name == "slurm" { // max(sched_interval 60, bf_interval 30, PriorityCalcPeriod 5 min)
			want.Passes = append(want.Passes, sim.Pass{Name: "main-full", Period: 60}, sim.Pass{Name: "backfill", Period: 30})
			want.Settle = 300
		}
		c := policytest.Cluster([]hwmodels.Node{policytest.Node("n0", 8, "a100", 64, 1<<20, 1)}, "p")
		if got, err := p.Begin(sim.RunInfo{Cluster: c, Jobs: 1}); err != nil || !cmp.Equal(got, want) {
			t.Errorf("%s: Begin = %+v, %v; want %+v", name, got, err, want)
		}
		// A decoder that finds no arguments is fine.
		if _, err := reg.New(name, func(any) error { return nil }); err != nil {
			t.Errorf("New(%q) with empty args: %v", name, err)
		}
		// Each New returns a distinct value (no shared scratch).
		q, _ := reg.New(name, nil)
		if p == q {
			t.Errorf("New(%q) returned the same policy value twice", name)
		}
	}
	// Builtin returns a fresh registry: registering into one does not
	// change the next.
	if err := reg.Register("nop", nopFactory); err != nil {
		t.Fatal(err)
	}
	if _, ok := catalog.Builtin()["nop"]; ok {
		t.Error("Builtin() shares its map between calls")
	}
}

func TestRegistryErrors(t *testing.T) {
	errStrict := errors.New(`line 3: field bf_window not found in type struct {}`)
	tests := []struct {
		name    string
		do      func(policies.Registry) error
		wantErr string // substring; "" = no error
	}{
		{
			name:    "duplicate name",
			do:      func(r policies.Registry) error { return r.Register("fifo", nopFactory) },
			wantErr: `register policy "fifo": already registered`,
		},
		{
			name:    "empty name",
			do:      func(r policies.Registry) error { return r.Register("", nopFactory) },
			wantErr: "register policy: empty name",
		},
		{
			name:    "nil factory",
			do:      func(r policies.Registry) error { return r.Register("x", nil) },
			wantErr: `register policy "x": nil factory`,
		},
		{
			name:    "new name",
			do:      func(r policies.Registry) error { return r.Register("nop", nopFactory) },
			wantErr: "",
		},
		{
			name: "unknown policy lists the valid names, sorted",
			do: func(r policies.Registry) error {
				_, err := r.New("nope", nil)
				return err
			},
			wantErr: `unknown policy "nope" (want one of conservative, easy, fifo, slurm)`,
		},
		{
			name: "arguments the policy does not take",
			do: func(r policies.Registry) error {
				_, err := r.New("easy", func(any) error { return errStrict })
				if !errors.Is(err, errStrict) {
					return errors.New("error does not wrap the decoder's")
				}
				return err
			},
			wantErr: "policy easy: args: line 3: field bf_window not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := catalog.Builtin()
			before := r.Names()
			err := tt.do(r)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			case tt.wantErr != "":
				if diff := cmp.Diff(before, r.Names()); diff != "" {
					t.Errorf("a failed call changed the registry (-before +after):\n%s", diff)
				}
			}
		})
	}
}
