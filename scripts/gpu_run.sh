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
  local t0=$SECONDS
  timeout "$secs" "$@" >> "$out/$name.log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$out/$name.log"
  tail -n 25 "$out/$name.log"
}

step ctest 120 ctest --test-dir build --output-on-failure -j4
cat "$out/device.log" >> "$out/ctest.log" && rm "$out/device.log"
step readme_example 20 ./build/kernlab --variant reduce5 --block 512
# The same sweep twice, back to back, with nvbench's stopping rule (the config's quick settings
# overridden), then the comparison and the plot of the second.
sweep="./build/kernlab --problem reduce --variant all --block all --size 2^28 --dtype int32,float32 --min-time 0.5 --timeout 15"
step run1 200 $sweep --json "$out/run1.json"
step run2 200 $sweep --json "$out/run2.json"
step compare 20 ./build/kernlab compare "$out/run1.json" "$out/run2.json"
./build/kernlab plot "$out/run2.json" -o "$out/sweep.svg"
