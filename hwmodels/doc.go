// Package hwmodels owns the hardware side of a simulation: the cluster spec
// (node groups, partitions) loaded from YAML, the GPU and node catalog, MIG
// geometry, fabric topology, the power and runtime models and the Slurm
// config import. It imports nothing else of ours.
//
// # Cluster spec
//
// LoadCluster and ParseCluster read a cluster spec, a YAML file, and resolve
// it into a Cluster: every node listed individually in spec order (ranges
// expanded ascending), partitions as ascending node indices, Node.Partitions
// bits filled, exactly one default partition. ExampleCluster is a built-in
// one; UniformCluster builds a cluster of identical nodes without YAML.
// SCHEMA.md in this directory is the user-facing reference; in short:
//
//	version: 1                       # required; the schema version
//	name: example                    # required; letters, digits, - _ .
//	node_groups:                     # required; at least one
//	  - name: "h100-[001-032]"       # required; host name or Slurm hostlist
//	    count: 32                    # optional; see below
//	    gpu:                         # optional; no key = no GPUs
//	      model: h100-sxm-80gb       # required; GPUCatalog name or "custom"
//	      type: h100                 # optional; GRES type, default from model
//	      count: 8                   # required; GPUs per node, 0 … 1024
//	    cpus: 112                    # required; 1 … 1048576
//	    memory: 2T                   # required; K/M/G/T (binary) or MiB integer
//	    features: [h100, nvlink]     # optional; names, no duplicates
//	partitions:                      # optional; 1 … 64 of them
//	  - name: gpu                    # required; unique
//	    nodes: "h100-[001-032]"      # required; see below
//	    max_time: "2-00:00:00"       # optional; Slurm time, default UNLIMITED
//	    max_nodes: 16                # optional; most nodes per job, default 0 = UNLIMITED
//	    default: true                # optional; at most one partition
//	    priority_tier: 1             # optional; 0 … 65533, default 1
//	    priority_job_factor: 1       # optional; 0 … 65533, default 1
//
// Node names: a node group's name is a Slurm hostlist ("gpu[001-032]",
// "n[1-3,7]", "r[1-2]n[01-16]"; see ExpandHostlist) giving its nodes, and
// count, if given, must equal their number. A name without brackets and a
// count is a prefix: "gpu" with count 32 gives gpu01 … gpu32, zero-padded
// to the digits of count, numbered from 1. Node names are unique across
// groups; "ALL" is reserved.
//
// GPUs: model names a GPUCatalog entry, whose DefaultType is the GRES type
// unless type is given (types are lower-cased). model "custom" is a GPU
// outside the catalog: its type is what type says, or untyped (GPUType "",
// Slurm's "Gres=gpu:N") without one.
//
// Partitions: nodes is one string or a list of them, each ALL (every node),
// a node group's name exactly as written, or a hostlist of defined nodes;
// the union is taken, duplicates dropped. Partitions may overlap. max_time
// is rounded up to whole minutes as Slurm stores it; "UNLIMITED" (or no
// key) is 0 in Partition.MaxTime. Without a partitions key the cluster has
// one partition "all" of every node, the default, unlimited, tier and
// factor 1. When no partition says default: true, the first partition is
// the default (Cluster needs one; real Slurm would have no default
// partition then and reject jobs that name none).
//
// Hardware sections (spec_hw.go; SCHEMA.md and docs/hardware.md document
// them): gpu_models and node_models add models to the catalogs (gpus.go,
// nodes.go); node groups take model, weight, mig (a fixed layout checked by
// MIG geometry, mig.go, or dynamic), mps and power; fabric builds a Fabric
// (fabric.go: fat-tree, SuperPOD, explicit tree) and fills Node.Switches;
// power and runtime set the energy and runtime models (energy.go,
// runtime.go, pure functions); slurm keeps slurm.conf settings.
// ImportSlurm (slurmimport.go; Include lines: slurminclude.go) writes a
// spec from slurm.conf, gres.conf and topology.conf, every limit in the
// field the simulation reads; Summarize describes a cluster.
//
// Strictness: unknown keys (including keys kept for later versions, such
// as nvlink and min_nodes), duplicate keys, wrong YAML kinds ("8" quoted
// for an integer), values out of range, dangling references and a second
// YAML document are errors. Anchors, aliases and merge keys ("<<: *base")
// are followed. Errors are *ParseError values, "file:line: field.path:
// what was expected", wrapping one of the Err* sentinels.
package hwmodels
