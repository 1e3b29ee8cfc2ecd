#!/usr/bin/env bash
# One-off: where the tunable SGEMM loses 12-19% at 4095x4097x1023 against 4096x4096x1024: one
# odd axis at a time, two points (aligned best, awkward best), cuBLAS beside, then Nsight
# Compute on the aligned best at both shapes.
set -u -o pipefail
. scripts/gpu_prelude.sh
cd "$src" || exit 1
p1='tunable[BM=128;BN=128;BK=16;WM=64;WN=64;TM=8;STAGES=2;ASYNC=0;VEC=4]'
p2='tunable[BM=128;BN=128;BK=16;WM=32;WN=64;TM=16;STAGES=2;ASYNC=0;VEC=4]'
shapes=4096x4096x1024,4096x4096x1023,4096x4096x1025,4095x4096x1024,4096x4097x1024,4096x4095x1024,4095x4097x1023,4096x4224x1024
step split 200 ./build/kernlab --family matmul --variant "$p1,cublas" --block 128 --shape $shapes --json "$out/split1.json"
step split 200 ./build/kernlab --family matmul --variant "$p2" --block 256 --shape $shapes --json "$out/split2.json"
grep -v "^\s*$" "$out/split.log" | grep "passed\|^==" | cut -c1-140
step ncu 200 ./build/kernlab --family matmul --variant "$p1" --block 128 --shape 4096x4096x1024,4095x4097x1023 --profile
tail -n 30 "$out/ncu.log"
cd "$out" && tar czf probe2.tgz *.log *.json && rm -f *.json
