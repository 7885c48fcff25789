// Package sim owns virtual time and job lifecycle. Its controller submits
// jobs from a workload, asks a Policy (handed in as an interface value; sim
// never imports policies) for scheduling decisions through a read-only View,
// checks and applies those decisions, enforces time limits, and appends what
// happened to a Record that reports read. The bare event queue lives in
// sim/event.
package sim
