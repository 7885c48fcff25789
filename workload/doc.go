// Package workload owns the Job model: who submitted what, when, asking for
// which resources, and how long it actually ran. Trace readers produce Jobs;
// the simulator consumes them. The package imports nothing else of ours.
package workload
