#!/usr/bin/env bash
# gpu-check.sh: on a machine with an NVIDIA GPU, build schedsim with cgo and
# run the NVML probe end to end, writing every output to one folder:
#
#   probe.yaml        schedsim probe (node model as a cluster spec)
#   raw.yaml/json     schedsim probe --raw [--json]
#   sample.csv        schedsim probe --sample 10s --interval 1s
#   sample.parquet    schedsim probe --sample 3s --interval 1s
#   run.yaml          schedsim probe --run of a short GPU command, when one
#   run.csv           is available (PyTorch matmuls, else an nvidia-smi loop)
#   nvidia-smi.txt    nvidia-smi -q and the MIG profile tables, for comparison
#   status.txt        each step's exit status; *.stderr the steps' stderr
#
# Usage: scripts/gpu-check.sh [OUTPUT_DIR]   (default ./gpu-check-out)
# Read-only: nothing here changes GPU state (no MIG, clock or power changes).
set -euo pipefail

out="${1:-./gpu-check-out}"
mkdir -p "${out}"
out="$(cd "${out}" && pwd)"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${repo}/bin/schedsim"
status="${out}/status.txt"
: >"${status}"

# step NAME CMD...: run CMD with its stderr in NAME.stderr, record its exit
# status in status.txt, and keep going whatever it returns.
step() {
	local name="$1"
	shift
	local rc=0
	"$@" 2>"${out}/${name}.stderr" || rc=$?
	printf '%-14s exit %d\n' "${name}" "${rc}" | tee -a "${status}"
	return 0
}

echo "building schedsim (cgo) in ${repo}"
(cd "${repo}" && CGO_ENABLED=1 go build -o "${bin}" ./cmd/schedsim)
"${bin}" version >"${out}/version.txt" 2>&1 || true

if command -v nvidia-smi >/dev/null 2>&1; then
	{
		nvidia-smi -q || true
		echo "--- nvidia-smi mig -lgip"
		nvidia-smi mig -lgip || true
		echo "--- nvidia-smi mig -lgipp"
		nvidia-smi mig -lgipp || true
		echo "--- nvidia-smi topo -m"
		nvidia-smi topo -m || true
	} >"${out}/nvidia-smi.txt" 2>&1
fi

step probe bash -c '"$1" probe >"$2/probe.yaml"' bash "${bin}" "${out}"
step raw-yaml bash -c '"$1" probe --raw >"$2/raw.yaml"' bash "${bin}" "${out}"
step raw-json bash -c '"$1" probe --raw --json >"$2/raw.json"' bash "${bin}" "${out}"
step sample-csv "${bin}" probe --sample 10s --interval 1s --out "${out}/sample.csv"
step sample-pq "${bin}" probe --sample 3s --interval 1s --out "${out}/sample.parquet"

# A short GPU job for probe --run: dense BF16 matmuls for about 10 s with
# PyTorch when it sees a GPU, else a 5 s loop of nvidia-smi queries (no
# GPU load, but the whole --run path).
job=()
if command -v python3 >/dev/null 2>&1 &&
	python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
	job=(python3 -c '
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
t, n = time.time(), 0
while time.time() - t < 10:
    c = a @ b
    n += 1
torch.cuda.synchronize()
dt = time.time() - t
print(f"{n} matmuls 8192^3 in {dt:.1f} s: {2 * 8192**3 * n / dt / 1e12:.0f} TFLOP/s")
')
	workload="bf16-gemm-8192"
elif command -v nvidia-smi >/dev/null 2>&1; then
	job=(sh -c 'end=$(( $(date +%s) + 5 )); while [ "$(date +%s)" -lt "${end}" ]; do nvidia-smi -q -d PERFORMANCE >/dev/null; done')
	workload="nvidia-smi-loop"
fi
if [ "${#job[@]}" -gt 0 ]; then
	step run bash -c '"$1" probe --run --workload "$2" --out "$3/run.yaml" --series "$3/run.csv" -- "${@:4}" >"$3/run.stdout"' \
		bash "${bin}" "${workload}" "${out}" "${job[@]}"
else
	echo "run            skipped: neither PyTorch with CUDA nor nvidia-smi found" | tee -a "${status}"
fi

echo "outputs in ${out}"
