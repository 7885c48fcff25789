package reports

import (
	"testing"

	"github.com/schedsim/schedsim/sim"
)

// TestCountAllocNodes checks countAllocNodes against appendAllocNodes's
// list (its length and first node) on allocations whose nodes ascend,
// run backwards, repeat (MIG instances of one node listed apart) or are
// empty.
func TestCountAllocNodes(t *testing.T) {
	var m rowMaker
	for _, a := range [][]sim.NodeAlloc{
		nil,
		nodeSpan(3, 1),
		nodeSpan(0, 100),
		append(nodeSpan(5, 3), nodeSpan(10, 2)...),
		append(nodeSpan(10, 2), nodeSpan(5, 3)...),
		{{Node: 4, CPUs: 1}, {Node: 4, GPUs: 1}, {Node: 2, CPUs: 1}},
		{{Node: 1, CPUs: 1}, {Node: 2, CPUs: 2}, {Node: 2, CPUs: 1}},
	} {
		al := sim.AllocsOf(a)
		nodes := appendAllocNodes(nil, al)
		n, first := m.countAllocNodes(al)
		if n != int32(len(nodes)) || n > 0 && first != nodes[0] {
			t.Errorf("%v: %d nodes from %d, want %d (%v)", a, n, first, len(nodes), nodes)
		}
	}
}
