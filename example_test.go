package schedsim_test

import (
	"fmt"
	"log"

	"github.com/schedsim/schedsim"
	"github.com/schedsim/schedsim/policies/catalog"
)

// Example loads a scenario file, replays it under two policies and
// compares their waits.
func Example() {
	for _, policy := range []string{"fifo", "easy"} {
		s, err := schedsim.Load("testdata/example/study.yaml")
		if err != nil {
			log.Fatal(err)
		}
		// What --policy does; any key of the file can be set so.
		if err := s.Override("policy", policy); err != nil {
			log.Fatal(err)
		}
		res, err := s.Run()
		if err != nil {
			log.Fatal(err)
		}
		w := res.Analysis.Summary.Wait
		fmt.Printf("%-4s %d jobs, wait mean %.0f s, p95 %.0f s, max %.0f s\n", policy, w.Count, w.Mean, w.P95, w.Max)
	}
	// Output:
	// fifo 5 jobs, wait mean 120 s, p95 178 s, max 180 s
	// easy 5 jobs, wait mean 58 s, p95 154 s, max 170 s
}

// ExampleScenario_Build runs the steps of Scenario.Run one by one: build
// (trace, cluster, policy), cut the trace to its first jobs, simulate,
// analyze.
func ExampleScenario_Build() {
	s, err := schedsim.Load("testdata/example/study.yaml") // or schedsim.Default()
	if err != nil {
		log.Fatal(err)
	}
	run, err := s.Build(catalog.Builtin())
	if err != nil {
		log.Fatal(err)
	}
	run.Head(3) // the first 3 jobs, as --jobs 3
	rec, err := run.Simulate()
	if err != nil {
		log.Fatal(err)
	}
	res, err := run.Analyze(rec)
	if err != nil {
		log.Fatal(err)
	}
	sum := res.Analysis.Summary
	fmt.Printf("%s on %s: %d jobs, wait mean %.1f s, max %.0f s\n", sum.Policy, sum.Cluster.Name, sum.Jobs, sum.Wait.Mean, sum.Wait.Max)
	// Output:
	// fifo on four: 3 jobs, wait mean 90.0 s, max 180 s
}
