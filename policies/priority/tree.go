package priority

import (
	"fmt"
	"math"
	"slices"

	"github.com/schedsim/schedsim/workload"
)

// Time is simulated seconds, as sim.Time.
type Time = workload.Time

// Assoc is one association of the tree: an account, or a user in an
// account (a leaf).
type Assoc struct {
	// Name is the account name, or the user name for a user association.
	Name string
	// Account is, for a user, the account the association is in; for an
	// account, its own name.
	Account string
	// Parent indexes the parent account; -1 for the root.
	Parent int32
	// Shares is the raw share (sacctmgr Fairshare=N), >= 0.
	Shares float64
	User   bool
}

// Tree is an association tree (root account "root" at index 0) with the
// usage of every user association. Usage is charged as a rate of billable
// TRES (Charge) and settled per calculation period as Slurm's decay thread
// does: at every multiple of the period, the usage so far is multiplied by
// the period's decay and the period's new usage is added undecayed.
type Tree struct {
	assocs   []Assoc
	children [][]int32
	ls       []float64 // levelShares' result
	accounts map[string]int32
	users    map[[2]string]int32
	nUsers   int

	period Time    // PriorityCalcPeriod, seconds (> 0)
	phase  Time    // settlement instants are phase + k·period
	decay  float64 // multiplier per period
	reset  Time    // PriorityUsageResetPeriod in seconds; 0 = never
	acc    []acc   // per association; only users are charged

	// scratch
	lf    []float64
	usage []float64
}

// acc is one association's usage settled up to the calculation instant at,
// with partial the usage accrued since then up to last, and rate the
// billable TRES currently running.
type acc struct {
	u       float64
	at      Time
	partial float64
	last    Time
	rate    float64
}

// DecayFactor returns the per-period usage multiplier for a half-life and
// period in seconds: (1 - 0.693/halfLife)^period, as Slurm computes it
// (priority_multifactor.c); 1 when halfLife is 0 (no decay).
func DecayFactor(halfLife, period Time) float64 {
	if halfLife <= 0 {
		return 1
	}
	return math.Pow(1-0.693/float64(halfLife), float64(period))
}

// NewTree returns a tree holding only the root account, settling usage
// every period seconds (> 0) with the given half-life (0 = no decay) and
// usage reset period (0 = never; else a multiple of period: usage is zeroed
// at every multiple of reset since time 0).
func NewTree(period, halfLife, reset Time) (*Tree, error) {
	if period <= 0 {
		return nil, fmt.Errorf("calculation period must be > 0 seconds, got %d", period)
	}
	if reset < 0 || reset%period != 0 {
		return nil, fmt.Errorf("usage reset period (%d s) must be a multiple of the calculation period (%d s)", reset, period)
	}
	t := &Tree{
		accounts: map[string]int32{"root": 0},
		users:    map[[2]string]int32{},
		period:   period,
		decay:    DecayFactor(halfLife, period),
		reset:    reset,
	}
	t.assocs = append(t.assocs, Assoc{Name: "root", Account: "root", Parent: -1, Shares: 1})
	t.children = append(t.children, nil)
	t.acc = append(t.acc, acc{})
	return t, nil
}

// SetPhase moves the settlement instants to phase + k·period (phase in
// [0, period); slurmctld's decay thread counts its periods from its
// start). It must be called before any Charge; the usage reset boundaries
// stay multiples of the reset period from time 0.
func (t *Tree) SetPhase(phase Time) {
	t.phase = phase
	for i := range t.acc {
		t.acc[i] = t.newAcc()
	}
}

// newAcc is an association's usage before any charge, with its first
// settlement at the phase.
func (t *Tree) newAcc() acc {
	if t.phase == 0 {
		return acc{}
	}
	return acc{at: t.phase - t.period, last: t.phase - t.period}
}

// Len returns the number of associations.
func (t *Tree) Len() int { return len(t.assocs) }

// Assoc returns association i.
func (t *Tree) Assoc(i int32) Assoc { return t.assocs[i] }

// Users returns the number of user associations.
func (t *Tree) Users() int { return t.nUsers }

func (t *Tree) add(a Assoc) int32 {
	i := int32(len(t.assocs))
	t.assocs = append(t.assocs, a)
	t.children = append(t.children, nil)
	t.children[a.Parent] = append(t.children[a.Parent], i)
	t.acc = append(t.acc, t.newAcc())
	return i
}

// AddAccount adds account name under parent ("" = root) with shares.
func (t *Tree) AddAccount(name, parent string, shares float64) (int32, error) {
	if parent == "" {
		parent = "root"
	}
	if name == "" {
		return -1, fmt.Errorf("account name is empty")
	}
	if _, dup := t.accounts[name]; dup {
		return -1, fmt.Errorf("account %q is defined twice", name)
	}
	p, ok := t.accounts[parent]
	if !ok {
		return -1, fmt.Errorf("account %q: parent account %q is not defined (define parents first)", name, parent)
	}
	if !(shares >= 0 && !math.IsInf(shares, 0)) {
		return -1, fmt.Errorf("account %q: shares must be >= 0, got %v", name, shares)
	}
	i := t.add(Assoc{Name: name, Account: name, Parent: p, Shares: shares})
	t.accounts[name] = i
	return i, nil
}

// HasAccount reports whether account name exists.
func (t *Tree) HasAccount(name string) bool { _, ok := t.accounts[name]; return ok }

// AddUser adds user's association in account with shares.
func (t *Tree) AddUser(user, account string, shares float64) (int32, error) {
	if user == "" {
		return -1, fmt.Errorf("user name is empty")
	}
	if account == "" {
		account = "root"
	}
	p, ok := t.accounts[account]
	if !ok {
		return -1, fmt.Errorf("user %q: account %q is not defined", user, account)
	}
	if _, dup := t.users[[2]string{user, account}]; dup {
		return -1, fmt.Errorf("user %q in account %q is defined twice", user, account)
	}
	if !(shares >= 0 && !math.IsInf(shares, 0)) {
		return -1, fmt.Errorf("user %q: shares must be >= 0, got %v", user, shares)
	}
	i := t.add(Assoc{Name: user, Account: account, Parent: p, Shares: shares, User: true})
	t.users[[2]string{user, account}] = i
	t.nUsers++
	return i, nil
}

// User returns the association of user in account, or -1.
func (t *Tree) User(user, account string) int32 {
	if account == "" {
		account = "root"
	}
	if i, ok := t.users[[2]string{user, account}]; ok {
		return i
	}
	return -1
}

// Charge changes association i's running billable TRES by delta from time
// at on: a job start adds its billable TRES, its end subtracts them. Usage
// accrues at the rate in billable-TRES seconds. Times must not go back for
// one association.
func (t *Tree) Charge(i int32, at Time, delta float64) {
	a := &t.acc[i]
	t.roll(a, at)
	a.rate += delta
	if math.Abs(a.rate) < 1e-9 {
		a.rate = 0 // no drift from float sums of starts and ends
	}
}

// Forfeit drops from association i's usage what a charge of rate made
// at start accrued since the later of start and the last settlement
// instant, up to at: the usage of a job that ends at at, between two
// settlements. Slurm's decay thread charges a job's new usage only while
// it runs (decay_apply_new_usage in priority_multifactor.c: "Don't need
// to handle finished jobs"), and the usage since its last run is charged
// at the job's end only by priority_p_job_end, which _adjust_limit_usage
// (acct_policy.c) calls only when AccountingStorageEnforce includes
// limits. A job that ends at a settlement instant has nothing to forfeit
// (that settlement counted it). Call it with the Charge that ends the
// job's rate (in either order); times must not go back.
func (t *Tree) Forfeit(i int32, at, start Time, rate float64) {
	a := &t.acc[i]
	t.roll(a, at)
	from := max(start, a.at)
	if at <= from {
		return
	}
	a.partial -= rate * float64(at-from)
	if math.Abs(a.partial) < 1e-9 {
		a.partial = 0 // no drift from float sums of starts and ends
	}
}

// roll settles a up to time now.
func (t *Tree) roll(a *acc, now Time) {
	if now <= a.last {
		return
	}
	P := t.period
	if t.reset > 0 {
		if rb := now / t.reset * t.reset; rb > a.last {
			// Usage before the reset boundary is wiped.
			a.u, a.partial, a.at, a.last = 0, 0, rb, rb
		}
	}
	next := a.at + P
	if now < next {
		a.partial += a.rate * float64(now-a.last)
		a.last = now
		return
	}
	a.u = a.u*t.decay + a.partial + a.rate*float64(next-a.last)
	a.at, a.partial, a.last = next, 0, next
	if n := (now - a.at) / P; n > 0 {
		if t.decay == 1 {
			a.u += a.rate * float64(P) * float64(n)
		} else {
			dn := math.Pow(t.decay, float64(n))
			a.u = a.u*dn + a.rate*float64(P)*(1-dn)/(1-t.decay)
		}
		a.at += n * P
		a.last = a.at
	}
	a.partial = a.rate * float64(now-a.at)
	a.last = now
}

// UsageAt returns every association's raw usage (billable-TRES seconds,
// decayed) as settled at calculation instant k, a settlement instant (phase + k·period)
// no earlier than the previous call's and no later than any Charge made
// since: a user's is its own, an account's the sum over its subtree.
// The slice is reused by the next call.
func (t *Tree) UsageAt(k Time) []float64 {
	t.usage = slices.Grow(t.usage[:0], len(t.assocs))[:len(t.assocs)]
	for i := len(t.assocs) - 1; i >= 0; i-- {
		t.usage[i] = 0
	}
	for i := len(t.assocs) - 1; i >= 0; i-- {
		if t.assocs[i].User {
			a := &t.acc[i]
			if k > a.last {
				t.roll(a, k)
			}
			t.usage[i] = a.u
		}
	}
	// Children always come after their parent, so one backward sweep sums
	// every subtree.
	for i := len(t.assocs) - 1; i > 0; i-- {
		t.usage[t.assocs[i].Parent] += t.usage[i]
	}
	return t.usage
}

// levelShares returns, per association, the sum of the shares of it and
// its siblings, each level summed once (summing per association cost the
// square of an account's users), in the same order as before.
func (t *Tree) levelShares() []float64 {
	ls := slices.Grow(t.ls[:0], len(t.assocs))[:len(t.assocs)]
	for i := range t.assocs {
		if t.assocs[i].Parent < 0 {
			ls[i] = t.assocs[i].Shares
		}
	}
	for _, sibs := range t.children {
		var s float64
		for _, c := range sibs {
			s += t.assocs[c].Shares
		}
		for _, c := range sibs {
			ls[c] = s
		}
	}
	t.ls = ls
	return ls
}

// Classic writes the classic fair-share factor (PriorityFlags=NO_FAIR_TREE)
// of every user association into out and returns it:
// F = 2^(-UE/S/damp), S the product of shares/sibling shares along the path,
// UE the effective usage: at the top tier the normalized usage (usage over
// the root's), below it UA + (UE_parent - UA)·shares/sibling shares. damp
// is FairShareDampeningFactor (>= 1). An association with S = 0 gets 0.
func (t *Tree) Classic(usage []float64, damp float64, out []float64) []float64 {
	n := len(t.assocs)
	out = slices.Grow(out[:0], n)[:n]
	clear(out)
	norm := make([]float64, n) // S
	ue := make([]float64, n)
	norm[0] = 1
	root := usage[0]
	level := t.levelShares()
	for i := 1; i < n; i++ { // parents come first
		a := &t.assocs[i]
		ls := level[i]
		var frac float64
		if ls > 0 {
			frac = a.Shares / ls
		}
		norm[i] = norm[a.Parent] * frac
		var ua float64
		if root > 0 {
			ua = usage[i] / root
		}
		if a.Parent == 0 {
			ue[i] = ua
		} else {
			ue[i] = ua + (ue[a.Parent]-ua)*frac
		}
		if a.User && norm[i] > 0 {
			out[i] = math.Exp2(-ue[i] / norm[i] / damp)
		}
	}
	return out
}
