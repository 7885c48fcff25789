#!/usr/bin/env bash
# Conformance harness: run a real Slurm 22.05 mini-cluster (4 nodes x 8 GPUs,
# one host, loopback only) and replay a scenario against it.
#
#   conformance/run.sh SCENARIO_FILE OUTPUT_DIR
#
# Needs root and Debian 12 packages (installed here if missing). Every daemon
# it starts is tracked by pid and stopped on exit; a daemon that was already
# running (munged, mariadb) is used and left alone. Exit 2: not root or a
# package could not be installed. See docs/conformance.md.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
die2() { echo "conformance: $*" >&2; exit 2; }
log() { echo "conformance: $(date +%T) $*" >&2; }

[[ $# -eq 2 ]] || { echo "usage: $0 SCENARIO_FILE OUTPUT_DIR" >&2; exit 1; }
SCEN=$(realpath "$1"); OUT=$2
[[ -f $SCEN ]] || { echo "no scenario file $SCEN" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die2 "must run as root (it installs packages and starts slurmctld/slurmd/slurmdbd/munged/mariadb)"

PKGS="slurmctld slurmd slurmdbd slurm-client munge mariadb-server"
need=0
for p in $PKGS; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need=1; done
if [[ $need == 1 ]]; then
  log "installing $PKGS"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || die2 "apt-get update failed"
  apt-get install -y -qq $PKGS >&2 || die2 "cannot install: $PKGS"
fi

mkdir -p "$OUT"; OUT=$(realpath "$OUT")
RUN=$(mktemp -d /tmp/schedsim-conformance.XXXXXX)
chmod 755 "$RUN"   # job users read slurm.conf from here
STARTED=()   # "name:pid" of every daemon started here
cleanup() {
  local rc=$?
  trap '' INT TERM   # let the cleanup finish
  set +e
  if [[ ${#STARTED[@]} -gt 0 ]] && squeue -h -o %i >/dev/null 2>&1; then
    jobs=$(squeue -h -o %i)
    if [[ -n $jobs ]]; then
      log "cancelling jobs left in the queue: $(echo $jobs)"; scancel $jobs
      for _ in $(seq 1 20); do [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break; sleep 0.5; done
    fi
  fi
  # slurmstepd outlives slurmd: find job scripts under $RUN, stop them and their slurmstepd
  for p in /proc/[0-9]*; do
    if tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q "$RUN/spool/"; then
      pid=${p#/proc/}; ppid=$(awk '{print $4}' "$p/stat" 2>/dev/null)
      pgid=$(awk '{print $5}' "$p/stat" 2>/dev/null)
      log "killing leftover job process group $pgid and its slurmstepd $ppid"
      kill -KILL -- "-$pgid" 2>/dev/null; kill -KILL "$ppid" 2>/dev/null
    fi
  done
  for ((i=${#STARTED[@]}-1; i>=0; i--)); do
    local name=${STARTED[i]%%:*} pid=${STARTED[i]##*:}
    if kill -0 "$pid" 2>/dev/null; then
      log "stopping $name (pid $pid)"
      kill -TERM "$pid"
      for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && { log "killing $name (pid $pid)"; kill -KILL "$pid"; }
    fi
  done
  if [[ -d $RUN/log ]]; then mkdir -p "$OUT/logs"; cp "$RUN"/log/*.log "$OUT/logs/" 2>/dev/null; fi
  [[ -f $RUN/jobcomp.txt ]] && cp "$RUN/jobcomp.txt" "$OUT/"
  rm -rf "$RUN"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pidof_file() { local f=$1; for _ in $(seq 1 100); do [[ -s $f ]] && { cat "$f"; return 0; }; sleep 0.1; done; return 1; }

# --- configuration -----------------------------------------------------------
mkdir -p "$RUN"/{etc,state,spool,pid,log,dev}
for i in 0 1 2 3 4 5 6 7; do mknod "$RUN/dev/gpu$i" c 1 3; done
DBPASS=schedsim-conformance
for f in slurm.conf gres.conf slurmdbd.conf; do
  sed -e "s|@RUN@|$RUN|g" -e "s|@DBPASS@|$DBPASS|g" "$HERE/etc/$f.in" > "$RUN/etc/$f"
done
# scenario "conf KEY=VALUE ..." lines replace the template's line with the same
# key (for PartitionName= and NodeName=, the same name), or are appended
sed -n 's/^conf[[:space:]]\+//p' "$SCEN" > "$RUN/etc/conf.scenario"
awk 'function id(l,  f) { split(l, f, /[ \t]+/); k = f[1]; sub(/=.*/, "", k)
       return (k == "PartitionName" || k == "NodeName") ? f[1] : k }
     FILENAME == ARGV[1] { if (NF) { repl[id($0)] = $0; order[++n] = id($0) } next }
     /^[^#]/ && (id($0) in repl) { if (!done[id($0)]++) print repl[id($0)]; next }
     { print }
     END { for (i = 1; i <= n; i++) if (!done[order[i]]++) print repl[order[i]] }' \
  "$RUN/etc/conf.scenario" "$RUN/etc/slurm.conf" > "$RUN/etc/slurm.conf.new"
mv "$RUN/etc/slurm.conf.new" "$RUN/etc/slurm.conf"; rm "$RUN/etc/conf.scenario"
for n in gn1 gn2 gn3 gn4; do mkdir -p "$RUN/spool/$n"; done
chmod 600 "$RUN/etc/slurmdbd.conf"
export SLURM_CONF=$RUN/etc/slurm.conf   # slurmdbd.conf and gres.conf are read next to it
mkdir -p "$OUT/config"
cp "$RUN/etc/slurm.conf" "$RUN/etc/gres.conf" "$OUT/config/"
sed "s|$DBPASS|********|" "$RUN/etc/slurmdbd.conf" > "$OUT/config/slurmdbd.conf"
sed -i "s|$RUN|@RUN@|g" "$OUT"/config/*.conf
cp "$SCEN" "$OUT/scenario.txt"

# users named in the scenario
USERS=$(awk '$1=="job"{print $4} $1=="user"{print $2}' "$SCEN" | sort -u)
for u in $USERS; do id "$u" >/dev/null 2>&1 || useradd -M -s /usr/sbin/nologin "$u"; done

# --- munge -------------------------------------------------------------------
if [[ ! -s /etc/munge/munge.key ]]; then
  log "creating munge key"; mungekey --create --keyfile=/etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
fi
mkdir -p /run/munge /var/log/munge /var/lib/munge; chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! munge -n </dev/null >/dev/null 2>&1; then
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
  STARTED+=("munged:$(pidof_file /run/munge/munged.pid)")
  log "munged started"
fi
munge -n </dev/null | unmunge >/dev/null || die2 "munge does not work"

# --- mariadb -----------------------------------------------------------------
SOCK=/run/mysqld/mysqld.sock
if ! mariadb -uroot --socket=$SOCK -e 'select 1' >/dev/null 2>&1; then
  mkdir -p /run/mysqld; chown mysql:mysql /run/mysqld
  [[ -d /var/lib/mysql/mysql ]] || mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
  /usr/sbin/mariadbd --user=mysql --datadir=/var/lib/mysql --bind-address=127.0.0.1 --port=3306 \
     --socket=$SOCK --pid-file=/run/mysqld/schedsim-conformance.pid --innodb-lock-wait-timeout=900 \
     >"$RUN/log/mariadb.log" 2>&1 &
  STARTED+=("mariadbd:$!")
  for _ in $(seq 1 150); do mariadb -uroot --socket=$SOCK -e 'select 1' >/dev/null 2>&1 && break
    kill -0 "${STARTED[-1]##*:}" 2>/dev/null || { tail -5 "$RUN/log/mariadb.log" >&2; die2 "mariadb did not start"; }; sleep 0.2; done
  log "mariadb started"
fi
# a clean accounting database for every run (job ids restart at 1)
mariadb -uroot --socket=$SOCK <<SQL
DROP DATABASE IF EXISTS schedsim_conformance_acct;
CREATE DATABASE schedsim_conformance_acct;
CREATE USER IF NOT EXISTS 'schedsim_slurm'@'localhost' IDENTIFIED BY '$DBPASS';
GRANT ALL ON schedsim_conformance_acct.* TO 'schedsim_slurm'@'localhost';
FLUSH PRIVILEGES;
SQL

# --- slurmdbd, accounts --------------------------------------------------------
/usr/sbin/slurmdbd
STARTED+=("slurmdbd:$(pidof_file "$RUN/pid/slurmdbd.pid")")
for _ in $(seq 1 100); do sacctmgr -n show cluster >/dev/null 2>&1 && break; sleep 0.2; done
sacctmgr -i add cluster conformance >/dev/null
# "account NAME PARENT FAIRSHARE" and "user NAME ACCOUNT FAIRSHARE" lines make
# the association tree; without them every user is in account "research"
if grep -q '^account[[:space:]]' "$SCEN"; then
  while read -r _ a parent sh; do
    sacctmgr -i add account "$a" parent="$parent" fairshare="$sh" Description=conformance Organization=schedsim >/dev/null
  done < <(awk '$1=="account"' "$SCEN")
  while read -r _ u a sh; do sacctmgr -i add user "$u" account="$a" fairshare="$sh" >/dev/null; done < <(awk '$1=="user"' "$SCEN")
else
  sacctmgr -i add account research Description=conformance Organization=schedsim >/dev/null
  for u in $USERS; do sacctmgr -i add user "$u" account=research >/dev/null; done
fi
# the association tree and the QOS, as the replay's fair-share tree reads them
sacctmgr show assoc -P format=Cluster,Account,User,Partition,ParentName,Share,QOS > "$OUT/assoc.txt"
sacctmgr show qos -P format=Name,Priority,Preempt,PreemptMode,MaxJobsPU,MaxTRESPU,GrpTRES > "$OUT/qos.txt"
log "slurmdbd up, accounts created"

# --- slurmctld, slurmd ----------------------------------------------------------
/usr/sbin/slurmctld -c
STARTED+=("slurmctld:$(pidof_file "$RUN/pid/slurmctld.pid")")
for n in gn1 gn2 gn3 gn4; do
  /usr/sbin/slurmd -N "$n"
  STARTED+=("slurmd-$n:$(pidof_file "$RUN/pid/slurmd.$n.pid")")
done
for i in $(seq 1 120); do
  idle=$(sinfo -h -N -p batch -o '%N %T' 2>/dev/null | awk '$2=="idle"' | wc -l)
  [[ $idle -eq 4 ]] && break
  [[ $i -eq 120 ]] && { sinfo -N -l >&2; die2 "nodes not idle after 60 s"; }
  sleep 0.5
done
log "4 nodes idle"
sinfo -N -o '%N %T %G %c %m' > "$OUT/sinfo.txt"
# the time-limit sweep and the priority recalculation are timed from here
CTLD=$(sed -n 's/^\[\([0-9T:.-]*\)\] Running as primary controller.*/\1/p' "$RUN/log/slurmctld.log" | head -1)
{ echo "date: $(date -u +%FT%TZ)"; echo "host_nproc: $(nproc)"; echo "loadavg_before: $(cut -d' ' -f1-3 /proc/loadavg)";
  echo "slurm: $(slurmctld -V)"; echo "ctld_primary_epoch: $(date -d "$CTLD" +%s.%N 2>/dev/null)"; } > "$OUT/run-info.txt"

# --- replay ---------------------------------------------------------------------------
T0=$("$HERE/replay.sh" "$SCEN" "$OUT")
echo "loadavg_after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/run-info.txt"
echo "t0_epoch: $T0" >> "$OUT/run-info.txt"

# --- records -------------------------------------------------------------------------
sleep 2   # let slurmctld flush the last job records to slurmdbd
FIELDS=JobID,JobIDRaw,JobName,User,Account,Partition,State,ExitCode,Submit,Eligible,Start,End,Elapsed,Timelimit,NNodes,NCPUS,AllocTRES,ReqTRES,NodeList,Priority,Flags,Reason
S=$(date -d @$((T0-60)) +%FT%T)
sacct -a -X -P -S "$S" -E now -o $FIELDS > "$OUT/sacct.txt"
sacct -a -X -D -P -S "$S" -E now -o $FIELDS > "$OUT/sacct-D.txt"
cmp -s "$OUT/sacct.txt" "$OUT/sacct-D.txt" && rm "$OUT/sacct-D.txt"
NJOBS=$(($(wc -l < "$OUT/sacct.txt")-1))
cat > "$OUT/README.md" <<README
# $(basename "$(dirname "$OUT")")/$(basename "$OUT" .new)

Recorded by \`conformance/run.sh\` on real Slurm ($(slurmctld -V)) on $(date -u +%F),
4 nodes x 8 GPUs on one host ($(nproc) CPUs, shared with other work).

- jobs: $NJOBS; replay (first submission to empty queue): $(( $(date +%s) - T0 - 2 )) s
- load average before: $(sed -n 's/loadavg_before: //p' "$OUT/run-info.txt"); after: $(sed -n 's/loadavg_after: //p' "$OUT/run-info.txt")
- configuration: \`config/\` (the temp dir is written \`@RUN@\`); scenario: \`scenario.txt\`
- \`sacct.txt\`: \`sacct -a -X -P\`; \`submissions.tsv\`: the exact sbatch lines and submit times
README
log "recorded $NJOBS jobs in $OUT"
