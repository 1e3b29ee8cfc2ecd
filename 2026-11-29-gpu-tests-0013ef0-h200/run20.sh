#!/usr/bin/env bash
# 2026-11-29 (session 4), nvidia-h200: on 0013ef0 (the review's mends), the hostile label and the
# GPU tests of tuning, matmul and scan, within the session's last device minutes.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
{ date -u; ./build/kernlab --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$O/device.log" 2>&1
cat "$O/device.log"
step hostile 110 ctest --test-dir build -L hostile --output-on-failure
step some 100 ctest --test-dir build -R "GpuTune|GpuScan|GpuMatmul" -LE hostile -j3 --output-on-failure
grep -h "tests passed\|(Failed)\|(Timeout)\|Not Run" "$O"/hostile.log "$O"/some.log
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
