#!/usr/bin/env bash
# `kernlab tune` on the GPU machine, in two calls of the device tool (each under its 10-minute
# limit); logs, results and stores go to $OUT. Carry dist/ (scripts/pack_gpu.sh) and, for the
# Kernel Tuner side, .peers/ (bench/kernel_tuner/README.md).
#   bash scripts/gpu_tune.sh suite   # the GPU test suite; with REDUCE=1 the goals below too
#   bash scripts/gpu_tune.sh goals   # reduce_tunable vs CUB at 2^20 and 2^24 (exhaustive), matmul
#                                    # tuned at 4095x4097x1023 (bayes, 100 points) vs cuBLAS
#   bash scripts/gpu_tune.sh space   # matmul/tunable.cu, every point at 4096^3 (for --replay),
#                                    # then Kernel Tuner beside kernlab on the same space
#   bash scripts/gpu_tune.sh throughput  # Kernel Tuner beside kernlab only (KT_BUDGET points,
#                                    # default 100), then kernlab's default strategy at that budget
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src, step; build/ unpacked and reachable
cd "$src" || exit 1
mode=${1:-suite}
k=./build/kernlab
{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv; } > "$out/device.log" 2>&1

timed() {  # timed NAME SECONDS COMMAND...: step, with the wall time in $out/NAME.wall
  local t0 t1
  t0=$(date +%s.%N)
  step "$@"
  t1=$(date +%s.%N)
  awk "BEGIN{printf \"%.3f\n\", $t1 - $t0}" > "$out/$1.wall"
}

# Throughput beside Kernel Tuner: the same space, budget and GPU, random sampling in both, each
# compiling every point afresh (kernlab: a new store and no compile cache). Then kernlab's default
# strategy (bayes) at the same budget, for the best configuration a user would get.
throughput() {
  local budget=${KT_BUDGET:-100}
  timed kernlab_random 300 $k tune --variant tunable --family matmul --strategy random \
    --budget "$budget" --shape 4096x4096x4096 --store "$out/store_random.jsonl" \
    --no-cache --json "$out/kernlab_random.json"
  if [ -d .peers/wheels ]; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .peers/wheels/*.whl \
      > "$out/pip.log" 2>&1
    PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timed kt_random 400 python3 \
      bench/kernel_tuner/kt_tune.py --kernel kernels_src/matmul/tunable.cu \
      --shape 4096x4096x4096 --strategy random_sample --budget "$budget" --lang nvcuda \
      --out "$out" \
      --kernlab "$k"
    PYTHONPATH=/tmp/site step side_by_side 60 python3 bench/kernel_tuner/kt_tune.py \
      --kt-json "$out/kt_tune.json" --kernlab-json "$out/kernlab_random.json" \
      --kernlab-wall "$(cat "$out/kernlab_random.wall")"
  fi
  timed kernlab_bayes 300 $k tune --variant tunable --family matmul --budget "$budget" \
    --shape 4096x4096x4096 --store "$out/store_bayes.jsonl" --no-cache \
    --json "$out/kernlab_bayes.json"
}

# The tuned goals: reduce_tunable's whole space against CUB at 2^20 and 2^24, and matmul at an
# awkward shape against cuBLAS with the default strategy and 100 points.
goals() {
  for n in 2^20 2^24; do
    tag=${n/^/p}
    timed "reduce_$tag" 200 $k tune --variant reduce_tunable --strategy exhaustive --size "$n" \
      --dtype int32 --store "$out/store.jsonl" --json "$out/reduce_$tag.json" \
      --export "$out/reduce_$tag.best.json" --export-header "$out/reduce_$tag.best.h"
  done
  timed matmul_bayes_awkward 200 $k tune --variant tunable --family matmul --strategy bayes \
    --budget 100 --shape 4095x4097x1023 --store "$out/store.jsonl" \
    --json "$out/matmul_bayes_awkward.json" --export "$out/matmul_bayes_awkward.best.json"
}

case $mode in
suite)
  step ctest_gpu "${CTEST_SECONDS:-330}" ctest --test-dir build -L gpu --output-on-failure -j2
  [ -n "${REDUCE:-}" ] && goals
  ;;
goals) goals ;;
space)
  # Every point at 4096^3, timed shorter than the shipped config (min-time 0.02, time-out 0.5):
  # the landscape for --replay, where a 1% ranking matters more than a quotable median. The time
  # budget ends it cleanly (tables and JSON written) if the call's limit comes near.
  timed matmul_space 330 $k tune --variant tunable --family matmul --strategy exhaustive \
    --budget "${SPACE_SECONDS:-300}s" --shape 4096x4096x4096 --min-time 0.02 --timeout 0.5 \
    --store "$out/store.jsonl" --json "$out/matmul_space.json" --export "$out/matmul_space.best.json"
  throughput
  ;;
throughput) throughput ;;
*) echo "gpu_tune.sh: unknown mode '$mode' (suite, goals, space, throughput)" >&2; exit 2 ;;
esac
