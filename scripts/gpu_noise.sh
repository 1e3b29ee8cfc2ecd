#!/usr/bin/env bash
# Issue 31's goals on the GPU machine, in one call: back-to-back default jobs compared pair by
# pair at --threshold 1.5, and (PLANTED=1) a 2% slowdown planted in reduce_single_pass.cu
# (scripts/planted/reduce_single_pass_2pct.patch) against the unchanged runs beside it.
# Everything goes into $OUT/noise.tgz (the device tool brings back at most 8 files), with
# summary.txt: wall times, compare verdicts and scripts/noise_pairs.py's figures.
#   cmake -S . -B build -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build -j2 && scripts/pack_gpu.sh
#   device run (carry dist): RUNS=11 bash scripts/gpu_noise.sh           # 10 pairs, ~280 s on an H200
#                            RUNS=6 PLANTED=1 bash scripts/gpu_noise.sh  # 6 clean, 6 planted, ~310 s
# ARGS adds options to every run (e.g. ARGS="--placement-workers 1").
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
runs=${RUNS:-11}
planted=${PLANTED:-0}
n=$out/noise; mkdir -p "$n"
pack() { tar -czf "$out/noise.tgz" -C "$out" noise && rm -rf "$n"; }
trap pack EXIT
nvidia-smi --query-gpu=name,uuid,driver_version,compute_mode,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$n/device.txt" 2>&1
K=(./build/kernlab --cache-dir /tmp/klc ${ARGS:-})
"${K[@]}" --compile-only > "$n/compile.log" 2>&1
plant() { patch -s -p1 "$@" < scripts/planted/reduce_single_pass_2pct.patch; }
one() {  # one NAME: a default job, its log, JSON and wall time
  local t0=$(date +%s.%N)
  "${K[@]}" --json "$n/$1.json" > "$n/$1.log" 2>&1
  echo "$1: exit $?, $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s" | tee -a "$n/summary.txt"
}
files=()
for i in $(seq 1 "$runs"); do
  one clean_$i; files+=("$n/clean_$i.json")
  if [ "$planted" = 1 ]; then plant && one planted_$i; plant -R; fi
done
verdict() {  # verdict A B: compare's last two lines
  ./build/kernlab compare --threshold 1.5 "$n/$1.json" "$n/$2.json" > "$n/compare_$1_$2.txt" 2>&1
  echo "compare $1 -> $2: exit $?; $(tail -n 2 "$n/compare_$1_$2.txt" | tr '\n' ' ')" | tee -a "$n/summary.txt"
}
for i in $(seq 1 $((runs - 1))); do verdict clean_$i clean_$((i + 1)); done
if [ "$planted" = 1 ]; then
  for i in $(seq 1 "$runs"); do
    verdict clean_$i planted_$i
    grep -E "!! regression" "$n/compare_clean_${i}_planted_$i.txt" | awk '{print "  " $1, $2, $3}' | tee -a "$n/summary.txt"
  done
fi
python3 scripts/noise_pairs.py "${files[@]}" | tee -a "$n/summary.txt"
