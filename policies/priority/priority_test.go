package priority

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func mustTree(t *testing.T, period, halfLife, reset Time) *Tree {
	t.Helper()
	tr, err := NewTree(period, halfLife, reset)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func must(t *testing.T, _ int32, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestFairTreeRanks reproduces the discrete factors seen on a real Slurm
// 22.05 (real-slurm-notes.md: "with three users: values like 0.2, 0.4,
// 0.6, 1.0"; the rank count includes the root's own associations).
//
// root has users root and admin (no usage) and account lab; lab has users
// u1, u2, u3 with usage 1, 2, 3. There are N = 5 user associations.
// At the root level root and admin have LF = +Inf (no usage) and tie; lab
// has S = 1/3, U = 6/6 = 1, LF = 1/3. root gets rank 5 (5/5 = 1.0); admin
// ties and keeps rank 5 (1.0) while the untied rank drops to 3. In lab
// (S = 1/3 each) u1 has U = 1/6, LF = 2; u2 LF = 1; u3 LF = 2/3: ranks 3,
// 2, 1 give 0.6, 0.4, 0.2.
func TestFairTreeRanks(t *testing.T) {
	tr := mustTree(t, 300, 0, 0)
	root, err := tr.AddUser("root", "root", 1)
	must(t, root, err)
	admin, err := tr.AddUser("admin", "root", 1)
	must(t, admin, err)
	_, err = tr.AddAccount("lab", "", 1)
	must(t, 0, err)
	var us []int32
	for _, u := range []string{"u1", "u2", "u3"} {
		i, err := tr.AddUser(u, "lab", 1)
		must(t, i, err)
		us = append(us, i)
	}
	// Usage 1, 2, 3 per second over the first period.
	for k, i := range us {
		tr.Charge(i, 0, float64(k+1))
	}
	usage := tr.UsageAt(300)
	if got, want := usage[us[2]], 900.0; got != want {
		t.Fatalf("u3 usage %v, want %v", got, want)
	}
	fs := tr.FairTree(usage, nil)
	got := map[string]float64{}
	for i := range tr.Len() {
		if a := tr.Assoc(int32(i)); a.User {
			got[a.Name] = fs[i]
		}
	}
	want := map[string]float64{"root": 1, "admin": 1, "u1": 0.6, "u2": 0.4, "u3": 0.2}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("fair tree factors (-want +got):\n%s", d)
	}
}

// TestFairTreeAccountsFirst: if account A beats sibling B, every user under
// A beats every user under B, even a heavy user of A against an idle user
// of B... unless B's own LF is higher. A (shares 1) has a1 (usage 10) and
// a2 (usage 0); B (shares 1) has b1 (usage 30). At the root A has LF
// 0.5/0.25 = 2, B 0.5/0.75 = 0.67: A's users come first, a2 (LF +Inf) rank
// 3 = 1.0, a1 rank 2 = 0.667, then b1 rank 1 = 0.333. After b1's usage
// decays and a1 keeps running, the order between accounts flips.
func TestFairTreeAccountsFirst(t *testing.T) {
	tr := mustTree(t, 100, 0, 0)
	_, err := tr.AddAccount("A", "root", 1)
	must(t, 0, err)
	_, err = tr.AddAccount("B", "root", 1)
	must(t, 0, err)
	a1, _ := tr.AddUser("a1", "A", 1)
	a2, _ := tr.AddUser("a2", "A", 1)
	b1, _ := tr.AddUser("b1", "B", 1)
	tr.Charge(a1, 0, 0.1)
	tr.Charge(b1, 0, 0.3)
	tr.Charge(a1, 100, -0.1)
	tr.Charge(b1, 100, -0.3)
	fs := tr.FairTree(tr.UsageAt(100), nil)
	want := []float64{fs[0], 0, 0, 2.0 / 3, 1, 1.0 / 3}
	if d := cmp.Diff(want, fs, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("factors (-want +got):\n%s", d)
	}
	// a1 runs 0.5/s for the next period: A's usage 10+50 = 60 > B's 30.
	// B now wins: b1 rank 3 = 1.0; then A's a2 (no usage) 0.667, a1 0.333.
	tr.Charge(a1, 100, 0.5)
	fs = tr.FairTree(tr.UsageAt(200), fs)
	if d := cmp.Diff([]float64{0, 0, 0, 1.0 / 3, 2.0 / 3, 1}, fs, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("after usage (-want +got):\n%s", d)
	}
	_, _ = a2, b1
}

// TestClassic: root has accounts A and B (shares 1 each) with one user
// each, a1 (usage 3) and b1 (usage 1); root usage 4. S(a1) = 0.5·1 = 0.5;
// UE(A) = 3/4 and, a1 being A's only child, UE(a1) = 0.75 + (0.75-0.75)·1
// = 0.75; F(a1) = 2^(-0.75/0.5) = 2^-1.5. F(b1) = 2^(-0.25/0.5) = 2^-0.5.
// With a dampening factor of 2 the exponents halve.
// TestFairTreeTiedAccounts: sibling accounts with equal LF are walked one
// after the other in tree order, not merged (fair_tree.c's
// _count_tied_accounts merges none: it stops at the first sibling that is
// not a user), the tie passing to the first user of the later one. The
// shape of gen-23/run1 at 19:13:00 on Slurm 22.05: A (shares 1) has a1
// (shares 1) and a2 (shares 3), each with usage 100; B (shares 1) has b1
// (shares 2) with usage 200. N = 3 users. At the root A and B have S =
// 1/2 and U = 200/400 = 1/2: LF 1 each, tied; A comes first (tree order).
// In A a2 has S = 3/4, U = 1/2, LF 1.5: rank 3 = 1.0; a1 has S = 1/4,
// LF 0.5: rank 2 = 0.667. B is tied with A, so b1, its first user, keeps
// rank 2: 0.667. Merging A's and B's users by LF (a2 1.5, b1 1.0, a1 0.5)
// would give a1 1/3 (on Slurm, carol got 0.4 of 5 ranks, as a1 here).
func TestFairTreeTiedAccounts(t *testing.T) {
	tr := mustTree(t, 100, 0, 0)
	_, err := tr.AddAccount("A", "root", 1)
	must(t, 0, err)
	_, err = tr.AddAccount("B", "root", 1)
	must(t, 0, err)
	a1, _ := tr.AddUser("a1", "A", 1)
	a2, _ := tr.AddUser("a2", "A", 3)
	b1, _ := tr.AddUser("b1", "B", 2)
	for _, c := range []struct {
		i    int32
		rate float64
	}{{a1, 1}, {a2, 1}, {b1, 2}} {
		tr.Charge(c.i, 0, c.rate)
		tr.Charge(c.i, 100, -c.rate)
	}
	fs := tr.FairTree(tr.UsageAt(100), nil)
	got := map[string]float64{}
	for i := range tr.Len() {
		if a := tr.Assoc(int32(i)); a.User {
			got[a.Name] = fs[i]
		}
	}
	want := map[string]float64{"a1": 2.0 / 3, "a2": 1, "b1": 2.0 / 3}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("fair tree factors (-want +got):\n%s", d)
	}
}

func TestClassic(t *testing.T) {
	tr := mustTree(t, 10, 0, 0)
	tr.AddAccount("A", "", 1)
	tr.AddAccount("B", "", 1)
	a1, _ := tr.AddUser("a1", "A", 1)
	b1, _ := tr.AddUser("b1", "B", 1)
	tr.Charge(a1, 0, 0.3)
	tr.Charge(b1, 0, 0.1)
	u := tr.UsageAt(10)
	f := tr.Classic(u, 1, nil)
	if d := cmp.Diff([]float64{math.Exp2(-1.5), math.Exp2(-0.5)}, []float64{f[a1], f[b1]}, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("classic (-want +got):\n%s", d)
	}
	f = tr.Classic(u, 2, f)
	if d := cmp.Diff([]float64{math.Exp2(-0.75), math.Exp2(-0.25)}, []float64{f[a1], f[b1]}, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("classic damp 2 (-want +got):\n%s", d)
	}
}

// TestDecay: period 300 s, half-life 600 s: D = (1-0.693/600)^300 per
// period. A user runs 2 billable TRES from 100 to 700. Settled usage:
// at 300: 2·200 = 400; at 600: 400·D + 600; at 900: (400·D+600)·D + 200
// (the 100 s of the third period); at 1200: that ·D. Reading at 1200
// directly (lazily) must give the same as reading every period.
func TestDecay(t *testing.T) {
	D := math.Pow(1-0.693/600, 300)
	want := []float64{400, 400*D + 600, (400*D+600)*D + 200, ((400*D+600)*D + 200) * D}
	step := mustTree(t, 300, 600, 0)
	lazy := mustTree(t, 300, 600, 0)
	var got []float64
	for _, tr := range []*Tree{step, lazy} {
		u, _ := tr.AddUser("u", "", 1)
		tr.Charge(u, 100, 2)
	}
	got = append(got, step.UsageAt(300)[1])
	got = append(got, step.UsageAt(600)[1])
	step.Charge(1, 700, -2)
	lazy.Charge(1, 700, -2)
	got = append(got, step.UsageAt(900)[1])
	got = append(got, step.UsageAt(1200)[1])
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 0)); d != "" {
		t.Errorf("stepwise (-want +got):\n%s", d)
	}
	if g := lazy.UsageAt(1200)[1]; math.Abs(g-want[3]) > 1e-9 {
		t.Errorf("lazy usage at 1200 = %v, want %v", g, want[3])
	}
	// Half-life check over many periods: with no new usage, usage halves
	// every 600 s (to within Slurm's 0.693 for ln 2).
	h := mustTree(t, 60, 600, 0)
	u, _ := h.AddUser("u", "", 1)
	h.Charge(u, 0, 1)
	h.Charge(u, 60, -1)
	a := h.UsageAt(60)[1]
	b := h.UsageAt(660)[1]
	if r := b / a; math.Abs(r-0.5) > 0.001 {
		t.Errorf("usage after one half-life is %v of before, want 0.5", r)
	}
}

// TestReset: no decay, reset every 600 s, a user at rate 1 from 0: usage
// 300 at 300, wiped at 600 (0), 300 again at 900, wiped at 1200.
func TestReset(t *testing.T) {
	tr := mustTree(t, 300, 0, 600)
	u, _ := tr.AddUser("u", "", 1)
	tr.Charge(u, 0, 1)
	var got []float64
	for _, k := range []Time{300, 600, 900, 1200, 1500} {
		got = append(got, tr.UsageAt(k)[u])
	}
	if d := cmp.Diff([]float64{300, 0, 300, 0, 300}, got); d != "" {
		t.Errorf("usage (-want +got):\n%s", d)
	}
	if _, err := NewTree(300, 0, 1000); err == nil {
		t.Error("reset 1000 s with period 300 s: no error")
	}
}

func TestAgeFactor(t *testing.T) {
	week := Time(7 * 86400)
	tests := []struct {
		name          string
		now, eligible Time
		want          float64
	}{
		{"not yet eligible", 10, 20, 0},
		{"half", 100 + week/2, 100, 0.5},
		{"capped at PriorityMaxAge", 100 + 3*week, 100, 1},
	}
	for _, tc := range tests {
		if got := AgeFactor(tc.now, tc.eligible, week); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestJobSize on a cluster of 10 nodes and 400 CPUs: a 2-node 40-CPU job
// has (0.2 + 0.1)/2 = 0.15 favoring large, (0.8+0.9)/2 = 0.85 favoring
// small; relative to time (limit 100 min): max(2·400/10, 40)/100/400 = 0.002.
func TestJobSize(t *testing.T) {
	for _, tc := range []struct {
		js   JobSize
		want float64
	}{
		{JobSize{}, 0.15},
		{JobSize{FavorSmall: true}, 0.85},
		{JobSize{SmallRelativeToTime: true}, 0.002},
		{JobSize{SmallRelativeToTime: true, FavorSmall: true}, 0.998},
	} {
		if got := tc.js.Factor(2, 40, 6000, 10, 400); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%+v: %v, want %v", tc.js, got, tc.want)
		}
	}
}

// TestJobSizeNoCPUs: without a CPU count set_priority_factors keeps the
// node term alone, not halved: a 2-node job of a 10-node cluster has
// 2/10 = 0.2 favoring large and 8/10 = 0.8 favoring small (not 0.1 and
// 0.4); relative to time the CPUs are its nodes' share of the cluster's
// (2·400/10 = 80 over 400 CPUs and 100 minutes: 0.002).
func TestJobSizeNoCPUs(t *testing.T) {
	for _, tc := range []struct {
		js   JobSize
		want float64
	}{
		{JobSize{}, 0.2},
		{JobSize{FavorSmall: true}, 0.8},
		{JobSize{SmallRelativeToTime: true}, 0.002},
	} {
		if got := tc.js.Factor(2, 0, 6000, 10, 400); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%+v: %v, want %v", tc.js, got, tc.want)
		}
	}
}

// TestPriority: weights age 1000, fair share 10000, job size 500, TRES
// GRES/gpu 3000; factors 0.5, 0.25, 0.1, gpu 4 of 16 = 0.25:
// 500 + 2500 + 50 + 750 = 3800. A zero sum gives 1 (0 is for held jobs).
func TestPriority(t *testing.T) {
	tw, err := ParseTRESWeights("GRES/gpu=3000")
	if err != nil {
		t.Fatal(err)
	}
	w := Weights{Age: 1000, Fairshare: 10000, JobSize: 500, TRES: tw}
	f := Factors{Age: 0.5, Fairshare: 0.25, JobSize: 0.1, TRES: []float64{4.0 / 16}}
	if got := w.Priority(&f, 0); got != 3800 {
		t.Errorf("priority %d, want 3800", got)
	}
	if got := (&Weights{}).Priority(&Factors{}, 0); got != 1 {
		t.Errorf("all-zero priority %d, want 1", got)
	}
}

func TestParseTRESWeights(t *testing.T) {
	got, err := ParseTRESWeights("CPU=1.0,Mem=0.25G,GRES/gpu=2")
	if err != nil {
		t.Fatal(err)
	}
	want := []TRESWeight{{TRESCPU, 1}, {TRESMem, 0.25 / 1024}, {TRESGPU, 2}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// 8 CPUs, 64 GiB, 2 GPUs: 8 + 16 + 4 = 28.
	if b := Billable(got, &TRES{CPU: 8, MemMB: 65536, GPUs: 2}); b != 28 {
		t.Errorf("billable %v, want 28", b)
	}
	for _, bad := range []string{"cpu", "disk=1", "cpu=x", "cpu=1,cpu=2"} {
		if _, err := ParseTRESWeights(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestDecayPhase is TestDecay's first steps with the settlements at
// 100 + 300k (SetPhase(100)): a user charged at rate 2 from 100 has, at
// the settlement at 400, 2·300 = 600 undecayed (the period's own usage),
// and at 700, 600·D + 600. Without the phase the first settlement at 300
// holds 400, as in TestDecay. A user added after SetPhase settles at the
// same instants.
func TestDecayPhase(t *testing.T) {
	D := math.Pow(1-0.693/600, 300)
	tr := mustTree(t, 300, 600, 0)
	tr.SetPhase(100)
	u, _ := tr.AddUser("u", "", 1)
	tr.Charge(u, 100, 2)
	var got []float64
	got = append(got, tr.UsageAt(400)[u])
	got = append(got, tr.UsageAt(700)[u])
	if d := cmp.Diff([]float64{600, 600*D + 600}, got, cmpopts.EquateApprox(1e-12, 0)); d != "" {
		t.Errorf("usage at 400 and 700 (-want +got):\n%s", d)
	}
}

// TestForfeit: period 60, no decay, one user. A (rate 2) runs [10,100),
// ending between the settlements at 60 and 120; B (rate 1) runs [30,120),
// ending at a settlement; C (rate 4) runs [130,170), inside one period.
// Slurm's decay thread charges running jobs only: at 60 A's [10,60) = 100
// and B's [30,60) = 30 (130); at 120 B's [60,120) = 60 (190: A's
// [60,100) is lost; B, ending at the settlement, is counted by it); at
// 180 nothing (C never ran through a settlement): 190. Charging every
// second (AccountingStorageEnforce=limits, no Forfeit): 130, 270 (A's 80
// more), 430 (C's 160).
func TestForfeit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		forfeit bool
		want    []float64
	}{
		{"ends between settlements are not charged", true, []float64{130, 190, 190}},
		{"every second charged", false, []float64{130, 270, 430}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustTree(t, 60, 0, 0)
			u, _ := tr.AddUser("u", "", 1)
			end := func(at, start Time, rate float64) {
				tr.Charge(u, at, -rate)
				if tc.forfeit {
					tr.Forfeit(u, at, start, rate)
				}
			}
			var got []float64
			tr.Charge(u, 10, 2)
			tr.Charge(u, 30, 1)
			got = append(got, tr.UsageAt(60)[u])
			end(100, 10, 2)
			end(120, 30, 1)
			got = append(got, tr.UsageAt(120)[u])
			tr.Charge(u, 130, 4)
			end(170, 130, 4)
			got = append(got, tr.UsageAt(180)[u])
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("usage at 60, 120, 180 (-want +got):\n%s", d)
			}
		})
	}
}
