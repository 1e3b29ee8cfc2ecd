#!/usr/bin/env bash
# Tensor maps (TMA) and the tune refactor on one GPU, in one call: the GPU tests of the tensor-map
# transpose, of every shipped family at awkward shapes, of tuning, of the device pool, of the
# cuBLAS plugin and of the README's commands; then
# transpose's steps beside the copy at 8192 x 8192 and at an awkward aligned shape; then a short
# tune of matmul's tunable file. Carry `dist` with build.tgz (scripts/pack_gpu.sh). Logs and JSON
# in $OUT/all.tgz.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt" 2>&1
step gpu_tests 420 ctest --test-dir build -L gpu -j4 --output-on-failure \
  -R 'GpuTensorMaps|GpuShippedDataFamily|GpuTune|GpuDevices|GpuMatmulPlugin|GpuReadme'
step transpose 120 ./build/kernlab --family transpose --json "$out/transpose_8192.json"
step transpose_odd 120 ./build/kernlab --family transpose --shape 1025x1028 \
  --json "$out/transpose_1025x1028.json"
step tune 200 ./build/kernlab tune --family matmul --variant tunable --strategy random --seed 5 \
  --budget 40 --shape 2048x2048x2048 --store "$out/store.jsonl" --json "$out/tune.json"
tar -C "$out" -czf /tmp/tma_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/tma_all.tgz "$out/all.tgz"
