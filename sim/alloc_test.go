package sim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/workload"
)

func mustMIG(t *testing.T, name string) workload.MIGProfile {
	t.Helper()
	p, err := workload.ParseMIGProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMIGInstancesTake: the plain MIG allocation on a dynamic node with
// two h100-80gb MIG GPUs (7 × 1g.10gb or 2 × 3g.40gb each), worked by
// hand.
func TestMIGInstancesTake(t *testing.T) {
	cl := dynMIG(t)
	cl.Nodes[0].GPUs, cl.Nodes[0].MIG.GPUs = 2, 2
	f := MIGCapacity(&cl.Nodes[0])
	p1, p3 := mustMIG(t, "1g.10gb"), mustMIG(t, "3g.40gb")

	// 9 × 1g unplaced: GPU 0 takes 7 (repartitioned), GPU 1 the other 2.
	f, a, ok := f.Take(MIGInstances{Profile: p1, Count: 9})
	if want := (MIGInstances{Profile: p1, Count: 9, PerGPU: [MaxMIGGPUs]uint8{7, 2}}); !ok || a != want {
		t.Fatalf("Take 9 × 1g = %+v, %v; want %+v", a, ok, want)
	}
	// Both GPUs are in use for 1g: no 3g fits, and f is unchanged.
	if g, _, ok := f.Take(MIGInstances{Profile: p3, Count: 1}); ok || g != f {
		t.Errorf("3g fits next to 1g instances in use")
	}
	// Placed by the policy: 3 more on GPU 1 (5 of 7 in use).
	f, _, ok = f.Take(MIGInstances{Profile: p1, Count: 3, PerGPU: [MaxMIGGPUs]uint8{1: 3}})
	if _, _, used := f.GPU(1); !ok || used != 5 {
		t.Errorf("placed 3 on GPU 1: ok %v, %d in use, want 5", ok, used)
	}
	// PerGPU that does not sum to Count, PerGPU past the room, and a
	// negative count do not fit.
	for _, bad := range []MIGInstances{
		{Profile: p1, Count: 2, PerGPU: [MaxMIGGPUs]uint8{1: 3}},
		{Profile: p1, Count: 3, PerGPU: [MaxMIGGPUs]uint8{1: 3}},
		{Profile: p1, Count: -1},
	} {
		if _, _, ok := f.Take(bad); ok {
			t.Errorf("Take(%+v) fits", bad)
		}
	}
	// Giving back the 9 leaves GPU 0 empty, still partitioned for 1g.
	f = f.Give(a)
	if avail, prof, used := f.GPU(0); !avail || prof != 0 || used != 0 {
		t.Errorf("GPU 0 after Give: avail %v, profile %d, %d in use; want true, 0, 0", avail, prof, used)
	}
	if _, _, used := f.GPU(1); used != 3 {
		t.Errorf("GPU 1 after Give: %d in use, want 3", used)
	}
	// Pack 2 × 3g: GPU 1 is in use for 1g, so GPU 0 is repartitioned.
	if a, ok := f.Pack(p3, 2); !ok || a != (MIGInstances{Profile: p3, Count: 2, PerGPU: [MaxMIGGPUs]uint8{2}}) {
		t.Errorf("Pack 2 × 3g = %+v, %v; want both on GPU 0", a, ok)
	}
	// The zero value is none: it fits anywhere and changes nothing.
	if g, a, ok := f.Take(MIGInstances{}); !ok || g != f || a != (MIGInstances{}) {
		t.Error("Take of no instances changed the free state")
	}

	// A fixed layout (7 × 1g per GPU) has no placement to give.
	geo, _ := hwmodels.LookupMIG("h100-80gb")
	layout, err := geo.Layout([]int32{0, 0, 0, 0, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	cl.Nodes[0].MIG = &hwmodels.MIGConfig{GPUs: 2, Geometry: geo, Layout: layout}
	fx := MIGCapacity(&cl.Nodes[0])
	if _, _, ok := fx.Take(MIGInstances{Profile: p1, Count: 1, PerGPU: [MaxMIGGPUs]uint8{1}}); ok {
		t.Error("a placed allocation fits a fixed layout")
	}
	fx, _, ok = fx.Take(MIGInstances{Profile: p1, Count: 10})
	if !ok || fx.Instances(p1) != 4 || fx.Give(MIGInstances{Profile: p1, Count: 10}).Instances(p1) != 14 {
		t.Errorf("fixed 10 × 1g of 14: ok %v, %d left, want 4", ok, fx.Instances(p1))
	}
}

// TestMIGPerGPUCountRefused: a plan whose PerGPU does not sum to Count is
// refused with an error that says so.
func TestMIGPerGPUCountRefused(t *testing.T) {
	tr := &workload.Trace{Jobs: []workload.Job{migJobOf(t, "a", 0, 100, "1g.10gb")}}
	p1 := tr.Jobs[0].Request.MIGProfile
	bad := &greedy{bad: func(v View) Plan {
		a := NodeAlloc{Node: 0, CPUs: 1, MIG: MIGInstances{Profile: p1, Count: 1, PerGPU: [MaxMIGGPUs]uint8{2}}}
		return Plan{Starts: []Start{{Job: 0, Alloc: []NodeAlloc{a}}}}
	}}
	_, err := Run(Config{Cluster: dynMIG(t), Trace: tr, Policy: bad, Check: true})
	if err == nil || !strings.Contains(err.Error(), "PerGPU holds 2, Count says 1") {
		t.Fatalf("err = %v, want PerGPU holds 2, Count says 1", err)
	}
}

// TestMPSShareAnyGPU: a share with MPSAnyGPU is placed first fit, one
// with a GPU goes there, and the zero value is none. Two GPUs, up to 2
// clients each.
func TestMPSShareAnyGPU(t *testing.T) {
	node := hwmodels.Node{Name: "n", GPUs: 2, CPUs: 8, MemMB: 1000, MPS: &hwmodels.MPSConfig{MaxClients: 2}}
	s := Capacity(&node)
	steps := []struct {
		in   MPSShare
		ok   bool
		want MPSShare
	}{
		{MPSShare{GPU: MPSAnyGPU, Share: 60}, true, MPSShare{GPU: 0, Share: 60}},
		{MPSShare{GPU: MPSAnyGPU, Share: 50}, true, MPSShare{GPU: 1, Share: 50}}, // 60+50 > 100 on GPU 0
		{MPSShare{GPU: 1, Share: 50}, true, MPSShare{GPU: 1, Share: 50}},         // GPU 1 full: 100%, 2 clients
		{MPSShare{GPU: 0, Share: 50}, false, MPSShare{GPU: 0, Share: 50}},        // 110% on GPU 0
		{MPSShare{GPU: MPSAnyGPU, Share: 40}, true, MPSShare{GPU: 0, Share: 40}}, // GPU 0: 100%, 2 clients
		{MPSShare{}, true, MPSShare{}},
	}
	for i, st := range steps {
		a := NodeAlloc{Node: 0, CPUs: 1, MPS: st.in}
		before := s
		ok := s.Sub(&a)
		if ok != st.ok || ok && a.MPS != st.want {
			t.Fatalf("step %d: Sub(%+v) = %v, %+v; want %v, %+v", i, st.in, ok, a.MPS, st.ok, st.want)
		}
		if !ok {
			s = before
		}
	}
	if s.FreeGPUs != 0 {
		t.Errorf("FreeGPUs = %d, want 0 (both GPUs in MPS use)", s.FreeGPUs)
	}
	for g, want := range [][2]int32{{100, 2}, {100, 2}} {
		if u, c := s.MPS.GPU(g); u != want[0] || c != want[1] {
			t.Errorf("GPU %d: %d%%, %d clients; want %v", g, u, c, want)
		}
	}
}

// TestMIGFixedNodeFull: a fixed layout of the first built-in geometry
// (a100-40gb, 7 × 1g.5gb on one GPU) with every instance in use still
// names its geometry, so the instances come back when jobs end. Eight
// one-instance jobs of 100 s at t=0: seven start at 0, the eighth at 100.
func TestMIGFixedNodeFull(t *testing.T) {
	geo := &hwmodels.MIGGeometries()[0]
	layout, err := geo.Layout([]int32{0, 0, 0, 0, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	cl := &hwmodels.Cluster{
		Name: "mig",
		Nodes: []hwmodels.Node{{Name: "m1", GPUs: 1, GPUType: "a100", CPUs: 32, MemMB: 262144, Partitions: 1,
			MIG: &hwmodels.MIGConfig{GPUs: 1, Geometry: geo, Layout: layout}}},
		Partitions: []hwmodels.Partition{{Name: "p", Nodes: []int32{0}, Default: true}},
	}
	tr := &workload.Trace{}
	for i := range 8 {
		tr.Jobs = append(tr.Jobs, migJobOf(t, string(rune('a'+i)), 0, 100, geo.Profiles[0].Name))
	}
	// One node: each pass starts what NodeState.Sub says fits.
	fill := &greedy{bad: func(v View) Plan {
		var plan Plan
		free := v.Nodes()[0]
		for _, p := range v.Pending() {
			a, f := Take(&p.Req, 0, 1), free
			if f.Sub(&a) {
				free = f
				plan.Starts = append(plan.Starts, Start{Job: p.Ref, Alloc: []NodeAlloc{a}})
			}
		}
		return plan
	}}
	rec, err := Run(Config{Cluster: cl, Trace: tr, Policy: fill, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range rec.Jobs {
		want := Time(0)
		if i == 7 {
			want = 100
		}
		if j.Start != want || j.State != Completed {
			t.Errorf("job %d: start %d, %s; want %d, COMPLETED", i, j.Start, j.State, want)
		}
	}
}

// TestAllocsRoundTrip: the record's packed allocation gives back every
// field, with and without MIG and MPS entries, at the types' extremes.
func TestAllocsRoundTrip(t *testing.T) {
	p := mustMIG(t, "7g.80gb+me")
	in := []NodeAlloc{
		{Node: 3, GPUs: 8, CPUs: 64, MemMB: 1 << 40},
		{Node: 1<<31 - 1, CPUs: -1, MIG: MIGInstances{Profile: p, Count: 1<<31 - 1, PerGPU: [MaxMIGGPUs]uint8{255, 0, 1, 2, 3, 4, 5, 255}}},
		{Node: 0, GPUs: -5, MemMB: -1},
		{Node: 7, CPUs: 1, MPS: MPSShare{GPU: MPSAnyGPU, Share: 1<<15 - 1}},
		{Node: 2, MIG: MIGInstances{Profile: p, Count: -3}, MPS: MPSShare{GPU: -1 << 15, Share: -1}},
	}
	for n := range len(in) + 1 {
		a := AllocsOf(in[:n])
		if a.Len() != n {
			t.Errorf("%d nodes: Len = %d", n, a.Len())
		}
		if got := a.Append(nil); !slices.Equal(got, in[:n]) {
			t.Errorf("%d nodes: Append = %+v, want %+v", n, got, in[:n])
		}
		for k := range n {
			if got := a.At(k); got != in[k] {
				t.Errorf("%d nodes: At(%d) = %+v, want %+v", n, k, got, in[k])
			}
		}
		var got []NodeAlloc
		for k, x := range a.All() {
			if k != len(got) {
				t.Errorf("%d nodes: All yields index %d at %d", n, k, len(got))
			}
			got = append(got, x)
		}
		if !slices.Equal(got, in[:n]) {
			t.Errorf("%d nodes: All = %+v", n, got)
		}
		if !a.Equal(AllocsOf(slices.Clone(in[:n]))) {
			t.Errorf("%d nodes: not Equal to itself", n)
		}
	}
	// A one-node whole-GPU allocation is a tag and four zigzag varints:
	// 1 + 1 (node 3: 6) + 1 (GPUs 8: 16) + 2 (CPUs 64: 128) + 6 (MemMB
	// 2^40: 2^41, 42 bits in 7-bit groups) = 11 bytes.
	if a := AllocsOf(in[:1]); len(a.p) != 11 {
		t.Errorf("one plain node packs into %d bytes, want 11", len(a.p))
	}
}

// TestAllocsEncodingSize: runs of consecutive nodes with equal shares,
// the common allocation, take one byte per 64 nodes past the first, and a
// node out of order with the same share a tag and its offset.
func TestAllocsEncodingSize(t *testing.T) {
	run := func(first, n int32) []NodeAlloc {
		var a []NodeAlloc
		for k := range n {
			a = append(a, NodeAlloc{Node: first + k, GPUs: 8, CPUs: 64, MemMB: 512000})
		}
		return a
	}
	// The first node: tag, node 5 (1 byte), GPUs 8 (1), CPUs 64 (zigzag
	// 128: 2), MemMB 512000 (zigzag 1024000: 3) = 8 bytes.
	for _, tt := range []struct {
		name string
		a    []NodeAlloc
		want int
	}{
		{"one node", run(5, 1), 8},
		{"4 consecutive", run(5, 4), 8 + 1},
		{"64 consecutive", run(5, 64), 8 + 1},
		{"65 consecutive", run(5, 65), 8 + 1},
		{"66 consecutive", run(5, 66), 8 + 2},
		{"two runs", append(run(5, 3), run(20, 3)...), 8 + 1 + 2 + 1}, // jump 20-8 = 12: zigzag 24, 1 byte
		{"a run back", append(run(20, 2), run(5, 2)...), 8 + 1 + 2 + 1},
	} {
		if got := len(AllocsOf(tt.a).p); got != tt.want {
			t.Errorf("%s: %d bytes, want %d", tt.name, got, tt.want)
		}
	}
}

// TestAllocsRandom checks the encoding against the plain slice it
// encodes, on random allocations rich in runs, jumps, repeated nodes and
// MIG/MPS nodes, through both AllocsOf and the controller's pool.
func TestAllocsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var pool allocPool
	p := mustMIG(t, "1g.10gb")
	for iter := range 5000 {
		n := rng.IntN(200)
		a := make([]NodeAlloc, n)
		node := int32(rng.IntN(1 << 20))
		shape := NodeAlloc{GPUs: int32(rng.IntN(9)), CPUs: int32(rng.IntN(200)), MemMB: rng.Int64N(1 << 21)}
		for k := range a {
			switch r := rng.IntN(10); {
			case r < 6:
				node++
			case r < 8:
				node += int32(rng.IntN(2000)) - 1000
			default:
				shape = NodeAlloc{GPUs: int32(rng.IntN(9)), CPUs: int32(rng.IntN(200)) - 10, MemMB: rng.Int64N(1<<40) - 5}
			}
			x := shape
			x.Node = node
			if rng.IntN(20) == 0 {
				x.MIG = MIGInstances{Profile: p, Count: int32(rng.IntN(7)), PerGPU: [MaxMIGGPUs]uint8{uint8(rng.IntN(256))}}
			}
			if rng.IntN(30) == 0 {
				x.MPS = MPSShare{GPU: int16(rng.IntN(8)), Share: int16(rng.IntN(101))}
			}
			a[k] = x
		}
		for _, enc := range []Allocs{AllocsOf(a), pool.keep(a)} {
			if got := enc.Append(nil); !slices.Equal(got, a) && !(n == 0 && len(got) == 0) {
				t.Fatalf("workload %d (%d nodes): decoded %v, want %v", iter, n, got, a)
			}
			if enc.Len() != n {
				t.Fatalf("workload %d: Len = %d, want %d", iter, enc.Len(), n)
			}
			if got := spansExpanded(enc); !slices.Equal(got, a) && !(n == 0 && len(got) == 0) {
				t.Fatalf("workload %d (%d nodes): the spans expand to %v, want %v", iter, n, got, a)
			}
			if n > 0 {
				k := rng.IntN(n)
				if enc.At(k) != a[k] {
					t.Fatalf("workload %d: At(%d) = %+v, want %+v", iter, k, enc.At(k), a[k])
				}
			}
		}
		if !AllocsOf(a).Equal(pool.keep(slices.Clone(a))) {
			t.Fatalf("workload %d: equal allocations encode differently", iter)
		}
		if n > 1 {
			b := slices.Clone(a)
			b[rng.IntN(n)].CPUs++
			if AllocsOf(a).Equal(AllocsOf(b)) {
				t.Fatalf("workload %d: different allocations encode alike", iter)
			}
		}
	}
}

// spansExpanded returns a's spans expanded node by node, checking that a
// span of more than one node is plain.
func spansExpanded(a Allocs) []NodeAlloc {
	var out []NodeAlloc
	for x, n := range a.Spans() {
		if n < 1 || n > 1 && !plainAlloc(&x) {
			panic(fmt.Sprintf("span %+v of %d nodes", x, n))
		}
		for k := range n {
			y := x
			y.Node += int32(k)
			out = append(out, y)
		}
	}
	return out
}

// TestAllocsSpans: consecutive nodes with equal shares come as one span
// (past the 64 nodes of one run item too), a node out of order or with
// other shares starts a new one.
func TestAllocsSpans(t *testing.T) {
	var a []NodeAlloc
	for k := range int32(100) {
		a = append(a, NodeAlloc{Node: 10 + k, CPUs: 1, MemMB: 100})
	}
	a = append(a, NodeAlloc{Node: 200, CPUs: 1, MemMB: 100}, NodeAlloc{Node: 201, CPUs: 1, MemMB: 100}, NodeAlloc{Node: 202, CPUs: 2, MemMB: 100})
	type span struct {
		node int32
		n    int
	}
	var got []span
	for x, n := range AllocsOf(a).Spans() {
		got = append(got, span{x.Node, n})
	}
	want := []span{{10, 100}, {200, 2}, {202, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("spans %v, want %v", got, want)
	}
	for range (Allocs{}).Spans() {
		t.Error("the empty allocation yields a span")
	}
}

// TestRunAllocsReuse: get copies the allocation into a slice of
// power-of-two capacity, put takes back only such slices, and a slice put
// back serves the next get of its class with the new values.
func TestRunAllocsReuse(t *testing.T) {
	var r runAllocs
	if r.get(nil) != nil {
		t.Fatal("get of an empty allocation is not nil")
	}
	a := []NodeAlloc{{Node: 1, CPUs: 1}, {Node: 2, CPUs: 1}, {Node: 3, CPUs: 2}}
	s := r.get(a)
	if !slices.Equal(s, a) || cap(s) != 4 || &s[0] == &a[0] {
		t.Fatalf("get = %v (cap %d), want a copy of %v in capacity 4", s, cap(s), a)
	}
	r.put(s)
	b := []NodeAlloc{{Node: 7, GPUs: 1}, {Node: 8, GPUs: 1}, {Node: 9, GPUs: 1}, {Node: 10, GPUs: 1}}
	u := r.get(b)
	if &u[0] != &s[0] || !slices.Equal(u, b) {
		t.Fatalf("get after put = %v, want %v in the slice put back", u, b)
	}
	if v := r.get(b); &v[0] == &u[0] {
		t.Fatal("a slice in use was given out again")
	}
	r.put(make([]NodeAlloc, 3)) // not get's: capacity 3
	if w := r.get(a); cap(w) != 4 {
		t.Fatalf("get = capacity %d, want a new slice of 4", cap(w))
	}
	one := r.get(a[:1])
	if cap(one) != 1 {
		t.Fatalf("one node: capacity %d, want 1", cap(one))
	}
}

// appendAllocsNodeByNode is appendAllocs as it was before it took each
// run of nodes in one step: a node at a time, a run item grown by one
// per node.
func appendAllocsNodeByNode(p []byte, a []NodeAlloc) []byte {
	run := -1 // index in p of the last item's tag when it is a run item
	for i := range a {
		x := &a[i]
		if i > 0 && plainAlloc(x) && plainAlloc(&a[i-1]) {
			prev := &a[i-1]
			if x.GPUs == prev.GPUs && x.CPUs == prev.CPUs && x.MemMB == prev.MemMB {
				if int64(x.Node) == int64(prev.Node)+1 {
					if run >= 0 && p[run]>>2 < allocRunMax {
						p[run] += 1 << 2
					} else {
						run = len(p)
						p = append(p, allocRun)
					}
					continue
				}
				run = -1
				p = append(p, allocJump)
				p = binary.AppendVarint(p, int64(x.Node)-int64(prev.Node)-1)
				continue
			}
		}
		run = -1
		p = append(p, appendAllocs(nil, a[i:i+1])...)
	}
	return p
}

// TestAllocsRunsEncodeAsBefore checks that appendAllocs writes the bytes
// of appendAllocsNodeByNode on random allocations of long runs (past
// several 64-node run items), jumps, share changes and MIG/MPS nodes.
func TestAllocsRunsEncodeAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	p := mustMIG(t, "1g.10gb")
	for iter := range 3000 {
		a := make([]NodeAlloc, rng.IntN(400))
		node := int32(rng.IntN(1 << 10))
		shape := NodeAlloc{CPUs: 1}
		for k := range a {
			switch r := rng.IntN(100); {
			case r < 90:
				node++
			case r < 95:
				node += int32(rng.IntN(50)) - 25
			default:
				shape = NodeAlloc{GPUs: int32(rng.IntN(3)), CPUs: int32(rng.IntN(3))}
			}
			x := shape
			x.Node = node
			if rng.IntN(40) == 0 {
				x.MIG = MIGInstances{Profile: p, Count: 1}
			}
			if rng.IntN(60) == 0 {
				x.MPS = MPSShare{GPU: 0, Share: 50}
			}
			a[k] = x
		}
		if got, want := appendAllocs(nil, a), appendAllocsNodeByNode(nil, a); !bytes.Equal(got, want) {
			t.Fatalf("workload %d (%d nodes): %x, want %x", iter, len(a), got, want)
		}
	}
}
