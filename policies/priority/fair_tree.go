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
// associations, and the rank drops by one per user. Ties (fair_tree.c):
// sibling users with equal LF share a rank; sibling accounts with equal LF
// have their children merged before sorting; a user tied with a sibling
// account gets the rank of that account's highest-ranked user.
func (t *Tree) FairTree(usage []float64, out []float64) []float64 {
	out = slices.Grow(out[:0], len(t.assocs))[:len(t.assocs)]
	clear(out)
	t.lf = slices.Grow(t.lf[:0], len(t.assocs))[:len(t.assocs)]
	for i := range t.assocs {
		a := &t.assocs[i]
		if a.Parent < 0 {
			continue
		}
		ls := t.levelShares(int32(i))
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
			kids := slices.Clone(t.children[a])
			j := i + 1
			for ; j < len(sibs) && !t.assocs[sibs[j]].User && t.lf[sibs[j]] == t.lf[a]; j++ {
				kids = append(kids, t.children[sibs[j]]...)
			}
			t.walk(kids, rank, rnt, tied, out)
			i = j - 1
		}
		prev = t.lf[a]
	}
}
