#!/usr/bin/env bash
# Record every conformance scenario twice on a real Slurm (see docs/conformance.md):
#   conformance/record-all.sh [SCENARIO_NAME...]    (make conformance)
# Each scenario's records/NAME/run1 and run2 are replaced. RUNS=1 records
# run1 only. Needs root, like run.sh; run it on a quiet machine (the load
# average before and after each run is kept in its run-info.txt).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=${RUNS:-2}
names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  for f in "$HERE"/scenarios/*.txt; do names+=("$(basename "$f" .txt)"); done
fi
for run in $(seq 1 "$RUNS"); do
  for n in "${names[@]}"; do
    [[ -f $HERE/scenarios/$n.txt ]] || { echo "record-all: no scenario $n" >&2; exit 1; }
    out=$HERE/records/$n/run$run
    rm -rf "$out.new"
    echo "record-all: $n run$run" >&2
    "$HERE/run.sh" "$HERE/scenarios/$n.txt" "$out.new"
    rm -rf "$out"; mv "$out.new" "$out"
  done
done
