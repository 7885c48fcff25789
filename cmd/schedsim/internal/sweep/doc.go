// Package sweep runs a grid of scenarios: it reads a sweep file (a base
// scenario and the axes to vary: cluster variants, policies and their
// parameters, load scales, seeds), expands it into scenarios in a stable
// order, runs them on a local worker pool or as the shards of a Slurm job
// array, skips scenarios whose outputs already match (resume), and merges
// the results into one table (sweep.parquet) with plots of each metric
// against each swept parameter.
//
// Each scenario is a whole, independent run: parallelism is across runs,
// never inside one, and results are merged in input order, so the merged
// table is the same for any number of workers or shards.
//
// The sweep file schema is documented in docs/scale.md.
package sweep
