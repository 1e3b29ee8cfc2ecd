#!/usr/bin/env bash
# One call on the GPU machine: the whole test suite (GPU label included), then the benchmarks.
# Logs go to $OUT (the device tool brings them back). Built here, carried as build/:
#   cmake -S . -B build -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build -j2
# Each step is bounded so that one slow step cannot eat the whole call.
set -u -o pipefail
out=${OUT:-/tmp/kernlab-out}
mkdir -p "$out"
here=$(pwd)
# The build has the source tree's absolute path baked in (tests, plugin folder): make it valid.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
if [ "$src" != "$here" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$here" "$src"; fi
cd "$src" || exit 1

{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv; } > "$out/device.log" 2>&1
cat "$out/device.log"

step() {  # step NAME SECONDS COMMAND...
  local name=$1 secs=$2; shift 2
  echo "=== $name: $*" | tee "$out/$name.log"
  local t0 t1
  t0=$(date +%s.%N)
  timeout "$secs" "$@" >> "$out/$name.log" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  echo "=== $name: exit $rc after $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s" | tee -a "$out/$name.log"
  tail -n 25 "$out/$name.log"
}

step ctest 200 ctest --test-dir build --output-on-failure -j4
cat "$out/device.log" >> "$out/ctest.log" && rm "$out/device.log"
# The README's first command's job (config/kernlab.cfg), and its single-configuration example.
step default_job 200 ./build/kernlab --json "$out/default_job.json"
step readme_example 60 ./build/kernlab --variant reduce5 --block 512
# Isolation: the cost of running kernels in a worker, against --in-process, on the same sweep.
# One sample per row, so the difference is the process and protocol, not the sampling.
quick=(--variant all --size 2^24 --dtype int32 --warmup 0 --min-samples 1 --min-time 0 --timeout 0.05)
step isolated 60 ./build/kernlab "${quick[@]}"
step in_process 60 ./build/kernlab "${quick[@]}" --in-process
# Every shipped source variant at every block size under memcheck and racecheck.
step sanitize 250 ./build/kernlab --sanitize --no-plugins --variant all --block all --size 100003 --dtype int32
