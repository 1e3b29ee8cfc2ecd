#!/usr/bin/env bash
# 2026-11-28 (session 3), nvidia-h200: the GPU label on this tree (scripts/gpu_suite.sh), then
# two cold 100-point random tunes of matmul/tunable.cu at 4096^3 (the library's rows now open
# cuBLAS in the four workers at once) for the time split.
set -u -o pipefail
O=${OUT:-/tmp/kernlab-out}
OUT=$O/suite bash scripts/gpu_suite.sh > "$O/suite_call.log" 2>&1
. scripts/gpu_prelude.sh
cd "$src" || exit 1
K=./build/kernlab
for n in kl_1 kl_2; do
  step "$n" 120 $K tune --variant tunable --family matmul --strategy random --budget 100 \
    --shape 4096x4096x4096 --store "$O/store_$n.jsonl" --no-cache --json "$O/$n.json"
done
grep -h "^=== \|^time:\|^best:\|^(raced)\|^found" "$O"/kl_*.log
tail -n 3 "$O/suite/gpu.log" "$O/suite/readme.log" "$O/suite/hostile.log"
grep -h "(Failed)\|(Timeout)\|Not Run\|tests failed" "$O"/suite/*.log
gzip -f "$O"/*.json "$O"/*.jsonl
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
