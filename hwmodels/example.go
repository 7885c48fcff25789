package hwmodels

import (
	_ "embed"
	"slices"
)

// exampleClusterPath is the name errors and ParseCluster use for the
// embedded example.
const exampleClusterPath = "examples/example-cluster.yaml"

//go:embed examples/example-cluster.yaml
var exampleClusterYAML []byte

// ExampleClusterYAML returns the cluster spec of ExampleCluster, a copy the
// caller may modify (to write it out as a starting point, for instance).
func ExampleClusterYAML() []byte {
	return slices.Clone(exampleClusterYAML)
}

// ExampleCluster returns the embedded example cluster, freshly resolved on
// each call so the caller may modify it:
//
//   - h100-[001-032]: 32 nodes with 8 × H100 SXM 80GB (GRES type h100), 112
//     CPUs, 2 TiB memory, features h100 and nvlink;
//   - a100-[001-016]: 16 nodes with 8 × A100 SXM 80GB (GRES type a100), 128
//     CPUs, 1 TiB memory, features a100 and nvlink;
//   - partition gpu (index 0, the default) of all nodes, partition h100
//     (index 1) of the H100 nodes and partition a100 (index 2) of the A100
//     nodes, each with MaxTime 2 days, PriorityTier 1 and PriorityJobFactor 1.
//
// That is 48 nodes and 384 GPUs. The spec is examples/example-cluster.yaml,
// returned by ExampleClusterYAML. ExampleCluster panics only if the
// embedded spec is broken, which a test rules out.
func ExampleCluster() *Cluster {
	c, err := ParseCluster(exampleClusterYAML, exampleClusterPath)
	if err != nil {
		panic("hwmodels: embedded example cluster: " + err.Error())
	}
	return c
}
