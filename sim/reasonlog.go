package sim

import (
	"bytes"
	"encoding/binary"
	"iter"
	"slices"
)

// ReasonLog is the append-only log of pending-reason changes, in the order
// they were made. A busy queue changes reasons tens of times per job (a
// 1 M-job year replay makes about 36 M changes), so changes are packed as
// deltas from the one before: a header byte (the reason, and whether the
// time is unchanged), then the time's delta unless unchanged and the job
// ref's delta, as zigzag varints. A change takes about 2.5 bytes instead of
// a ReasonChange's 16. The zero value is an empty log.
type ReasonLog struct {
	chunks [][]byte
	n      int
	last   ReasonChange // the last change appended, the base of the next delta
}

const (
	// reasonChunk is the size of a chunk of the log: fixed chunks grow
	// the log without copying it.
	reasonChunk = 64 << 10
	// maxReasonEntry bounds one encoded change: header, escaped reason,
	// two varints.
	maxReasonEntry = 2 + 2*binary.MaxVarintLen64
	// Header bits: the low five hold the reason (reasonEscape: it follows
	// in a byte of its own), sameAt says the time did not change.
	reasonMask   = 0x1f
	reasonEscape = reasonMask
	sameAt       = 0x20
)

// ReasonLogOf returns a log of the given changes.
func ReasonLogOf(changes ...ReasonChange) ReasonLog {
	var l ReasonLog
	for _, c := range changes {
		l.Add(c)
	}
	return l
}

// Add appends c to the log.
func (l *ReasonLog) Add(c ReasonChange) {
	k := len(l.chunks) - 1
	if k < 0 || cap(l.chunks[k])-len(l.chunks[k]) < maxReasonEntry {
		l.chunks = append(l.chunks, make([]byte, 0, reasonChunk))
		k++
	}
	b := l.chunks[k]
	h := byte(reasonEscape)
	if c.Reason < reasonEscape {
		h = byte(c.Reason)
	}
	if c.At == l.last.At && l.n > 0 {
		h |= sameAt
	}
	b = append(b, h)
	if h&reasonMask == reasonEscape {
		b = append(b, byte(c.Reason))
	}
	if h&sameAt == 0 {
		b = binary.AppendVarint(b, int64(c.At-l.last.At))
	}
	b = binary.AppendVarint(b, int64(c.Job)-int64(l.last.Job))
	l.chunks[k] = b
	l.last = c
	l.n++
}

// Len returns the number of changes in the log.
func (l *ReasonLog) Len() int { return l.n }

// Bytes returns the memory the log's chunks hold.
func (l *ReasonLog) Bytes() int { return len(l.chunks) * reasonChunk }

// Equal reports whether l and o hold the same changes in the same order
// (go-cmp uses it to compare Records).
func (l ReasonLog) Equal(o ReasonLog) bool {
	// The packing of a sequence is deterministic, chunk breaks included.
	return l.n == o.n && slices.EqualFunc(l.chunks, o.chunks, bytes.Equal)
}

// All yields the changes in the order they were added.
func (l *ReasonLog) All() iter.Seq[ReasonChange] {
	return func(yield func(ReasonChange) bool) {
		r := l.Reader()
		for {
			c, ok := r.Next()
			if !ok || !yield(c) {
				return
			}
		}
	}
}

// Changes returns the log as a slice: for tests and small logs.
func (l *ReasonLog) Changes() []ReasonChange {
	out := make([]ReasonChange, 0, l.n)
	for c := range l.All() {
		out = append(out, c)
	}
	return out
}

// Reader returns a cursor at the start of the log, for merging the log
// with other event streams without a goroutine per iterator.
func (l *ReasonLog) Reader() ReasonReader { return ReasonReader{log: l} }

// ReasonReader reads a ReasonLog from the start. The log must not be
// appended to while it is read.
type ReasonReader struct {
	log   *ReasonLog
	chunk int
	off   int
	read  int
	last  ReasonChange
}

// Next returns the next change, or false at the end of the log.
func (r *ReasonReader) Next() (ReasonChange, bool) {
	if r.read >= r.log.n {
		return ReasonChange{}, false
	}
	b := r.log.chunks[r.chunk]
	if r.off >= len(b) {
		r.chunk, r.off = r.chunk+1, 0
		b = r.log.chunks[r.chunk]
	}
	h := b[r.off]
	r.off++
	c := r.last
	c.Reason = PendingReason(h & reasonMask)
	if h&reasonMask == reasonEscape {
		c.Reason = PendingReason(b[r.off])
		r.off++
	}
	if h&sameAt == 0 {
		d, n := binary.Varint(b[r.off:])
		r.off += n
		c.At += Time(d)
	}
	d, n := binary.Varint(b[r.off:])
	r.off += n
	c.Job = JobRef(int64(c.Job) + d)
	r.last = c
	r.read++
	return c, true
}

// Peek returns the next change without consuming it.
func (r *ReasonReader) Peek() (ReasonChange, bool) {
	saved := *r
	c, ok := r.Next()
	*r = saved
	return c, ok
}
