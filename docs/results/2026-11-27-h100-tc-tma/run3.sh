#!/bin/bash
# Run 3: the final files. Validation of every point at edge shapes, the shipped-family test's
# matmul_tc command with the branch's shapes (exact and random), the tc table, the tunes, one
# process a variant at 8192^3, 4096^3 and 4095x4097x1023, Nsight Compute at 4096^3.
cd "$(dirname "$0")/.."
tar xzf build-tma/build-scratch.tgz
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
[ "$src" != "$PWD" ] && mkdir -p "$(dirname "$src")" && ln -sfn "$PWD" "$src"
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv; } > $L/smi.txt 2>&1
K="./build/kernlab --kernels-dir build-tma/kernels_src --family matmul_tc"
Q="--min-samples 3 --min-time 0.01 --timeout 0.5 --warmup 1 --block 384"
pack() { (cd $OUT && tar czf all.tgz logs); }
run() { local name=$1 t=$2; shift 2; echo "+ $*" > $L/$name.log; timeout $t "$@" >> $L/$name.log 2>&1; echo "rc $?" >> $L/$name.log; tail -2 $L/$name.log; pack; }
run exact_points 60 $K --variant "wgmma_tma_tune,wgmma_tma_padded_tune" --dtype bfloat16 --shape 8x8x8,17x33x65,136x264x72,120x248x56,1000x1032x520 $Q
run exact 50 $K --variant "wgmma_tma,wgmma_tma_padded" --dtype bfloat16,float16 --shape 1x1x1,8x8x8,17x33x65,136x264x72,120x248x56,255x127x1031,1000x1032x520,4096x4100x1024,4096x4098x1024,4096x4104x1024,4095x4097x1023,4100x4100x9 $Q
S=1x1x1,17x33x65,63x65x31,97x131x257,4095x4097x1023,8x8x8,136x264x72,120x248x56,1000x1032x520,4096x4104x1024
run shipped_exact 50 $K --block all --shape $S --input exact --dtype bfloat16,float16 --min-time 0 --timeout 0.2 --no-cache --json $L/shipped_exact.json
run shipped_random 50 $K --block all --shape $S --input random --dtype bfloat16,float16 --min-time 0 --timeout 0.2 --no-cache --json $L/shipped_random.json
run tc 60 $K --variant "wgmma_cp_async,wgmma_persistent,wgmma_tma,wgmma_tma_padded,cublas" --dtype bfloat16 --shape 4096x4096x4096,8192x8192x8192,4095x4097x1023,4096x4104x1024 --timeout 3 --json $L/tc.json
T="./build/kernlab tune --family matmul_tc --strategy exhaustive --dtype bfloat16 --kernels-dir build-tma/kernels_src --timeout 1"
run tunes 40 bash -c "$T --variant wgmma_tma_tune --shape 4096x4096x4096,8192x8192x8192; $T --variant wgmma_tma_padded_tune --shape 4095x4097x1023,4096x4096x4096"
for s in 8192x8192x8192 4096x4096x4096 4095x4097x1023; do for r in 1 2; do for v in wgmma_persistent wgmma_tma wgmma_tma_padded cublas; do
  [ $s = 4095x4097x1023 ] && [ $v = wgmma_tma ] && continue
  timeout 15 $K --variant $v --block 384 --dtype bfloat16 --shape $s --min-samples 20 --min-time 0.3 --timeout 2 --json $L/il.json > /dev/null 2>&1
  python3 -c "import json;r=[x for x in json.load(open('$L/il.json'))['records'] if x['outcome']=='passed'][0];t=r['timing'];print('$s $r $v', round(t['median_us'],2), round(t['min_us'],2), round(r['tflops'],2), t['sm_clock_min_mhz'], t['sm_clock_max_mhz'])" >> $L/interleaved.txt 2>&1
  sleep 1
done; done; done
pack
for v in wgmma_persistent wgmma_tma wgmma_tma_padded; do
  timeout 40 ncu --clock-control none -k regex:wgmma --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis $K --variant $v --block 384 --dtype bfloat16 --shape 4096x4096x4096 --in-process --min-samples 1 --min-time 0 --warmup 0 --timeout 0.1 >> $L/ncu.txt 2>&1
done
pack
