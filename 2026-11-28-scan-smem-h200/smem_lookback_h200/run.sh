#!/usr/bin/env bash
# 2026-11-28 (session 2), nvidia-h200: scan/smem_lookback.cu (tiles in shared memory via cp.async)
# tuned exhaustively at int32 2^24 and 2^28, then its best points beside lookback_tunable's
# shipped best, CUB and the copy in one sweep, then under Nsight Compute at 2^28.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
K=./build/kernlab
{ date -u; $K --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$O/device.log" 2>&1
step scan_tune 240 $K tune --family scan --variant smem_lookback --dtype int32 --size 2^24,2^28 \
  --strategy exhaustive --budget 4096 --export "$O/sm_export.json" --json "$O/sm_tune.json"
pts=$(python3 - "$O/sm_export.json" <<'PY'
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
step scan_sweep 200 $K --family scan --dtype int32,float32 --size 2^24,2^28 --block all \
  --variant "$pts,lookback_tunable[VEC=4;LOADS=8;HINT=1],cub,d2d_copy" --markdown \
  --json "$O/scan_sweep.json"
first=${pts%%,*}
step scan_profile 150 $K --family scan --dtype int32 --size 2^24,2^28 --block all \
  --variant "$first,lookback_tunable[VEC=4;LOADS=8;HINT=1]" --profile --json "$O/scan_profile.json"
gzip -f "$O"/*.json
grep -E "^\[tune|^scan|best" "$O/scan_tune.log" | tail -6
grep -E "^\| (smem|lookback|cub|d2d)" "$O/scan_sweep.log"
grep -A12 "top stalls" "$O/scan_profile.log"
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
