package policytest

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/sim"
	"github.com/schedsim/schedsim/workload"
)

// The cluster and jobs directives of the scenario files
// (cockroachdb/datadriven) that the policies' tests and the scenario
// layer's tests share, so that one vocabulary describes a hand-worked
// schedule everywhere:
//
//	cluster [parts=P1,P2] [tiers=T1,T2]
//	<one node per line: NAME gpus=G [type=T] [cpus=C] [mem=MiB] [parts=P1,P2]>
//	    nodes of 64 CPUs and 512 GiB unless given, of GPU type h100, in
//	    the first partition unless given (the default partition; "main"
//	    without parts=); tiers are the partitions' PriorityTier.
//	jobs
//	<one job per line: ID submit=S limit=L run=R [gpus=G] [nodes=N] [cpus=C] [type=T] [part=P] [user=U]>
//	    seconds from the trace's epoch; limit is the time limit the
//	    scheduler sees, run the runtime it does not.

// ClusterDirective reads a cluster directive (see above).
func ClusterDirective(t testing.TB, d *datadriven.TestData) *hwmodels.Cluster {
	t.Helper()
	parts := []string{"main"}
	if d.HasArg("parts") {
		parts = nil
		d.ScanArgs(t, "parts", &parts)
	}
	var nodes []hwmodels.Node
	for line := range strings.SplitSeq(strings.TrimSpace(d.Input), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		gpus, cpus, mem, typ, in := int64(0), int64(64), int64(524288), "h100", uint64(1)
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "gpus":
				gpus = directiveInt(t, d, kv, v)
			case "cpus":
				cpus = directiveInt(t, d, kv, v)
			case "mem":
				mem = directiveInt(t, d, kv, v)
			case "type":
				typ = v
			case "parts":
				in = 0
				for p := range strings.SplitSeq(v, ",") {
					k := slices.Index(parts, p)
					if k < 0 {
						d.Fatalf(t, "%s: no partition %q", line, p)
					}
					in |= 1 << uint(k)
				}
			default:
				d.Fatalf(t, "%s: unknown key %q (want gpus, type, cpus, mem, parts)", line, k)
			}
		}
		nodes = append(nodes, Node(f[0], int32(gpus), typ, int32(cpus), mem, in))
	}
	c := Cluster(nodes, parts...)
	if d.HasArg("tiers") {
		var tiers []int
		d.ScanArgs(t, "tiers", &tiers)
		for i, tier := range tiers {
			c.Partitions[i].PriorityTier = int32(tier)
		}
	}
	return c
}

// JobsDirective reads a jobs directive (see above).
func JobsDirective(t testing.TB, d *datadriven.TestData) []workload.Job {
	t.Helper()
	var jobs []workload.Job
	for line := range strings.SplitSeq(strings.TrimSpace(d.Input), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		j := workload.NewJob(f[0])
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "submit":
				j.Submit = sim.Time(directiveInt(t, d, kv, v))
			case "limit":
				j.TimeLimit = sim.Time(directiveInt(t, d, kv, v))
			case "run":
				j.Runtime = sim.Time(directiveInt(t, d, kv, v))
			case "gpus":
				j.Request.GPUs = int32(directiveInt(t, d, kv, v))
			case "nodes":
				j.Request.Nodes = int32(directiveInt(t, d, kv, v))
			case "cpus":
				j.Request.CPUs = int32(directiveInt(t, d, kv, v))
			case "type":
				j.Request.GPUType = v
			case "part":
				j.Partition = v
			case "user":
				j.User = v
			default:
				d.Fatalf(t, "%s: unknown key %q (want submit, limit, run, gpus, nodes, cpus, type, part, user)", line, k)
			}
		}
		jobs = append(jobs, j)
	}
	return jobs
}

func directiveInt(t testing.TB, d *datadriven.TestData, kv, v string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		d.Fatalf(t, "%s: %q is not an integer", kv, v)
	}
	return n
}
