// Package event is the bare event core of the simulator: a 4-ary min-heap of
// value events ordered by (time, class, sequence). It knows nothing about
// jobs or clusters, so it can be benchmarked alone.
package event

import "math/bits"

// Class orders events that fall on the same instant: a lower class is
// applied first. The sim package documents its classes.
type Class uint8

// Event is one scheduled happening. Arg and Gen are opaque to the queue:
// the sim package uses Arg for a job or node index and Gen to drop events
// that were superseded (lazy cancellation).
type Event struct {
	At    int64
	key   uint64 // class in the top 8 bits, insertion sequence below
	Arg   int32
	Gen   uint32
	Class Class
}

// Seq returns the event's insertion sequence number.
func (e *Event) Seq() uint64 { return e.key & seqMask }

const (
	classShift = 56
	seqMask    = 1<<classShift - 1
	timeSign   = 1 << 63
)

// item is an event as the heap holds it: 24 bytes, the class kept in key
// only, and the time biased so that (at, key) orders as one unsigned
// 128-bit number.
type item struct {
	at  uint64 // At with the sign bit flipped
	key uint64
	arg int32
	gen uint32
}

func (it *item) event() Event {
	return Event{At: int64(it.at ^ timeSign), key: it.key, Arg: it.arg, Gen: it.gen, Class: Class(it.key >> classShift)}
}

// Queue is a 4-ary min-heap of events. The zero value is an empty queue.
// Ties in time are broken by class, then by insertion order, so the same
// pushes always pop in the same order.
//
// An event pushed ahead of every queued one (the simulator's scheduling
// pass at the current instant, usually) waits in a one-event front slot
// instead of going through the heap.
type Queue struct {
	h     []item
	seq   uint64
	front item
	held  bool // front holds an event, which goes before all of h
}

// Len returns the number of queued events.
func (q *Queue) Len() int {
	if q.held {
		return len(q.h) + 1
	}
	return len(q.h)
}

// Push schedules an event. It does not check the time against any clock;
// the caller (sim) panics on events in the past.
func (q *Queue) Push(at int64, class Class, arg int32, gen uint32) {
	q.seq++
	e := item{at: uint64(at) ^ timeSign, key: uint64(class)<<classShift | q.seq&seqMask, arg: arg, gen: gen}
	switch {
	case q.held && less(&e, &q.front):
		e, q.front = q.front, e
	case !q.held && (len(q.h) == 0 || less(&e, &q.h[0])):
		q.front, q.held = e, true
		return
	}
	q.h = append(q.h, e)
	q.up(len(q.h) - 1)
}

// Peek returns the next event without removing it; ok is false when empty.
func (q *Queue) Peek() (e Event, ok bool) {
	if q.held {
		return q.front.event(), true
	}
	if len(q.h) == 0 {
		return Event{}, false
	}
	return q.h[0].event(), true
}

// Pop removes and returns the next event. It panics on an empty queue.
func (q *Queue) Pop() Event {
	if q.held {
		q.held = false
		return q.front.event()
	}
	top := q.h[0].event()
	last := len(q.h) - 1
	e := q.h[last]
	q.h = q.h[:last]
	if last > 0 {
		q.fill(e)
	}
	return top
}

// Before reports whether an event at (at, class) that is kept outside the
// queue (such as a stream of sorted trace submissions) goes before e. On a
// tie of time and class the outside event goes first.
func Before(at int64, class Class, e *Event) bool {
	if at != e.At {
		return at < e.At
	}
	return class <= e.Class
}

// less reports whether a goes before b: (at, key) as one 128-bit number.
func less(a, b *item) bool { return before(a, b) != 0 }

// before is less as 1 or 0, computed without branches (a heap's
// comparisons are unpredictable): the borrow of the 128-bit a - b.
func before(a, b *item) uint64 {
	_, borrow := bits.Sub64(a.key, b.key, 0)
	_, borrow = bits.Sub64(a.at, b.at, borrow)
	return borrow
}

func (q *Queue) up(i int) {
	h := q.h
	e := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !less(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// fill puts e, the heap's former last item, in the place of the popped
// root: the hole goes down to a leaf along the least children, and e rises
// from there (it belongs near the bottom, so this saves the comparison
// with e at every level). The least of four children is found without
// branches: the least of each pair, then of the two.
func (q *Queue) fill(e item) {
	h := q.h
	n := len(h)
	i := 0
	for {
		c := 4*i + 1
		if c+4 > n {
			break
		}
		ch := h[c : c+4 : c+4]
		a := before(&ch[1], &ch[0])
		b := 2 + before(&ch[3], &ch[2])
		m := a ^ (a^b)&-before(&ch[b&3], &ch[a&1])
		h[i] = ch[m&3]
		i = c + int(m&3)
	}
	if c := 4*i + 1; c < n {
		m := c
		for j := c + 1; j < n; j++ {
			if less(&h[j], &h[m]) {
				m = j
			}
		}
		h[i] = h[m]
		i = m
	}
	h[i] = e
	q.up(i)
}
