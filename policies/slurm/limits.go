package slurm

import (
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// QOS limits, as slurmctld's acct_policy.c checks them before a job may
// start: running use per QOS and per user against MaxJobsPerUser,
// MaxTRESPerUser and GrpTRES.

// tresUse is running TRES (and jobs) counted against a limit.
type tresUse struct {
	jobs              int
	cpu, node, gpu, m int64
}

// reqUse is what a pending job would add to limit counters.
func reqUse(r *workload.Request) tresUse {
	return tresUse{jobs: 1, cpu: int64(r.CPUs), node: int64(max(r.Nodes, 1)), gpu: int64(r.GPUs), m: r.MemMB}
}

// loadLimits counts the running jobs against the QOS limits.
func (s *Policy) loadLimits(v sim.View) {
	clear(s.qosUse)
	clear(s.userUse)
	for _, r := range v.Running() {
		js := s.ident(v, r.Ref)
		u := tresUse{jobs: 1, node: int64(len(r.Alloc))}
		for _, a := range r.Alloc {
			u.cpu += int64(a.CPUs)
			u.gpu += int64(a.GPUs)
			u.m += a.MemMB
		}
		s.addUse(js, u)
	}
}

func (s *Policy) addUse(js *slurmJob, u tresUse) {
	add := func(t *tresUse) {
		t.jobs += u.jobs
		t.cpu += u.cpu
		t.node += u.node
		t.gpu += u.gpu
		t.m += u.m
	}
	add(&s.qosUse[js.qos])
	k := uint64(js.qos)<<32 | uint64(uint32(js.user))
	t := s.userUse[k]
	add(&t)
	s.userUse[k] = t
}

// over reports whether have+add exceeds limit l on any resource.
func over(l *limitTRES, have, add tresUse) bool {
	return l.cpu >= 0 && have.cpu+add.cpu > l.cpu ||
		l.node >= 0 && have.node+add.node > l.node ||
		l.gpu >= 0 && have.gpu+add.gpu > l.gpu ||
		l.memMB >= 0 && have.m+add.m > l.memMB
}

func (s *Policy) qosReason(job *sim.PendingJob, js *slurmJob) sim.PendingReason {
	q := &s.cfg.qos[js.qos]
	add := reqUse(&job.Req)
	user := s.userUse[uint64(js.qos)<<32|uint64(uint32(js.user))]
	switch {
	case q.maxJobs > 0 && user.jobs+1 > q.maxJobs:
		return sim.ReasonQOSMaxJobsPerUserLimit
	case q.maxUser.set && over(&q.maxUser, user, add):
		return sim.ReasonQOSMaxTRESPerUserLimit
	case q.grp.set && over(&q.grp, s.qosUse[js.qos], add):
		return sim.ReasonQOSGrpTRESLimit
	}
	return sim.ReasonNone
}
