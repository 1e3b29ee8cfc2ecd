#!/bin/bash
tar xzf build-mma/build.tgz; src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt); [ "$src" != "$PWD" ] && mkdir -p $(dirname $src) && ln -sfn $PWD $src
L=$OUT/logs; mkdir -p $L
nvidia-smi -L > $L/device.txt; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv >> $L/device.txt
KL="./build/kernlab --kernels-dir build-mma/kernels_src --family matmul_tc"
E="1x1x1,17x33x65,136x264x72,4095x4097x1023,1000x1032x520"
Q="--warmup 0 --min-samples 1 --min-time 0"
timeout 100 $KL --variant mma_ws,mma_ws_tune --dtype bfloat16,float16 --shape $E --input exact $Q --json $L/exact.json > $L/exact.txt 2>&1; echo "exact rc=$?"
timeout 60 $KL --variant mma_ws,mma_ws_tune --dtype bfloat16 --shape $E --input random $Q --json $L/random.json > $L/random.txt 2>&1; echo "random rc=$?"
for s in 4096 8192; do timeout 100 ./build/kernlab tune --family matmul_tc --variant mma_ws_tune --strategy exhaustive --dtype bfloat16 --shape ${s}x${s}x${s} --kernels-dir build-mma/kernels_src > $L/tune$s.txt 2>&1; done
for r in 1 2; do timeout 60 $KL --variant mma_warp64,mma_ws,cublas --dtype bfloat16 --shape 4096x4096x4096,8192x8192x8192 --json $L/bench$r.json > $L/bench$r.txt 2>&1; done
R=""; for r in barrier branch_resolving dispatch_stall lg_throttle long_scoreboard math_pipe_throttle mio_throttle no_instruction not_selected selected short_scoreboard wait; do R="$R,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
timeout 100 /usr/local/cuda/bin/ncu --target-processes all --kernel-name regex:^mma_ws --launch-count 1 --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second$R --section WarpStateStats $KL --variant mma_ws --dtype bfloat16 --shape 4096x4096x4096 $Q > $L/ncu4096.txt 2>&1
timeout 100 /usr/local/cuda/bin/ncu --target-processes all --kernel-name regex:^mma_warp64 --launch-count 1 --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second $KL --variant mma_warp64 --dtype bfloat16 --shape 4096x4096x4096 $Q > $L/ncu4096_step4.txt 2>&1
echo "rows not passed:"; grep -E "^mma_ws" $L/exact.txt $L/random.txt | grep -v skipped | grep -vc passed
grep -c passed $L/exact.txt $L/random.txt
grep -E "^ +[0-9]+ |best:" $L/tune*.txt; grep -E "==|passed" $L/bench*.txt
grep -E "^    [a-z]" $L/ncu*.txt
cd $OUT && tar czf all.tgz logs
