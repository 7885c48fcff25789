package sim

import "fmt"

// Running implements View: the running jobs by Ref. Unlike the other
// getters it changes the controller: it first drops the entries of ended
// runs, which dropRunning leaves in place, moving each stretch of live
// entries once (slices.DeleteFunc here, and slices.BinarySearchFunc in
// searchRunning, made BenchmarkPolicy fifo and easy 5-10 % slower).
func (c *controller) Running() []RunningJob {
	if c.runDead == 0 {
		return c.running
	}
	k := 0
	for k < len(c.running) && c.running[k].Alloc != nil {
		k++
	}
	for i := k; i < len(c.running); {
		for i < len(c.running) && c.running[i].Alloc == nil {
			i++
		}
		j := i
		for j < len(c.running) && c.running[j].Alloc != nil {
			j++
		}
		k += copy(c.running[k:], c.running[i:j])
		i = j
	}
	clear(c.running[k:])
	c.running = c.running[:k]
	c.runDead = 0
	return c.running
}

// runningCount returns how many jobs are running.
func (c *controller) runningCount() int { return len(c.running) - c.runDead }

// searchRunning returns where job ref's entry is or would be in the running
// list, and whether it is there (running, or an ended run's entry).
func (c *controller) searchRunning(ref JobRef) (int, bool) {
	lo, hi := 0, len(c.running)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.running[m].Ref < ref {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(c.running) && c.running[lo].Ref == ref
}

// runningIndex returns job ref's index in the running list; it panics if
// the job is not running.
func (c *controller) runningIndex(ref JobRef) int {
	i, found := c.searchRunning(ref)
	if !found || c.running[i].Alloc == nil {
		panic(fmt.Sprintf("sim: running job %q missing from the running list: t=%d", c.js.at(ref).ID, c.now))
	}
	return i
}

// addRunning puts rj in the running list. Jobs usually start in Ref
// order, so it is usually appended.
func (c *controller) addRunning(rj RunningJob) {
	n := len(c.running)
	if n == 0 || c.running[n-1].Ref < rj.Ref {
		c.running = append(c.running, rj)
		return
	}
	i, found := c.searchRunning(rj.Ref)
	if found { // the ended entry of an earlier run (requeue)
		c.running[i] = rj
		c.runDead--
		return
	}
	c.running = append(c.running, RunningJob{})
	copy(c.running[i+1:], c.running[i:])
	c.running[i] = rj
}

// dropRunning marks job ref's entry ended; the list is compacted when
// ended entries are the majority, so each end costs O(1) amortized.
func (c *controller) dropRunning(ref JobRef) {
	c.running[c.runningIndex(ref)].Alloc = nil
	if c.runDead++; c.runDead > len(c.running)/2 {
		c.Running()
	}
}
