// Package priority computes Slurm's priority/multifactor job priority and
// the fair-share factor it feeds on: an association tree of accounts and
// users with shares (Tree), usage charged per PriorityCalcPeriod and decayed
// with PriorityDecayHalfLife or reset every PriorityUsageResetPeriod
// (Usage), Fair Tree (the default since Slurm 19.05) and classic fair share
// (PriorityFlags=NO_FAIR_TREE), and the weighted sum of factors
// (Weights.Priority).
//
// The formulas follow Slurm's priority_multifactor.c and fair_tree.c as
// summarized in the project's reference (slurm-gpu-facts.md §3): all
// weights default to 0; factors are clamped to [0, 1]; the priority is
// truncated to an integer in [1, 2^32-1].
//
// The package imports only sim and workload and holds no clock: callers say
// when (in simulated seconds) usage changes and when factors are computed.
// Nothing here is safe for concurrent use.
package priority
