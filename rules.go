package schedsim

import (
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// JobRule sets submission options of the jobs it matches, as sbatch
// options would have: --checkpoint-style intervals (a job restarts from
// its last checkpoint when requeued), the array throttle (--array=…%N)
// and --requeue / --no-requeue. Traces rarely record them (sacct's
// SubmitLine does, where present), so a study states them here.
//
// Rules are tried in file order and, for each option, the first rule that
// matches the job and sets that option gives its value; an option no
// matching rule sets keeps the trace's value. docs/scenario.md has an
// example.
type JobRule struct {
	// Match selects the jobs: every key given must match, and a rule
	// without keys matches every job.
	Match RuleMatch `yaml:"match"`
	// Checkpoint is the checkpoint interval, a duration ("1h"); 0 means
	// the job never checkpoints and restarts from scratch.
	Checkpoint string `yaml:"checkpoint,omitempty"`
	// ArrayThrottle is the most tasks of the job's array that run at
	// once (sbatch --array=0-99%4 is 4); 0 means no throttle. It applies
	// to array tasks only, and every task of an array takes the value of
	// its first task in the trace.
	ArrayThrottle *int32 `yaml:"array_throttle,omitempty"`
	// Requeue is --requeue (true) or --no-requeue (false): whether the
	// job returns to the queue after a preemption or node failure. It
	// overrides the cluster-wide controller.job_requeue for the jobs it
	// matches, as the sbatch options override JobRequeue in Slurm.
	Requeue *bool `yaml:"requeue,omitempty"`
}

// RuleMatch matches jobs by glob patterns (path.Match: *, ?, [a-z],
// \ to quote) on their fields; an empty pattern matches anything.
// Partition matches the partition the job runs in: any of the names a
// multi-partition job lists (after trace.partition_map), or the
// cluster's default partition for a job that names none.
type RuleMatch struct {
	Partition string `yaml:"partition,omitempty"`
	Account   string `yaml:"account,omitempty"`
	User      string `yaml:"user,omitempty"`
	Name      string `yaml:"name,omitempty"`
}

// maxThrottle bounds array_throttle (Slurm's is a uint32 task count).
const maxThrottle = math.MaxInt32

// validateRules checks job_rules' patterns and values.
func (s *Scenario) validateRules() error {
	for i, r := range s.JobRules {
		for _, m := range []struct{ key, pat string }{
			{"partition", r.Match.Partition}, {"account", r.Match.Account}, {"user", r.Match.User}, {"name", r.Match.Name},
		} {
			if _, err := path.Match(m.pat, ""); err != nil {
				return s.lifecycleError(fmt.Sprintf("%q: bad pattern (want a glob such as \"ml-*\" or \"train-[0-9]*\")", m.pat), "job_rules", i, "match", m.key)
			}
		}
		if r.Checkpoint == "" && r.ArrayThrottle == nil && r.Requeue == nil {
			return s.lifecycleError("sets nothing (want checkpoint, array_throttle or requeue)", "job_rules", i)
		}
		if r.Checkpoint != "" {
			d, err := parseDur(r.Checkpoint)
			if err != nil {
				return s.lifecycleError(err.Error(), "job_rules", i, "checkpoint")
			}
			if d > workload.MaxCheckpointInterval {
				return s.lifecycleError(fmt.Sprintf("%s is longer than the longest checkpoint interval, %d s (68 years)", r.Checkpoint, workload.MaxCheckpointInterval), "job_rules", i, "checkpoint")
			}
		}
		if t := r.ArrayThrottle; t != nil && !(*t >= 0 && *t <= maxThrottle) {
			return s.lifecycleError(fmt.Sprintf("must be >= 0, got %d", *t), "job_rules", i, "array_throttle")
		}
	}
	return nil
}

// matches reports whether rule r matches job j; parts are the names of
// the partitions j may run in.
func (r *JobRule) matches(j *workload.Job, parts []string) bool {
	ok := func(pat, v string) bool {
		if pat == "" {
			return true
		}
		m, _ := path.Match(pat, v) // validated
		return m
	}
	if !ok(r.Match.Account, j.Account) || !ok(r.Match.User, j.User) || !ok(r.Match.Name, j.Name) {
		return false
	}
	if r.Match.Partition == "" {
		return true
	}
	for _, p := range parts {
		if ok(r.Match.Partition, p) {
			return true
		}
	}
	return false
}

// applyRules sets the options job_rules give on the jobs of t, after the
// partition map. When a rule sets requeue, every job's requeue becomes
// its own (the matching rule's, else the trace's --requeue or the
// cluster-wide JobRequeue) and the cluster-wide flag is turned off, so
// that a rule's --no-requeue holds under JobRequeue=1 as in Slurm.
func (s *Scenario) applyRules(c *hwmodels.Cluster, t *workload.Trace, l *Lifecycle) {
	if len(s.JobRules) == 0 {
		return
	}
	type action struct {
		ckpt     sim.Time
		hasCkpt  bool
		throttle *int32
		requeue  *bool
	}
	acts := make([]action, len(s.JobRules))
	anyRequeue := false
	for i, r := range s.JobRules {
		if r.Checkpoint != "" {
			acts[i].ckpt, _ = parseDur(r.Checkpoint) // validated
			acts[i].hasCkpt = true
		}
		acts[i].throttle, acts[i].requeue = r.ArrayThrottle, r.Requeue
		anyRequeue = anyRequeue || r.Requeue != nil
	}
	matched := make([]int, len(s.JobRules))
	def := ""
	if c != nil && c.DefaultPartition < len(c.Partitions) {
		def = c.Partitions[c.DefaultPartition].Name
	}
	var parts []string
	throttleOf := map[string]int32{} // array job id → its first task's throttle
	t.Edit(func(j *workload.Job) bool {
		parts = parts[:0]
		for p := range strings.SplitSeq(j.Partition, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 && def != "" {
			parts = append(parts, def)
		}
		var ckptSet, throttleSet, requeueSet bool
		for i := range s.JobRules {
			r := &s.JobRules[i]
			a := &acts[i]
			if !r.matches(j, parts) {
				continue
			}
			matched[i]++
			if a.hasCkpt && !ckptSet {
				j.CheckpointInterval, ckptSet = int32(a.ckpt), true // validated: at most workload.MaxCheckpointInterval
			}
			if a.throttle != nil && !throttleSet {
				if j.ArrayJobID != "" {
					j.ArrayThrottle = *a.throttle
				}
				throttleSet = true
			}
			if a.requeue != nil && !requeueSet {
				j.Requeue, requeueSet = *a.requeue, true
			}
		}
		if anyRequeue && !requeueSet {
			j.Requeue = j.Requeue || l.JobRequeue
		}
		if j.ArrayJobID != "" {
			if v, ok := throttleOf[j.ArrayJobID]; ok {
				j.ArrayThrottle = v
			} else {
				throttleOf[j.ArrayJobID] = j.ArrayThrottle
			}
		}
		return true
	})
	if anyRequeue {
		l.JobRequeue = false
	}
	counts := make([]string, len(matched))
	for i, n := range matched {
		counts[i] = fmt.Sprintf("rule %d matched %d", i+1, n)
	}
	t.Notes = append(t.Notes, "job_rules: "+strings.Join(counts, ", ")+" jobs")
}
