package main

import (
	"bufio"
	"bytes"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/schedsim/schedsim/reports"
)

// schedsimCmd is the real main in a child process (TestMain), with its
// output discarded.
func schedsimCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SCHEDSIM_RUN_MAIN=1")
	return cmd
}

// checkOneRun checks that dir holds one complete run and nothing else:
// it passes its manifest, summary.json and jobs.parquet carry the
// manifest's config hash and seed (ReadRunDir), and the directory holds
// exactly the manifest's files. It returns the run's seed.
func checkOneRun(t *testing.T, dir string) uint64 {
	t.Helper()
	rd, err := reports.ReadRunDir(dir)
	if err != nil {
		t.Fatalf("not one complete run: %v", err)
	}
	if _, _, err := reports.VerifyRunDir(dir); err != nil {
		t.Fatalf("not one complete run: %v", err)
	}
	want := []string{reports.ManifestFile}
	for _, f := range rd.Manifest.Files {
		want = append(want, f.Name)
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(listFiles(t, dir)))); diff != "" {
		t.Fatalf("%s is not exactly its manifest's files (-manifest +dir):\n%s", dir, diff)
	}
	return rd.Header.Seed
}

// TestRunKill9 kills schedsim run --out DIR with SIGKILL at a seeded set
// of moments across a run (the simulation, the writing of each file, the
// rename into place) and checks after each kill that DIR holds the
// complete earlier run or the complete new one, never a mix or a part;
// then that the next run leaves no staging directory, temporary file or
// lock beside DIR or in it.
func TestRunKill9(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL on Windows")
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	args := func(seed uint64) []string {
		// 300 jobs: a run of a few tenths of a second, most of it writing.
		return []string{"run", "--jobs", "300", "--quiet", "--seed", strconv.FormatUint(seed, 10), "--out", dir}
	}
	start := time.Now()
	if out, err := schedsimCmd(args(1)...).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	full := time.Since(start)
	have := checkOneRun(t, dir)
	rng := rand.New(rand.NewPCG(9, 9))
	outcomes := map[string]int{}
	kills := 12
	if testing.Short() {
		kills = 4
	}
	for i := range kills {
		seed := uint64(100 + i)
		// Up to 1.2 × a whole run: some kills land after the end.
		delay := time.Duration(rng.Float64() * 1.2 * float64(full))
		cmd := schedsimCmd(args(seed)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // reaps it: its pid is no longer alive
		got := checkOneRun(t, dir)
		switch got {
		case have:
			outcomes["old"]++
		case seed:
			outcomes["new"]++
			have = seed
		default:
			t.Fatalf("kill %d after %v: DIR holds seed %d, want the old run's %d or the new %d", i, delay, got, have, seed)
		}
	}
	t.Logf("%d kills over runs of %v: %v", kills, full, outcomes)
	// The next run cleans what the killed ones left.
	if out, err := schedsimCmd(args(7)...).CombinedOutput(); err != nil {
		t.Fatalf("run after the kills: %v\n%s", err, out)
	}
	if got := checkOneRun(t, dir); got != 7 {
		t.Errorf("after the last run DIR holds seed %d, want 7", got)
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "out" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("beside DIR: %v, want only out", names)
	}
}

// TestRunOutBusy: a run on a directory another writer holds is refused
// with exit status 2 and one line saying so, and leaves it as it was.
func TestRunOutBusy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	o, err := reports.CreateOutDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	code, stderr := exitCode(t, "run", "--jobs", "50", "--quiet", "--out", dir)
	if code != 2 || !strings.Contains(stderr, "is writing this directory") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("run on a held directory: exit %d, stderr %q; want 2 and one line", code, stderr)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the refused run left %s (stat error %v)", dir, err)
	}
	if code, stderr := exitCode(t, "run", "--jobs", "50", "--quiet", "--out", dir); code != 0 {
		t.Fatalf("run after the holder closed: exit %d: %s", code, stderr)
	}
	checkOneRun(t, dir)
}

// TestRunConcurrentOut starts two real runs on one --out, the second once
// the first has taken the directory (it prints its first line after
// that): the second is refused while the first runs, and the first
// completes. A second run that started only after the first had ended
// proves nothing, so that case is tried again.
func TestRunConcurrentOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for try := 0; try < 3; try++ {
		first := schedsimCmd("run", "--quiet", "--seed", "1", "--out", dir)
		stdout, err := first.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var firstErr bytes.Buffer
		first.Stderr = &firstErr
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() {
			first.Wait()
			t.Fatalf("first run printed nothing: %s", firstErr.String())
		}
		ended := make(chan error, 1)
		go func() {
			for sc.Scan() {
			}
			ended <- first.Wait()
		}()
		code, stderr := exitCode(t, "run", "--quiet", "--seed", "2", "--out", dir)
		var firstDone bool
		select {
		case err := <-ended:
			firstDone = true
			ended <- err
		default:
		}
		if err := <-ended; err != nil {
			t.Fatalf("first run: %v: %s", err, firstErr.String())
		}
		if code == 0 && firstDone {
			continue // the second ran after the first: try again
		}
		if code != 2 || !strings.Contains(stderr, "is writing this directory") {
			t.Fatalf("second run while the first ran: exit %d, stderr %q; want 2, refused", code, stderr)
		}
		if got := checkOneRun(t, dir); got != 1 {
			t.Errorf("DIR holds seed %d, want the first run's 1", got)
		}
		return
	}
	t.Skip("the first run ended before the second started, three times (a very slow machine)")
}
