#!/bin/bash
# Run 1: validation of steps 7 and 8 at edge and awkward shapes, the tc table, step 7's tune.
cd "$(dirname "$0")/.."
tar xzf build-tma/build-scratch.tgz
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
[ "$src" != "$PWD" ] && mkdir -p "$(dirname "$src")" && ln -sfn "$PWD" "$src"
L=$OUT
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv; } > $L/smi.txt 2>&1
K="./build/kernlab --kernels-dir build-tma/kernels_src --family matmul_tc"
Q="--min-samples 3 --min-time 0.01 --timeout 0.5 --warmup 1"
V7='wgmma_tma,wgmma_tma_tune[PINGPONG=1;EPI=1;BN=128;STAGES=5],wgmma_tma_tune[PINGPONG=0;EPI=0;BN=128;STAGES=6],wgmma_tma_tune[PINGPONG=1;EPI=0;BN=256;STAGES=4]'
V8='wgmma_tma_padded,wgmma_tma_padded_tune[PINGPONG=1;BN=128;STAGES=5;CU=2],wgmma_tma_padded_tune[PINGPONG=0;BN=128;STAGES=4;CU=2]'
run() { local name=$1 t=$2; shift 2; echo "+ $*" > $L/$name.log; timeout $t "$@" >> $L/$name.log 2>&1; echo "rc $?" >> $L/$name.log; tail -3 $L/$name.log; }
run resources 40 $K --variant "wgmma_persistent,wgmma_tma,wgmma_tma_padded" --resources --dtype bfloat16 --shape 4096x4096x4096
run exact 120 $K --variant "$V7,$V8" --dtype bfloat16,float16 --shape 1x1x1,8x8x8,17x33x65,136x264x72,120x248x56,255x127x1031,1000x1032x520,4096x4104x1024,4095x4097x1023 $Q
run random 60 $K --variant "$V7,$V8" --dtype bfloat16 --input random --shape 1000x1032x520,4095x4097x1023 $Q
run tc 120 $K --variant wgmma_cp_async,wgmma_persistent,wgmma_tma,wgmma_tma_padded,cublas --dtype bfloat16 --shape 4096x4096x4096,8192x8192x8192,4095x4097x1023 --timeout 3 --json $OUT/tc.json
# The shipped-family GPU test's matmul_tc command (exact input) with the shapes the branch adds.
run shipped 75 $K --block all --shape 1x1x1,17x33x65,63x65x31,97x131x257,4095x4097x1023,8x8x8,136x264x72,120x248x56,1000x1032x520,4096x4104x1024 --input exact --dtype bfloat16,float16 --min-time 0 --timeout 0.2 --no-cache
