// Package conformance compares schedsim with a real Slurm. It reads the
// records conformance/run.sh makes on a real Slurm 22.05 mini-cluster
// (conformance/records/SCENARIO/runN: sacct.txt, sacct-D.txt,
// submissions.tsv, events.tsv, run-info.txt, config/slurm.conf and
// gres.conf), turns each into a simulation input — the cluster and the
// slurm policy's settings from the record's slurm.conf, the jobs with the
// ground truth of their sbatch lines (submit time, work, dependencies,
// array throttle, --requeue), node events and advance reservations from
// the scenario's commands, and controller settings that model slurmctld
// (the 30 s time-limit sweep with its phase from slurmctld's start, the
// requeue hold, KillWait) — runs it under the slurm policy through the
// scenario package, as `schedsim run --policy slurm` does, and compares
// the waits job by job and as distributions, with the real runs of the
// same scenario compared with each other as the yardstick.
//
// It imports the scenario package, the simulator and the policies, and
// hwmodels for the slurm.conf import; it is wiring for the schedsim
// command and its tests, like the scenario and sweep packages beside it.
package conformance
