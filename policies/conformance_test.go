package policies_test

import (
	"testing"

	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
)

func TestConformance(t *testing.T) {
	reg := catalog.Builtin()
	for _, name := range reg.Names() {
		t.Run(name, func(t *testing.T) { policytest.Run(t, reg[name]) })
	}
}
