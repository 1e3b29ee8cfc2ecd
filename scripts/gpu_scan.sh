#!/usr/bin/env bash
# The scan family's calls on the GPU machine, each under the device tool's 10-minute limit; logs
# and JSON go to $OUT. Carry dist/ (scripts/pack_gpu.sh).
#   bash scripts/gpu_scan.sh tests   # the scan GPU tests (every variant, block, awkward size,
#                                    # exact validation; CUB's plugin and the copy), then every
#                                    # plain variant at every block at 2^20, 2^24 and 2^28, int32,
#                                    # beside CUB (`x cub`) and the copy (its own row)
#   bash scripts/gpu_scan.sh record  # the same sweep for int32 and float32 with --json, and
#                                    # float32 with random inputs at 2^24
#   bash scripts/gpu_scan.sh tune    # kernlab tune of lookback_tunable.cu (bayes, 100 points) at
#                                    # 2^28 and at 2^20, int32, beside CUB; --export of the best
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src, step; build/ unpacked and reachable
cd "$src" || exit 1
mode=${1:-tests}
k=./build/kernlab
{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv; } > "$out/device.log" 2>&1

case $mode in
tests)
  step ctest_scan 300 ctest --test-dir build -L gpu --output-on-failure -j2 \
    -R 'GpuScan|GpuShippedDataFamily.*scan'
  step scan_int32 240 $k --family scan --block all --size 2^20,2^24,2^28 --dtype int32 \
    --baseline cub --json "$out/scan_int32.json"
  ;;
record)
  step scan 420 $k --family scan --block all --size 2^20,2^24,2^28 --dtype int32,float32 \
    --baseline cub --json "$out/scan.json"
  step scan_random 120 $k --family scan --block all --size 2^24 --dtype float32 --input random \
    --baseline cub
  ;;
tune)
  for n in 2^28 2^20; do
    tag=${n/^/p}
    step "scan_tune_$tag" 280 $k tune --variant lookback_tunable --size "$n" --dtype int32 \
      --budget 100 --export "$out/scan_tune_$tag.json" --json "$out/scan_tune_rows_$tag.json"
  done
  ;;
*)
  echo "gpu_scan.sh: unknown mode '$mode' (tests, record or tune)" >&2
  exit 2
  ;;
esac
