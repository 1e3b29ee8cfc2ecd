#!/usr/bin/env bash
# 2026-11-28 (session 3), nvidia-h200: issue 35's tuning throughput after the live race bound
# (1329f38), beside Kernel Tuner and the build before it (8fc52d4's tune code, dist/old.tgz), all
# cold, 100 random points of matmul/tunable.cu at 4096^3, same seed; the new build with --race off
# for the same-best check. Then scan/smem_x2.cu (dist/oneoff/kx: tiles up to 96 KB) at int32 2^28.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
K=./build/kernlab
mkdir -p /tmp/old && tar xzf dist/old.tgz -C /tmp/old
KO=/tmp/old/build/kernlab
{ date -u; $K --version; $KO --version; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv; nproc; } > "$O/device.log" 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site dist/wheels/*.whl > "$O/pip.log" 2>&1
tune() { # NAME BINARY EXTRA...
  local n=$1 b=$2; shift 2
  step "$n" 120 $b tune --variant tunable --family matmul --strategy random --budget 100 \
    --shape 4096x4096x4096 --store "$O/store_$n.jsonl" --no-cache --json "$O/$n.json" "$@"
}
tune kl_new $K
tune kl_old $KO
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 step kt_random 200 python3 bench/kernel_tuner/kt_tune.py \
  --kernel kernels_src/matmul/tunable.cu --shape 4096x4096x4096 --strategy random_sample \
  --budget 100 --lang nvcuda --out "$O/kt" --kernlab $K
tune kl_new2 $K
tune kl_old2 $KO
tune kl_new_norace $K --race off
step scanx 150 $K --kernels-dir dist/oneoff/kx tune --family scan --variant smem_x2 \
  --dtype int32 --size 2^28 --strategy exhaustive --budget 4096 --export "$O/scanx_export.json" \
  --json "$O/scanx.json"
pts=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); names = []
for t in j["tunes"]:
    v = (t.get("best") or {}).get("variant", "").split(".", 1)[-1]
    if v and v not in names: names.append(v)
print(",".join(names))' "$O/scanx_export.json")
echo "best: $pts" >> "$O/scanx_sweep.log"
step scanx_sweep 120 $K --kernels-dir dist/oneoff/kx --family scan --dtype int32 --size 2^28 \
  --block 128,256 --variant "$pts,smem_lookback_tunable[LOADS=16;ORDER=1],cub,d2d_copy" \
  --markdown --json "$O/scanx_sweep.json"
grep -h "^=== \|^time:\|^best:\|raced\|^found\|^compile:" "$O"/kl_*.log
grep -h "tune_kernel wall\|^best\|process" "$O/kt_random.log"
grep -h "^best:" "$O/scanx.log"; grep -E "^\| (smem|cub|d2d)" "$O/scanx_sweep.log"
gzip -f "$O"/*.json "$O"/*.jsonl
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
