#!/usr/bin/env bash
# The GPU label on the GPU machine, in one call of about 7 minutes, logs into $OUT:
#  1. the tests that hang or crash kernels on purpose (label gpu-hostile), alone: a kernel spinning
#     until its worker is killed holds SMs long enough to push a timed row of another test past
#     its --kernel-timeout (docs/architecture.md);
#  2. GpuReadme (every command of the docs, ~6.5 minutes on its own) beside the rest of the GPU
#     label (-j3), so that the call fits the device tool's 10 minutes.
# Built here and carried as dist/ (scripts/pack_gpu.sh), then: bash scripts/gpu_suite.sh
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1

{ date -u; ./build/kernlab --version
  nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$out/device.log" 2>&1
cat "$out/device.log"

step hostile 120 ctest --test-dir build -L hostile --output-on-failure
tail -n 4 "$out/hostile.log"
step readme 540 ctest --test-dir build -R GpuReadme --output-on-failure --timeout 500 &
step gpu 480 ctest --test-dir build -L gpu -LE hostile -E GpuReadme --output-on-failure -j3
wait
tail -n 4 "$out/gpu.log" "$out/readme.log"
# Every line that names a failed test, for the call's output.
grep -h "(Failed)\|(Timeout)\|Not Run\|tests failed" "$out"/hostile.log "$out"/gpu.log "$out"/readme.log
exit 0
