#!/usr/bin/env bash
# Issue 19's TF32 step on one GPU: matmul_tf32's awkward-shape GPU test (exact and random inputs,
# cuBLAS's TF32 row included), then wmma_tf32 beside cuBLAS CUBLAS_COMPUTE_32F_FAST_TF32 at
# 4096^3, 8192^3 and 4095x4097x1023, and matmul's plain-FP32 cuBLAS at 8192^3 for the ratio.
# Carry `dist` with build.tgz (scripts/pack_gpu.sh). Logs and JSON in $out (the caller tars).
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
step tf32_test 200 ctest --test-dir build -L gpu -R 'matmul_tf32' --output-on-failure
for shape in 4096x4096x4096 8192x8192x8192 4095x4097x1023; do
  step tf32 200 ./build/kernlab --family matmul_tf32 --shape $shape --json "$out/tf32_$shape.json"
done
step fp32 120 ./build/kernlab --family matmul --variant cublas --shape 8192x8192x8192 \
  --json "$out/fp32_cublas_8192.json"
