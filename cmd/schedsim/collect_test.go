package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// collectStubs writes fake sacct, scontrol, sacctmgr and sshare into a
// directory for scripts/collect-slurm-records.sh: each logs its arguments
// to calls.log and prints a small fixed answer. sshare fails (exit 1), as
// it does for a user without the right to see every association.
func collectStubs(t *testing.T, conf string, sacctFails bool) (bin, calls string) {
	t.Helper()
	bin = t.TempDir()
	calls = filepath.Join(bin, "calls.log")
	sacctRC := "0"
	if sacctFails {
		sacctRC = "1"
	}
	stubs := map[string]string{
		// This sacct is a 21.08-like one without SubmitLine.
		"sacct": `case "$*" in
*--helpformat*) echo "Account AllocCPUS AllocTRES Elapsed ElapsedRaw Eligible End ExitCode Flags JobID JobIDRaw JobName NCPUS NNodes NodeList Partition Priority QOS Reason ReqCPUS ReqMem ReqNodes ReqTRES Start State Submit Timelimit TimelimitRaw User"; exit 0;;
*--version*) echo "slurm 22.05.8"; exit 0;;
esac
[ ` + sacctRC + ` = 0 ] || { echo "sacct: error: Problem talking to the database: Connection refused" >&2; exit 1; }
echo "JobID|JobIDRaw|JobName"
echo "1|1|a"
echo "2|2|b"`,
		"scontrol": `case "$*" in
"show config") echo "ClusterName             = minicluster"; echo "SLURM_CONF              = ` + conf + `";;
*--version*) echo "slurm 22.05.8";;
*) echo "NodeName=gn1 State=IDLE";;
esac`,
		"sacctmgr": `case "$*" in
*assoc*) echo "minicluster|root||||1|||||||||1|10|1|0";;
*qos*) echo "normal|0||||00:00:00|1.000000||||||||";;
*event*) echo "minicluster||gn1|2026-11-30T09:00:00|2026-11-30T09:05:00|DOWN|test|root|00:05:00";;
*reservation*) echo "minicluster|maint|gn1|2026-11-30T10:00:00|2026-11-30T11:00:00|MAINT";;
esac`,
		"sshare": `echo "sshare: error: permission denied" >&2; exit 1`,
	}
	for name, body := range stubs {
		script := "#!/usr/bin/env bash\necho \"" + name + " $*\" >> " + calls + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin, calls
}

// collectConf writes a slurm.conf that Includes a relative file, a glob,
// an absolute path and itself (a loop), with gres.conf and topology.conf
// beside it.
func collectConf(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"slurm.conf":          "ClusterName=minicluster\nInclude nodes.conf\ninclude parts/*.conf # partitions\nInclude slurm.conf\n",
		"nodes.conf":          "NodeName=gn[1-4] Gres=gpu:8\n",
		"parts/batch.conf":    "PartitionName=batch Nodes=ALL Default=YES\n",
		"parts/high.conf":     "PartitionName=high Nodes=ALL PriorityTier=2\n",
		"gres.conf":           "Name=gpu File=/dev/nvidia[0-7]\n",
		"topology.conf":       "SwitchName=s0 Nodes=gn[1-4]\n",
		"slurmdbd.conf":       "StoragePass=secret\n",
		"parts/unrelated.txt": "not included\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "slurm.conf")
}

func runCollect(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	cmd := exec.Command("bash", append([]string{filepath.Join("..", "..", "scripts", "collect-slurm-records.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

func TestCollectSlurmRecords(t *testing.T) {
	conf := collectConf(t)
	bin, calls := collectStubs(t, conf, false)
	out := filepath.Join(t.TempDir(), "bundle")
	msg, rc := runCollect(t, bin, "-S", "2026-11-01", "-E", "2026-12-01", "-o", out)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, msg)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// Every included file is copied at its place relative to slurm.conf;
	// the loop (slurm.conf including itself) is followed once; files that
	// nothing includes, and slurmdbd.conf with its password, are not.
	for _, f := range []string{"conf/slurm.conf", "conf/nodes.conf", "conf/parts/batch.conf", "conf/parts/high.conf", "conf/gres.conf", "conf/topology.conf"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not collected: %v", f, err)
		}
	}
	for _, f := range []string{"conf/slurmdbd.conf", "conf/parts/unrelated.txt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("%s collected, want not", f)
		}
	}
	if got := read("sacct.txt"); got != "JobID|JobIDRaw|JobName\n1|1|a\n2|2|b\n" {
		t.Errorf("sacct.txt = %q", got)
	}
	log, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	// sacct is asked for every run (-D) of every user's jobs over the
	// window, for the fields this sacct knows, SubmitLine left out.
	var sacctCall string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.HasPrefix(l, "sacct -a") {
			sacctCall = l
		}
	}
	if !strings.Contains(sacctCall, "-a -X -D -P -S 2026-11-01 -E 2026-12-01 -o JobID,JobIDRaw,JobName,User,Account,Partition,QOS,State,ExitCode,Reason,Priority,Submit,Eligible,Start,End,Elapsed,ElapsedRaw,Timelimit,TimelimitRaw,ReqCPUS,AllocCPUS,NCPUS,ReqNodes,NNodes,") {
		t.Errorf("sacct call = %q", sacctCall)
	}
	if strings.Contains(sacctCall, "SubmitLine") {
		t.Errorf("sacct asked for SubmitLine, which this sacct lacks: %q", sacctCall)
	}
	man := read("manifest.txt")
	for _, want := range []string{
		"schedsim_records_bundle: 1\n",
		"window_start: 2026-11-01\n",
		"cluster: minicluster\n",
		"slurm_version: slurm 22.05.8\n",
		"sacct_rows: 2\n",
		"SubmitLine", // among the missing fields
		"1\tsshare\tsshare -a -l -P\n",
	} {
		if !strings.Contains(man, want) {
			t.Errorf("manifest lacks %q:\n%s", want, man)
		}
	}
	if !strings.Contains(read("assoc.txt"), "Cluster|Account|User|Partition|ParentName|Share") {
		t.Errorf("assoc.txt has no header")
	}
	if r := read("reservation.txt"); !strings.HasPrefix(r, "Cluster|Name|NodeName|TimeStart|TimeEnd|Flags\n") || !strings.Contains(r, "|maint|gn1|") {
		t.Errorf("reservation.txt: %q", r)
	}
	if !strings.Contains(read("event.txt"), "|gn1|2026-11-30T09:00:00|") {
		t.Errorf("event.txt lacks the event")
	}
	if !strings.Contains(read("sshare.txt.stderr"), "permission denied") {
		t.Errorf("sshare's stderr not kept")
	}
	// The manifest's sums are those of the files.
	sacctText := read("sacct.txt")
	sum := sha256.Sum256([]byte(sacctText))
	if !strings.Contains(man, fmt.Sprintf("sacct.txt\t%d\t%s", len(sacctText), hex.EncodeToString(sum[:]))) {
		t.Errorf("manifest lacks sacct.txt's size and sum:\n%s", man)
	}

	// A second collection into the same directory is refused.
	if msg, rc := runCollect(t, bin, "-o", out); rc != 2 || !strings.Contains(msg, "exists") {
		t.Errorf("second run into %s: exit %d, %q", out, rc, msg)
	}
}

func TestCollectSlurmRecordsTar(t *testing.T) {
	conf := collectConf(t)
	bin, _ := collectStubs(t, conf, false)
	out := filepath.Join(t.TempDir(), "bundle")
	if msg, rc := runCollect(t, bin, "-o", out, "--tar"); rc != 0 {
		t.Fatalf("exit %d: %s", rc, msg)
	}
	if _, err := os.Stat(out + ".tar.gz"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("left beside the tarball: %v", entries)
	}
}

func TestCollectSlurmRecordsSacctFails(t *testing.T) {
	conf := collectConf(t)
	bin, _ := collectStubs(t, conf, true)
	dir := t.TempDir()
	msg, rc := runCollect(t, bin, "-o", filepath.Join(dir, "bundle"))
	if rc != 2 || !strings.Contains(msg, "sacct failed") {
		t.Errorf("exit %d, %q; want 2 and the reason", rc, msg)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed collection left %v", entries)
	}
	if _, rc := runCollect(t, bin, "-x"); rc != 2 {
		t.Errorf("unknown argument: exit %d, want 2", rc)
	}
}
