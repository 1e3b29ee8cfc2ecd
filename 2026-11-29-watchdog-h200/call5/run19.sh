#!/usr/bin/env bash
# 2026-11-29 (session 4), nvidia-h200: on dd882a6, the hostile label, then the two far
# out-of-bounds tests twice more with their output (each row's message).
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
{ date -u; ./build/kernlab --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$O/device.log" 2>&1
cat "$O/device.log"
step hostile 150 ctest --test-dir build -L hostile --output-on-failure
step oob 100 ./build/tests/kernlab_gpu_tests "--gtest_filter=GpuIsolation.AFarOutOfBounds*:GpuIsolation.AFaultAfter*" --gtest_repeat=2
grep -h "tests passed\|(Failed)\|(Timeout)\|Test #" "$O"/hostile.log
grep -h "oob \]\|late \]\|OK \]\|FAILED" "$O"/oob.log
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
