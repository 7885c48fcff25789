// Package event is the bare event core of the simulator: a 4-ary min-heap of
// value events ordered by (time, class, sequence). It knows nothing about
// jobs or clusters, so it can be benchmarked alone.
package event

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
)

// Queue is a 4-ary min-heap of events. The zero value is an empty queue.
// Ties in time are broken by class, then by insertion order, so the same
// pushes always pop in the same order.
//
// An event pushed ahead of every queued one (the simulator's scheduling
// pass at the current instant, usually) waits in a one-event front slot
// instead of going through the heap.
type Queue struct {
	h     []Event
	seq   uint64
	front Event
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
	e := Event{At: at, key: uint64(class)<<classShift | q.seq&seqMask, Arg: arg, Gen: gen, Class: class}
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
		return q.front, true
	}
	if len(q.h) == 0 {
		return Event{}, false
	}
	return q.h[0], true
}

// Pop removes and returns the next event. It panics on an empty queue.
func (q *Queue) Pop() Event {
	if q.held {
		q.held = false
		return q.front
	}
	top := q.h[0]
	last := len(q.h) - 1
	q.h[0] = q.h[last]
	q.h = q.h[:last]
	if last > 0 {
		q.down(0)
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

func less(a, b *Event) bool {
	if a.At != b.At {
		return a.At < b.At
	}
	return a.key < b.key
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

func (q *Queue) down(i int) {
	h := q.h
	n := len(h)
	e := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := c + 4
		if end > n {
			end = n
		}
		for j := c + 1; j < end; j++ {
			if less(&h[j], &h[m]) {
				m = j
			}
		}
		if !less(&h[m], &e) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = e
}
