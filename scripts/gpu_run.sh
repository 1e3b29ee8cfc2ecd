#!/usr/bin/env bash
# One call on the GPU machine: the whole test suite (GPU label included), then the benchmarks.
# Logs go to $OUT (the device tool brings them back). Built here, carried as build/:
#   cmake -S . -B build -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build -j2
# (or packed as dist/build.tgz by scripts/pack_gpu.sh, and carried as dist/: it is unpacked here)
# Each step is bounded so that one slow step cannot eat the whole call.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1

{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv; } > "$out/device.log" 2>&1
cat "$out/device.log"

shown() {  # shown NAME SECONDS COMMAND...: gpu_prelude.sh's step, then the log's last lines
  step "$@"
  tail -n 25 "$out/$1.log"
}

shown ctest 200 ctest --test-dir build --output-on-failure -j4
cat "$out/device.log" >> "$out/ctest.log" && rm "$out/device.log"
# The README's first command's job (config/kernlab.cfg), and its single-configuration example.
shown default_job 200 ./build/kernlab --json "$out/default_job.json"
shown readme_example 60 ./build/kernlab --variant reduce5 --block 512

timed() {  # timed LOG LABEL COMMAND...: appends the command's output and its wall time to LOG
  local log=$1 label=$2 t0 t1 rc; shift 2
  t0=$(date +%s.%N)
  timeout 120 "$@" >> "$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  echo "=== $label: exit $rc after $(awk "BEGIN{printf \"%.3f\", $t1 - $t0}") s: $*" | tee -a "$log"
}
# Isolation: the cost of running kernels in a worker, against --in-process, on the same sweep.
# One sample per row, so the difference is the process and protocol, not the sampling; three
# alternating runs of each.
quick=(--variant all --size 2^24 --dtype int32 --warmup 0 --min-samples 1 --min-time 0 --timeout 0.05)
for i in 1 2 3; do
  timed "$out/isolation.log" "isolated $i" ./build/kernlab "${quick[@]}"
  timed "$out/isolation.log" "in_process $i" ./build/kernlab "${quick[@]}" --in-process
done
# The compile stage with a GPU: a cold cache, then warm runs (driver initialisation included).
all_families=(--variant 'reduce.*,matmul.*,qam256.*' --block all --cache-dir /tmp/kernlab-bench-cache)
rm -rf /tmp/kernlab-bench-cache
timed "$out/compile.log" "compile cold" ./build/kernlab --compile-only "${all_families[@]}"
for i in 1 2 3; do timed "$out/compile.log" "compile warm $i" ./build/kernlab --compile-only "${all_families[@]}"; done
# Every shipped source variant of every family at every block size under memcheck and racecheck.
timed "$out/sanitize.log" "sanitize reduce" ./build/kernlab --sanitize --no-plugins --family reduce --variant all --block all --size 100003 --dtype int32
timed "$out/sanitize.log" "sanitize qam256" ./build/kernlab --sanitize --no-plugins --family qam256 --variant all --block all --size 100003
timed "$out/sanitize.log" "sanitize matmul" ./build/kernlab --sanitize --no-plugins --family matmul --variant all --block all --shape 67x45x33
