package sim

import (
	"testing"

	"github.com/schedsim/schedsim/workload"
)

// TestProgress checks that Config.Progress sees time and the count of
// ended jobs grow, ends with every job ended, and changes nothing.
func TestProgress(t *testing.T) {
	// 200,000 one-GPU jobs of 5 s, one per second, on two 4-GPU nodes (no
	// queue forms):
	// about 600,000 events, so the hook is called about 9 times during the
	// run (every ProgressEvery = 65,536 events) and once at the end.
	const n = 200_000
	tr := &workload.Trace{Jobs: make([]workload.Job, n)}
	for i := range tr.Jobs {
		tr.Jobs[i] = job("j", Time(i), 5, 20, 1)
	}
	type call struct {
		now         Time
		done, total int
	}
	var calls []call
	cfg := Config{Cluster: twoNodes(), Trace: tr, Policy: &greedy{}, Seed: 1,
		Progress: func(now Time, done, total int) { calls = append(calls, call{now, done, total}) }}
	rec, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 5 {
		t.Fatalf("%d progress calls for %d events, want at least 5", len(calls), rec.Events)
	}
	if int64(len(calls)) > rec.Events/ProgressEvery+2 {
		t.Fatalf("%d progress calls for %d events, want at most one per %d events", len(calls), rec.Events, ProgressEvery)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].now < calls[i-1].now || calls[i].done < calls[i-1].done {
			t.Fatalf("progress went back: %+v then %+v", calls[i-1], calls[i])
		}
	}
	last := calls[len(calls)-1]
	if last != (call{rec.End, n, n}) {
		t.Fatalf("last progress call %+v, want {%d %d %d}", last, rec.End, n, n)
	}
	if mid := calls[len(calls)/2]; mid.done <= 0 || mid.done >= n {
		t.Fatalf("middle progress call %+v, want some but not all jobs done", mid)
	}
	cfg.Progress = nil
	plain, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if plain.End != rec.End || plain.Events != rec.Events {
		t.Fatalf("the hook changed the run: end %d/%d, events %d/%d", rec.End, plain.End, rec.Events, plain.Events)
	}
}
