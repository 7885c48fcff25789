package nvml

import (
	"fmt"
	"time"
)

// Point is one GPU's readings at one sampling instant.
type Point struct {
	// At is the time since sampling began.
	At  time.Duration
	GPU int
	Sample
}

// Series is a time series of readings of every GPU, in sampling order
// (instant, then GPU index).
type Series struct {
	// Start is the clock's time at the first sample; Interval the
	// sampling period asked for.
	Start    time.Time
	Interval time.Duration
	GPUs     int
	Points   []Point
}

// Sampler samples every GPU of Source every Interval on Clock.
type Sampler struct {
	Source   Source
	Clock    Clock
	Interval time.Duration
}

// sampleAll appends one reading of each GPU at offset at.
func (s *Sampler) sampleAll(ser *Series, at time.Duration) error {
	for i := range ser.GPUs {
		x, err := s.Source.Sample(i)
		if err != nil {
			return err
		}
		ser.Points = append(ser.Points, Point{At: at, GPU: i, Sample: x})
	}
	return nil
}

// Run samples at 0, Interval, 2×Interval, … while the elapsed time is
// below d (d ≤ 0: one sample), or until done is closed, whichever comes
// first; a last sample is taken when done closes. Sampling instants are
// scheduled from the start, so a slow read does not drift the series.
func (s *Sampler) Run(d time.Duration, done <-chan struct{}) (*Series, error) {
	if s.Interval <= 0 {
		return nil, fmt.Errorf("sampling interval must be > 0, got %v", s.Interval)
	}
	n, err := s.Source.DeviceCount()
	if err != nil {
		return nil, err
	}
	ser := &Series{Start: s.Clock.Now(), Interval: s.Interval, GPUs: n}
	for k := 0; ; k++ {
		at := s.Clock.Now().Sub(ser.Start)
		if err := s.sampleAll(ser, at); err != nil {
			return nil, err
		}
		if closed(done) {
			return ser, nil
		}
		next := time.Duration(k+1) * s.Interval
		if done == nil && next >= d {
			return ser, nil
		}
		s.Clock.Wait(next-s.Clock.Now().Sub(ser.Start), done)
		if closed(done) {
			at := s.Clock.Now().Sub(ser.Start)
			if err := s.sampleAll(ser, at); err != nil {
				return nil, err
			}
			return ser, nil
		}
	}
}

func closed(done <-chan struct{}) bool {
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
