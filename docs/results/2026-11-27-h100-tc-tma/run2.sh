#!/bin/bash
# Run 2: the staged epilogue for edge tiles and odd N; validation, the tc table, both tunes,
# 8192^3 one process a variant.
cd "$(dirname "$0")/.."
tar xzf build-tma/build-scratch.tgz
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
[ "$src" != "$PWD" ] && mkdir -p "$(dirname "$src")" && ln -sfn "$PWD" "$src"
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv; } > $L/smi.txt 2>&1
K="./build/kernlab --kernels-dir build-tma/kernels_src --family matmul_tc"
Q="--min-samples 3 --min-time 0.01 --timeout 0.5 --warmup 1 --block 384"
V7='wgmma_tma,wgmma_tma_tune[PINGPONG=1;EPI=1;BN=128;STAGES=5],wgmma_tma_tune[PINGPONG=0;EPI=0;BN=128;STAGES=6],wgmma_tma_tune[PINGPONG=1;EPI=1;BN=256;STAGES=4]'
V8='wgmma_tma_padded,wgmma_tma_padded_tune[PINGPONG=1;BN=128;STAGES=5;CU=2],wgmma_tma_padded_tune[PINGPONG=0;BN=128;STAGES=4;CU=2]'
pack() { (cd $OUT && tar czf all.tgz logs); }
run() { local name=$1 t=$2; shift 2; echo "+ $*" > $L/$name.log; timeout $t "$@" >> $L/$name.log 2>&1; echo "rc $?" >> $L/$name.log; tail -2 $L/$name.log; pack; }
run exact 70 $K --variant "$V7,$V8" --dtype bfloat16,float16 --shape 1x1x1,8x8x8,17x33x65,136x264x72,120x248x56,255x127x1031,1000x1032x520,4096x4100x1024,4096x4098x1024,4096x4104x1024,4095x4097x1023 $Q
run random 35 $K --variant "$V7,$V8" --dtype bfloat16 --input random --shape 1000x1032x520,4095x4097x1023 $Q
run tc 90 $K --variant "wgmma_persistent,wgmma_tma,wgmma_tma_padded,wgmma_tma_padded_tune[PINGPONG=1;BN=128;STAGES=5;CU=4],cublas" --dtype bfloat16 --shape 4096x4096x4096,8192x8192x8192,4095x4097x1023,4096x4104x1024 --timeout 3 --json $L/tc.json
run tune7 65 ./build/kernlab tune --family matmul_tc --variant wgmma_tma_tune --strategy exhaustive --dtype bfloat16 --shape 4096x4096x4096 --kernels-dir build-tma/kernels_src --timeout 1
run tune8 65 ./build/kernlab tune --family matmul_tc --variant wgmma_tma_padded_tune --strategy exhaustive --dtype bfloat16 --shape 4095x4097x1023 --kernels-dir build-tma/kernels_src --timeout 1
for v in wgmma_persistent wgmma_tma cublas wgmma_persistent wgmma_tma cublas; do
  echo "+ $v $(date -u +%T)" >> $L/il8192.log
  timeout 15 $K --variant $v --block 384 --dtype bfloat16 --shape 8192x8192x8192 --min-samples 20 --min-time 0.3 --timeout 3 --json $L/il.json >> $L/il8192.log 2>&1
  python3 -c "import json;r=[x for x in json.load(open('$L/il.json'))['records'] if x['outcome']=='passed'][0];t=r['timing'];print('$v', t['median_us'], t['min_us'], r.get('tflops'), t['sm_clock_min_mhz'], t['sm_clock_max_mhz'])" >> $L/il8192.log 2>&1
  sleep 1
done
pack
