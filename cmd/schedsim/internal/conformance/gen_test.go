package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestGenerateCommitted: the committed generated scenarios are what their
// seed generates (conformance/scenarios/gen-SEED.txt), so a record's
// scenario can be regenerated from its name.
func TestGenerateCommitted(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "conformance", "scenarios", "gen-*.txt"))
	if len(files) == 0 {
		t.Skip("no generated scenarios under conformance/scenarios")
	}
	for _, f := range files {
		seed, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "gen-"), ".txt"), 10, 64)
		if err != nil {
			t.Errorf("%s: not gen-SEED.txt", f)
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := Generate(seed); got != string(b) {
			t.Errorf("%s differs from `schedsim conformance gen --seed %d`", f, seed)
		}
	}
}

// genScenario is a generated scenario read back: its account and user
// lines, and its jobs' fields by name.
type genScenario struct {
	accounts map[string]int // shares
	users    map[string]string
	jobs     []genLine
	cmds     []string
}

type genLine struct {
	at                      int
	name, user, part        string
	nodes, gpn, limit, work int
	fails                   bool
	opts                    []string
}

// parseGen reads the scenario format (docs/conformance.md) strictly: every
// line is a comment, conf, wait_max, account, user, job or cmd line, with
// its fields.
func parseGen(t *testing.T, text string) genScenario {
	t.Helper()
	g := genScenario{accounts: map[string]int{"root": 1}, users: map[string]string{}}
	atoi := func(ln int, s string) int {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			t.Fatalf("line %d: %q is not a count", ln, s)
		}
		return n
	}
	for i, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		ln := i + 1
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "conf", "wait_max":
		case "account":
			// account NAME PARENT FAIRSHARE: parents first.
			if len(f) != 4 {
				t.Fatalf("line %d: %q: want account NAME PARENT FAIRSHARE", ln, l)
			}
			if _, ok := g.accounts[f[2]]; !ok {
				t.Errorf("line %d: account %s's parent %s is not defined before it", ln, f[1], f[2])
			}
			g.accounts[f[1]] = atoi(ln, f[3])
		case "user":
			if len(f) != 4 {
				t.Fatalf("line %d: %q: want user NAME ACCOUNT FAIRSHARE", ln, l)
			}
			if _, ok := g.accounts[f[2]]; !ok {
				t.Errorf("line %d: user %s's account %s is not defined before it", ln, f[1], f[2])
			}
			g.users[f[1]] = f[2]
			atoi(ln, f[3])
		case "job":
			if len(f) < 9 {
				t.Fatalf("line %d: %q: want job AT NAME USER PARTITION NODES GPUS_PER_NODE LIMIT_MIN SLEEP_S [options]", ln, l)
			}
			j := genLine{at: atoi(ln, f[1]), name: f[2], user: f[3], part: f[4], nodes: atoi(ln, f[5]), gpn: atoi(ln, f[6]), limit: atoi(ln, f[7]), opts: f[9:]}
			w, fails := strings.CutSuffix(f[8], "!")
			j.work, j.fails = atoi(ln, w), fails
			g.jobs = append(g.jobs, j)
		case "cmd":
			g.cmds = append(g.cmds, strings.Join(f[2:], " "))
		default:
			t.Fatalf("line %d: %q: unknown line", ln, l)
		}
	}
	return g
}

// TestGenerate checks what every seed's scenario promises, for the
// development seeds 0–49 and the validation set: the same bytes from the
// same seed; 3–6 users, each in an account defined with its shares; 1–32
// GPUs per job on the 4 × 8-GPU cluster; jobs submitted in order within
// the 80 s window, each user's jobs in their account; afterok only on a
// parent that can succeed (no exit 1, no overrun, no array), submitted
// earlier; every load level over the seeds, arrays, failures, overruns,
// node events and preemption somewhere.
func TestGenerate(t *testing.T) {
	seeds := slices.Concat([]uint64{}, ValidationSeeds)
	for s := range uint64(50) {
		seeds = append(seeds, s)
	}
	seen := map[string]int{}
	for _, seed := range seeds {
		text := Generate(seed)
		if Generate(seed) != text {
			t.Fatalf("seed %d: two different scenarios", seed)
		}
		g := parseGen(t, text)
		if n := len(g.users); n < 3 || n > 6 {
			t.Errorf("seed %d: %d users", seed, n)
		}
		if !strings.Contains(text, fmt.Sprintf("(%s set,", SeedSet(seed))) {
			t.Errorf("seed %d: header does not name the %s set", seed, SeedSet(seed))
		}
		byName := map[string]genLine{}
		prev := 0
		for _, j := range g.jobs {
			byName[j.name] = j
			if _, ok := g.users[j.user]; !ok {
				t.Errorf("seed %d: %s's user %s has no user line", seed, j.name, j.user)
			}
			if gpus := j.nodes * j.gpn; gpus < 1 || gpus > 32 || j.gpn > 8 || j.nodes > 4 {
				t.Errorf("seed %d: %s asks for %d × %d GPUs", seed, j.name, j.nodes, j.gpn)
			}
			if j.at < prev || j.at >= genWindow {
				t.Errorf("seed %d: %s at %d (after %d, window %d s)", seed, j.name, j.at, prev, genWindow)
			}
			prev = j.at
			if j.work > 60*j.limit {
				seen["overrun"]++
			}
			if j.fails {
				seen["fails"]++
			}
			for _, o := range j.opts {
				switch {
				case strings.HasPrefix(o, "array="):
					seen["array"]++
				case strings.HasPrefix(o, "dep=afterok:"):
					p, ok := byName[strings.TrimPrefix(o, "dep=afterok:")]
					if !ok || p.at >= j.at || p.fails || p.work > 60*p.limit || slices.ContainsFunc(p.opts, func(s string) bool { return strings.HasPrefix(s, "array=") }) {
						t.Errorf("seed %d: %s is afterok on %+v, which may not succeed or is not earlier", seed, j.name, p)
					}
					seen["afterok"]++
				case strings.HasPrefix(o, "dep=afterany:"):
					if p, ok := byName[strings.TrimPrefix(o, "dep=afterany:")]; !ok || p.at >= j.at {
						t.Errorf("seed %d: %s is afterany on a job not submitted before it", seed, j.name)
					}
				case o == "dep=singleton":
					seen["singleton"]++
				}
			}
		}
		if len(g.jobs) < genMinJobs {
			t.Errorf("seed %d: %d jobs", seed, len(g.jobs))
		}
		if len(g.cmds) > 0 {
			seen["node down"]++
		}
		if strings.Contains(text, "PreemptType=preempt/partition_prio") {
			seen["preempt"]++
		}
		seen["load "+genLoads[seed%3].name]++
	}
	for _, k := range []string{"overrun", "fails", "array", "afterok", "singleton", "node down", "preempt", "load light", "load medium", "load saturated"} {
		if seen[k] == 0 {
			t.Errorf("no seed has %s", k)
		}
	}
}
