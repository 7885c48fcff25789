package arrowcheck

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Allocator is a memory.Allocator that hands out at most Budget bytes at
// once. An allocation past the budget panics with a *BudgetError instead
// of reaching the Go heap: arrow-go's Allocate cannot fail otherwise, and
// a Go out-of-memory cannot be recovered, a panic can (the reader's
// goroutine recovers it; see Recovered).
type Allocator struct {
	mem    memory.Allocator
	budget int64
	used   atomic.Int64
	peak   atomic.Int64
}

// BudgetError is the panic value of an allocation past the budget.
type BudgetError struct {
	Want, Used, Budget int64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("reading would allocate %d bytes on top of %d, more than %d (limit MaxMemory)", e.Want, e.Used, e.Budget)
}

// NewAllocator returns an Allocator over Go memory with the given budget
// in bytes (DefaultMaxMemory when budget <= 0).
func NewAllocator(budget int64) *Allocator {
	if budget <= 0 {
		budget = DefaultMaxMemory
	}
	return &Allocator{mem: memory.NewGoAllocator(), budget: budget}
}

var _ memory.Allocator = (*Allocator)(nil)

func (a *Allocator) take(n int64) {
	if n < 0 {
		panic(&BudgetError{Want: n, Used: a.used.Load(), Budget: a.budget})
	}
	for {
		used := a.used.Load()
		if n > a.budget-used {
			panic(&BudgetError{Want: n, Used: used, Budget: a.budget})
		}
		if a.used.CompareAndSwap(used, used+n) {
			for {
				p := a.peak.Load()
				if used+n <= p || a.peak.CompareAndSwap(p, used+n) {
					break
				}
			}
			return
		}
	}
}

// Allocate implements memory.Allocator.
func (a *Allocator) Allocate(size int) []byte {
	a.take(int64(size))
	return a.mem.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (a *Allocator) Reallocate(size int, b []byte) []byte {
	if d := int64(size) - int64(len(b)); d > 0 {
		a.take(d)
	} else {
		a.used.Add(d)
	}
	return a.mem.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (a *Allocator) Free(b []byte) {
	a.used.Add(-int64(len(b)))
	a.mem.Free(b)
}

// Peak returns the most bytes handed out at once so far.
func (a *Allocator) Peak() int64 { return a.peak.Load() }

// Recovered turns a recovered panic value into the *BudgetError it
// carries, wherever arrow-go wrapped it; nil if it is not one.
func Recovered(v any) *BudgetError {
	err, ok := v.(error)
	if !ok {
		return nil
	}
	var be *BudgetError
	if errors.As(err, &be) {
		return be
	}
	return nil
}
