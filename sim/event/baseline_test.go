package event

// binaryHeap is the baseline BenchmarkEngine compares Queue with: a plain
// typed binary min-heap of the same events, ordered by (At, Class, seq)
// with the index discipline of container/heap's example priority queue,
// without the boxing through any.
type binaryHeap struct {
	h   []baseEvent
	seq uint64
}

type baseEvent struct {
	At    int64
	Seq   uint64
	Arg   int32
	Gen   uint32
	Class Class
}

func (b *binaryHeap) less(i, j int) bool {
	x, y := &b.h[i], &b.h[j]
	if x.At != y.At {
		return x.At < y.At
	}
	if x.Class != y.Class {
		return x.Class < y.Class
	}
	return x.Seq < y.Seq
}

func (b *binaryHeap) Len() int { return len(b.h) }

func (b *binaryHeap) Push(at int64, class Class, arg int32, gen uint32) {
	b.seq++
	b.h = append(b.h, baseEvent{At: at, Seq: b.seq, Arg: arg, Gen: gen, Class: class})
	for i := len(b.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !b.less(i, p) {
			break
		}
		b.h[i], b.h[p] = b.h[p], b.h[i]
		i = p
	}
}

func (b *binaryHeap) Pop() baseEvent {
	top := b.h[0]
	n := len(b.h) - 1
	b.h[0] = b.h[n]
	b.h = b.h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && b.less(r, l) {
			m = r
		}
		if !b.less(m, i) {
			break
		}
		b.h[i], b.h[m] = b.h[m], b.h[i]
		i = m
	}
	return top
}
