package priority

import (
	"cmp"
	"math"
	"slices"
)

// Fair Tree, priority/multifactor's fair_tree.c (PriorityFlags without
// NO_FAIR_TREE): the tree's associations ranked by level fair share.

// FairTree writes the Fair Tree fair-share factor of every user
// association into out (indexed like the tree; accounts get 0), from
// usage as UsageAt returns it, and returns out.
//
// Among siblings, an association's level fair share is LF = S/U with S its
// shares over its and its siblings' shares and U its usage over its
// parent's (LF = +Inf when U = 0 and S > 0; 0 when S = 0). A depth-first
// walk visits siblings by descending LF (users before accounts on equal
// LF, then in tree order); each user met gets rank/N, N the number of user
// associations, and the rank drops by one per user. Ties (fair_tree.c's
// _calc_tree_fs): sibling users with equal LF share a rank; an account
// tied with the sibling before it passes the tie to its first child, so a
// user tied with a sibling account gets the rank of that account's
// highest-ranked user, and the first user of an account tied with the
// previous one the rank of the last user before it. The rule "sibling
// accounts with equal LF have their children merged before sorting" is in
// the comments only: _count_tied_accounts stops at the first sibling that
// is not a user, and users sort before accounts, so it merges none (22.05;
// gen-23/run1 at 19:13:00: chem and bio tied, and carol, in bio, got 0.4,
// the rank after bio's dave, not 0.2 behind chem's bob as a merge by LF
// would give). Tied accounts are walked in tree order, as qsort leaves
// them (glibc 2.36's is a stable merge sort).
func (t *Tree) FairTree(usage []float64, out []float64) []float64 {
	out = slices.Grow(out[:0], len(t.assocs))[:len(t.assocs)]
	clear(out)
	t.lf = slices.Grow(t.lf[:0], len(t.assocs))[:len(t.assocs)]
	level := t.levelShares()
	for i := range t.assocs {
		a := &t.assocs[i]
		if a.Parent < 0 {
			continue
		}
		ls := level[i]
		var S, U float64
		if ls > 0 {
			S = a.Shares / ls
		}
		if pu := usage[a.Parent]; pu > 0 {
			U = usage[i] / pu
		}
		switch {
		case S == 0:
			t.lf[i] = 0
		case U == 0:
			t.lf[i] = math.Inf(1)
		default:
			t.lf[i] = S / U
		}
	}
	rank, rnt := t.nUsers, t.nUsers
	t.walk(slices.Clone(t.children[0]), &rank, &rnt, false, out)
	return out
}

func (t *Tree) walk(sibs []int32, rank, rnt *int, accountTied bool, out []float64) {
	slices.SortFunc(sibs, func(a, b int32) int {
		if c := cmp.Compare(t.lf[b], t.lf[a]); c != 0 {
			return c
		}
		if ua, ub := t.assocs[a].User, t.assocs[b].User; ua != ub {
			if ua {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	prev := math.NaN()
	for i := 0; i < len(sibs); i++ {
		a := sibs[i]
		tied := i == 0 && accountTied || i > 0 && t.lf[a] == prev
		if t.assocs[a].User {
			if !tied {
				*rank = *rnt
			}
			if t.nUsers > 0 {
				out[a] = float64(*rank) / float64(t.nUsers)
			}
			*rnt--
		} else {
			t.walk(slices.Clone(t.children[a]), rank, rnt, tied, out)
		}
		prev = t.lf[a]
	}
}
