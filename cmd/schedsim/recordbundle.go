package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedsim/schedsim/cmd/schedsim/internal/conformance"
	"github.com/schedsim/schedsim/hwmodels"
	"github.com/schedsim/schedsim/traces"
)

// recordBundle makes the records bundle a production cluster's
// collection script would have written for a conformance record
// (conformance/records/SCENARIO/runN), without its ground truth
// (submissions.tsv): sacct -D with the SubmitLine column sacct would show
// (sbatch's argv joined by single spaces, unquoted: what
// slurm_option_get_argv_str writes), scontrol show config with slurmctld's
// BOOT_TIME and the settings in effect, slurm.conf and gres.conf, the
// association tree conformance/run.sh made (account research under root,
// every user in it, one share each, as sacctmgr add gives them), the
// default QOS, the node events slurmdbd records for the scenario's
// scontrol update commands, and the reservations it created. Where the
// record holds sacctmgr's own assoc.txt and qos.txt (run.sh writes them
// for scenarios with accounts), those are the bundle's.
// With noSubmitLine the sacct lacks that column, as on a Slurm before
// 21.08.
func recordBundle(r *conformance.Record, noSubmitLine bool) (map[string][]byte, error) {
	files := map[string][]byte{}
	sacctPath := filepath.Join(r.Dir, "sacct-D.txt")
	if _, err := os.Stat(sacctPath); err != nil {
		sacctPath = filepath.Join(r.Dir, "sacct.txt")
	}
	sacct, err := os.ReadFile(sacctPath)
	if err != nil {
		return nil, err
	}
	cmds, err := submitCommands(filepath.Join(r.Dir, "submissions.tsv"))
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(string(sacct), "\n"), "\n")
	header := lines[0]
	if noSubmitLine {
		files["sacct.txt"] = sacct
	}
	b.WriteString(header + "|SubmitLine\n")
	for i, l := range lines[1:] {
		id, _, _ := strings.Cut(l, "|")
		base, _, _ := strings.Cut(id, "_")
		cmd, ok := cmds[base]
		if !ok {
			return nil, fmt.Errorf("%s:%d: job %s has no sbatch line in submissions.tsv", sacctPath, i+2, id)
		}
		b.WriteString(l + "|" + cmd + "\n")
	}
	if !noSubmitLine {
		files["sacct.txt"] = []byte(b.String())
	}
	conf := strings.ReplaceAll(string(r.SlurmConf), "@RUN@", "/nonexistent")
	files["conf/slurm.conf"] = []byte(conf)
	files["conf/gres.conf"] = []byte(strings.ReplaceAll(string(r.GresConf), "@RUN@", "/nonexistent"))
	files["scontrol-config.txt"] = []byte(scontrolConfig(r, conf))
	users := map[string]bool{}
	for _, j := range r.Jobs {
		users[j.User] = true
	}
	var a strings.Builder
	a.WriteString("Cluster|Account|User|Partition|ParentName|Share|Priority|GrpTRES|MaxTRES|MaxJobs|MaxSubmit|MaxWall|QOS|DefaultQOS|Lft|Rgt|ID|ParentID\n")
	row := func(account, user, parent string, id, parentID int) {
		pid := ""
		if parentID > 0 {
			pid = fmt.Sprint(parentID)
		}
		// Cluster|Account|User|Partition|ParentName|Share|Priority|GrpTRES|MaxTRES|MaxJobs|MaxSubmit|MaxWall|QOS|DefaultQOS|Lft|Rgt|ID|ParentID
		f := []string{"conformance", account, user, "", parent, "1", "", "", "", "", "", "", "normal", "", "", "", fmt.Sprint(id), pid}
		a.WriteString(strings.Join(f, "|") + "\n")
	}
	row("root", "", "", 1, 0)
	row("root", "root", "", 2, 1)
	row("research", "", "root", 3, 1)
	us := make([]string, 0, len(users))
	for u := range users {
		us = append(us, u)
	}
	slices.Sort(us)
	for k, u := range us {
		row("research", u, "", 4+k, 3)
	}
	files["assoc.txt"] = []byte(a.String())
	// A record that kept sacctmgr's own tables (the generated scenarios,
	// with accounts and shares of their own) gives them as they are.
	for _, name := range []string{"assoc.txt", "qos.txt"} {
		if data, err := os.ReadFile(filepath.Join(r.Dir, name)); err == nil {
			files[name] = data
		}
	}
	if _, ok := files["qos.txt"]; !ok {
		files["qos.txt"] = []byte("Name|Priority|Flags|Preempt|PreemptMode|GraceTime|UsageFactor|UsageThreshold|GrpTRES|MaxTRES|MaxTRESPU|MaxJobsPU|MaxSubmitPU|MaxWall|MinTRES\n" +
			strings.Join([]string{"normal", "0", "", "", "cluster", "00:00:00", "1.000000", "", "", "", "", "", "", "", ""}, "|") + "\n")
	}
	ev, err := eventTable(r)
	if err != nil {
		return nil, err
	}
	files["event.txt"] = []byte(ev)
	var rv strings.Builder
	rv.WriteString("Cluster|Name|NodeName|TimeStart|TimeEnd|Flags\n")
	for _, x := range r.Reservations {
		fmt.Fprintf(&rv, "conformance|%s|%s|%s|%s|MAINT,IGNORE_JOBS,SPEC_NODES\n", x.Name, x.Nodes, clock(float64(x.Start)), clock(float64(x.End)))
	}
	files["reservation.txt"] = []byte(rv.String())
	files["manifest.txt"] = []byte(fmt.Sprintf("schedsim_records_bundle: 1\ncollected: made from the conformance record %s (submissions.tsv left out)\nwindow_start_epoch: %d\ncluster: conformance\nslurm_version: slurm 22.05.8\nslurm_conf: /etc/slurm/slurm.conf\nsacct_fields: %s,SubmitLine\n",
		r.Dir, r.T0, strings.ReplaceAll(header, "|", ",")))
	return files, nil
}

// submitCommands reads submissions.tsv's sbatch lines by job id, as
// sacct's SubmitLine shows them: argv joined by spaces, so the quotes
// around --wrap's script are gone.
func submitCommands(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if i == 0 {
			continue
		}
		f := strings.Split(l, "\t")
		if len(f) != 5 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 5", path, i+1, len(f))
		}
		out[f[1]] = strings.ReplaceAll(f[4], "'", "")
	}
	return out, nil
}

func clock(t float64) string {
	return time.Unix(int64(math.Floor(t)), 0).UTC().Format("2006-01-02T15:04:05")
}

// scontrolConfig writes the lines of scontrol show config the replay
// reads: BOOT_TIME (slurmctld's start, the record's ctld_primary_epoch
// in whole seconds) and the settings in effect, slurm.conf's or Slurm
// 22.05's defaults, as scontrol prints them.
func scontrolConfig(r *conformance.Record, conf string) string {
	get := func(key, def string) string {
		val := def
		for l := range strings.SplitSeq(conf, "\n") {
			l, _, _ = strings.Cut(l, "#")
			k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
			if ok && strings.EqualFold(k, key) {
				val = strings.TrimSpace(v)
			}
		}
		return val
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Configuration data as of %s\n", clock(float64(r.T0)))
	line := func(k, v string) { fmt.Fprintf(&b, "%-23s = %s\n", k, v) }
	if r.CtldPrimary > 0 {
		line("BOOT_TIME", clock(r.CtldPrimary))
	}
	line("ClusterName", get("ClusterName", "conformance"))
	line("DefCpuPerGPU", get("DefCpuPerGPU", "0"))
	line("JobRequeue", get("JobRequeue", "1"))
	line("KillWait", get("KillWait", "30")+" sec")
	line("OverTimeLimit", get("OverTimeLimit", "0")+" min")
	pcp := get("PriorityCalcPeriod", "5")
	var m int
	fmt.Sscanf(pcp, "%d", &m)
	line("PriorityCalcPeriod", fmt.Sprintf("%02d:%02d:00", m/60, m%60))
	line("PriorityType", get("PriorityType", "priority/basic"))
	line("PreemptMode", get("PreemptMode", "OFF"))
	line("PreemptType", get("PreemptType", "preempt/none"))
	line("SchedulerParameters", get("SchedulerParameters", "(null)"))
	line("SelectType", get("SelectType", "select/cons_tres"))
	line("SLURM_CONF", "/etc/slurm/slurm.conf")
	line("SLURM_VERSION", "22.05.8")
	return b.String()
}

// eventTable writes sacctmgr show event -P's rows for the record's node
// commands: one per node, from its down or drain to the resume that ends
// it (TimeEnd Unknown when none does).
func eventTable(r *conformance.Record) (string, error) {
	var b strings.Builder
	b.WriteString("Cluster|ClusterNodes|NodeName|TimeStart|TimeEnd|State|Reason|User|Duration\n")
	type open struct {
		at    float64
		state string
	}
	cur := map[string]open{}
	var names []string
	flush := func(n string, end float64) {
		o := cur[n]
		e := "Unknown"
		dur := ""
		if end > 0 {
			e = clock(end)
			d := int64(math.Floor(end)) - int64(math.Floor(o.at))
			dur = fmt.Sprintf("%02d:%02d:%02d", d/3600, d/60%60, d%60)
		}
		fmt.Fprintf(&b, "conformance||%s|%s|%s|%s|conformance|root(0)|%s\n", n, clock(o.at), e, strings.ToUpper(o.state), dur)
		delete(cur, n)
	}
	for _, ev := range r.NodeEvents {
		nodes, err := hwmodels.ExpandHostlist(ev.Nodes)
		if err != nil {
			return "", err
		}
		for _, n := range nodes {
			if _, ok := cur[n]; ok {
				flush(n, ev.At)
			}
			if ev.State != "resume" {
				cur[n] = open{at: ev.At, state: ev.State}
				names = append(names, n)
			}
		}
	}
	for _, n := range names {
		if _, ok := cur[n]; ok {
			flush(n, 0)
		}
	}
	return b.String(), nil
}

func newConformanceBundleCmd() *cobra.Command {
	var noSubmitLine bool
	cmd := &cobra.Command{
		Use:   "bundle RUN_DIR OUT_DIR",
		Short: "Write the records bundle a recorded run's cluster would have collected, without its sbatch lines",
		Long: `Write the records bundle (docs/collect.md) that scripts/collect-slurm-records.sh
would have gathered on the mini-cluster of a recorded run: sacct -D with
the SubmitLine sbatch wrote, scontrol show config, slurm.conf and
gres.conf, the association tree, the default QOS, the node events and
reservations as slurmdbd records them. The ground truth (submissions.tsv)
stays out: schedsim validate OUT_DIR replays from what Slurm keeps
(docs/validate.md).`,
		Example: `  schedsim conformance bundle conformance/records/mixed-load/run1 results/mixed-load-bundle
  schedsim validate results/mixed-load-bundle`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			rec, err := conformance.LoadRecord(args[0])
			if err != nil {
				return badInput(err)
			}
			files, err := recordBundle(rec, noSubmitLine)
			if err != nil {
				return badInput(err)
			}
			out := args[1]
			if _, err := os.Stat(out); err == nil {
				return badInput(fmt.Errorf("%s exists: give a new directory", out))
			}
			names := make([]string, 0, len(files))
			for n := range files {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				p := filepath.Join(out, filepath.FromSlash(n))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err
				}
				data := files[n]
				if err := traces.WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%s)\n", out, strings.Join(names, ", "))
			return nil
		},
	}
	cmd.Flags().BoolVar(&noSubmitLine, "no-submit-line", false, "leave out the SubmitLine column, as a Slurm before 21.08 has none")
	return cmd
}
