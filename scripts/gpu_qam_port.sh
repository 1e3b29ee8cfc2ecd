#!/usr/bin/env bash
# Issue 13's before/after check for qam256, ported from C++ onto the data engine, on one GPU in one
# call: the pre-port kernlab (dist/before.tgz: kl/bin/kernlab with its plugins, kernels_src and
# config in an installed layout) and this build, alternating, twice each, for the family's sweep
# and for the --pipeline; then the GPU tests of the port (qam256, the data families, the shipped
# kernels of every family). Carry `dist` with build.tgz (scripts/pack_gpu.sh) and before.tgz.
# Logs in $OUT/all.tgz.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
mkdir -p before && tar xzf dist/before.tgz -C before || exit 1
B=./before/kl/bin/kernlab
A=./build/kernlab
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/device.txt" 2>&1
for i in 1 2; do
  step sweep 200 $B --family qam256 --size 2^24 --json "$out/sweep_before_$i.json"
  step sweep 200 $A --family qam256 --size 2^24 --json "$out/sweep_after_$i.json"
done
for i in 1 2; do
  step compare 30 $A compare "$out/sweep_before_$i.json" "$out/sweep_after_$i.json" --threshold 1
done
step compare 30 $A compare "$out/sweep_before_1.json" "$out/sweep_before_2.json" --threshold 1
for i in 1 2; do
  step pipeline 200 $B --pipeline --variant qam256.vec2_stream --block 256 --size 2^27 \
    --json "$out/pipeline_before_$i.json"
  step pipeline 200 $A --pipeline --variant qam256.vec2_stream --block 256 --size 2^27 \
    --json "$out/pipeline_after_$i.json"
done
step snr 120 $A --family qam256 --block 256 --axis SNR_DB=0,3,60 --size 1000003 --json "$out/snr.json"
step gputests 400 ctest --test-dir build -L gpu -R 'Qam256|DataFamily|Shipped|GpuMatmul|Plots|Outputs' -j4 --output-on-failure
tar -C "$out" -czf /tmp/qam_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/qam_all.tgz "$out/all.tgz"
