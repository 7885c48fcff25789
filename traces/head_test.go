package traces

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/schedsim/schedsim/workload"
)

// TestHeadMatchesSortAndCut: Options.Head keeps what reading the whole
// trace, Rebase's stable sort by submit and a cut to the first n keep,
// for unsorted inputs with many ties (submit times 0-9 over 200 jobs),
// every n from 0 to past the length; and it is what the reader returns
// through Read on an SWF whose lines are out of submit order.
func TestHeadMatchesSortAndCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	jobs := make([]workload.Job, 200)
	for i := range jobs {
		jobs[i] = workload.NewJob(fmt.Sprint(i))
		jobs[i].Submit = workload.Time(rng.IntN(10))
	}
	ref := slices.Clone(jobs)
	slices.SortStableFunc(ref, func(a, b workload.Job) int { return int(a.Submit - b.Submit) })
	for n := 1; n <= len(jobs)+5; n++ {
		h := &headHeap{n: n}
		for _, j := range jobs {
			h.offer(j)
		}
		got := h.sorted()
		slices.SortStableFunc(got, func(a, b workload.Job) int { return int(a.Submit - b.Submit) })
		want := ref[:min(n, len(ref))]
		if len(got) != len(want) {
			t.Fatalf("n=%d: %d jobs, want %d", n, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID {
				t.Fatalf("n=%d: job %d is %s, want %s", n, i, got[i].ID, want[i].ID)
			}
		}
	}

	// SWF: job, submit, wait, runtime, procs, ... (18 fields). Submits
	// 30, 10, 20, 10: the first two in submit order are jobs 2 and 4
	// (both at 10, in file order), then job 3 at 20.
	var b strings.Builder
	for _, l := range [][2]int{{1, 30}, {2, 10}, {3, 20}, {4, 10}} {
		fmt.Fprintf(&b, "%d %d 0 100 1 -1 -1 1 200 -1 1 1 1 -1 1 -1 -1 -1\n", l[0], l[1])
	}
	for n, want := range map[int]string{1: "2", 2: "2 4", 3: "2 4 3", 9: "2 4 3 1"} {
		res, err := Read(strings.NewReader(b.String()), "t.swf", Options{Format: FormatSWF, Head: n})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range res.Trace.Jobs {
			ids = append(ids, j.ID)
		}
		if got := strings.Join(ids, " "); got != want || res.Read != 4 || res.Trace.Epoch != 10 {
			t.Errorf("Head %d: jobs %q, read %d, epoch %d; want %q, 4, 10", n, got, res.Read, res.Trace.Epoch, want)
		}
	}
}

// TestChunkCap: readWhole's chunks grow 16, 32, ... to readChunk and stay
// there, however many a long trace needs (16<<k overflowed past k = 59,
// about 800,000 jobs: a 10 M-job trace made a negative capacity).
func TestChunkCap(t *testing.T) {
	for k, want := range map[int]int{0: 16, 1: 32, 9: 8192, 10: readChunk, 11: readChunk, 59: readChunk, 64: readChunk, 1000: readChunk} {
		if got := chunkCap(k); got != want {
			t.Errorf("chunkCap(%d) = %d, want %d", k, got, want)
		}
	}
}
