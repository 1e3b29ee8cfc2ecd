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
tail -5 $L/*.txt
cd $OUT && tar czf all.tgz logs
