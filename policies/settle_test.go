package policies_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/schedsim/schedsim/policies"
	"github.com/schedsim/schedsim/policies/catalog"
	"github.com/schedsim/schedsim/policies/policytest"
	"github.com/schedsim/schedsim/policies/slurm"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// TestSettleEndsStuckRuns runs traces with a job that can never start under
// slurm (whose periodic passes used to keep such a run going forever) and
// under fifo with a failure model (whose events did the same), and checks
// that the run ends, the job is UNFINISHED with its last reason, and the
// run note says why. Nodes have 8 GPUs; slurm runs with its defaults
// (sched_interval 60, bf_interval 30, PriorityCalcPeriod 5 min: periodic
// passes every 30 s, settled after 300 s without a change).
func TestSettleEndsStuckRuns(t *testing.T) {
	g := func(n int32) workload.Request { return workload.Request{GPUs: n} }
	slurmWith := func(mod func(*slurm.Args)) func() sim.Policy {
		return func() sim.Policy {
			a := slurm.DefaultArgs()
			if mod != nil {
				mod(&a)
			}
			p, err := slurm.New(a, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	fifo := func() sim.Policy { return policies.NewFIFO(nil) }
	tests := []struct {
		name   string
		policy func() sim.Policy
		nodes  int
		mod    func(*sim.Config)
		jobs   []workload.Job
		// Job "S" is the stuck one.
		reason string
		end    sim.Time
	}{
		{
			// Partition MaxTime 3600 s; S asks 7200 s: the controller
			// holds it (PartitionTimeLimit, EnforcePartLimits=NO) out
			// of the policy's queue, so no periodic pass is asked for
			// once A [0,100) ends: the run stops with A's end, at 100.
			name:   "slurm held over MaxTime",
			policy: slurmWith(nil),
			nodes:  1,
			mod:    func(c *sim.Config) { c.Cluster.Partitions[0].MaxTime = 3600 },
			jobs:   []workload.Job{job("A", 0, 100, 100, g(8)), job("S", 10, 7200, 100, g(1))},
			reason: "PartitionTimeLimit",
			end:    100,
		},
		{
			// QOS normal allows 4 GPUs per user; S asks 8: it can never
			// start, even with nothing running (QOSMaxTRESPerUserLimit).
			// No change after S's submit at 0: stops at 300.
			name: "slurm QOS limit with nothing running",
			policy: slurmWith(func(a *slurm.Args) {
				a.QOS = []slurm.QOSArgs{{Name: "normal", MaxTRESPerUser: "gres/gpu=4"}}
			}),
			nodes:  1,
			jobs:   []workload.Job{job("S", 0, 100, 100, g(8))},
			reason: "QOSMaxTRESPerUserLimit",
			end:    300,
		},
		{
			// S waits for A to complete (afterok); A runs past its limit
			// [0,60) and times out, so S's dependency can never be
			// satisfied. H asks 8 GPUs where QOS normal allows a user
			// 4, so it stays in slurm's queue and slurm keeps passing.
			// Last change at 60 (A's end and S's
			// DependencyNeverSatisfied): stops at the first pass at or
			// after 360, 360.
			name: "slurm never-satisfied dependency",
			policy: slurmWith(func(a *slurm.Args) {
				a.QOS = []slurm.QOSArgs{{Name: "normal", MaxTRESPerUser: "gres/gpu=4"}}
			}),
			nodes: 1,
			jobs: []workload.Job{
				job("A", 0, 60, 100, g(1)),
				withDeps(job("S", 0, 60, 60, g(1)), workload.DepAfterOK, "A"),
				job("H", 0, 60, 60, g(8)),
			},
			reason: "DependencyNeverSatisfied",
			end:    360,
		},
		{
			// Two nodes; n1 is taken down for good at 0; S needs both.
			// The failure model keeps failing and repairing nodes, but no
			// repair can give S two nodes: fifo's pass after S's submit
			// (the last change; settle 0 for an event-driven policy)
			// ends the run at 5.
			name:   "fifo failure model and a job needing a down node",
			policy: fifo,
			nodes:  2,
			mod: func(c *sim.Config) {
				c.NodeEvents = []sim.NodeEvent{{At: 0, Node: 1, Down: true}}
				c.Failures = &sim.FailureModel{MTBF: 3600, MTTR: 600}
			},
			jobs:   []workload.Job{job("S", 5, 100, 100, workload.Request{Nodes: 2, GPUs: 16})},
			reason: "None",
			end:    5,
		},
		{
			// The same under slurm with S held by its QOS (8 GPUs, 4
			// allowed) on a healthy cluster: failures and repairs
			// change nothing S waits for. Stops at the first pass at or
			// after 5+300, 330.
			name: "slurm failure model and a held job",
			policy: slurmWith(func(a *slurm.Args) {
				a.QOS = []slurm.QOSArgs{{Name: "normal", MaxTRESPerUser: "gres/gpu=4"}}
			}),
			nodes: 2,
			mod: func(c *sim.Config) {
				c.Failures = &sim.FailureModel{MTBF: 600, MTTR: 600}
			},
			jobs:   []workload.Job{job("S", 5, 100, 100, g(8))},
			reason: "QOSMaxTRESPerUserLimit",
			end:    330,
		},
		{
			// fifo with S held over MaxTime and a failure model: S is
			// never in fifo's queue and nothing else is left after its
			// submit, so the failure model's events are dropped and the
			// run ends at 5.
			name:   "fifo failure model and a job over MaxTime",
			policy: fifo,
			nodes:  2,
			mod: func(c *sim.Config) {
				c.Cluster.Partitions[0].MaxTime = 3600
				c.Failures = &sim.FailureModel{MTBF: 600, MTTR: 600}
			},
			jobs:   []workload.Job{job("S", 5, 7200, 100, g(1))},
			reason: "PartitionTimeLimit",
			end:    5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := sim.Config{Cluster: policytest.GPUNodes(tt.nodes, 8), Trace: &workload.Trace{Jobs: tt.jobs},
				Policy: tt.policy(), Seed: 1, Check: true}
			if tt.mod != nil {
				tt.mod(&cfg)
			}
			rec, err := sim.Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var s *sim.JobRecord
			for i := range rec.Jobs {
				if tt.jobs[i].ID == "S" {
					s = &rec.Jobs[i]
				}
			}
			if s.State != sim.Unfinished || s.Reason != tt.reason {
				t.Errorf("S: state %v reason %q, want UNFINISHED %q", s.State, s.Reason, tt.reason)
			}
			if rec.End != tt.end {
				t.Errorf("run ended at %d, want %d", rec.End, tt.end)
			}
			note := strings.Join(rec.Notes, "\n")
			if want := "1 " + tt.reason; !strings.Contains(note, "never finished") || !strings.Contains(note, want) {
				t.Errorf("notes %q: want one saying a job never finished (%s)", rec.Notes, want)
			}
		})
	}
}

func withDeps(j workload.Job, typ workload.DepType, id string) workload.Job {
	j.Deps = []workload.Dependency{{Type: typ, JobID: id}}
	return j
}

// TestSettleWaitsForRepair: a job that fits only once a failed node is
// repaired keeps the run going until the repair, whatever the failure
// draws: on two nodes with a failure model, a job needing both nodes
// always completes, and the record is the one without the guard.
func TestSettleWaitsForRepair(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		for _, name := range []string{"fifo", "slurm"} {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				jobs := []workload.Job{
					job("A", 0, 7200, 7200, workload.Request{GPUs: 8}),
					job("B", 100, 600, 600, workload.Request{Nodes: 2, GPUs: 16}),
				}
				runOnce := func(noSettle bool) *sim.Record {
					p, err := catalog.Builtin().New(name, nil)
					if err != nil {
						t.Fatal(err)
					}
					// No requeue limit: B is requeued until it completes.
					rec, err := sim.Run(sim.Config{Cluster: policytest.GPUNodes(2, 8), Trace: &workload.Trace{Jobs: jobs},
						Policy: p, Seed: seed, Check: true, JobRequeue: true, NoSettle: noSettle, MaxRequeue: -1,
						Failures: &sim.FailureModel{MTBF: 3 * 3600, MTTR: 3600}})
					if err != nil {
						t.Fatal(err)
					}
					return rec
				}
				rec := runOnce(false)
				for i, r := range rec.Jobs {
					if r.State != sim.Completed {
						t.Errorf("job %s: %v, want COMPLETED", jobs[i].ID, r.State)
					}
				}
				if d := cmp.Diff(runOnce(true), rec); d != "" {
					t.Errorf("records with and without the guard differ (-without +with):\n%s", d)
				}
			})
		}
	}
}

// TestSettleChangesNothing is the guard's property: on the conformance
// workloads (with a maintenance window, node failures and requeue, where
// every job that may run finishes), every builtin policy gives the same
// record with and without the termination guard.
func TestSettleChangesNothing(t *testing.T) {
	for _, name := range catalog.Builtin().Names() {
		for _, seed := range policytest.Seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				c, tr := policytest.Workload(seed)
				last := tr.Jobs[len(tr.Jobs)-1].Submit
				cfg := sim.Config{Cluster: c, Trace: tr, Seed: seed, Check: true,
					Reservations: []sim.AdvanceReservation{{Name: "maint", Start: last / 3, End: last/3 + 3600, Nodes: []int32{0}}},
					Failures:     &sim.FailureModel{MTBF: 6 * 3600, MTTR: 1800},
					JobRequeue:   seed%2 == 0,
				}
				runOnce := func(noSettle bool) *sim.Record {
					p, err := catalog.Builtin().New(name, nil)
					if err != nil {
						t.Fatal(err)
					}
					cfg.Policy, cfg.NoSettle = p, noSettle
					rec, err := sim.Run(cfg)
					if err != nil {
						t.Fatal(err)
					}
					return rec
				}
				with := runOnce(false)
				if d := cmp.Diff(runOnce(true), with); d != "" {
					t.Errorf("records with and without the guard differ (-without +with):\n%s", d)
				}
			})
		}
	}
}
