#!/usr/bin/env bash
# 2026-11-28 (session 2), nvidia-h200, short: the GPU tests of smem_lookback_tunable.cu (its named
# point, six sampled points, the 48 KiB shared-memory row), then its ORDER = 1 bests beside the
# named point and CUB in one sweep at int32 2^24 and 2^28.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
K=./build/kernlab
{ date -u; $K --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$O/device.log" 2>&1
step gpu_smem 150 ctest --test-dir build -R "GpuScanSharedMemory|GpuScan.*smem" -j4 --output-on-failure
step scan_order 100 $K --family scan --dtype int32 --size 2^24,2^28 --block 128,256 \
  --variant "smem_lookback,smem_lookback_tunable[LOADS=6;ORDER=1],smem_lookback_tunable[LOADS=16;ORDER=1],cub,d2d_copy" \
  --markdown --json "$O/scan_order.json"
gzip -f "$O"/*.json
grep -E "tests passed|Failed|Passed" "$O/gpu_smem.log" | tail -12
grep -E "^\| (smem|cub|d2d)" "$O/scan_order.log"
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
