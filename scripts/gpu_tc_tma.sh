#!/usr/bin/env bash
# The final tree of ladder steps 7 (wgmma fed by the TMA) and 8 (any shape through aligned
# scratch) on one GPU, in one call: the GPU tests of scratch buffers, tensor maps, isolation and
# every shipped family at awkward shapes; steps 7 and 8 and reduce5 under --sanitize=memcheck
# (the sanitizer's logs kept); the mma.sync ceiling (scripts/tc_ceiling/mma_sync_peak.cu, built
# here with nvcc); then steps 6-8 beside cuBLAS at 4095x4097x1023 in bfloat16. Carry `dist` with
# build.tgz (scripts/pack_gpu.sh). Logs and JSON in $OUT/all.tgz.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$out/device.txt" 2>&1
step gpu_tests 300 ctest --test-dir build -L gpu -j2 --output-on-failure \
  -R 'GpuDataFamily|GpuTensorMaps|GpuShippedDataFamily|GpuIsolation'
step sanitize 90 ./build/kernlab --family matmul_tc --variant wgmma_tma,wgmma_tma_padded \
  --block 384 --dtype bfloat16 --shape 136x264x72,97x131x257 --sanitize=memcheck \
  --journal "$out/san_tc"
step sanitize 45 ./build/kernlab --family reduce --variant reduce5 --block 256 --size 1000003 \
  --sanitize=memcheck --journal "$out/san_reduce"
step mma_peak 60 bash -c "/usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -o /tmp/mma_sync_peak \
  scripts/tc_ceiling/mma_sync_peak.cu && /tmp/mma_sync_peak"
step ladder 80 ./build/kernlab --family matmul_tc --dtype bfloat16 --shape 4095x4097x1023 \
  --variant wgmma_persistent,wgmma_tma,wgmma_tma_padded,cublas --json "$out/ladder_awkward.json"
tar -C "$out" -czf /tmp/tc_tma_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/tc_tma_all.tgz "$out/all.tgz"
