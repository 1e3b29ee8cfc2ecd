#!/usr/bin/env bash
# 2026-11-26's GPU call, on one GPU: the whole GPU suite (the family-plugin test among it), then
# matmul_tc at 4096^3 to see its records carry the tensor roofline (results JSON, tuning-free
# table, plot --roofline and the bars). Carry `dist` with build.tgz (scripts/pack_gpu.sh). Logs
# and files in $OUT/all.tgz.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt" 2>&1
gpu='Shipped|GpuScan|GpuMatmul|GpuDataFamily'
step gpu_tests_a 280 ctest --test-dir build -L gpu -R "$gpu" -j4 --output-on-failure
step gpu_tests_b 420 ctest --test-dir build -L gpu -E "$gpu" -j4 --output-on-failure
step tc 240 ./build/kernlab --family matmul_tc --dtype bfloat16 --shape 4096x4096x4096 \
  --json "$out/tc_4096.json"
step plot 30 ./build/kernlab plot --roofline "$out/tc_4096.json" -o "$out/tc_roofline.svg"
step plot 30 ./build/kernlab plot "$out/tc_4096.json" -o "$out/tc_bars.svg"
tar -C "$out" -czf /tmp/session_all.tgz . && find "$out" -mindepth 1 -delete &&
  mv /tmp/session_all.tgz "$out/all.tgz"
