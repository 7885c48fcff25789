package event

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestQueueOrder(t *testing.T) {
	var q Queue
	// Pushed out of order; expected pop order is by (At, Class, push order).
	q.Push(10, 2, 1, 0)
	q.Push(5, 3, 2, 0)
	q.Push(10, 0, 3, 0)
	q.Push(5, 3, 4, 0)
	q.Push(10, 2, 5, 0)
	q.Push(1, 9, 6, 0)
	var got []int32
	for q.Len() > 0 {
		got = append(got, q.Pop().Arg)
	}
	want := []int32{6, 2, 4, 3, 1, 5}
	if !slices.Equal(got, want) {
		t.Fatalf("pop order %v, want %v", got, want)
	}
}

// TestQueueMatchesSort checks the heap against a dumb alternative: a slice
// kept sorted by (At, Class, push order), with pops interleaved with pushes.
// In odd rounds pushes are at or just after the last popped time, as a
// simulation's are, so many go ahead of every queued event (front slot).
func TestQueueMatchesSort(t *testing.T) {
	type item struct {
		at    int64
		class Class
		seq   int32
	}
	cmpItem := func(a, b item) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		if a.class != b.class {
			return int(a.class) - int(b.class)
		}
		return int(a.seq - b.seq)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		var q Queue
		var ref []item
		var seq int32
		var now int64
		for step := 0; step < 400; step++ {
			if len(ref) > 0 && rng.IntN(3) == 0 {
				e := q.Pop()
				now = e.At
				want := ref[0]
				ref = ref[1:]
				if e.At != want.at || e.Class != want.class || e.Arg != want.seq {
					t.Fatalf("round %d step %d: popped (%d,%d,%d), want (%d,%d,%d)",
						round, step, e.At, e.Class, e.Arg, want.at, want.class, want.seq)
				}
				continue
			}
			it := item{int64(rng.IntN(20)), Class(rng.IntN(4)), seq}
			if round%2 == 1 {
				it.at = now + int64(rng.IntN(3))
			}
			seq++
			q.Push(it.at, it.class, it.seq, 0)
			i, _ := slices.BinarySearchFunc(ref, it, cmpItem)
			ref = slices.Insert(ref, i, it)
		}
		if q.Len() != len(ref) {
			t.Fatalf("round %d: queue has %d, reference %d", round, q.Len(), len(ref))
		}
	}
}

func TestBefore(t *testing.T) {
	e := Event{At: 10, Class: 2, key: 2<<classShift | 7}
	cases := []struct {
		at    int64
		class Class
		want  bool
	}{
		{9, 5, true}, {11, 0, false}, {10, 1, true}, {10, 2, true}, {10, 3, false},
	}
	for _, c := range cases {
		if got := Before(c.at, c.class, &e); got != c.want {
			t.Errorf("Before(%d, %d) = %v, want %v", c.at, c.class, got, c.want)
		}
	}
}

// BenchmarkEngine measures schedule+pop of one event with 10k pending, the
// DESIGN.md budget (>= 6 M events/s on one core).
func BenchmarkEngine(b *testing.B) {
	const pending = 10_000
	rng := rand.New(rand.NewPCG(42, 1))
	var q Queue
	for i := 0; i < pending; i++ {
		q.Push(int64(rng.IntN(1_000_000)), Class(rng.IntN(4)), int32(i), 0)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var last int64
	for i := 0; i < b.N; i++ {
		e := q.Pop()
		last = e.At
		// Hold model: the next event lands a random distance into the future.
		q.Push(e.At+1+int64(rng.IntN(1000)), e.Class, e.Arg, 0)
	}
	b.StopTimer()
	if q.Len() != pending {
		b.Fatalf("queue holds %d events, want %d", q.Len(), pending)
	}
	if last < 0 {
		b.Fatal("time went negative")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
