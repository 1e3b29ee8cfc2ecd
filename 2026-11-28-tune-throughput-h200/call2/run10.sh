#!/usr/bin/env bash
# 2026-11-28 (session 3), nvidia-h200: where a raced point's time goes in a 100-point random tune
# of matmul/tunable.cu at 4096^3 (cold, same seed): the shipped settings, rows in kernlab itself
# (--in-process), one placement worker, no warm-up runs; then the 2^28 scan's best tiles beside
# CUB and the copy with longer sampling.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
K=./build/kernlab
{ date -u; $K --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$O/device.log" 2>&1
step warm 120 $K --family matmul --variant tunable --compile-only --no-cache
tune() { # NAME EXTRA...
  local n=$1; shift
  step "$n" 120 $K tune --variant tunable --family matmul --strategy random --budget 100 \
    --shape 4096x4096x4096 --store "$O/store_$n.jsonl" --no-cache --json "$O/$n.json" "$@"
}
tune kl_a
tune kl_inproc --in-process
tune kl_w1 --placement-workers 1
tune kl_warm0 --warmup 0
tune kl_b
step scan28 200 $K --kernels-dir dist/oneoff/kx --family scan --dtype int32 --size 2^28 \
  --block 256,512 --min-time 0.5 --max-placements 8 \
  --variant "smem_x2[LOADS=12;ORDER=1],smem_lookback_tunable[LOADS=16;ORDER=1],cub,d2d_copy" \
  --markdown --json "$O/scan28.json"
grep -h "^=== \|^time:\|^best:\|^(raced)" "$O"/kl_*.log
grep -E "^\| (smem|cub|d2d)" "$O/scan28.log"
gzip -f "$O"/*.json "$O"/*.jsonl
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
