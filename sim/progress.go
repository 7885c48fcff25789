package sim

// ProgressEvery is how many events pass between two calls of
// Config.Progress. At a few million events per second that is a few calls
// per second of wall time, and the call costs O(jobs ended since the last
// call plus jobs in the system), not O(jobs).
const ProgressEvery = 1 << 16

// progress is the state behind Config.Progress.
type progress struct {
	next   int64 // event count at which the next call is due
	prefix int   // every job below this index has ended
}

// reportProgress tells Config.Progress the current instant, how many jobs
// have ended (completed, timed out, cancelled, rejected, failed: they will
// not change again) and how many the trace holds. Jobs end roughly in
// submit order, so the count keeps a prefix of ended jobs and scans only
// the jobs submitted after it.
func (c *controller) reportProgress() {
	c.prog.next = c.events + ProgressEvery
	for c.prog.prefix < c.nextSub && c.status[c.prog.prefix] == stDone {
		c.prog.prefix++
	}
	done := c.prog.prefix
	for i := c.prog.prefix; i < c.nextSub; i++ {
		if c.status[i] == stDone {
			done++
		}
	}
	c.cfg.Progress(c.now, done, c.js.n)
}
