package slurm

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/sim"
)

// preemptState is the slurm policy's preemption state: the QOS relation,
// and the scratch state of the pass's preemption decisions.
type preemptState struct {
	qosCan   [][]bool      // [preemptor QOS][victim QOS]: may preempt (preempt/qos)
	qosRank  []int32       // per QOS: its depth in the Preempt graph (queue order)
	partMode []preemptMode // per partition: its PreemptMode, modeUnset for the cluster's

	out     []sim.Preemption
	blocked []bool // nodes out of this main pass's available set (failed partitions, out of service)
	checked uint32 // epoch of the pass whose out-of-service nodes are in blocked
	inUse   []sim.NodeState
	cand    []preemptCand
	free    []sim.NodeState
	masked  []sim.NodeState
	alloc   []sim.NodeAlloc

	// The backfill cycle's preemption (bfTryPreempt): set while it runs,
	// when blocked also holds the nodes reserved over the record's
	// window, whose free resources fitsWithout leaves out; and the nodes
	// out of service this pass (oos, valid while oosEpoch is the pass's).
	inBF     bool
	oos      []bool
	oosEpoch uint32
	gone     []sim.JobRef // preemptorReserve: the preemptable jobs its will-run test removes, sorted

	waits map[sim.JobRef]*preemptWaitRec // per preemptor whose victims are not all gone

	// The controller's KillWait and preemption grace time (sim.RunInfo),
	// and the running jobs as this pass's preemptions leave them
	// (applyKills; valid while runEpoch is the pass's epoch).
	killWait, grace sim.Time
	quiet           sim.Time // preemptQuiet
	run             []sim.RunningJob
	runEpoch        uint32

	// What collectCands reads of each running job of the view, per pass
	// (rcEpoch): a record's candidates are filtered from it without a
	// look at the job's state; a victim chosen in the pass is marked off.
	rc      []runCand
	rcEpoch uint32
}

// runCand is a running job as collectCands sees it in a pass: off when
// it may not be preempted at all (a victim already, killed, exempt, or
// PreemptMode OFF), else its partition's tier, its QOS and the mode.
type runCand struct {
	off  bool
	tier int32
	qos  int32
	mode sim.PreemptMode
}

// preemptWaitRec is a preemption in progress: the victims a preemptor is
// waiting for, and the nodes of the placement it preempted them for.
type preemptWaitRec struct {
	victims []sim.JobRef
	starts  []sim.Time // the victims' runs: a requeued victim running again is gone
	nodes   []int32
	until   sim.Time // as of the last preemptWait: the latest End of the victims left
	epoch   uint32   // of the pass that chose the victims: they are still in its view
	held    uint32   // epoch of the last pass preemptWait found it in progress
	bf      uint32   // epoch of the backfill cycle that chose the victims (bfTryPreempt)
}

// preemptWait returns job ref's preemption in progress, or nil when it has
// none or its victims are all gone. While it is in progress the backfill
// cycle does not start the preemptor but holds for it the nodes it
// preempted for, from when its victims are gone (preemptRes); the main
// scheduler starts it wherever it fits. On Slurm 22.05 (KillWait=2) a
// killed job's nodes other than its batch host take other jobs at once
// (sim's KillWait holds only the batch host): in
// conformance/records/gen-23/run2, G11 (tier 2, one node) preempted G03
// on gn[2-4] at 17:31.712; the next backfill cycle, which tests G11
// first, started G04, G05 and G07_0 on gn3 and gn4 at 17:32.713, and G11
// started on gn2, G03's batch host, at 17:35.845. In gen-7/run1 the main
// scheduler started job 4 on gn4, the free node of its victim G03
// (gn[3-4]), one second after the preemption. select_nodes
// (node_scheduler.c) marks the preemptor's preempt_start_time and kills
// no more jobs for it while the kill may still be in progress.
func (s *Policy) preemptWait(v sim.View, ref sim.JobRef) *preemptWaitRec {
	if len(s.pre.waits) == 0 {
		return nil
	}
	w, ok := s.pre.waits[ref]
	if !ok || w.epoch == s.epoch {
		// None, or chosen by this very pass, whose view still has the
		// victims running to their own ends: its backfill cycle plans
		// the preemptor as before.
		return nil
	}
	running := v.Running()
	w.until = -1
	for k, vr := range w.victims {
		if i, found := slices.BinarySearchFunc(running, vr, func(r sim.RunningJob, ref sim.JobRef) int { return cmp.Compare(r.Ref, ref) }); found && running[i].Start == w.starts[k] {
			w.until = max(w.until, running[i].End)
		}
	}
	if w.until < 0 {
		delete(s.pre.waits, ref)
		return nil
	}
	w.held = s.epoch
	return w
}

// preemptQuiet is how long a preemptor kills no more jobs after its
// preemption began: slurm.conf's KillWait + MessageTimeout (30 and 10 s
// by default), select_nodes' test of preempt_start_time (node_scheduler.c:
// "Job preemption may still be in progress, do not cancel or requeue any
// more jobs yet"). Both are whole seconds that Slurm keeps in 16 bits.
func preemptQuiet(c *hwmodels.Cluster) (sim.Time, error) {
	var sum sim.Time
	for _, k := range []struct {
		key string
		def sim.Time
	}{{"KillWait", 30}, {"MessageTimeout", 10}} {
		n := k.def
		if c != nil && c.Slurm != nil {
			if v, ok := c.Slurm.Get(k.key); ok {
				x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil || x < 0 || x > math.MaxUint16 {
					return 0, fmt.Errorf("cluster slurm setting %s: %q: want whole seconds from 0 to %d", k.key, v, math.MaxUint16)
				}
				n = sim.Time(x)
			}
		}
		sum += n
	}
	return sum, nil
}

// bfPreemptWait is preemptWait for the backfill cycle. A preemption that
// this very pass chose, whose kills the cycle sees applied (applyKills),
// is in progress: the preemptor does not start in the cycle but holds the
// nodes it preempted for from now + 1, and lower jobs may take the
// victims' other nodes. The kill has freed the victims' resources in the
// select plugin (deallocate_nodes → select_g_job_fini), so the
// preemptor's will-run test answers "now" on the nodes it selects, which
// are completing: backfill.c's _attempt_backfill then plans it at now + 1
// ("Need to wait for in-progress completion/epilog") and reserves them
// from then; the records after it test on the freed nodes. On Slurm 22.05
// (conformance/records/gen-23/run1) G11 preempted G03 on gn[2-4] at
// 12:53.745 and G04, G05 and G07_0 started on gn3 and gn4 at 12:53.760,
// 15 ms later, while G11 waited for gn2 until 12:57.766; G05 (limit
// 2 min) started although G08 (3 nodes) was reserved from the end of
// G11's reservation: G11's held gn2 from 12:54, not 12:53, or G05's
// window would have met G08's (begin_time <= end_time).
func (s *Policy) bfPreemptWait(v sim.View, ref sim.JobRef) *preemptWaitRec {
	if len(s.pre.waits) == 0 {
		return nil // no preemption waits: spares two lookups a record of every cycle
	}
	if w := s.pre.waits[ref]; w != nil && w.epoch == s.epoch && s.pre.runEpoch == s.epoch {
		w.until = v.Now() + 1
		w.held = s.epoch
		return w
	}
	return s.preemptWait(v, ref)
}

// applyKills gives the backfill cycle of a pass that preempted the state
// the controller leaves once it applies the preemptions, before the
// plan's starts (sim.RunInfo): with no grace time, a victim's nodes but
// its batch host are free at once (all of them with no KillWait), and
// what it keeps is gone by now + KillWait. The free state gains what is
// freed; the running jobs the cycle releases (bfRunning) keep the rest.
// MIG and MPS allocations are left held (the controller may free them
// too: starting nothing on them is only cautious).
func (s *Policy) applyKills(v sim.View) {
	pr := &s.pre
	pr.runEpoch = 0
	if len(pr.out) == 0 || pr.grace > 0 {
		return
	}
	p := &s.pass
	now := v.Now()
	// The free state grows: failures noted this pass no longer hold.
	p.Rebase(v.Nodes())
	pr.run = append(pr.run[:0], v.Running()...)
	gone := false
	for _, o := range pr.out {
		i, found := slices.BinarySearchFunc(pr.run, o.Job, func(r sim.RunningJob, ref sim.JobRef) int { return cmp.Compare(r.Ref, ref) })
		if !found {
			continue
		}
		rj := &pr.run[i]
		host := int32(-1)
		if pr.killWait > 0 {
			if host = sim.BatchHost(rj.Alloc); host < 0 {
				rj.End = min(rj.End, now+pr.killWait) // one node: kept whole
				continue
			}
		}
		var keep []sim.NodeAlloc
		for k := range rj.Alloc {
			a := &rj.Alloc[k]
			if a.Node == host || a.MIG != (sim.MIGInstances{}) || a.MPS != (sim.MPSShare{}) {
				keep = append(keep, *a)
				continue
			}
			p.Free[a.Node].Add(a)
		}
		rj.Alloc = keep
		rj.End = min(rj.End, now+pr.killWait)
		gone = gone || len(keep) == 0
	}
	if gone {
		pr.run = slices.DeleteFunc(pr.run, func(r sim.RunningJob) bool { return len(r.Alloc) == 0 })
	}
	pr.runEpoch = s.epoch
}

// bfRunning returns the running jobs as the backfill cycle releases them:
// the view's, less what this pass's preemptions free (applyKills).
func (s *Policy) bfRunning(v sim.View) []sim.RunningJob {
	if s.pre.runEpoch != 0 && s.pre.runEpoch == s.epoch {
		return s.pre.run
	}
	return v.Running()
}

// preemptRes is the backfill reservation of a preemptor whose preemption
// is in progress: the nodes it preempted for, from when its victims are
// gone.
func (s *Policy) preemptRes(job *sim.PendingJob, w *preemptWaitRec) {
	b := &s.bf
	off := len(b.pool)
	b.pool = append(b.pool, w.nodes...)
	lo, hi := s.resvSpan(w.until, job.Limit)
	ws := b.wtmp[:0] // apart from wpool, whose last word is another reservation's
	for _, x := range w.nodes {
		ws = addNode(ws, x)
	}
	b.wtmp = ws
	woff := len(b.wpool)
	b.wpool = append(b.wpool, ws...)
	b.res = append(b.res, bfRes{job: job.Ref, at: w.until, lo: lo, hi: hi, nodes: b.pool[off:len(b.pool):len(b.pool)],
		words: b.wpool[woff:len(b.wpool):len(b.wpool)]})
	b.until(w.until)
}

// preemptCand is a running job that a pending job may preempt.
type preemptCand struct {
	ref    sim.JobRef
	ri     int32 // index in the view's Running
	alloc  []sim.NodeAlloc
	class  int64 // partition tier (partition_prio) or QOS priority capped at 0xffff (qos): lower goes first
	nodes  int64 // node count, capped at 0xffff: fewer goes first
	start  sim.Time
	mode   sim.PreemptMode
	drop   bool
	usable int32 // reorder's sort key
}

// setupPreempt builds the QOS relation (reset).
func (s *Policy) setupPreempt() {
	pr := &s.pre
	n := len(s.cfg.qos)
	pr.qosCan = make([][]bool, n)
	for i, q := range s.cfg.qos {
		pr.qosCan[i] = make([]bool, n)
		for _, name := range q.preempt {
			if k, ok := s.qosIdx[name]; ok && int(k) != i {
				pr.qosCan[i][k] = true
			}
		}
	}
	// Rank: 0 for a QOS that preempts none, else one more than the
	// highest rank it preempts (cycles cut at n levels).
	pr.qosRank = make([]int32, n)
	for range n {
		for i := range n {
			for k := range n {
				if pr.qosCan[i][k] {
					pr.qosRank[i] = max(pr.qosRank[i], min(pr.qosRank[k]+1, int32(n)))
				}
			}
		}
	}
	pr.partMode = make([]preemptMode, len(s.cluster.Partitions))
	if s.confCluster == s.cluster {
		copy(pr.partMode, s.partModes)
	}
}

// preemptRank is the first key of the queue order with preemption: Slurm
// sorts a job that can preempt another before it (sort_job_queue2). Under
// preempt/qos a QOS that preempts others ranks above them; under
// partition_prio the PriorityTier key already does it.
func (s *Policy) preemptRank(js *slurmJob) int32 {
	if s.cfg.preempt != preemptQOS {
		return 0
	}
	return s.pre.qosRank[js.qos]
}

// victimMode is the PreemptMode of a running job in partition part with
// QOS qos: its partition's (partition_prio) or its QOS's (qos), else the
// cluster's.
func (s *Policy) victimMode(part, qos int32) preemptMode {
	m := modeUnset
	switch s.cfg.preempt {
	case preemptPartPrio:
		if int(part) < len(s.pre.partMode) {
			m = s.pre.partMode[part]
		}
	case preemptQOS:
		m = s.cfg.qos[qos].mode
	}
	if m == modeUnset {
		m = s.cfg.preemptMode
	}
	return m
}

// tryPreempt is called in the main pass for a record that does not fit
// now. When the record's job would fit with running jobs it may preempt
// removed, it chooses the victims and adds them to the pass's preemptions,
// returning true; the job starts in a later pass, once they are gone (as
// select_nodes does: the preemptor does not start in the pass that
// preempts).
//
// Candidates are the running jobs that the job may preempt (a lower
// PriorityTier partition sharing nodes with the record's partition, or a
// QOS that the job's QOS lists in Preempt), that have run at least
// PreemptExemptTime, whose PreemptMode is not OFF, that hold a node the job
// could use and that no other record preempted in this pass. They are
// taken in Slurm's order, lowest first: partition tier (or QOS priority),
// then node count, then job (Slurm's job list order: submission): the
// preempt plugin's _gen_job_prio (tier or QOS priority << 16, plus the
// node count), which _sort_by_prio (src/slurmctld/preempt.c) sorts the
// candidates by, ascending, in a stable sort of the job list order. The
// job's priority and its GPU count play no part (with
// PreemptParameters=youngest_first: latest start first, then job).
// Candidates are removed in that order until the job fits; the job is
// then placed on the resulting free
// state, and the victims are the removed candidates holding a node of
// that placement (cons_tres's _run_now: remove preemptees one by one until
// the job fits, then preempt those its selected nodes overlap). On a real
// Slurm 22.05, of four equal one-node jobs on gn1..gn4 a two-node job
// preempted the two oldest, on gn1 and gn2
// (conformance/records/preempt-requeue), not the youngest.
func (s *Policy) tryPreempt(v sim.View, job *sim.PendingJob, js *slurmJob, r *qrec) bool {
	pr := &s.pre
	now := v.Now()
	if js.preempted > 0 && now < js.preempted-1+pr.quiet {
		// Its preemption may still be in progress: it kills no more
		// (select_nodes: preempt_start_time > now - kill_wait -
		// msg_timeout), even once its victims are gone.
		return false
	}
	running := v.Running()
	if len(running) == 0 {
		return false
	}
	if pr.checked != s.epoch {
		pr.checked = s.epoch
		for x, o := range s.outOfService(v) {
			if o {
				pr.blocked[x] = true
			}
		}
	}
	if !s.collectCands(v, job, js, r, false) || len(pr.cand) == 0 {
		return false
	}
	if s.cfg.youngest {
		// PreemptParameters=youngest_first: latest start first, whatever
		// the tier (_sort_by_youngest).
		slices.SortFunc(pr.cand, func(a, b preemptCand) int {
			return cmp.Or(cmp.Compare(b.start, a.start), cmp.Compare(a.ref, b.ref))
		})
	} else {
		slices.SortFunc(pr.cand, func(a, b preemptCand) int {
			return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.nodes, b.nodes), cmp.Compare(a.ref, b.ref))
		})
	}
	// With every candidate gone, does it fit at all?
	if !s.fitsWithout(job, len(pr.cand)) {
		return false
	}
	k := s.fewestFit(job)
	for pass := 1; pass <= s.cfg.reorder+1 && pass < len(pr.cand); pass++ {
		s.reorderCands(k)
		k = s.fewestFit(job)
	}
	chosen := pr.cand[:k]
	for i := range chosen {
		chosen[i].drop = true
		for _, a := range chosen[i].alloc {
			if slices.ContainsFunc(pr.alloc, func(b sim.NodeAlloc) bool { return b.Node == a.Node }) {
				chosen[i].drop = false
				break
			}
		}
		if chosen[i].drop {
			continue
		}
		s.st[chosen[i].ref].victim = s.epoch
		if pr.rcEpoch == s.epoch {
			pr.rc[chosen[i].ri].off = true
		}
		if pr.grace == 0 {
			s.st[chosen[i].ref].killed = chosen[i].start + 1
			// Killed now: completing, and charged no more (Slurm's decay
			// thread skips completing jobs: decay_apply_new_usage).
			s.uncharge(chosen[i].ref, now)
		}
		pr.out = append(pr.out, sim.Preemption{Job: chosen[i].ref, Mode: chosen[i].mode})
		if pr.waits == nil {
			pr.waits = map[sim.JobRef]*preemptWaitRec{}
		}
		w := pr.waits[job.Ref]
		if w == nil {
			w = &preemptWaitRec{}
			for _, a := range pr.alloc {
				if !slices.Contains(w.nodes, a.Node) {
					w.nodes = append(w.nodes, a.Node)
				}
			}
			pr.waits[job.Ref] = w
		}
		js.preempted = now + 1
		w.victims = append(w.victims, chosen[i].ref)
		w.starts = append(w.starts, chosen[i].start)
		w.epoch = s.epoch
	}
	return true
}

// fewestFit returns the least k such that job fits with the first k
// candidates gone (it fits with all of them gone), leaving its placement
// then in pr.alloc.
func (s *Policy) fewestFit(job *sim.PendingJob) int {
	k := 1
	for ; k < len(s.pre.cand) && !s.fitsWithout(job, k); k++ {
	}
	s.fitsWithout(job, k)
	return k
}

// reorderCands reorders the candidates after a pass of cons_tres's
// _run_now that fitted job with the first k gone, on pr.alloc's nodes,
// to preempt fewer jobs in the next (preempt_reorder_count passes): the
// k-th, which made it fit, goes first; then those before it by how many
// of the placement's nodes they hold, most first; then the others, each
// group in its order ("Set the last job's usable count to a large value
// and re-sort preempted jobs", _sort_usable_nodes_dec). With
// preempt_strict_order the k-th moves to the front, the others keep
// their order.
func (s *Policy) reorderCands(k int) {
	pr := &s.pre
	if s.cfg.strict {
		last := pr.cand[k-1]
		copy(pr.cand[1:k], pr.cand[:k-1])
		pr.cand[0] = last
		return
	}
	for i := range pr.cand {
		c := &pr.cand[i]
		switch {
		case i == k-1:
			c.usable = math.MaxInt32
		case i < k-1:
			c.usable = 0
			for _, a := range c.alloc {
				if slices.ContainsFunc(pr.alloc, func(b sim.NodeAlloc) bool { return b.Node == a.Node }) {
					c.usable++
				}
			}
		default:
			c.usable = 0
		}
	}
	slices.SortStableFunc(pr.cand, func(a, b preemptCand) int { return cmp.Compare(b.usable, a.usable) })
}

// collectCands sets pr.cand to the running jobs that job's record r may
// preempt now (see tryPreempt), off the nodes in pr.blocked unless all.
// It reports false when the preemption type preempts nothing.
func (s *Policy) collectCands(v sim.View, job *sim.PendingJob, js *slurmJob, r *qrec, all bool) bool {
	pr := &s.pre
	p := &s.pass
	now := v.Now()
	running := v.Running()
	tier := s.cluster.Partitions[r.part].PriorityTier
	d := policies.NewDemand(job)
	pr.cand = pr.cand[:0]
	if s.cfg.preempt != preemptPartPrio && s.cfg.preempt != preemptQOS {
		return false
	}
	if pr.rcEpoch != s.epoch || len(pr.rc) != len(running) {
		pr.rcEpoch = s.epoch
		pr.rc = pr.rc[:0]
		for i := range running {
			rj := &running[i]
			vj := s.ident(v, rj.Ref)
			c := runCand{tier: s.cluster.Partitions[rj.Part].PriorityTier, qos: vj.qos}
			// Chosen by this pass, killed already (completing: by a
			// preemption or at its time limit), or exempt.
			c.off = vj.victim == s.epoch || vj.killed == rj.Start+1 || rj.Killed || now-rj.Start < s.cfg.exempt
			switch s.victimMode(rj.Part, vj.qos) {
			case modeCancel:
				c.mode = sim.PreemptCancel
			case modeRequeue:
				c.mode = sim.PreemptRequeue
			default:
				c.off = true // PreemptMode OFF: not preemptable
			}
			pr.rc = append(pr.rc, c)
		}
	}
	for i := range running {
		c := &pr.rc[i]
		if c.off {
			continue
		}
		rj := &running[i]
		var class int64
		if s.cfg.preempt == preemptPartPrio {
			if c.tier >= tier {
				continue
			}
			class = int64(c.tier)
		} else {
			if !pr.qosCan[js.qos][c.qos] {
				continue
			}
			class = min(s.cfg.qos[c.qos].priority, 0xffff)
		}
		mode := c.mode
		useful := false
		for _, a := range rj.Alloc {
			if (all || !pr.blocked[a.Node]) && d.Eligible(&p.Nodes[a.Node]) {
				useful = true
			}
		}
		if !useful {
			continue
		}
		pr.cand = append(pr.cand, preemptCand{ref: rj.Ref, ri: int32(i), alloc: rj.Alloc, class: class,
			nodes: min(int64(len(rj.Alloc)), 0xffff), start: rj.Start, mode: mode})
	}
	return true
}

// bfTryPreempt is tryPreempt in the backfill cycle, for a record that
// does not start now: usable tells the nodes no reservation of the
// records before it holds over its window [now, now+limit] (or, when
// out is set, the nodes out of it are the bits of out). When it
// preempts, the record holds the nodes it preempted for from now + 1
// (preemptRes, as bfPreemptWait plans a preemption of the main pass) and
// starts in a later pass once its victims are gone.
//
// Slurm's backfill preempts as the main scheduler does, but a record that
// waits does not end the cycle's look at its partition: _attempt_backfill
// tests each record with _try_sched, whose will-run test
// (select_g_job_test with the record's preemptable jobs,
// slurm_find_preemptable_jobs) removes the preemptable jobs first
// (cons_tres _will_run_test), on the nodes the cycle's reservations leave
// over the record's window; a start now goes through _start_job to
// select_nodes, which preempts (_preempt_jobs) and fails with
// ESLURM_NODES_BUSY, after which the cycle reserves the record's nodes
// ("Drop through and reserve these resources") and tests the next
// record. The main scheduler instead stops at a partition's first
// record that does not start (fail_by_part in _schedule), so a second
// high-tier job queued behind one waiting for its victims preempts only
// in the backfill cycle. On Slurm 22.05 (conformance/records/gen-71/run2)
// G09 (high) preempted G04 at 06:51:50.152; G10 (high, one whole node),
// submitted at 51.064, preempted G05 in the next backfill cycle, at
// 51.153, while G09 still waited for G04, and started at 55.156.
func (s *Policy) bfTryPreempt(v sim.View, job *sim.PendingJob, js *slurmJob, r *qrec, usable func(x int) bool, out []uint64) bool {
	pr := &s.pre
	if js.preempted > 0 && v.Now() < js.preempted-1+pr.quiet || len(v.Running()) == 0 {
		return false // tryPreempt's own first tests, before the masks
	}
	n := len(s.cluster.Nodes)
	pr.blocked = append(pr.blocked[:0], s.outOfService(v)...)
	if out != nil {
		// The nodes out of the mask, a word at a time.
		for w, o := range out {
			for ; o != 0; o &= o - 1 {
				pr.blocked[w<<6|bits.TrailingZeros64(o)] = true
			}
		}
	} else {
		for x := range n {
			if !usable(x) {
				pr.blocked[x] = true
			}
		}
	}
	pr.checked = s.epoch
	pr.inBF = true
	ok := s.tryPreempt(v, job, js, r)
	pr.inBF = false
	if ok {
		w := pr.waits[job.Ref]
		w.until = v.Now() + 1
		w.held = s.epoch
		w.bf = s.epoch
		s.bfReason(js, job.Ref, sim.ReasonResources)
	}
	return ok
}

// bfPreempting reports whether job ref preempted in this backfill cycle,
// for one of its records: its others are not tested (_attempt_backfill:
// "if (job_ptr->preempt_in_progress) continue; /* scheduled in another
// partition */", which select_nodes sets when it preempts).
func (s *Policy) bfPreempting(ref sim.JobRef) bool {
	if len(s.pre.waits) == 0 {
		return false
	}
	w := s.pre.waits[ref]
	return w != nil && w.bf == s.epoch
}

// bfPreempt is bfTryPreempt for the fast cycle (backfill): the deferred
// reservations, all of records before this one, are made first. It
// reports whether it has made the record's reservation: one that has
// preemptable jobs but did not preempt (preemptorReserve), old enough to
// reserve. One that preempted is reserved with the deferred ones
// (materialize: preemptRes).
func (s *Policy) bfPreempt(v sim.View, pend []sim.PendingJob, job *sim.PendingJob, js *slurmJob, r *qrec) bool {
	s.materialize(v, pend)
	s.windowMask(v.Now(), job.Limit)
	if s.bfTryPreempt(v, job, js, r, nil, s.bf.out) ||
		v.Now()-job.Eligible < s.cfg.bfMinAgeReserve {
		return false
	}
	s.size(v, job, js)
	return s.preemptorReserve(v, job, js, r)
}

// preemptorReserve reserves, in the backfill cycle, a record that may
// preempt running jobs but does not start now: cons_tres's will-run test
// removes the record's preemptable jobs before it releases the others
// by end time (_will_run_test: "Remove preemptable job now", for every
// job in preemptee_candidates whose PreemptMode is not OFF), so the
// record is planned at the earliest time the jobs it may not preempt
// leave it room, whatever the preemptable ones' limits. It reports
// whether the record has preemptable jobs, and then has made its
// reservation (refReserve's search on that state; in the fast cycle too,
// whose profiles release every running job). On Slurm 22.05
// (conformance/records/gen-71/run1) G20 (high, 3 nodes) was planned
// behind the high-tier jobs only, and G15 (batch, limit 1 min), which
// would have ended after that, waited from 51 to 94; planned behind the
// batch jobs as well, G20's reservation began at 154 and G15 started at
// 51 on a node G20 then preempted.
func (s *Policy) preemptorReserve(v sim.View, job *sim.PendingJob, js *slurmJob, r *qrec) bool {
	pr := &s.pre
	if !s.collectCands(v, job, js, r, true) || len(pr.cand) == 0 {
		return false
	}
	p := &s.pass
	b := &s.bf
	saved := p.Free
	pr.free = append(pr.free[:0], p.Free...)
	pr.gone = pr.gone[:0]
	for _, c := range pr.cand {
		for k := range c.alloc {
			pr.free[c.alloc[k].Node].Add(&c.alloc[k])
		}
		pr.gone = append(pr.gone, c.ref)
	}
	slices.Sort(pr.gone)
	p.Free = pr.free
	n := len(b.res)
	s.refReserve(v, job)
	p.Free = saved
	pr.gone = pr.gone[:0]
	if len(b.res) > n {
		res := &b.res[n]
		ws := b.wtmp[:0]
		for _, x := range res.nodes {
			ws = addNode(ws, x)
		}
		b.wtmp = ws
		woff := len(b.wpool)
		b.wpool = append(b.wpool, ws...)
		res.words = b.wpool[woff:len(b.wpool):len(b.wpool)]
		b.until(res.at)
	}
	return true
}

// gonePreemptable reports whether running job ref is one that the
// reservation search of preemptorReserve has removed.
func (s *Policy) gonePreemptable(ref sim.JobRef) bool {
	_, found := slices.BinarySearch(s.pre.gone, ref)
	return found
}

// fitsWithout reports whether job fits the pass's free state with the
// first k candidates (less those marked drop) removed, on nodes in the
// available set and in service, and off the nodes of advance reservations
// during its window.
func (s *Policy) fitsWithout(job *sim.PendingJob, k int) bool {
	pr := &s.pre
	p := &s.pass
	pr.free = append(pr.free[:0], p.Free...)
	for _, c := range pr.cand[:k] {
		if c.drop {
			continue
		}
		for _, a := range c.alloc {
			if pr.blocked[a.Node] {
				continue
			}
			f := &pr.free[a.Node]
			f.FreeGPUs += a.GPUs
			f.FreeCPUs += a.CPUs
			f.FreeMemMB += a.MemMB
		}
	}
	if pr.inBF {
		for x, bl := range pr.blocked {
			if bl {
				pr.free[x] = sim.NodeState{}
			}
		}
	}
	free := p.Usable(&pr.masked, pr.free, p.Now, job.Limit)
	var ok bool
	pr.alloc, ok = p.Placer().Place(p.Nodes, free, job, pr.alloc[:0])
	return ok
}

// outOfService returns the nodes out of service, once a pass (pr.oos, of
// the pass oosEpoch; the main pass and the backfill cycle of one call see
// the same view): a node in service shows free what running jobs do not
// hold; a down or drained node shows nothing free (a drained node whose
// running jobs hold all of it cannot be told from a busy one).
func (s *Policy) outOfService(v sim.View) []bool {
	pr := &s.pre
	if pr.oosEpoch == s.epoch {
		return pr.oos
	}
	pr.oosEpoch = s.epoch
	nodes := s.pass.Nodes
	n := len(nodes)
	pr.oos = append(pr.oos[:0], make([]bool, n)...)
	pr.inUse = append(pr.inUse[:0], make([]sim.NodeState, n)...)
	for _, rj := range v.Running() {
		for _, a := range rj.Alloc {
			u := &pr.inUse[a.Node]
			u.FreeGPUs += a.GPUs
			u.FreeCPUs += a.CPUs
			u.FreeMemMB += a.MemMB
		}
	}
	view := v.Nodes()
	for i := range n {
		u, f := pr.inUse[i], view[i]
		c := sim.Capacity(&nodes[i])
		if u.FreeGPUs+f.FreeGPUs != c.FreeGPUs || u.FreeCPUs+f.FreeCPUs != c.FreeCPUs || u.FreeMemMB+f.FreeMemMB != c.FreeMemMB {
			pr.oos[i] = true
		}
	}
	return pr.oos
}
