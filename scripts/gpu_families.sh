#!/usr/bin/env bash
# One call on the GPU machine for the families described as data (docs/families.md): the GPU
# test suite, then each shipped data family at its default shape and at awkward shapes, beside
# its device-to-device copy baseline. Logs and JSON go to $OUT. Carry dist/ (scripts/pack_gpu.sh).
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1

{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv; } > "$out/device.log" 2>&1

step ctest_gpu "${CTEST_SECONDS:-280}" ctest --test-dir build -L gpu --output-on-failure -j2
# The shipped config's timing (stop-rule ci, max-ci 0.5, min-time 0.05, timeout 1).
step transpose 120 ./build/kernlab --family transpose --block all \
  --shape 8192x8192,8191x8193,4096x4096 --json "$out/transpose.json"
step softmax 120 ./build/kernlab --family softmax --block all \
  --shape 4096x1000,16384x4096,100000x33 --json "$out/softmax.json"
step softmax_random 60 ./build/kernlab --family softmax --block all \
  --shape 4096x1000 --input random
