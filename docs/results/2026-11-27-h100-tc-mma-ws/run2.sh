#!/bin/bash
# run 1: setup, exactness, first timings, tune
set -x
tar xzf build-mma/build.tgz; src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt); [ "$src" != "$PWD" ] && mkdir -p $(dirname $src) && ln -sfn $PWD $src
L=$OUT/logs; mkdir -p $L
nvidia-smi -L > $L/device.txt; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv >> $L/device.txt
KL="./build/kernlab --kernels-dir build-mma/kernels_src --family matmul_tc"
E="1x1x1,17x33x65,136x264x72,4095x4097x1023,1000x1032x520"
timeout 100 $KL --variant mma_ws --dtype bfloat16,float16 --shape $E --input exact --json $L/exact.json > $L/exact.txt 2>&1
timeout 60 $KL --variant mma_ws --dtype bfloat16 --shape $E --input random --json $L/random.json > $L/random.txt 2>&1
timeout 90 $KL --variant mma_warp64,mma_ws,cublas --dtype bfloat16 --shape 4096x4096x4096,8192x8192x8192 --json $L/bench1.json > $L/bench1.txt 2>&1
timeout 120 ./build/kernlab tune --family matmul_tc --variant mma_ws_tune --strategy exhaustive --dtype bfloat16 --shape 4096x4096x4096 --kernels-dir build-mma/kernels_src > $L/tune4096.txt 2>&1
tail -n 12 $L/*.txt
timeout 150 /usr/local/cuda/bin/ncu --target-processes all --kernel-name regex:^mma_ws --launch-count 1 --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed --section WarpStateStats --section LaunchStats --section Occupancy $KL --variant mma_ws --dtype bfloat16 --shape 4096x4096x4096 --warmup 0 --min-samples 1 --min-time 0 > $L/ncu.txt 2>&1
grep -E "hmma|issue_active|bank|wavefronts|Warp Cycles|Stall|Registers|Achieved" $L/ncu.txt | head -30
cd $OUT && tar czf all.tgz logs
