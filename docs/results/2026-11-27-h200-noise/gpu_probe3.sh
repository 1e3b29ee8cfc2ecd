#!/usr/bin/env bash
# Issue 31, third probe: kernlab's own rows with the candidate remedies switched on one at a time
# (KL_DIAG_* in the worker), the int32 half of the default job, rounds interleaved.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
p=$out/probe3; mkdir -p "$p"
k=(./build/kernlab --dtype int32 --cache-dir /tmp/klc)
"${k[@]}" --compile-only > "$p/compile.log" 2>&1
run() {  # run NAME ENV... : one job, its JSON and its log
  local name=$1; shift
  local t0=$(date +%s.%N)
  env "$@" "${k[@]}" --json "$p/$name.json" > "$p/$name.log" 2>&1
  echo "$name rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
}
for i in 1 2 3; do
  run base_$i X=1
  run warm_$i KL_DIAG_WARM=1
  run arena_$i KL_DIAG_ARENA=1
  [ $i -le 2 ] && run arenawarm_$i KL_DIAG_ARENA=1 KL_DIAG_WARM=1
  [ $i -le 2 ] && run place8_$i KL_DIAG_PLACEMENTS=8
  [ $i -le 2 ] && run place8arena_$i KL_DIAG_PLACEMENTS=8 KL_DIAG_ARENA=1
  [ $i -le 2 ] && { k+=(--flush write); run write_$i X=1; unset 'k[${#k[@]}-1]'; unset 'k[${#k[@]}-1]'; }
done
t0=$(date +%s.%N)
KL_DIAG_PLACEMENTS=8 KL_DIAG_ARENA=1 ./build/kernlab --cache-dir /tmp/klc --json "$p/full_place8arena.json" > "$p/full_place8arena.log" 2>&1
echo "full default job, 8 placements + arena: rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
tar -czf "$out/probe3.tgz" -C "$out" probe3 && rm -rf "$p"
