#!/bin/bash
tar xzf build-mma/build.tgz; src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt); [ "$src" != "$PWD" ] && mkdir -p $(dirname $src) && ln -sfn $PWD $src
L=$OUT/logs; mkdir -p $L
nvidia-smi -L > $L/device.txt; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv >> $L/device.txt
KL="./build/kernlab --kernels-dir build-mma/kernels_src --family matmul_tc"
timeout 90 $KL --variant mma_warp64,mma_ws,cublas --dtype bfloat16 --shape 4095x4097x1023,4096x4096x1024,1000x1032x520 --json $L/edge.json > $L/edge.txt 2>&1
timeout 90 $KL --variant mma_warp64,mma_ws,cublas --dtype float16 --shape 4096x4096x4096,8192x8192x8192 --json $L/f16.json > $L/f16.txt 2>&1
timeout 90 $KL --variant mma_warp64,mma_ws,cublas --dtype bfloat16 --shape 4096x4096x4096,8192x8192x8192 --json $L/bench3.json > $L/bench3.txt 2>&1
timeout 120 /usr/local/cuda/bin/ncu --target-processes all --kernel-name regex:^mma_ws --launch-count 1 --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second $KL --variant mma_ws --dtype bfloat16 --shape 8192x8192x8192 --warmup 0 --min-samples 1 --min-time 0 > $L/ncu8192.txt 2>&1
grep -E "==|passed|WRONG|FAIL" $L/edge.txt $L/f16.txt $L/bench3.txt | grep -v skipped
grep -E "^    [a-z]" $L/ncu*.txt
cd $OUT && tar czf all.tgz logs
