#!/usr/bin/env bash
# The tensor-core ladder's final tree on one GPU, in one call: the GPU tests of matmul_tc at
# awkward and aligned edge shapes (every step, both 16-bit types, exact and random inputs) and of
# scratch buffers; then every named step of the ladder beside cuBLAS at 4096^3 in bfloat16, in one
# kernlab call. Carry `dist` with build.tgz (scripts/pack_gpu.sh). Logs and JSON in $OUT/all.tgz.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$out/device.txt" 2>&1
step gpu_tests 300 ctest --test-dir build -L gpu -j2 --output-on-failure \
  -R 'GpuShippedDataFamily.*matmul_tc|GpuDataFamily.Scratch'
step ladder 200 ./build/kernlab --family matmul_tc --dtype bfloat16 --shape 4096x4096x4096 \
  --json "$out/ladder_4096.json"
tar -C "$out" -czf /tmp/tc_final_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/tc_final_all.tgz "$out/all.tgz"
