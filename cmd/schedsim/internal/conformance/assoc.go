package conformance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Assoc is one association of the record's sacctmgr tree (assoc.txt,
// `sacctmgr show assoc -P format=Cluster,Account,User,Partition,ParentName,Share,QOS`):
// an account (User empty; Parent its parent account, empty for root) or
// a user in Account.
type Assoc struct {
	Account, User, Parent string
	Shares                int64
	Line                  int
}

// QOS is one QOS of the record (qos.txt, `sacctmgr show qos -P
// format=Name,Priority,Preempt,PreemptMode,MaxJobsPU,MaxTRESPU,GrpTRES`).
type QOS struct {
	Name               string
	Priority           int64
	Preempt            string // QOS names, comma separated
	PreemptMode        string // "" for sacctmgr's "cluster"
	MaxJobsPU          int
	MaxTRESPU, GrpTRES string
	Line               int
}

// maxSacctmgrRows bounds the rows read from one assoc.txt or qos.txt
// (the mini-cluster has a handful).
const maxSacctmgrRows = 10000

// readTable reads a sacctmgr -P table of the record: ok is false when the
// file does not exist (records made before run.sh recorded it). The
// header must have the columns want.
func (r *Record) readTable(name string, want []string) (path string, col map[string]int, rows [][]string, ok bool, err error) {
	path = filepath.Join(r.Dir, name)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return path, nil, nil, false, nil
	} else if err != nil {
		return path, nil, nil, false, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines)-1 > maxSacctmgrRows {
		return path, nil, nil, false, perr(path, 0, "", "%d rows, more than the %d allowed", len(lines)-1, maxSacctmgrRows)
	}
	col = map[string]int{}
	for i, h := range strings.Split(lines[0], "|") {
		col[h] = i
	}
	for _, h := range want {
		if _, ok := col[h]; !ok {
			return path, nil, nil, false, perr(path, 1, "header", "no %s column (want sacctmgr -P with format=%s)", h, strings.Join(want, ","))
		}
	}
	for i, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != len(col) {
			return path, nil, nil, false, perr(path, i+2, "", "%d fields, want %d", len(f), len(col))
		}
		rows = append(rows, f)
	}
	return path, col, rows, true, nil
}

var assocColumns = []string{"Cluster", "Account", "User", "Partition", "ParentName", "Share", "QOS"}

// readAssoc reads assoc.txt when the record has one (records made before
// the harness recorded the tree have none: the replay then derives the
// tree from the jobs, shares 1, as the policy does without accounts). The
// tree must be in sacctmgr's order, a parent before its children.
func (r *Record) readAssoc() error {
	path, col, rows, ok, err := r.readTable("assoc.txt", assocColumns)
	if !ok || err != nil {
		return err
	}
	accounts := map[string]bool{}
	users := map[[2]string]bool{}
	for i, f := range rows {
		ln := i + 2
		a := Assoc{Account: f[col["Account"]], User: f[col["User"]], Parent: f[col["ParentName"]], Line: ln}
		if a.Account == "" {
			return perr(path, ln, "Account", "empty")
		}
		if p := f[col["Partition"]]; p != "" {
			return perr(path, ln, "Partition", "%q: per-partition associations are not modeled by the replay", p)
		}
		sh := f[col["Share"]]
		n, err := strconv.ParseInt(sh, 10, 64)
		if err != nil || n < 0 {
			// sacctmgr prints "parent" for an association that uses its
			// parent's share, which the policy's tree does not model.
			return perr(path, ln, "Share", "%q: want a raw share (0 or more)", sh)
		}
		a.Shares = n
		switch {
		case a.User != "":
			if !accounts[a.Account] {
				return perr(path, ln, "Account", "user %s in account %q, which no earlier line defines", a.User, a.Account)
			}
			if users[[2]string{a.User, a.Account}] {
				return perr(path, ln, "User", "%s in account %s listed twice", a.User, a.Account)
			}
			users[[2]string{a.User, a.Account}] = true
		case a.Account == "root":
			if a.Parent != "" || len(accounts) > 0 {
				return perr(path, ln, "Account", "root: want it first, without a parent")
			}
		default:
			if a.Parent == "" || !accounts[a.Parent] {
				return perr(path, ln, "ParentName", "%q for account %s: want a parent account defined on an earlier line", a.Parent, a.Account)
			}
			if accounts[a.Account] {
				return perr(path, ln, "Account", "%s listed twice", a.Account)
			}
		}
		if a.User == "" {
			accounts[a.Account] = true
		}
		r.Assocs = append(r.Assocs, a)
	}
	return nil
}

// checkAssocs says whether every job's user has an association in its
// account, as Slurm requires at submit (AccountingStorageEnforce aside):
// a job outside the tree means the tree is not the one Slurm had.
func (r *Record) checkAssocs() error {
	if len(r.Assocs) == 0 {
		return nil
	}
	has := map[[2]string]bool{}
	for _, a := range r.Assocs {
		if a.User != "" {
			has[[2]string{a.User, a.Account}] = true
		}
	}
	for i := range r.Jobs {
		j := &r.Jobs[i]
		if !has[[2]string{j.User, j.Account}] {
			return perr(filepath.Join(r.Dir, "sacct.txt"), j.Line, "Account", "job %s: user %s has no association in account %q in assoc.txt", j.ID, j.User, j.Account)
		}
	}
	return nil
}

var qosColumns = []string{"Name", "Priority", "Preempt", "PreemptMode", "MaxJobsPU", "MaxTRESPU", "GrpTRES"}

// readQOS reads qos.txt when the record has one.
func (r *Record) readQOS() error {
	path, col, rows, ok, err := r.readTable("qos.txt", qosColumns)
	if !ok || err != nil {
		return err
	}
	for i, f := range rows {
		ln := i + 2
		q := QOS{Name: f[col["Name"]], Preempt: f[col["Preempt"]], MaxTRESPU: f[col["MaxTRESPU"]], GrpTRES: f[col["GrpTRES"]], Line: ln}
		if q.Name == "" {
			return perr(path, ln, "Name", "empty")
		}
		if v := f[col["Priority"]]; v != "" {
			if q.Priority, err = strconv.ParseInt(v, 10, 64); err != nil || q.Priority < 0 {
				return perr(path, ln, "Priority", "%q: want 0 or more", v)
			}
		}
		if v := f[col["MaxJobsPU"]]; v != "" {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 0 {
				return perr(path, ln, "MaxJobsPU", "%q: want a count, or empty for none", v)
			}
			q.MaxJobsPU = int(n)
		}
		switch m := strings.ToUpper(f[col["PreemptMode"]]); m {
		case "CLUSTER", "":
		case "OFF", "CANCEL", "REQUEUE":
			q.PreemptMode = m
		default:
			return perr(path, ln, "PreemptMode", "%q: want cluster, off, cancel or requeue", f[col["PreemptMode"]])
		}
		r.QOS = append(r.QOS, q)
	}
	return nil
}

// assocArgs returns the slurm policy's accounts, users and qos arguments
// (flow YAML, for the scenario's policy.args) for the record's tree and
// QOS, or nil when the record has neither. root's own account is the
// tree's root; its user association "root" is kept, as sacctmgr creates
// it (Fair Tree counts it among root's children).
func (r *Record) assocArgs() []string {
	var out []string
	if len(r.Assocs) > 0 {
		var accts, users []string
		for _, a := range r.Assocs {
			switch {
			case a.User != "":
				users = append(users, fmt.Sprintf("{name: %q, account: %q, fairshare: %d}", a.User, a.Account, a.Shares))
			case a.Account != "root":
				accts = append(accts, fmt.Sprintf("{name: %q, parent: %q, fairshare: %d}", a.Account, a.Parent, a.Shares))
			}
		}
		out = append(out, fmt.Sprintf("accounts: [%s]", strings.Join(accts, ", ")), fmt.Sprintf("users: [%s]", strings.Join(users, ", ")))
	}
	if len(r.QOS) > 0 {
		var qs []string
		for _, q := range r.QOS {
			s := fmt.Sprintf("{name: %q, priority: %d", q.Name, q.Priority)
			if q.MaxJobsPU > 0 {
				s += fmt.Sprintf(", MaxJobsPerUser: %d", q.MaxJobsPU)
			}
			for _, kv := range [][2]string{{"MaxTRESPerUser", q.MaxTRESPU}, {"GrpTRES", q.GrpTRES}, {"Preempt", q.Preempt}, {"PreemptMode", q.PreemptMode}} {
				if kv[1] != "" {
					s += fmt.Sprintf(", %s: %q", kv[0], kv[1])
				}
			}
			qs = append(qs, s+"}")
		}
		out = append(out, fmt.Sprintf("qos: [%s]", strings.Join(qs, ", ")))
	}
	return out
}
