#!/usr/bin/env bash
# One call on a 2 x H200 machine (nvidia-h200-x2), 2026-11-28, nothing else running:
#  1. issue 35's MPI throughput pairs alone (scripts/gpu_mpi.sh tune; on the 4 x H200 call they ran
#     beside three other jobs);
#  2. the one test of the GPU label that had not finished there (python.kernlab_gpu);
#  3. Nsight Compute on the scans at 2^24 and 2^28: kernlab --profile (the shipped look-back, the
#     tuned point, CUB) with its ncu log kept, and ncu on CUB's kernels directly.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
O=$out
K=./build/kernlab
nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv > "$O/device.log" 2>&1
OUT=$O/mpi timeout 260 bash scripts/gpu_mpi.sh tune > "$O/mpi_call.log" 2>&1
step python 120 ctest --test-dir build -R python.kernlab_gpu --output-on-failure
export CUDA_VISIBLE_DEVICES=0
step profile 150 $K --family scan --dtype int32 --size 2^24,2^28 --block 512 \
  --variant 'decoupled_lookback,lookback_tunable[VEC=4;LOADS=8;HINT=1],cub,d2d_copy' --profile \
  --json "$O/profile.json"
cp ~/.cache/kernlab/profiles/*.log "$O/" 2>/dev/null
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
step ncu_cub 150 "$NCU" --target-processes all --clock-control none -k regex:Scan \
  --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size \
  --launch-count 8 $K --family scan --dtype int32 --size 2^24,2^28 --variant cub --min-time 0 --warmup 0
exit 0
