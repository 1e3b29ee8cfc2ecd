#!/usr/bin/env bash
# 2026-11-28 (session 3), nvidia-h200: issue 35's tuning throughput on ea0d729 (live race bound,
# workers that make a problem at once and exit side by side) beside Kernel Tuner 1.5 and the build
# before this session (8fc52d4's tune code, dist/old.tgz), in one call: 100 random points of
# matmul/tunable.cu at 4096^3, all cold (--no-cache, a new store; Kernel Tuner a fresh cache),
# same seed; NVRTC warmed first by a compile that is not timed.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
K=./build/kernlab
mkdir -p /tmp/old && tar xzf dist/old.tgz -C /tmp/old
KO=/tmp/old/build/kernlab
{ date -u; $K --version; $KO --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; nproc; } > "$O/device.log" 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site dist/wheels/*.whl > "$O/pip.log" 2>&1
step warm 120 $K --family matmul --variant tunable --compile-only --no-cache
tune() { # NAME BINARY EXTRA...
  local n=$1 b=$2; shift 2
  step "$n" 120 $b tune --variant tunable --family matmul --strategy random --budget 100 \
    --shape 4096x4096x4096 --store "$O/store_$n.jsonl" --no-cache --json "$O/$n.json" "$@"
}
tune kl_new1 $K
tune kl_old1 $KO
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 step kt_random 200 python3 bench/kernel_tuner/kt_tune.py \
  --kernel kernels_src/matmul/tunable.cu --shape 4096x4096x4096 --strategy random_sample \
  --budget 100 --lang nvcuda --out "$O/kt" --kernlab $K
tune kl_new2 $K
tune kl_old2 $KO
tune kl_new_norace $K --race off
grep -h "^=== \|^time:\|^best:\|^(raced)\|^found" "$O"/kl_*.log
grep -h "tune_kernel wall\|^best\|process" "$O/kt_random.log"
gzip -f "$O"/*.json "$O"/*.jsonl
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
