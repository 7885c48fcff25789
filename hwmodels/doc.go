// Package hwmodels owns the hardware side of a simulation: the cluster spec
// (node groups, partitions) loaded from YAML, and, as they land, the GPU
// catalog, MIG geometry, fabric topology and power and runtime models. It
// imports nothing else of ours.
package hwmodels
