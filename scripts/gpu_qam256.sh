#!/usr/bin/env bash
# One call on the GPU machine for the qam256 family: its GPU tests, then the benchmarks recorded
# in the results history's 2026-11-22-h100-qam256/ (kernels against the device-to-device copy at 2^28
# symbols; the pipeline at 2^27 symbols = 1 GiB each way). Logs and JSON go to $OUT.
# Built here, carried with the working tree (see that folder's README.md):
#   cmake -S . -B build -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2
# Each step is bounded so that one slow step cannot eat the whole call.
#   QAM_STEPS="tests kernels pipeline" (the default) picks the steps; "alltests" runs the whole
#   suite (every label) instead of the qam256 GPU tests, "chunks" the pipeline at 64 fixed chunks.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
steps=${QAM_STEPS:-tests kernels pipeline}

{ date -u; nvidia-smi --query-gpu=name,uuid,driver_version,pci.bus_id,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv;
  nvidia-smi topo -m 2>/dev/null | head -5; } > "$out/device.log" 2>&1
cat "$out/device.log"

summary=()
step() {  # step NAME SECONDS COMMAND...
  local name=$1 secs=$2; shift 2
  echo "=== $name: $*" | tee "$out/$name.log"
  local t0=$SECONDS
  timeout "$secs" "$@" >> "$out/$name.log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$out/$name.log"
  summary+=("$name: exit $rc after $((SECONDS - t0)) s")
}

case " $steps " in *" tests "*)
  # The qam256 GPU tests, and the reduce GPU tests whose selection this branch touched.
  step gpu_tests 240 ctest --test-dir build --output-on-failure -j2 -L gpu -R 'Qam256|GpuPlugins|GpuReduceOps'
  tail -n 15 "$out/gpu_tests.log";;
esac
case " $steps " in *" alltests "*)
  step all_tests 300 ctest --test-dir build --output-on-failure -j4
  tail -n 15 "$out/all_tests.log";;
esac
case " $steps " in *" kernels "*)
  # Every qam256 kernel at every block size and the D2D copy, at 2^28 symbols (4 GiB moved).
  step kernels 300 ./build/kernlab --family qam256 --size 2^28 --min-time 0.5 --timeout 15 \
      --json "$out/kernels_2e28.json"
  sed -n '/^== qam256/,$p' "$out/kernels.log" | head -60;;
esac
case " $steps " in *" pipeline "*)
  # The pipeline at 2^27 symbols: 1 GiB in, 1 GiB out; the default chunking (4 per stream).
  step pipeline 240 ./build/kernlab --pipeline --variant qam256.vec2_stream --block 256 --size 2^27 \
      --pipeline-runs 9 --json "$out/pipeline_2e27.json"
  sed -n '/^== qam256 pipeline/,$p' "$out/pipeline.log";;
esac
case " $steps " in *" chunks "*)
  # The same pipeline with 64 chunks for every stream count: smaller pieces at few streams.
  step pipeline_chunks 240 ./build/kernlab --pipeline --variant qam256.vec2_stream --block 256 --size 2^27 \
      --pipeline-runs 9 --chunks 64 --json "$out/pipeline_2e27_chunks64.json"
  sed -n '/^== qam256 pipeline/,$p' "$out/pipeline_chunks.log";;
esac
echo "--- summary"
printf '%s\n' "${summary[@]}"
