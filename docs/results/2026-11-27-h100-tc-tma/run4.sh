#!/bin/bash
# Run 4: compute-sanitizer memcheck on steps 7 and 8 at edge shapes, float16 rows, and Nsight
# Compute's kernel-only durations of steps 7 and 8 (kernlab's rows add step 8's scratch memsets).
cd "$(dirname "$0")/.."
tar xzf build-tma/build-scratch.tgz
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
[ "$src" != "$PWD" ] && mkdir -p "$(dirname "$src")" && ln -sfn "$PWD" "$src"
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv; } > $L/smi.txt 2>&1
K="./build/kernlab --kernels-dir build-tma/kernels_src --family matmul_tc"
pack() { (cd $OUT && tar czf all.tgz logs); }
run() { local name=$1 t=$2; shift 2; echo "+ $*" > $L/$name.log; timeout $t "$@" >> $L/$name.log 2>&1; echo "rc $?" >> $L/$name.log; tail -2 $L/$name.log; pack; }
run san 120 $K --variant "wgmma_tma,wgmma_tma_padded" --block 384 --dtype bfloat16 --shape 8x8x8,97x131x257,255x127x1031,136x264x72,120x248x56 --sanitize=memcheck
run tc_f16 60 $K --variant "wgmma_persistent,wgmma_tma,wgmma_tma_padded,cublas" --dtype float16 --shape 4096x4096x4096,4095x4097x1023 --timeout 2 --json $L/tc_f16.json
for s in 4095x4097x1023 4096x4104x1024; do for v in wgmma_tma wgmma_tma_padded; do
  [ $s = 4095x4097x1023 ] && [ $v = wgmma_tma ] && continue
  echo "+ $s $v" >> $L/ncu.txt
  timeout 40 ncu --clock-control none -k regex:wgmma --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis $K --variant $v --block 384 --dtype bfloat16 --shape $s --in-process --min-samples 1 --min-time 0 --warmup 0 --timeout 0.1 >> $L/ncu.txt 2>&1
done; done
pack
