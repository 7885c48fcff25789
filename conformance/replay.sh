#!/usr/bin/env bash
# Replay a scenario against a running Slurm (SLURM_CONF set): submit each
# "job" line at its time, then wait until the queue is empty.
#   replay.sh SCENARIO OUTPUT_DIR   -> prints the epoch of time 0 on stdout;
#   writes OUTPUT_DIR/submissions.tsv (name, jobid, at, submit epoch, command).
# Line format (see conformance/scenarios/*.txt):
#   job AT NAME USER PARTITION NODES GPUS_PER_NODE LIMIT_MIN SLEEP_S [dep=TYPE:NAME[:NAME..]] [array=SPEC] [requeue] [--sbatch-flag..]
#       SLEEP_S may end in "!" (e.g. 10!): the job exits 1 after sleeping (FAILED).
#   cmd AT COMMAND...   run COMMAND as root with bash at AT; @T+N@ in it becomes
#                       the wall-clock time of time 0 + N s (2006-01-02T15:04:05).
#                       Writes OUTPUT_DIR/events.tsv (at, epoch, rc, command, output).
#   conf KEY=VALUE...   (set in slurm.conf by run.sh)
#   wait_max SECONDS    (give up waiting for the queue after this; default 600)
#   account NAME PARENT FAIRSHARE, user NAME ACCOUNT FAIRSHARE
#                       (the sacctmgr association tree, made by run.sh; a user's
#                       jobs are submitted with --account=ACCOUNT, else research)
set -euo pipefail
SCEN=$1; OUT=$2
declare -A ID ACCT
# "user NAME ACCOUNT FAIRSHARE" lines: the account a user's jobs are charged to
while read -r _ u a _; do ACCT[$u]=$a; done < <(awk '$1=="user"' "$SCEN")
WAITMAX=$(awk '$1=="wait_max"{print $2}' "$SCEN" | tail -1); WAITMAX=${WAITMAX:-600}
printf 'name\tjobid\tat\tsubmit_epoch\tcommand\n' > "$OUT/submissions.tsv"
printf 'at\tepoch\trc\tcommand\toutput\n' > "$OUT/events.tsv"
T0=$(date +%s)
# wait for a whole second boundary so "at" offsets line up with sacct seconds
while [[ $(date +%s) == "$T0" ]]; do sleep 0.02; done; T0=$(date +%s)
while IFS= read -r line; do
  read -r kw at name user part nodes gpn limit sleep rest <<< "$line"
  if [[ $kw == cmd ]]; then
    cmd=${line#*cmd}; cmd=${cmd#"${cmd%%[![:space:]]*}"}; cmd=${cmd#"$at"}; cmd=${cmd#"${cmd%%[![:space:]]*}"}
    while [[ $cmd =~ @T\+([0-9]+)@ ]]; do
      cmd=${cmd//"${BASH_REMATCH[0]}"/$(date -d @$((T0+BASH_REMATCH[1])) +%FT%T)}; done
    target=$((T0+at))
    while (( $(date +%s%N) < target*1000000000 )); do sleep 0.02; done
    ts=$(date +%s.%N)
    set +e; cout=$(bash -c "$cmd" 2>&1); rc=$?; set -e
    printf '%s\t%s\t%s\t%s\t%s\n' "$at" "$ts" "$rc" "$cmd" "$(echo "$cout" | tr '\n\t' '  ')" >> "$OUT/events.tsv"
    echo "replay: $(date +%T) t+$((${ts%.*}-T0)) cmd (rc $rc): $cmd" >&2
    continue
  fi
  [[ $kw == job ]] || continue
  wrap="sleep $sleep"
  [[ $sleep == *! ]] && wrap="sleep ${sleep%!}; exit 1"
  args=(--parsable --job-name="$name" --partition="$part" --nodes="$nodes" --gpus-per-node="$gpn"
        --time="$limit" --chdir=/tmp --output=/dev/null --error=/dev/null --account="${ACCT[$user]:-research}")
  for opt in $rest; do
    case $opt in
      dep=*) spec=${opt#dep=}; type=${spec%%:*}; deps=$type
             if [[ $spec == *:* ]]; then
               IFS=: read -ra names <<< "${spec#*:}"
               for d in "${names[@]}"; do deps+=":${ID[$d]:?unknown dependency $d}"; done; fi
             args+=(--dependency="$deps") ;;
      array=*) args+=(--array="${opt#array=}") ;;
      requeue) args+=(--requeue) ;;
      norequeue) args+=(--no-requeue) ;;
      --*) args+=("$opt") ;;
      *) echo "replay: unknown option $opt" >&2; exit 1 ;;
    esac
  done
  now=$(date +%s); target=$((T0+at))
  while (( $(date +%s%N) < target*1000000000 )); do sleep 0.02; done
  ts=$(date +%s.%N)
  jid=$(runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" sbatch "${args[@]}" --wrap "$wrap")
  jid=${jid%%;*}; ID[$name]=$jid
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$jid" "$at" "$ts" "sbatch ${args[*]} --wrap '$wrap'" >> "$OUT/submissions.tsv"
  echo "replay: $(date +%T) t+$((${ts%.*}-T0)) $name -> $jid" >&2
done < <(grep -E '^(job|cmd)[[:space:]]' "$SCEN" | sort -s -n -k2,2)
for i in $(seq 1 "$WAITMAX"); do
  [[ -z $(squeue -h -o %i) ]] && break
  (( i % 15 == 0 )) && echo "replay: $(date +%T) t+$(($(date +%s)-T0)) queue: $(squeue -h -o '%j:%T' | tr '\n' ' ')" >&2
  sleep 1
done
[[ -z $(squeue -h -o %i) ]] || { echo "replay: queue not empty after $WAITMAX s" >&2; squeue >&2; }
echo "$T0"
