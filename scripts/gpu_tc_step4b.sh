#!/usr/bin/env bash
# Ladder step 4b (mma_ws) after its spill fix (the named point's producer at 64 registers, the
# lane read where used): the matmul_tc GPU tests at awkward and edge shapes, then step 4, the new
# named point, the old one (PREG = 40) and cuBLAS at 4096^3 and 8192^3 in bfloat16, one call per
# shape. Carry `dist` with build.tgz (scripts/pack_gpu.sh). Logs and JSON in $OUT/all.tgz.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$out/device.txt" 2>&1
step gpu_tests 200 ctest --test-dir build -L gpu --output-on-failure \
  -R 'GpuShippedDataFamily.*matmul_tc'
for shape in 4096x4096x4096 8192x8192x8192; do
  step "step4b_$shape" 120 ./build/kernlab --family matmul_tc --dtype bfloat16 --shape "$shape" \
    --variant 'mma_warp64,mma_ws,mma_ws_tune[WN=4;STAGES=4;PREG=40;PERSIST=1],cublas' \
    --json "$out/step4b_$shape.json"
done
tar -C "$out" -czf /tmp/step4b_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/step4b_all.tgz "$out/all.tgz"
