#!/usr/bin/env bash
# One-off: the tunable SGEMM's exhaustive best at 4096x4096x1024 (aligned) and 4095x4097x1023
# (awkward), each beside cuBLAS in the same run: how much of the gap at the awkward shape is
# the misalignment (what an aligned copy would remove).
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > "$out/device.log"
for shp in 4096x4096x1024 4095x4097x1023; do
  step "tune_$shp" 280 ./build/kernlab tune --variant tunable --family matmul --block 128,256,512 \
    --strategy exhaustive --shape $shp --store "$out/store_$shp.jsonl" --json "$out/tune_$shp.json"
  grep -A12 "^rank" "$out/tune_$shp.log" | head -14; grep "^best:\|^time:" "$out/tune_$shp.log"
done
cd "$out" && tar czf probe.tgz *.log *.json *.jsonl && rm -f *.json *.jsonl
