#!/usr/bin/env bash
# The matmul family's calls on the GPU machine (modelled on scripts/gpu_run.sh):
#   bash scripts/gpu_matmul.sh tests [DIR]  the GPU tests of the matmul family, then a first sweep
#                                        of every variant and block at 4096^3 (quick timing), with
#                                        DIR's candidate files too if given
#   bash scripts/gpu_matmul.sh tune DIR  a sweep at 4096^3 of the kernel files under DIR/matmul
#                                        (candidates, not shipped) beside the shipped ones
#   bash scripts/gpu_matmul.sh record [DIR]  the benchmark record: every variant and block at
#                                        1024^3, 4096^3, 4095x4097x1023 and 8192^3, real timing
#                                        settings, --json; then the whole GPU test suite. With DIR,
#                                        a quick sweep of DIR's candidate files comes first.
#                                        SHAPES="8192x8192x8192:130" (shape:seconds ...) records
#                                        only those; TESTS=0 skips the test suite.
# Built here (cmake -S . -B build -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build -j2),
# carried as build/. Logs go to $OUT (the device tool brings them back). Every step is bounded.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
mode=${1:-tests}
tune_dir=""
if [ "$mode" = tune ]; then tune_dir=$(cd "${2:?tune needs a folder}" && pwd); fi
if [ "$mode" != tune ] && [ -n "${2:-}" ]; then tune_dir=$(cd "$2" && pwd); fi
cd "$src" || exit 1
# Plain FP32 for cuBLAS: the plugin sets the math mode too; this makes sure no override turns TF32 on.
export NVIDIA_TF32_OVERRIDE=0

{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv; } > "$out/device.log" 2>&1
cat "$out/device.log"

step() {  # step NAME SECONDS COMMAND...: logs to $out/NAME.log (appended: a name can be reused)
  local name=$1 secs=$2; shift 2
  echo "=== $name: $*" | tee -a "$out/$name.log"
  local t0=$SECONDS
  timeout "$secs" "$@" >> "$out/$name.log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$out/$name.log"
}

k=(./build/kernlab --config /dev/null --kernels-dir kernels_src --family matmul --variant all --block all)
case "$mode" in
  tests)
    step gpu_tests 240 ctest --test-dir build --output-on-failure -j2 -L gpu -R 'Matmul'
    tail -n 15 "$out/gpu_tests.log"
    step sweep_4096 300 "${k[@]}" ${tune_dir:+--kernels-dir "$tune_dir"} --size 4096 --min-time 0.2 \
      --timeout 3 --json "$out/sweep_4096.json"
    grep -vE '^(compile|kernlab|launch|device|===)' "$out/sweep_4096.log" | tail -n 45
    ;;
  tune)
    step tune_4096 420 "${k[@]}" --kernels-dir "$tune_dir" --size 4096 --min-time 0.2 --timeout 3
    grep -vE '^(compile|kernlab|launch|device)' "$out/tune_4096.log" | tail -n 45
    ;;
  record)
    # Candidate files first (quick timing), if a folder is given: they are not part of the record.
    if [ -n "$tune_dir" ]; then
      step tune_4096 45 "${k[@]}" --kernels-dir "$tune_dir" --size 4096 --min-time 0.2 --timeout 2
      grep -E '^(best|warptile|wt_|double_buffer|cublas)' "$out/tune_4096.log"
    fi
    # The record: every variant and block, nvbench-style timing (0.5 s of samples at least; rows
    # whose noise stays above 0.5 % stop after 4 s and are marked '*'). SHAPES picks some of
    # them; one log for all (the device tool brings back 8 files at most), a JSON each.
    for s in ${SHAPES:-1024x1024x1024:90 4096x4096x4096:100 4095x4097x1023:90 8192x8192x8192:130}; do
      step record "${s##*:}" "${k[@]}" --shape "${s%%:*}" --min-time 0.5 --timeout 4 \
        --markdown --json "$out/record_${s%%:*}.json"
      grep -E '^best' "$out/record.log" | tail -n 1
    done
    if [ "${TESTS:-1}" = 1 ]; then
      cat "$out/device.log" >> "$out/gpu_tests.log" && rm "$out/device.log"
      step gpu_tests 150 ctest --test-dir build --output-on-failure -j2 -L gpu
      tail -n 6 "$out/gpu_tests.log"
    fi
    ;;
  *) echo "unknown mode '$mode' (tests, tune DIR, record)"; exit 2 ;;
esac
