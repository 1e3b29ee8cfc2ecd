#!/usr/bin/env bash
# The last call of 2026-11-28 (nvidia-h200-x2): GPU 0 runs the GPU label on this tree alone;
# GPU 1 runs Kernel Tuner's vector_add_cupy.py, vector_add_nvcuda.py and cuda-c++/vector_add.py with
# kernlab's import (dist/kte2), then --profile on CUB's scan and reduction with the kernel names
# ncu's import gives them (why the scan's CUB row showed no kernels).
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
( CUDA_VISIBLE_DEVICES=0 OUT=$O/suite bash scripts/gpu_suite.sh > "$O/suite_call.log" 2>&1 ) &
(
  export CUDA_VISIBLE_DEVICES=1
  OUT=$O/kte2 bash dist/kte2/run.sh > "$O/kte2_call.log" 2>&1
  K=./build/kernlab
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for f in scan reduce; do
    step "profile_$f" 120 $K --family $f --variant cub --dtype int32 --size 2^20 --block 256 \
      --profile --json "$O/profile_$f.json"
    rep=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['profile']['report'])" "$O/profile_$f.json")
    "$NCU" --import "$rep" --csv --page raw --print-nvtx-rename kernel > "$O/import_$f.csv" 2>&1
    python3 - "$O/import_$f.csv" <<'PY' | tee -a "$O/names.log"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
k = rows[h].index("Kernel Name")
for r in rows[h + 2:]:
    if len(r) > k: print(sys.argv[1].rsplit("/", 1)[-1], r[0], repr(r[k][:160]))
PY
    gzip -f "$O/import_$f.csv"
  done
) &
wait
cat "$O/kte2_call.log" | tail -n 30
grep -h "(Failed)\|(Timeout)\|Not Run\|tests failed\|tests passed" "$O"/suite/*.log
exit 0
