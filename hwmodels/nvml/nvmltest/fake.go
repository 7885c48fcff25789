package nvmltest

import (
	"errors"
	"fmt"
	"time"

	"github.com/schedsim/schedsim/hwmodels/nvml"
)

// Fake is an nvml.Source serving a Node's readings; Sample(i) returns
// Live(i, k) for its k-th call on GPU i.
type Fake struct {
	Node   *Node
	calls  map[int]int
	Closed bool
}

// NewFake returns a Fake serving n.
func NewFake(n *Node) *Fake { return &Fake{Node: n, calls: map[int]int{}} }

var _ nvml.Source = (*Fake)(nil)

var errClosed = errors.New("nvmltest: source closed")

func (f *Fake) System() (nvml.System, error) {
	if f.Closed {
		return nvml.System{}, errClosed
	}
	return f.Node.Clone().System, nil
}

func (f *Fake) DeviceCount() (int, error) {
	if f.Closed {
		return 0, errClosed
	}
	return len(f.Node.Readings.GPUs), nil
}

func (f *Fake) Device(i int) (nvml.GPU, error) {
	if f.Closed {
		return nvml.GPU{}, errClosed
	}
	if i < 0 || i >= len(f.Node.Readings.GPUs) {
		return nvml.GPU{}, fmt.Errorf("NVML device %d: Invalid Argument", i)
	}
	return f.Node.Clone().GPUs[i], nil
}

func (f *Fake) Sample(i int) (nvml.Sample, error) {
	if f.Closed {
		return nvml.Sample{}, errClosed
	}
	if i < 0 || i >= len(f.Node.Readings.GPUs) {
		return nvml.Sample{}, fmt.Errorf("NVML device %d: Invalid Argument", i)
	}
	k := f.calls[i]
	f.calls[i] = k + 1
	return f.Node.Live(i, k), nil
}

func (f *Fake) Close() error {
	f.Closed = true
	return nil
}

// Clock is a fake nvml.Clock: Wait advances it, firing the functions
// registered with At when their time comes (in time order, then
// registration order), and stops early once done is closed.
type Clock struct {
	now   time.Time
	hooks []hook
}

type hook struct {
	at time.Time
	f  func()
}

// NewClock returns a Clock at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// At registers f to run when the clock reaches start-relative offset d.
func (c *Clock) At(t time.Time, f func()) { c.hooks = append(c.hooks, hook{t, f}) }

// Now returns the fake time.
func (c *Clock) Now() time.Time { return c.now }

// Wait advances the clock by d, or to the first hook after which done is
// closed.
func (c *Clock) Wait(d time.Duration, done <-chan struct{}) {
	end := c.now.Add(d)
	for {
		if isClosed(done) {
			return
		}
		i := -1
		for j, h := range c.hooks {
			if !h.at.After(end) && (i < 0 || h.at.Before(c.hooks[i].at)) {
				i = j
			}
		}
		if i < 0 {
			c.now = end
			return
		}
		h := c.hooks[i]
		c.hooks = append(c.hooks[:i], c.hooks[i+1:]...)
		if h.at.After(c.now) {
			c.now = h.at
		}
		h.f()
	}
}

func isClosed(done <-chan struct{}) bool {
	if done == nil {
		return false
	}
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// Process is a fake nvml.Process that exits with Code when Clock reaches
// its start plus Runtime.
type Process struct {
	Clock   *Clock
	Runtime time.Duration
	Code    int
	done    chan struct{}
	Started bool
}

// Start registers the exit on the clock.
func (p *Process) Start() error {
	p.done = make(chan struct{})
	p.Started = true
	p.Clock.At(p.Clock.Now().Add(p.Runtime), func() { close(p.done) })
	return nil
}

// Done is closed at exit.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait returns Code.
func (p *Process) Wait() (int, error) {
	<-p.done
	return p.Code, nil
}
