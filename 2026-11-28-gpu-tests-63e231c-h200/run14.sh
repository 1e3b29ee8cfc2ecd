#!/usr/bin/env bash
# 2026-11-28 (session 3), nvidia-h200: on 63e231c (one problem_key; the prepare job without the image), the GPU tests of
# plugins and workers, the hostile label, and the tune once more.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
{ date -u; ./build/kernlab --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$O/device.log" 2>&1
step hostile 120 ctest --test-dir build -L hostile --output-on-failure
step plugins 200 ctest --test-dir build -R "GpuPlugins|GpuMatmulPlugin|GpuIsolation|GpuDevices|GpuTune|GpuScanSharedMemory|GpuMatmul" -LE hostile -j3 --output-on-failure
step kl_1 120 ./build/kernlab tune --variant tunable --family matmul --strategy random --budget 100 \
  --shape 4096x4096x4096 --store "$O/store_kl_1.jsonl" --no-cache --json "$O/kl_1.json"
grep -h "tests passed\|(Failed)\|(Timeout)" "$O"/hostile.log "$O"/plugins.log
grep -h "^time:\|^best:\|^(raced)" "$O"/kl_1.log
gzip -f "$O"/*.json "$O"/*.jsonl
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
