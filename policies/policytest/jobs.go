package policytest

import (
	"testing"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// Job returns a trace job submitted at submit with the given time limit,
// actual runtime and request.
func Job(id string, submit, limit, runtime sim.Time, req workload.Request) workload.Job {
	j := workload.NewJob(id)
	j.Submit, j.TimeLimit, j.Runtime, j.Request = submit, limit, runtime, req
	return j
}

// MIGJob is a job of the MIG scenarios: n instances of profile (whole GPUs
// when profile is ""), limit = runtime.
func MIGJob(t testing.TB, id string, submit, runtime workload.Time, profile string, n int32) workload.Job {
	t.Helper()
	j := workload.NewJob(id)
	j.Submit, j.Runtime, j.TimeLimit = submit, runtime, runtime
	j.Request = workload.Request{Nodes: 1, GPUs: n, CPUs: 1}
	if profile != "" {
		p, err := workload.ParseMIGProfile(profile)
		if err != nil {
			t.Fatal(err)
		}
		j.Request.MIGProfile = p
	}
	return j
}

// Starts maps each job's ID to its start in rec.
func Starts(rec *sim.Record) map[string]workload.Time {
	m := map[string]workload.Time{}
	for i := range rec.Jobs {
		m[rec.Trace.Jobs[i].ID] = rec.Jobs[i].Start
	}
	return m
}

// ParseCluster parses a cluster spec written for a test.
func ParseCluster(t testing.TB, spec string) *hwmodels.Cluster {
	t.Helper()
	c, err := hwmodels.ParseCluster([]byte(spec), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// InPart returns j submitted to partition p.
func InPart(j workload.Job, p string) workload.Job { j.Partition = p; return j }
