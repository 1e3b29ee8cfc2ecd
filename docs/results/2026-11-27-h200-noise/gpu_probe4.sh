#!/usr/bin/env bash
# Issue 31, fourth probe: does the row's offset follow its code? Eight placements with the module
# loaded again for each (KL_DIAG_RELOAD), against eight placements of the data alone.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
p=$out/probe4; mkdir -p "$p"
k=(./build/kernlab --dtype int32 --cache-dir /tmp/klc)
"${k[@]}" --compile-only > "$p/compile.log" 2>&1
run() {
  local name=$1; shift
  local t0=$(date +%s.%N)
  env "$@" "${k[@]}" --json "$p/$name.json" > "$p/$name.log" 2>&1
  echo "$name rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
}
for i in 1 2; do
  run reload8_$i KL_DIAG_PLACEMENTS=8 KL_DIAG_RELOAD=1
  run place8_$i KL_DIAG_PLACEMENTS=8
done
run reload8_3 KL_DIAG_PLACEMENTS=8 KL_DIAG_RELOAD=1
tar -czf "$out/probe4.tgz" -C "$out" probe4 && rm -rf "$p"
