#!/usr/bin/env bash
# What holds the mma.sync steps below the issue's 0.6x cuBLAS: Nsight Compute's tensor-pipe,
# shared-memory and issue figures for step 4 (mma_warp64) and step 7 (wgmma_tma) at 4096^3 in
# bfloat16, one launch each (the first; the rest of kernlab's run is not profiled), and for the
# register-only mma.sync benchmark (scripts/tc_ceiling/mma_sync_peak.cu) at 8 warps per SM and
# 8 independent MMAs, step 4's warps per SM. Carry `dist` with
# build.tgz (scripts/pack_gpu.sh). Logs in $OUT/all.tgz.
set -u -o pipefail
. "$(dirname "$0")/gpu_prelude.sh"  # out, here, src; build/ unpacked and reachable
cd "$src" || exit 1
ncu=/usr/local/cuda/bin/ncu
metrics=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum
metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active
metrics+=,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
for k in mma_warp64 wgmma_tma; do
  step "ncu_$k" 150 "$ncu" --target-processes all --kernel-name "regex:^$k" --launch-count 1 \
    --section WarpStateStats --metrics "$metrics" --print-units base \
    ./build/kernlab --family matmul_tc --variant "$k" --dtype bfloat16 --shape 4096x4096x4096 \
    --input exact
done
step ncu_peak 120 bash -c "/usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -o /tmp/mma_sync_peak \
  scripts/tc_ceiling/mma_sync_peak.cu && $ncu --kernel-name regex:mma_loop --launch-skip 31 \
  --launch-count 1 --metrics $metrics --print-units base /tmp/mma_sync_peak"
tar -C "$out" -czf /tmp/tc_limits_all.tgz . && find "$out" -mindepth 1 -delete && mv /tmp/tc_limits_all.tgz "$out/all.tgz"
