#!/usr/bin/env bash
# matmul_tc step 4 (mma_warp64) on one GPU: the awkward-shape GPU test of matmul_tc (every
# variant, exact and random), then steps 3 and 4 beside cuBLAS at 4096^3, 8192^3 and
# 4095x4097x1023 in bfloat16, then Nsight Compute's view of both at 4096^3. Carry `dist`.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt" 2>&1
step tc_test 200 ctest --test-dir build -L gpu -R 'GpuShippedDataFamily.*matmul_tc' --output-on-failure
for shape in 4096x4096x4096 8192x8192x8192 4095x4097x1023; do
  step tc 200 ./build/kernlab --family matmul_tc --variant mma_multistage,mma_warp64,cublas \
    --dtype bfloat16 --shape $shape --json "$out/tc4_$shape.json"
done
step profile 200 ./build/kernlab --family matmul_tc --variant mma_multistage,mma_warp64 \
  --dtype bfloat16 --shape 4096x4096x4096 --profile --min-time 0.1
tar -C "$out" -czf /tmp/tc4_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/tc4_all.tgz "$out/all.tgz"
