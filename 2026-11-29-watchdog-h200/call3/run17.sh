#!/usr/bin/env bash
# 2026-11-29 (session 4), nvidia-h200: the whole GPU label on the head (the watchdog's 10 s
# grace, the late-fault test), scripts/gpu_suite.sh; then the two far out-of-bounds tests x3.
set -u -o pipefail
bash scripts/gpu_suite.sh
. scripts/gpu_prelude.sh
cd "$src" || exit 1
step repeat 90 ctest --test-dir build -R "AFarOutOfBoundsWriteIsACrashUnderAShortWatchdog|AFaultAfterTheTimeOut" --repeat until-fail:3 --output-on-failure
grep -h "oob \]\|late \]\|Passed\|Failed" "$out/repeat.log" "$out/hostile.log"
O=$out
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
