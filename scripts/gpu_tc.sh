#!/usr/bin/env bash
# Issue 19's measurements on the GPU machine, in one call: the tensor-core ladder of matmul_tc
# beside cuBLAS (cublasGemmEx, BF16 and FP16 with FP32 accumulation) at 4096^3, 8192^3 and an
# awkward shape, exact inputs; then random inputs at the awkward shape. Carry `dist` with
# build.tgz (scripts/pack_gpu.sh). Logs and JSON in $OUT/all.tgz.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt" 2>&1
for shape in 4096x4096x4096 8192x8192x8192 4095x4097x1023; do
  step tc 240 ./build/kernlab --family matmul_tc --dtype bfloat16,float16 --shape $shape \
    --json "$out/tc_$shape.json"
done
step tc_random 120 ./build/kernlab --family matmul_tc --dtype bfloat16,float16 --input random \
  --shape 4095x4097x1023 --json "$out/tc_random.json"
step tc_fp32 120 ./build/kernlab --family matmul --variant warptile,cublas --block 256 \
  --shape 8192x8192x8192 --json "$out/fp32_8192.json"
tar -C "$out" -czf /tmp/tc_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/tc_all.tgz "$out/all.tgz"
