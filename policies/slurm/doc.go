// Package slurm owns the "slurm" policy: a model of slurmctld 22.05 with
// sched/backfill, priority/multifactor and select/cons_tres, built on the
// placers and pass scratch of package policies. Its files map onto
// slurmctld's sources, so a Slurm developer can check one against the
// other:
//
//	slurm.go                the policy: which passes are due, state per job
//	job_scheduler.go        src/slurmctld/job_scheduler.c: queue order, main pass
//	priority_multifactor.go src/plugins/priority/multifactor/priority_multifactor.c
//	                        (fair_tree.c is policies/priority/fair_tree.go)
//	backfill.go             src/plugins/sched/backfill/backfill.c
//	backfill_memo.go        the fast path's memo, skipped cycles, incremental masks
//	backfill_reference.go   the plain backfill cycle the fast one is tested against
//	willrun.go              select/cons_common job_test.c (_will_run_test)
//	preempt.go              preempt/partition_prio and preempt/qos
//	limits.go               src/slurmctld/acct_policy.c (QOS limits)
//	config.go, conf.go      arguments and the slurm.conf defaults
//
// docs/slurm-policy.md describes each behaviour with the function of
// Slurm's source it follows. The policy registers as "slurm" in
// policies/catalog.Builtin.
package slurm
