package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progressLine prints progress to stderr: on a terminal one line rewritten
// in place (at most every 100 ms), elsewhere plain lines (at most every
// interval, or every call when interval is 0), or nothing when off.
// Wall-clock time is read here, in the command, never inside a run.
type progressLine struct {
	w        io.Writer
	tty      bool
	off      bool
	interval time.Duration
	start    time.Time
	last     time.Time
	width    int
}

// newProgress returns a progress printer on w. quiet turns it off;
// plainOK says whether to print plain lines when w is not a terminal (a
// sweep does; a single run stays silent).
func newProgress(w io.Writer, quiet, plainOK bool, interval time.Duration) *progressLine {
	tty := isTerminal(w)
	return &progressLine{w: w, tty: tty, off: quiet || (!tty && !plainOK), interval: interval, start: time.Now()}
}

// isTerminal reports whether w is a character device that is not a dumb
// terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// update prints msg unless the last line is too recent; final forces it
// and ends the line on a terminal.
func (p *progressLine) update(msg string, final bool) {
	if p.off {
		return
	}
	now := time.Now()
	gap := p.interval
	if p.tty {
		gap = 100 * time.Millisecond
	}
	if !final && !p.last.IsZero() && now.Sub(p.last) < gap {
		return
	}
	p.last = now
	if !p.tty {
		fmt.Fprintln(p.w, msg)
		return
	}
	pad := ""
	if n := len(msg); n < p.width {
		pad = strings.Repeat(" ", p.width-n)
	}
	p.width = len(msg)
	fmt.Fprintf(p.w, "\r%s%s", msg, pad)
	if final {
		fmt.Fprintln(p.w)
	}
}

// elapsed returns the wall time since the printer was made.
func (p *progressLine) elapsed() time.Duration { return time.Since(p.start) }

// eta estimates the time left from the share done so far.
func eta(elapsed time.Duration, done, total float64) string {
	if done <= 0 || done >= total {
		return "-"
	}
	left := time.Duration(float64(elapsed) * (total - done) / done)
	return left.Round(time.Second).String()
}
