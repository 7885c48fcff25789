package slurm

import (
	"slices"

	"github.com/schedsim/schedsim/policies/priority"
	"github.com/schedsim/schedsim/sim"
)

// Job priorities and fair-share usage, as priority/multifactor
// (priority_multifactor.c) computes them: the factors at submit and at
// every recalculation, and usage charged per association (the tree and
// Fair Tree are in package priority).

// ident fills in a job's user, QOS and association the first time it is
// seen, adding the association to a derived tree.
// The pending scan calls it for every pending job every pass: a job seen
// before costs one test, a new one goes on to identNew.
func (s *Policy) ident(v sim.View, ref sim.JobRef) *slurmJob {
	if int(ref) < len(s.st) && s.st[ref].known {
		return &s.st[ref]
	}
	return s.identNew(v, ref)
}

// identNew is ident for a job not seen before.
func (s *Policy) identNew(v sim.View, ref sim.JobRef) *slurmJob {
	js := s.job(ref)
	*js = slurmJob{known: true, assoc: -1}
	j := v.Job(ref)
	if tl := j.TimeLimit; tl < 1<<24-1 {
		// Unknown (negative) is kept as 0: holdReason holds only by a
		// positive limit.
		t := uint32(max(tl, 0)) + 1
		js.tlim = [3]byte{byte(t), byte(t >> 8), byte(t >> 16)}
	}
	user := j.User
	if user == "" {
		user = "unknown"
	}
	u, ok := s.users[user]
	if !ok {
		u = int32(len(s.users))
		s.users[user] = u
	}
	js.user = u
	js.qos = s.normal
	if q, ok := s.qosIdx[j.QOS]; ok {
		js.qos = q
	}
	acct := j.Account
	if acct == "" {
		acct = "root"
	}
	js.assoc = s.tree.User(user, acct)
	if js.assoc < 0 && s.derived {
		if !s.tree.HasAccount(acct) {
			s.tree.AddAccount(acct, "root", 1)
		}
		js.assoc, _ = s.tree.AddUser(user, acct, 1)
		// The new associations have no usage; the factors of the others
		// depend on how many there are (Fair Tree's rank count).
		for len(s.usage) < s.tree.Len() {
			s.usage = append(s.usage, 0)
		}
		s.refreshFS()
	}
	return js
}

func (s *Policy) refreshFS() {
	if s.cfg.classic {
		s.fs = s.tree.Classic(s.usage, s.cfg.damp, s.fs)
	} else {
		s.fs = s.tree.FairTree(s.usage, s.fs)
	}
}

// computeBase sets a pending job's priority sum (without the partition
// term) as of time at.
func (s *Policy) computeBase(pj *sim.PendingJob, js *slurmJob, at sim.Time) {
	cfg := s.cfg
	if cfg.basic {
		js.base = 0
		return
	}
	r := &pj.Req
	nodes := float64(max(r.Nodes, 1))
	f := priority.Factors{
		Age:     priority.AgeFactor(at, pj.Eligible, cfg.maxAge),
		JobSize: cfg.jobSize.Factor(nodes, float64(s.sizeCPUs(pj, js)), pj.Limit, s.nodesN, s.cpusN),
		QOS:     priority.Normalized(float64(cfg.qos[js.qos].priority), s.maxQOS, cfg.noNormQOS),
	}
	if js.assoc >= 0 && int(js.assoc) < len(s.fs) {
		f.Fairshare = s.fs[js.assoc]
	}
	w := &cfg.weights
	base := w.Sum(&f)
	if len(w.TRES) > 0 {
		req := priority.TRES{CPU: float64(r.CPUs), MemMB: float64(r.MemMB), Nodes: nodes, GPUs: float64(r.GPUs)}
		tot := &s.partTot[pj.Part]
		for _, t := range w.TRES {
			base += t.Weight * priority.Normalized(req.Get(t.Name), tot.Get(t.Name), cfg.noNormTRES)
		}
	}
	js.base = base
}

// sizeCPUs is the CPU count of the job size factor (set_priority_factors):
// the CPUs asked for (at least one per node, as Slurm's min_cpus) until
// the job has been tested against the nodes, and from then on the CPUs
// select/cons_tres would allocate it (job_ptr->total_cpus, which its
// will-run or start test sets): at least DefCpuPerGPU per GPU.
func (s *Policy) sizeCPUs(pj *sim.PendingJob, js *slurmJob) int64 {
	r := &pj.Req
	cpus := max(int64(r.CPUs), int64(max(r.Nodes, 1)))
	if js.sized && int(pj.Part) < len(s.defCPG) {
		cpus = max(cpus, int64(r.GPUs)*s.defCPG[pj.Part])
	}
	return cpus
}

// prio returns the job's priority in partition part.
func (s *Policy) prio(js *slurmJob, part int32) uint32 {
	if s.cfg.basic {
		return 1
	}
	pf := priority.Normalized(float64(s.cluster.Partitions[part].PriorityJobFactor), s.maxPart, s.cfg.noNormPart)
	return priority.Clamp(js.base + s.cfg.weights.Partition*pf)
}

// calcInstant returns the last priority recalculation instant at or
// before now: calcPhase + k·calcPeriod (negative before the first).
func (s *Policy) calcInstant(now sim.Time) sim.Time {
	p, ph := s.cfg.calcPeriod, s.cfg.calcPhase
	k := (now - ph) / p
	if ph+k*p > now {
		k--
	}
	return ph + k*p
}

// recalc settles usage at calculation instant k and recomputes the fair
// share and every pending job's priority as of k.
func (s *Policy) recalc(pend []sim.PendingJob, k sim.Time) {
	s.lastCalc = k
	s.usage = append(s.usage[:0], s.tree.UsageAt(k)...)
	s.refreshFS()
	for i := range pend {
		s.computeBase(&pend[i], &s.st[pend[i].Ref], k)
	}
}

// JobStarted implements sim.Policy: the job's billable TRES start
// charging its association.
func (s *Policy) JobStarted(ref sim.JobRef, at sim.Time, alloc []sim.NodeAlloc) {
	s.charge(ref, at, alloc)
	if s.pre.killWait > 0 && sim.BatchHost(alloc) >= 0 {
		if s.kills == nil {
			s.kills = map[sim.JobRef]*killRun{}
		}
		s.kills[ref] = &killRun{alloc: slices.Clone(alloc), seen: -1}
	}
}

// JobEnded implements sim.Policy.
func (s *Policy) JobEnded(ref sim.JobRef, at sim.Time, _ []sim.NodeAlloc, _ sim.State) {
	s.endsHeard = true
	s.uncharge(ref, at)
	delete(s.kills, ref)
}

func (s *Policy) charge(ref sim.JobRef, at sim.Time, alloc []sim.NodeAlloc) {
	if int(ref) >= len(s.st) {
		return
	}
	js := &s.st[ref]
	if !js.known || js.charging || js.assoc < 0 {
		return
	}
	var t priority.TRES
	for _, a := range alloc {
		t.CPU += float64(a.CPUs)
		t.MemMB += float64(a.MemMB)
		t.GPUs += float64(a.GPUs)
		t.Nodes++
	}
	js.billable = priority.Billable(s.cfg.billing, &t)
	js.charging = true
	js.charged = at
	s.tree.Charge(js.assoc, at, js.billable)
	if !s.endsHeard {
		s.tracked = append(s.tracked, ref)
	}
}

func (s *Policy) uncharge(ref sim.JobRef, at sim.Time) {
	if int(ref) >= len(s.st) {
		return
	}
	js := &s.st[ref]
	if !js.charging {
		return
	}
	js.charging = false
	s.tree.Charge(js.assoc, at, -js.billable)
	if !s.cfg.chargeEnd {
		// Slurm charges a running job at each recalculation; what it
		// used since the last one it ran through is never charged
		// unless AccountingStorageEnforce has limits (Tree.Forfeit).
		s.tree.Forfeit(js.assoc, at, js.charged, js.billable)
	}
}

// reconcile ends the charging of tracked jobs no longer running, for
// callers that do not report ends (a test's hand-made view): every job end
// triggers a pass at its instant, so a job missing from Running ended at
// the latest now.
//
// A caller that reports an end reports every end (sim.Policy: JobEnded
// reports every end as it happens, the controller as it drops the run
// from Running), so once one is heard no charging job is missing from
// Running and the walk over Running, every pass, is left out.
func (s *Policy) reconcile(v sim.View) {
	if s.endsHeard {
		s.tracked = s.tracked[:0]
		return
	}
	if len(s.tracked) == 0 {
		return
	}
	for _, r := range v.Running() {
		if int(r.Ref) < len(s.st) {
			s.st[r.Ref].epoch = s.epoch
		}
	}
	now := v.Now()
	s.tracked = slices.DeleteFunc(s.tracked, func(ref sim.JobRef) bool {
		js := &s.st[ref]
		if !js.charging {
			return true
		}
		if js.epoch != s.epoch {
			s.uncharge(ref, now)
			return true
		}
		return false
	})
}
