#!/usr/bin/env bash
# Issue 31, the remedy on the GPU: each sample one graph launch, each row in 4 placements.
# Smoke runs of other families, back-to-back default jobs compared at --threshold 1.5, and a 2%
# slowdown planted in reduce_single_pass.cu (plant_2pct.patch) against the unchanged file.
#   scripts/pack_gpu.sh; device run: bash docs/results/2026-11-27-h200-noise/gpu_validate.sh
set -u -o pipefail
here_dir=docs/results/2026-11-27-h200-noise
. scripts/gpu_prelude.sh
cd "$src" || exit 1
p=$out/v; mkdir -p "$p"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$p/device.txt" 2>&1
K=(./build/kernlab --cache-dir /tmp/klc)
timed() {  # timed NAME ARGS...: one kernlab run, its log and wall time
  local name=$1; shift
  local t0=$(date +%s.%N)
  "${K[@]}" "$@" > "$p/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc, $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s" | tee -a "$p/times.txt"
}
"${K[@]}" --compile-only > "$p/compile.log" 2>&1
timed readme_example --variant reduce5 --block 512
timed matmul --variant 'matmul.*' --shape 1000x1032x520
timed qam256 --family qam256
for i in 1 2 3 4; do timed default_$i --json "$p/default_$i.json"; done
plant() { patch -s -p1 "$@" < "$here_dir/plant_2pct.patch"; }
plant && timed planted_full --json "$p/planted_full.json"; plant -R
sub=(--variant reduce_single_pass,reduce_persistent,reduce_multi_acc,reduce_shfl,cub)
for i in 1 2 3 4 5; do
  timed sub_u$i "${sub[@]}" --json "$p/sub_u$i.json"
  plant && timed sub_p$i "${sub[@]}" --json "$p/sub_p$i.json"; plant -R
done
for a in 1 2 3; do
  ./build/kernlab compare --threshold 1.5 "$p/default_$a.json" "$p/default_$((a+1)).json" > "$p/compare_default_$a$((a+1)).txt" 2>&1
  echo "default $a vs $((a+1)): exit $? $(tail -n 2 "$p/compare_default_$a$((a+1)).txt" | tr '\n' ' ')"
done
./build/kernlab compare --threshold 1.5 "$p/default_4.json" "$p/planted_full.json" > "$p/compare_planted_full.txt" 2>&1
echo "default 4 vs planted: exit $? $(grep -c '!! regression' "$p/compare_planted_full.txt") regression line(s): $(grep '!! regression' "$p/compare_planted_full.txt" | cut -c1-60 | tr '\n' ';')"
for i in 1 2 3 4 5; do
  ./build/kernlab compare --threshold 1.5 "$p/sub_u$i.json" "$p/sub_p$i.json" > "$p/compare_sub_$i.txt" 2>&1
  echo "sub $i planted: exit $? $(grep -c '!! regression' "$p/compare_sub_$i.txt") regression(s): $(grep '!! regression' "$p/compare_sub_$i.txt" | cut -c1-50 | tr '\n' ';')"
done
tail -n 12 "$p/readme_example.log"; grep -E "launched from the stream|placement" "$p"/*.log | head -5
tar -czf "$out/validate.tgz" -C "$out" v && rm -rf "$p"
