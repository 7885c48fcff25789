#!/usr/bin/env bash
# Record generated conformance scenarios on a real Slurm, one run at a time:
#   conformance/record-gen.sh RUN SEED...     (e.g. record-gen.sh 1 1 2 3)
# For each seed, writes conformance/scenarios/gen-SEED.txt with
# `schedsim conformance gen` (SCHEDSIM: the binary, default schedsim on
# PATH) when it is missing, and records it into records/gen-SEED/runRUN
# (replaced). COMMIT=1 commits each finished record (git add + commit), so a
# long session keeps what it has. Needs root, like run.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SCHEDSIM=${SCHEDSIM:-schedsim}
[[ $# -ge 2 ]] || { echo "usage: $0 RUN SEED..." >&2; exit 1; }
run=$1; shift
for seed in "$@"; do
  scen=$HERE/scenarios/gen-$seed.txt
  [[ -f $scen ]] || "$SCHEDSIM" conformance gen --seed "$seed" --out "$scen"
  if pgrep -x slurmctld >/dev/null; then echo "record-gen: a slurmctld is running; not starting another" >&2; exit 1; fi
  out=$HERE/records/gen-$seed/run$run
  rm -rf "$out.new"
  echo "record-gen: $(date -u +%T) gen-$seed run$run" >&2
  "$HERE/run.sh" "$scen" "$out.new"
  rm -rf "$out"; mv "$out.new" "$out"
  if [[ ${COMMIT:-0} == 1 ]]; then
    for try in 1 2 3 4 5 6; do  # another git command may hold the index lock
      (cd "$HERE/.." && git add "conformance/scenarios/gen-$seed.txt" "conformance/records/gen-$seed/run$run" &&
     git commit -q -m "conformance: record gen-$seed run$run on real Slurm" \
       -m "Recorded by conformance/record-gen.sh $run $seed (run.sh, Slurm 22.05.8)." -- \
       "conformance/scenarios/gen-$seed.txt" "conformance/records/gen-$seed/run$run") && break
      echo "record-gen: commit failed (try $try)" >&2; sleep 5
    done
  fi
done
