package conformance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schedsim/schedsim/traces"
)

// A record's assoc.txt (`sacctmgr show assoc -P
// format=Cluster,Account,User,Partition,ParentName,Share,QOS`) and
// qos.txt (`sacctmgr show qos -P
// format=Name,Priority,Preempt,PreemptMode,MaxJobsPU,MaxTRESPU,GrpTRES`)
// are read by the traces package's sacctmgr reader, the one validate
// BUNDLE reads a records bundle's with; the replay adds what a record,
// made on a mini-cluster the harness set up, must also hold: the tree
// in sacctmgr's order (a parent before its children), raw shares, no
// per-partition associations, and preempt modes the policy has.

// assocColumns and qosColumns are the columns run.sh records.
var (
	assocColumns = []string{"Cluster", "Account", "User", "Partition", "ParentName", "Share", "QOS"}
	qosColumns   = []string{"Name", "Priority", "Preempt", "PreemptMode", "MaxJobsPU", "MaxTRESPU", "GrpTRES"}
)

// readTable reads a sacctmgr -P table of the record with the columns
// want: ok is false when the file does not exist (records made before
// run.sh recorded it).
func (r *Record) readTable(name string, want []string) (t *traces.SacctmgrTable, ok bool, err error) {
	path := filepath.Join(r.Dir, name)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	defer f.Close()
	t, err = traces.ReadSacctmgr(f, path, want)
	if err != nil {
		return nil, false, recordError(err)
	}
	return t, true, nil
}

// recordError gives a traces reader's error as the record's *ParseError,
// with the same message.
func recordError(err error) error {
	var pe *traces.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	msg := pe.Error()
	prefix := fmt.Sprintf("%s:%d: ", pe.Path, pe.Line)
	if pe.Field != "" {
		prefix += pe.Field + ": "
	}
	return &ParseError{Path: pe.Path, Line: pe.Line, Field: pe.Field, Err: errors.New(strings.TrimPrefix(msg, prefix))}
}

// readAssoc reads assoc.txt when the record has one (records made before
// the harness recorded the tree have none: the replay then derives the
// tree from the jobs, shares 1, as the policy does without accounts).
func (r *Record) readAssoc() error {
	t, ok, err := r.readTable("assoc.txt", assocColumns)
	if !ok || err != nil {
		return err
	}
	as, err := traces.ParseAssoc(t)
	if err != nil {
		return recordError(err)
	}
	path := t.Path
	accounts := map[string]bool{}
	users := map[[2]string]bool{}
	for _, a := range as {
		ln := a.Line
		if a.Partition != "" {
			return perr(path, ln, "Partition", "%q: per-partition associations are not modeled by the replay", a.Partition)
		}
		if a.Shares < 0 {
			// sacctmgr prints "parent" for an association that uses its
			// parent's share, which the policy's tree does not model.
			return perr(path, ln, "Share", "%q: want a raw share (0 or more)", "parent")
		}
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
	}
	r.Assocs = as
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

// readQOS reads qos.txt when the record has one.
func (r *Record) readQOS() error {
	t, ok, err := r.readTable("qos.txt", qosColumns)
	if !ok || err != nil {
		return err
	}
	qs, err := traces.ParseQOS(t)
	if err != nil {
		return recordError(err)
	}
	for i := range qs {
		q := &qs[i]
		switch m := strings.ToUpper(q.PreemptMode); m {
		case "CLUSTER", "":
			q.PreemptMode = ""
		case "OFF", "CANCEL", "REQUEUE":
			q.PreemptMode = m
		default:
			return perr(t.Path, q.Line, "PreemptMode", "%q: want cluster, off, cancel or requeue", q.PreemptMode)
		}
	}
	r.QOS = qs
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
				users = append(users, fmt.Sprintf("{name: %q, account: %q, fairshare: %s}", a.User, a.Account, shares(a.Shares)))
			case a.Account != "root":
				accts = append(accts, fmt.Sprintf("{name: %q, parent: %q, fairshare: %s}", a.Account, a.Parent, shares(a.Shares)))
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
			for _, kv := range [][2]string{{"MaxTRESPerUser", q.MaxTRESPU}, {"GrpTRES", q.GrpTRES}, {"Preempt", strings.Join(q.Preempt, ",")}, {"PreemptMode", q.PreemptMode}} {
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

// shares writes a raw share as the policy's YAML reads it.
func shares(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
