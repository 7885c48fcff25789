package traces

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestConvertMatchesWrite: Convert, which streams the input twice (and
// sorts it through temporary files when it is not in submit order),
// writes byte for byte what Write writes of the trace Read returns, for
// every fixture and writable format.
func TestConvertMatchesWrite(t *testing.T) {
	defer func(n int) { sortRun = n }(sortRun)
	sortRun = 7 // many runs to merge
	files := roundTripFiles(t)
	// An input out of submit order: the habrok excerpt's job rows with
	// their steps, in a shuffled order.
	shuffled := filepath.Join(t.TempDir(), "shuffled.sacct")
	writeShuffledSacct(t, "testdata/synthetic_header.psv", shuffled)
	files = append(files, shuffled)
	for _, path := range files {
		// Of the shared traces, one 20,000-job log is enough here
		// (TestRoundTrip reads them all).
		if strings.Contains(path, "shared") && !strings.Contains(path, "HPC2N") {
			continue
		}
		opts := optionsFor(path)
		res, err := Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range WriteFormats() {
			var want, got bytes.Buffer
			if err := Write(&want, format, res.Trace, WriteOptions{SWF: res.SWF}); err != nil {
				t.Fatalf("%s %s: write: %v", path, format, err)
			}
			s, err := OpenStream(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			n, err := Convert(s, &got, format, WriteOptions{})
			s.Close()
			if err != nil {
				t.Fatalf("%s %s: convert: %v", path, format, err)
			}
			if n != int64(len(res.Trace.Jobs)) {
				t.Errorf("%s %s: %d jobs, want %d", path, format, n, len(res.Trace.Jobs))
			}
			if !bytes.Equal(want.Bytes(), got.Bytes()) {
				t.Errorf("%s %s: Convert differs from Write (%d and %d bytes)", filepath.Base(path), format, got.Len(), want.Len())
			}
		}
	}
}

// writeShuffledSacct writes the job rows of a sacct file (each with its
// steps) in a random order, keeping the header.
func writeShuffledSacct(t *testing.T, in, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(mustRead(t, in), "\n"), "\n")
	var groups [][]string
	for _, l := range lines[1:] {
		id := strings.SplitN(l, "|", 2)[0]
		if strings.Contains(id, ".") && len(groups) > 0 {
			groups[len(groups)-1] = append(groups[len(groups)-1], l)
			continue
		}
		groups = append(groups, []string{l})
	}
	rng := rand.New(rand.NewPCG(1, 1))
	rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	b := []string{lines[0]}
	for _, g := range groups {
		b = append(b, g...)
	}
	if err := os.WriteFile(out, []byte(strings.Join(b, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStreamConstantMemory: a Stream read and a Convert to Parquet of a
// trace of n jobs (one pending array record, limit raised) keep a live
// heap (HeapAlloc right after a forced collection, every 10,000 jobs read
// and at every write of the output) that does not grow with n: 600,000
// jobs peak within 16 MB of 150,000 jobs' peak, and under 96 MB (Convert
// buffers a Parquet row group of 128Ki jobs); a whole read of 600,000
// jobs holds about 200 MB. Each size is measured in a child process of
// its own: HeapAlloc is process-wide, and what earlier tests left behind
// (a goroutine still draining a pipe, say) otherwise counts too.
func TestStreamConstantMemory(t *testing.T) {
	if n := os.Getenv("SCHEDSIM_STREAM_MEMORY"); n != "" {
		var jobs int
		if _, err := fmt.Sscan(n, &jobs); err != nil {
			t.Fatal(err)
		}
		read, conv := streamPeaks(t, jobs)
		fmt.Printf("peaks %d %d\n", read, conv)
		return
	}
	peaks := map[int][2]uint64{}
	for _, n := range []int{150000, 600000} {
		// The smaller of two runs' peaks: a sample now and then catches a
		// writer's buffer of about 20 MB in flight (seen at either size,
		// more often on a loaded machine), which says nothing about
		// growth with the job count.
		for run := range 2 {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStreamConstantMemory$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("SCHEDSIM_STREAM_MEMORY=%d", n))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%d jobs: %v\n%s", n, err, out)
			}
			var read, conv uint64
			i := bytes.Index(out, []byte("peaks "))
			if i < 0 {
				t.Fatalf("%d jobs: no figures in\n%s", n, out)
			}
			if _, err := fmt.Sscan(string(out[i+len("peaks "):]), &read, &conv); err != nil {
				t.Fatalf("%d jobs: %v in\n%s", n, err, out)
			}
			if p, ok := peaks[n]; ok && run > 0 {
				read, conv = min(read, p[0]), min(conv, p[1])
			}
			peaks[n] = [2]uint64{read, conv}
		}
		read, conv := peaks[n][0], peaks[n][1]
		t.Logf("%d jobs: peak live heap %.1f MB reading, %.1f MB converting", n, float64(read)/(1<<20), float64(conv)/(1<<20))
	}
	a, b := peaks[150000], peaks[600000]
	for k, what := range []string{"reading", "converting"} {
		if b[k] > 96<<20 || b[k] > a[k]+16<<20 {
			t.Errorf("%s: live heap %d MB for 600,000 jobs, %d MB for 150,000", what, b[k]>>20, a[k]>>20)
		}
	}
}

// streamPeaks reads n jobs through a Stream, then converts them to
// Parquet, and returns the peak live heap of each.
func streamPeaks(t *testing.T, n int) (read, conv uint64) {
	var peak uint64
	sample := func() {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}
	in := fmt.Sprintf("JobID|Submit|State|User\n7_[0-%d]|2024-01-01T00:00:00|PENDING|alice\n", n-1)
	s, err := NewStream(strings.NewReader(in), "big.sacct", Options{Limits: Limits{MaxArrayTasks: int64(n)}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := 0
	for {
		_, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if got++; got%10000 == 0 {
			sample()
		}
	}
	if got != n {
		t.Fatalf("%d jobs, want %d", got, n)
	}
	read, peak = peak, 0
	if m, err := Convert(s, writeSampler(sample), FormatParquet, WriteOptions{}); err != nil || m != int64(n) {
		t.Fatalf("convert: %d, %v", m, err)
	}
	return read, peak
}

// writeSampler discards what is written, calling fn at every write.
type writeSampler func()

func (w writeSampler) Write(p []byte) (int, error) {
	w()
	return len(p), nil
}
