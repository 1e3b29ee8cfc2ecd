#!/usr/bin/env bash
# One-off: matmul/tunable.cu with C staged through shared memory where N % 4 != 0. Every point
# validated at small awkward shapes (one sample each), then the whole space timed at the awkward
# and the aligned shape with cuBLAS beside, then the docs' bayes-100 tune at the awkward shape.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > "$out/device.log"; ./build/kernlab --version >> "$out/device.log"
tune=(./build/kernlab tune --variant tunable --family matmul --block 128,256,512)
step validate 200 "${tune[@]}" --strategy exhaustive --shape 129x131x17,33x5x7,1x1x1,67x258x33 --warmup 0 --min-samples 1 --min-time 0 --store "$out/vstore.jsonl" --no-plugins
grep "^==\|^best:\|failed\|error" "$out/validate.log" | head -20
for shp in 4095x4097x1023 4096x4096x1024; do
  step "tune_$shp" 200 "${tune[@]}" --strategy exhaustive --shape $shp --store "$out/store_$shp.jsonl" --json "$out/tune_$shp.json"
  grep -A5 "^rank" "$out/tune_$shp.log"; grep "^best:\|^time:" "$out/tune_$shp.log"
done
step bayes 120 "${tune[@]}" --budget 100 --shape 4095x4097x1023 --store "$out/bstore.jsonl" --json "$out/bayes.json"
grep -A3 "^rank" "$out/bayes.log"; grep "^best:\|^time:\|^==" "$out/bayes.log"
cd "$out" && tar czf probe4.tgz *.log *.json *.jsonl && rm -f *.json *.jsonl
