#!/usr/bin/env bash
# 2026-11-29 (session 4), nvidia-h200: the GpuTune tests on the head (the killed tune with
# --race off), the killed tune x3 more, then the hostile label once more.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
{ date -u; ./build/kernlab --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$O/device.log" 2>&1
cat "$O/device.log"
step tune 200 ctest --test-dir build -R "GpuTune" -j3 --output-on-failure
step killed 120 ctest --test-dir build -R "AKilledTuneResumes" --repeat until-fail:3 --output-on-failure
step hostile 120 ctest --test-dir build -L hostile --output-on-failure
grep -h "tests passed\|(Failed)\|(Timeout)\|Test #" "$O"/tune.log "$O"/killed.log "$O"/hostile.log
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
