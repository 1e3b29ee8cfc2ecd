#!/usr/bin/env bash
# 2026-11-28 (session 2), nvidia-h200-x2. GPU 0: the GPU label on this tree (scripts/gpu_suite.sh).
# GPU 1: scan/warp_lookback.cu (each warp its own tile and look-back) tuned exhaustively at int32
# 2^24 and 2^28, then its best points beside lookback_tunable's shipped best, CUB and the copy in
# one sweep, then both under Nsight Compute at 2^28.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
( CUDA_VISIBLE_DEVICES=0 OUT=$O/suite bash scripts/gpu_suite.sh > "$O/suite_call.log" 2>&1 ) &
(
  export CUDA_VISIBLE_DEVICES=1
  K=./build/kernlab
  { date -u; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$O/scan_device.log" 2>&1
  step scan_tune 300 $K tune --family scan --variant warp_lookback --dtype int32 --size 2^24,2^28 \
    --strategy exhaustive --budget 4096 --export "$O/wl_export.json" --json "$O/wl_tune.json"
  pts=$(python3 - "$O/wl_export.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
names = []
for t in j["tunes"]:
    b = t.get("best") or {}
    v = b.get("variant", "").split(".", 1)[-1]
    if v and v not in names: names.append(v)
print(",".join(names))
PY
)
  echo "best points: $pts" | tee -a "$O/scan_sweep.log"
  step scan_sweep 200 $K --family scan --dtype int32 --size 2^24,2^28 --block all \
    --variant "$pts,lookback_tunable[VEC=4;LOADS=8;HINT=1],cub,d2d_copy" --markdown \
    --json "$O/scan_sweep.json"
  first=${pts%%,*}
  step scan_profile 200 $K --family scan --dtype int32 --size 2^28 --block all \
    --variant "$first,lookback_tunable[VEC=4;LOADS=8;HINT=1]" --profile --json "$O/scan_profile.json"
  gzip -f "$O"/*.json
) > "$O/scan_call.log" 2>&1 &
wait
tail -n 40 "$O/scan_sweep.log"
grep -h "(Failed)\|(Timeout)\|Not Run\|tests failed\|tests passed" "$O"/suite/*.log
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
