package policies_test

import (
	"testing"

	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/policytest"
)

func TestConformance(t *testing.T) {
	reg := policies.Builtin()
	for _, name := range reg.Names() {
		t.Run(name, func(t *testing.T) { policytest.Run(t, reg[name]) })
	}
}
