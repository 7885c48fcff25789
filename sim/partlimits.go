package sim

import (
	"fmt"
	"math/bits"

	"github.com/schedsim/schedsim/workload"
)

// Partition limits (MaxTime, MaxNodes), enforced by the controller for
// every policy, as slurmctld does (slurm-22.05 src/slurmctld/job_mgr.c):
//
//   - _part_access_check tests a job against one partition: its time limit
//     above the partition's MaxTime is ESLURM_INVALID_TIME_LIMIT, its node
//     count above MaxNodes (or above the partition's node count)
//     ESLURM_INVALID_NODE_COUNT. A job without a node count (max_nodes
//     unset, workload.Request.Nodes 0) is not tested against MaxNodes.
//   - At submit, _valid_job_part runs that test on each of the job's
//     partitions and rejects the job under EnforcePartLimits=ALL if any
//     fails, under ANY (or YES) if all fail, and never under NO.
//   - A queued job is tested again per partition by job_limits_check
//     (which maps the two errors to WAIT_PART_TIME_LIMIT and
//     WAIT_PART_NODE_LIMIT, the reasons PartitionTimeLimit and
//     PartitionNodeLimit); build_job_queue (src/slurmctld/job_scheduler.c,
//     through _job_runnable_test2) leaves the job out of the queue for a
//     partition that fails, so the job never blocks that partition's
//     queue, and may still run in another of its partitions.
//
// The controller therefore takes a partition whose limits a job breaks out
// of the job's partitions at submit (PendingJob.Parts never has it), and a
// job that breaks the limits of every partition it may run in stays
// queued, not eligible and never offered to the policy, with its reason,
// until the run ends (UNFINISHED). Partition limits do not change during a
// run, so neither does this. part_policy_valid_acct and
// part_policy_valid_qos (AllowAccounts, AllowQos, checked by
// _part_access_check under EnforcePartLimits) are not modeled: the
// cluster spec has no such lists.

// PartLimits is Slurm's EnforcePartLimits: whether a job over a
// partition's MaxTime or MaxNodes is rejected at submit (slurm.conf(5)).
type PartLimits uint8

// EnforcePartLimits values.
const (
	// PartLimitsNo accepts every job: a partition whose limits it breaks
	// is dropped from the partitions it may run in, and a job that
	// breaks the limits of all of them stays pending, never offered to
	// the policy, with reason PartitionTimeLimit or PartitionNodeLimit.
	// Slurm's default.
	PartLimitsNo PartLimits = iota
	// PartLimitsAny (also Slurm's YES) rejects a job over the limits of
	// every partition it may run in; one that some partition takes runs
	// only in the partitions whose limits it meets.
	PartLimitsAny
	// PartLimitsAll rejects a job over the limits of any partition it may
	// run in.
	PartLimitsAll
)

func (l PartLimits) String() string {
	switch l {
	case PartLimitsAny:
		return "ANY"
	case PartLimitsAll:
		return "ALL"
	}
	return "NO"
}

// partLimit tests job j with resolved request req against partition p's
// limits, as _part_access_check does: MaxTime against its own time limit,
// MaxNodes against its node count. It returns the pending reason
// (ReasonNone when the job is within the limits) and a description.
func (c *controller) partLimit(j *workload.Job, req *workload.Request, p int32) (PendingReason, string) {
	part := &c.cluster.Partitions[p]
	if part.MaxNodes > 0 && req.Nodes > part.MaxNodes {
		return ReasonPartitionNodeLimit, fmt.Sprintf("%d nodes exceed partition %s's MaxNodes %d", req.Nodes, part.Name, part.MaxNodes)
	}
	if part.MaxTime > 0 && j.TimeLimit > 0 && int64(j.TimeLimit) > part.MaxTime {
		return ReasonPartitionTimeLimit, fmt.Sprintf("time limit %d s exceeds partition %s's MaxTime %d s", j.TimeLimit, part.Name, part.MaxTime)
	}
	return ReasonNone, ""
}

// withinLimits returns the partitions of parts whose limits job j meets.
func (c *controller) withinLimits(j *workload.Job, req *workload.Request, parts uint64) uint64 {
	ok := parts
	for m := parts; m != 0; m &= m - 1 {
		p := int32(bits.TrailingZeros64(m))
		if r, _ := c.partLimit(j, req, p); r != ReasonNone {
			ok &^= 1 << uint(p)
		}
	}
	return ok
}

// enforcePartLimits returns why a job that may run in the partitions of
// parts is rejected at submit under Config.EnforcePartLimits, or ""
// (_valid_job_part).
func (c *controller) enforcePartLimits(j *workload.Job, req *workload.Request, parts uint64) string {
	mode := c.cfg.EnforcePartLimits
	if mode == PartLimitsNo {
		return ""
	}
	var first string
	over := 0
	n := bits.OnesCount64(parts)
	for m := parts; m != 0; m &= m - 1 {
		r, why := c.partLimit(j, req, int32(bits.TrailingZeros64(m)))
		if r == ReasonNone {
			continue
		}
		over++
		if first == "" {
			first = why
		}
		if mode == PartLimitsAll {
			break
		}
	}
	if over == 0 || mode == PartLimitsAny && over < n {
		return ""
	}
	return first + " (EnforcePartLimits=" + mode.String() + ")"
}
