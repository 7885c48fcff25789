package sim

import (
	"fmt"
	"math/bits"

	"github.com/schedsim/schedsim/workload"
)

// PartLimits is Slurm's EnforcePartLimits: whether a job over a
// partition's MaxTime or MaxNodes is rejected at submit (slurm.conf(5)).
type PartLimits uint8

// EnforcePartLimits values.
const (
	// PartLimitsNo accepts every job: one over a partition's limit stays
	// pending (the policy holds it, reason PartitionTimeLimit or
	// PartitionNodeLimit). Slurm's default.
	PartLimitsNo PartLimits = iota
	// PartLimitsAny (also Slurm's YES) rejects a job over the limits of
	// every partition it may run in.
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

// partLimitReason returns why job j with resolved request req is over
// partition p's limits (MaxTime against its own time limit, MaxNodes
// against its node count), or "".
func (c *controller) partLimitReason(j *workload.Job, req *workload.Request, p int32) string {
	part := &c.cluster.Partitions[p]
	if part.MaxTime > 0 && j.TimeLimit > 0 && int64(j.TimeLimit) > part.MaxTime {
		return fmt.Sprintf("time limit %d s exceeds partition %s's MaxTime %d s", j.TimeLimit, part.Name, part.MaxTime)
	}
	if part.MaxNodes > 0 && req.Nodes > part.MaxNodes {
		return fmt.Sprintf("%d nodes exceed partition %s's MaxNodes %d", req.Nodes, part.Name, part.MaxNodes)
	}
	return ""
}

// enforcePartLimits returns why a job that may run in the partitions of
// parts is rejected at submit under Config.EnforcePartLimits, or "".
func (c *controller) enforcePartLimits(j *workload.Job, req *workload.Request, parts uint64) string {
	mode := c.cfg.EnforcePartLimits
	if mode == PartLimitsNo {
		return ""
	}
	var first string
	over := 0
	n := bits.OnesCount64(parts)
	for m := parts; m != 0; m &= m - 1 {
		why := c.partLimitReason(j, req, int32(bits.TrailingZeros64(m)))
		if why == "" {
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
