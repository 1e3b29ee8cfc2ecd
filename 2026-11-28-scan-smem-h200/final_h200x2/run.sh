#!/usr/bin/env bash
# 2026-11-28 (session 2), nvidia-h200-x2. GPU 0: the GPU label on this tree (scripts/gpu_suite.sh).
# GPU 1: the shipped scan/smem_lookback.cu beside lookback_tunable's best, CUB and the copy; the
# scan family's default run (its ladder); then smem_x.cu (dist/oneoff/kx: LOADS around 8, tile
# numbers from the counter or from blockIdx.x) tuned exhaustively and its best beside them.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
( CUDA_VISIBLE_DEVICES=0 OUT=$O/suite bash scripts/gpu_suite.sh > "$O/suite_call.log" 2>&1 ) &
(
  export CUDA_VISIBLE_DEVICES=1
  K=./build/kernlab
  { date -u; $K --version; nvidia-smi --query-gpu=name,uuid,driver_version --format=csv; } > "$O/scan_device.log" 2>&1
  step scan_shipped 200 $K --family scan --dtype int32,float32 --size 2^24,2^28 --block all \
    --variant "smem_lookback,lookback_tunable[VEC=4;LOADS=8;HINT=1],cub,d2d_copy" --markdown \
    --json "$O/scan_shipped.json"
  step scan_default 120 $K --family scan --json "$O/scan_default.json"
  step smemx_tune 200 $K --kernels-dir dist/oneoff/kx tune --family scan --variant smem_x \
    --dtype int32 --size 2^24,2^28 --strategy exhaustive --budget 4096 \
    --export "$O/smemx_export.json" --json "$O/smemx_tune.json"
  pts=$(python3 - "$O/smemx_export.json" <<'PY'
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
  echo "best points: $pts" | tee -a "$O/smemx_sweep.log"
  step smemx_sweep 150 $K --kernels-dir dist/oneoff/kx --family scan --dtype int32 \
    --size 2^24,2^28 --block 128 --variant "$pts,smem_lookback,cub,d2d_copy" --markdown \
    --json "$O/smemx_sweep.json"
  gzip -f "$O"/*.json
) > "$O/scan_call.log" 2>&1 &
wait
grep -E "^\| (smem|lookback|cub|d2d)" "$O/scan_shipped.log" "$O/smemx_sweep.log"
grep -E "^scan\.|best" "$O/scan_default.log" | head -30
sed -n '/^rank/,/^best/p' "$O/smemx_tune.log" | head -50
grep -h "(Failed)\|(Timeout)\|Not Run\|tests failed\|tests passed" "$O"/suite/*.log
tar czf /tmp/out.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/out.tgz "$O/"
exit 0
