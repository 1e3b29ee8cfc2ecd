#!/usr/bin/env bash
# Exhaustive tunes of reduce_tunable (int32 sum) at 2^19..2^28 x2, for replayed range-tune studies.
set -u
. scripts/gpu_prelude.sh
cd "$src"
{ date -u; ./build/kernlab --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$out/device.log" 2>&1
step low 200 ./build/kernlab tune --variant reduce_tunable --dtype int32 --size 2^19:2^23:*2 --strategy exhaustive --budget 4096 --min-time 0.02 --json "$out/reduce_low.json"
step high 260 ./build/kernlab tune --variant reduce_tunable --dtype int32 --size 2^24:2^28:*2 --strategy exhaustive --budget 4096 --min-time 0.02 --json "$out/reduce_high.json"
grep -h "^best:\|^found:\|^time:" "$out"/low.log "$out"/high.log
